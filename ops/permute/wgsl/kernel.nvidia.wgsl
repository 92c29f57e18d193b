// permute/kernel.nvidia: out = x.permute(dims).contiguous() for a tensor of rank <= 6, tuned for
// bandwidth. The host (mod.ts, collapsePermutation) first drops size-1 axes and merges input axes
// that stay neighbours in the output, then picks one of two modes:
//
// mode 0, "rows": the last input axis stays last, so the output is a sequence of rows of `inner`
//   contiguous elements, each copied from one place in x. Invocations stream vec4s of the output
//   (four per invocation per block of 256 * 4, all loads before the first store; blocks dealt to
//   workgroups in a grid-stride loop), each finding its source row from the row index split over
//   the outer axes. With inner % 4 == 0 every source vec4 is 16-byte aligned (the outer axes'
//   strides in x are multiples of inner); otherwise elements move one at a time.
// mode 1, "tiles": the last input axis q moves, and axis p becomes the output's last: a batch of
//   transposes, each a [P, Q] matrix (row stride p_stride in x) into [Q, P] (row stride q_stride in
//   out), moved through 64x64 workgroup tiles as transpose's kernel.nvidia does: vec4 loads along
//   q and vec4 stores along p when P and Q are multiples of 4, element by element otherwise. Tiles
//   are dealt to workgroups in a grid-stride loop; the batch index is split over the other axes.
//
// Outer (mode 0) or batch (mode 1) axes sit at the end of five slots, in output order, the last
// fastest; unused leading slots have size 1 and are skipped. Every write is bound-checked: nothing
// lands past element n - 1, and the grid may have any shape (the host dispatches at most 65,535
// workgroups in x and never folds).
struct Params {
  mode: u32,      // 0 rows, 1 tiles
  n: u32,         // elements
  inner: u32,     // mode 0: elements per output row (the merged last axes)
  axes: u32,      // outer (mode 0) or batch (mode 1) axes in use, 0..5, in the last slots
  p: u32,         // mode 1: P, the size of the output's last axis
  q: u32,         // mode 1: Q, the size of x's last axis
  p_stride: u32,  // mode 1: stride in x of axis p
  q_stride: u32,  // mode 1: stride in out of axis q
  size0: u32,
  size1: u32,
  size2: u32,
  size3: u32,
  size4: u32,
  xs0: u32,       // strides in x
  xs1: u32,
  xs2: u32,
  xs3: u32,
  xs4: u32,
  os0: u32,       // strides in out (mode 1)
  os1: u32,
  os2: u32,
  os3: u32,
  os4: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

const WG: u32 = 256u;
const PER: u32 = 4u;    // vec4s per invocation per block (mode 0)
const TILE: u32 = 64u;  // mode 1
const LANES: u32 = 16u;
const STEP: u32 = 16u;

var<workgroup> tile: array<f32, 4096>;  // TILE * TILE, swizzled as in slot()

// One step of splitting an index over the slots: state is (rest of the index, offset in x,
// offset in out); the slot's coordinate is rest % size.
fn split(state: ptr<function, vec3u>, size: u32, x_stride: u32, out_stride: u32) {
  let rest = (*state).x;
  let quotient = rest / size;
  let coordinate = rest - quotient * size;
  *state = vec3u(quotient, (*state).y + coordinate * x_stride, (*state).z + coordinate * out_stride);
}

// Offsets in x and in out of the index `i` split over the used slots, the last slot fastest.
// Written out slot by slot (not a loop over an array) so the compiler keeps everything in
// registers; the tests on params.axes are uniform.
fn offsets(i: u32) -> vec2u {
  var state = vec3u(i, 0u, 0u);
  let axes = params.axes;
  if (axes > 0u) {
    split(&state, params.size4, params.xs4, params.os4);
  }
  if (axes > 1u) {
    split(&state, params.size3, params.xs3, params.os3);
  }
  if (axes > 2u) {
    split(&state, params.size2, params.xs2, params.os2);
  }
  if (axes > 3u) {
    split(&state, params.size1, params.xs1, params.os1);
  }
  if (axes > 4u) {
    split(&state, params.size0, params.xs0, params.os0);
  }
  return state.yz;
}

fn x_at(i: u32) -> f32 {
  return x[i >> 2u][i & 3u];
}

// mode 0: where in x output element e comes from.
fn row_source(e: u32) -> u32 {
  let row = e / params.inner;
  return offsets(row).x + (e - row * params.inner);
}

fn rows_vec4(q: u32) -> vec4f {
  return x[row_source(4u * q) >> 2u];
}

fn rows_each(q: u32) -> vec4f {
  var v = vec4f(0.0);
  for (var j = 0u; j < 4u; j++) {
    let e = 4u * q + j;
    if (e < params.n) {
      v[j] = x_at(row_source(e));
    }
  }
  return v;
}

fn rows(lid: u32, first: u32, groups: u32) {
  let whole = (params.inner & 3u) == 0u;  // then n % 4 == 0 too
  let quads = params.n / 4u;               // vec4s entirely inside the output
  let span = WG * PER;
  for (var block = first * span; block < quads; block += groups * span) {
    let i = block + lid;
    if (whole && block + span <= quads) {
      let v0 = rows_vec4(i);
      let v1 = rows_vec4(i + WG);
      let v2 = rows_vec4(i + 2u * WG);
      let v3 = rows_vec4(i + 3u * WG);
      out[i] = v0;
      out[i + WG] = v1;
      out[i + 2u * WG] = v2;
      out[i + 3u * WG] = v3;
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          if (whole) {
            out[j] = rows_vec4(j);
          } else {
            out[j] = rows_each(j);
          }
        }
      }
    }
  }
  // The n % 4 elements past the last whole vec4, one component at a time.
  let rest = params.n % 4u;
  if (rest != 0u && first == 0u && lid == 0u) {
    let v = rows_each(quads);
    for (var j = 0u; j < rest; j++) {
      out[quads][j] = v[j];
    }
  }
}

// As in transpose's kernel.nvidia: conflict-free for the row-wise writes and column-wise reads.
fn slot(r: u32, c: u32) -> u32 {
  let h = ((((r >> 2u) ^ (r & 1u)) & 15u) << 1u) | (c >> 5u);
  return r * TILE + (c ^ h);
}

fn tiles(lid: u32, first: u32, groups: u32) {
  let P = params.p;
  let Q = params.q;
  let across = (Q + TILE - 1u) / TILE;
  let down = (P + TILE - 1u) / TILE;
  let batch = params.n / (P * Q);
  let count = across * down * batch;
  let whole = (P & 3u) == 0u && (Q & 3u) == 0u;
  let lane = lid % LANES;
  let line = lid / LANES;
  for (var t = first; t < count; t += groups) {
    let q0 = (t % across) * TILE;
    let p0 = ((t / across) % down) * TILE;
    let base = offsets(t / (across * down));

    var v: array<vec4f, 4>;
    for (var k = 0u; k < 4u; k++) {
      let p = p0 + line + k * STEP;
      let q = q0 + 4u * lane;
      let i = base.x + p * params.p_stride + q;
      v[k] = vec4f(0.0);
      if (whole) {
        if (p < P && q < Q) {
          v[k] = x[i >> 2u];
        }
      } else {
        for (var j = 0u; j < 4u; j++) {
          if (p < P && q + j < Q) {
            v[k][j] = x_at(i + j);
          }
        }
      }
    }
    for (var k = 0u; k < 4u; k++) {
      for (var j = 0u; j < 4u; j++) {
        tile[slot(line + k * STEP, 4u * lane + j)] = v[k][j];
      }
    }
    workgroupBarrier();

    for (var k = 0u; k < 4u; k++) {
      let tq = line + k * STEP;
      let q = q0 + tq;
      let p = p0 + 4u * lane;
      let w = vec4f(
        tile[slot(4u * lane, tq)],
        tile[slot(4u * lane + 1u, tq)],
        tile[slot(4u * lane + 2u, tq)],
        tile[slot(4u * lane + 3u, tq)],
      );
      let i = base.y + q * params.q_stride + p;
      if (whole) {
        if (q < Q && p < P) {
          out[i >> 2u] = w;
        }
      } else {
        for (var j = 0u; j < 4u; j++) {
          if (q < Q && p + j < P) {
            out[(i + j) >> 2u][(i + j) & 3u] = w[j];
          }
        }
      }
    }
    workgroupBarrier();
  }
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let first = group.x + group.y * groups.x;
  let count = groups.x * groups.y;
  if (params.mode == 0u) {
    rows(lid, first, count);
  } else {
    tiles(lid, first, count);
  }
}
