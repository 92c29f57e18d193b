// pope/kernel: the Legendre table out[s, d] = P_(s + pos_offset)(x[d]), [S, D] row-major.
//
// Bonnet's recurrence is sequential in the order n, so it is split into chunks and scanned: a
// workgroup owns 4 vec4 columns (16 columns, COLS invocations across) and the orders 0 ..
// pos_offset + S - 1 in CHUNKS chunks of `len` orders (one invocation per column vec4 and chunk;
// lid = chunk * COLS + column, so a warp's stores at one step cover whole 64-byte runs of a row).
//  1. Each invocation multiplies its chunk's 2 x 2 step matrices, M_n = [[a_n x, -b_n], [1, 0]]
//     with a_n = (2n + 1) / (n + 1), b_n = n / (n + 1), which map (P_n, P_(n-1)) to
//     (P_(n+1), P_n), into one transfer matrix per column, kept in workgroup memory.
//  2. One invocation per column vec4 runs (P_0, P_(-1)) = (1, 0) through the CHUNKS transfers in
//     order, leaving each chunk's starting pair in place of its matrix. (Chaining the transfers as a
//     tree instead, in log2(CHUNKS) rounds, was 10x less accurate near x = -1 in an f32 simulation.)
//  3. Each invocation runs the recurrence over its chunk from that pair: first through the orders
//     below pos_offset without writing, then writing each row (one vec4 store at a running index
//     when D % 4 == 0, component stores otherwise).
// The order n is carried as an f32 counter (exact below 2^24, which the host checks), so a step
// converts no integers; the coefficients are the same products as f32(2n + 1) * inv and f32(n) * inv.
// Away from x = -1 the scan is as accurate as the plain f32 recurrence: measured against f64, the
// largest difference at orders up to 4,096 was 1.8e-4 at x = -1 + 2/4096, and about 1e-6 for
// |x| <= 0.97. At x = -1 itself it is not (the step matrices form a Jordan block there), so that
// column is written as (-1)^n, which is exact.
// The work is three passes of pos_offset + S steps per column (the chunk twice, the scan once per
// chunk), against one write of each element: enough arithmetic per byte only for rows of up to a
// few thousand orders per chunk, which the Llama-sized table (4,096 positions) is far below.
struct Params {
  s: u32,
  d: u32,
  pos_offset: u32,
  len: u32,     // orders per chunk: ceil((pos_offset + s) / CHUNKS)
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

const COLS = 4u;     // column vec4s per workgroup
const CHUNKS = 64u;  // chunks of orders per workgroup (COLS * CHUNKS = 256 invocations)

var<workgroup> m00: array<vec4f, 256>;
var<workgroup> m01: array<vec4f, 256>;
var<workgroup> m10: array<vec4f, 256>;
var<workgroup> m11: array<vec4f, 256>;

fn arg(c: u32) -> f32 {
  return select(0.0, x[min(c, params.d - 1u)], c < params.d);
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(local_invocation_id) lid: vec3u,
        @builtin(num_workgroups) groups: vec3u) {
  let k = lid.x;
  let column = k % COLS;
  let chunk = k / COLS;
  let col = ((wid.x + wid.y * groups.x) * COLS + column) * 4u;  // first of the invocation's 4 columns
  let xs = vec4f(arg(col), arg(col + 1u), arg(col + 2u), arg(col + 3u));
  let orders = params.pos_offset + params.s;
  let first = min(chunk * params.len, orders);
  let last = min(first + params.len, orders);
  // 1. The chunk's transfer matrix, per column.
  var a = vec4f(1.0);
  var b = vec4f(0.0);
  var c = vec4f(0.0);
  var dd = vec4f(1.0);
  var f = f32(first);
  for (var n = first; n < last; n++) {
    let inv = 1.0 / (f + 1.0);
    let an = ((f + f + 1.0) * inv) * xs;
    let bn = f * inv;
    let na = an * a - bn * c;
    let nb = an * b - bn * dd;
    c = a;
    dd = b;
    a = na;
    b = nb;
    f += 1.0;
  }
  m00[k] = a;
  m01[k] = b;
  m10[k] = c;
  m11[k] = dd;
  workgroupBarrier();
  // 2. The chunks' starting pairs (P_first, P_(first-1)), in place of their matrices.
  if (chunk == 0u) {
    var p = vec4f(1.0);
    var q = vec4f(0.0);
    for (var j = 0u; j < CHUNKS; j++) {
      let slot = j * COLS + column;
      let t00 = m00[slot];
      let t01 = m01[slot];
      let t10 = m10[slot];
      let t11 = m11[slot];
      m00[slot] = p;
      m01[slot] = q;
      let np = t00 * p + t01 * q;
      q = t10 * p + t11 * q;
      p = np;
    }
  }
  workgroupBarrier();
  // 3. The chunk's rows. At x = -1 (column 0) the chunk transfers are a Jordan block and lose
  // accuracy as n grows; P_n(-1) = (-1)^n exactly, so that column is written from the sign.
  var p = m00[k];
  var q = m01[k];
  let minus_one = xs == vec4f(-1.0);
  var n = first;
  f = f32(first);
  // Orders below pos_offset: stepped through, not written.
  let begin = clamp(params.pos_offset, first, last);
  for (; n < begin; n++) {
    let inv = 1.0 / (f + 1.0);
    let np = (((f + f + 1.0) * inv) * xs) * p - (f * inv) * q;
    q = p;
    p = np;
    f += 1.0;
  }
  var sign = select(1.0, -1.0, (n & 1u) == 1u);
  if (params.d % 4u == 0u) {
    if (col < params.d) {
      let stride = params.d / 4u;
      var at = ((n - params.pos_offset) * params.d + col) / 4u;
      for (; n < last; n++) {
        out[at] = select(p, vec4f(sign), minus_one);
        at += stride;
        sign = -sign;
        let inv = 1.0 / (f + 1.0);
        let np = (((f + f + 1.0) * inv) * xs) * p - (f * inv) * q;
        q = p;
        p = np;
        f += 1.0;
      }
    }
    return;
  }
  for (; n < last; n++) {
    let v = select(p, vec4f(sign), minus_one);
    let row = (n - params.pos_offset) * params.d;
    for (var j = 0u; j < 4u; j++) {
      if (col + j < params.d) {
        let e = row + col + j;
        out[e >> 2u][e & 3u] = v[j];
      }
    }
    sign = -sign;
    let inv = 1.0 / (f + 1.0);
    let np = (((f + f + 1.0) * inv) * xs) * p - (f * inv) * q;
    q = p;
    p = np;
    f += 1.0;
  }
}
