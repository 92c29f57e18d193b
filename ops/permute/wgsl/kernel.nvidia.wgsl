// permute/kernel.nvidia: out = x.permute(dims).contiguous() for a tensor of rank <= 6 whose
// permutation moves the last input axis, tuned for bandwidth. The host (mod.ts,
// collapsePermutation) first drops size-1 axes and merges input axes that stay neighbours in the
// output; a permutation that then keeps the last axis last is planned with `rows` instead.
//
// What is left is a batch of transposes: the last input axis q moves, and axis p becomes the
// output's last, so each batch entry is a [P, Q] matrix (row stride p_stride in x) going to [Q, P]
// (row stride q_stride in out). It moves in 64 x 64 tiles, each a 16 x 16 grid of 4 x 4 blocks,
// through workgroup memory held as vec4s, as transpose's kernel.nvidia does: each of 256
// invocations loads four vec4s along q (16 invocations cover a 64-float tile row, one 256-byte
// run), all four in flight before the first is stored to the tile; after the barrier it reads one
// 4 x 4 block as four vec4s, transposes it in registers and stores four vec4s along p (again
// 256-byte runs). Measured on the H200, 2026-11-30, GPU timestamps, warm clocks:
// 64x512x2048-perm021 in 0.139 ms (3,860 GB/s, 85.4% of 4,520 GB/s); a tile of single floats
// written out by hand 81.9%. 64x512x2048-perm210 ([A, B, C] -> [C, B, A]) read 28.9-30.7% for every
// layout in scratch timings, but 0.147 ms (79.6% of 4,595 GB/s) as mod.ts plans it in the baseline
// run (harness/baselines/nvidia-h200.json); the difference is not investigated.
//
// Tile layout: quad q (columns 4q..4q+3) of tile row r sits at r * 16 + (q ^ ((r / 4) % 8)). A
// vec4 access is served eight invocations (128 bytes) at a time. Storing its loads, such a group
// writes eight neighbouring quads of one tile row; reading blocks, one quad of eight rows four
// apart. The XOR puts either set on eight different 16-byte groups of banks.
//
// Tiles are dealt to workgroups in a grid-stride loop; the batch index is split over the other
// axes, which sit at the end of five slots, in output order, the last fastest (unused leading
// slots have size 1 and are skipped). When P or Q is not a multiple of 4, or the tile crosses the
// edge of the matrix, the same data moves with every global access split into bound-checked single
// elements (missing ones read as 0 and are never stored): nothing lands past element n - 1, and
// the grid may have any shape (the host dispatches at most 65,535 workgroups in x and never folds).
struct Params {
  n: u32,         // elements
  p: u32,         // P, the size of the output's last axis
  q: u32,         // Q, the size of x's last axis
  p_stride: u32,  // stride in x of axis p
  q_stride: u32,  // stride in out of axis q
  axes: u32,      // batch axes in use, 0..5, in the last slots
  size0: u32,     // sizes of the batch axes
  size1: u32,
  size2: u32,
  size3: u32,
  size4: u32,
  xs0: u32,       // their strides in x
  xs1: u32,
  xs2: u32,
  xs3: u32,
  xs4: u32,
  os0: u32,       // their strides in out
  os1: u32,
  os2: u32,
  os3: u32,
  os4: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

const TILE: u32 = 64u;
const QUADS: u32 = 16u;  // vec4s per tile row

var<workgroup> tile: array<vec4f, 1024>;  // TILE * QUADS, swizzled (see the header)

// One step of splitting an index over the slots: state is (rest of the index, offset in x,
// offset in out); the slot's coordinate is rest % size.
fn split(state: ptr<function, vec3u>, size: u32, x_stride: u32, out_stride: u32) {
  let rest = (*state).x;
  let quotient = rest / size;
  let coordinate = rest - quotient * size;
  *state = vec3u(quotient, (*state).y + coordinate * x_stride, (*state).z + coordinate * out_stride);
}

// Offsets in x and in out of batch entry `i`, its index split over the used slots, the last slot
// fastest. Written out slot by slot (not a loop over an array) so the compiler keeps everything
// in registers; the tests on params.axes are uniform.
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

// #include "vec4_parts.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let P = params.p;
  let Q = params.q;
  let ps = params.p_stride;
  let qs = params.q_stride;
  let across = (Q + TILE - 1u) / TILE;
  let per = across * ((P + TILE - 1u) / TILE);  // tiles per batch entry
  let count = per * (params.n / (P * Q));
  let whole = ((P | Q) & 3u) == 0u;
  let line = lid / QUADS;  // loading: tile rows line + 16 k; storing: the block's quad (out rows 4 line..)
  let quad = lid % QUADS;  // loading: the quad of those rows; storing: the block's tile rows 4 quad..
  // Where the loads land: rows line and line + 32 at quad ^ (line / 4), rows line + 16 and
  // line + 48 at that ^ 4. Where the block is read: rows 4 quad.. at line ^ (quad % 8).
  let load_at = quad ^ (line >> 2u);
  let block_at = line ^ (quad & 7u);
  let xstep = 16u * ps;  // elements of x between one load's tile row and the next one's

  // The loop bounds depend only on uniform values, so every invocation reaches the barriers.
  for (var t = group.x + group.y * groups.x; t < count; t += groups.x * groups.y) {
    let r = t % per;
    let p0 = (r / across) * TILE;
    let q0 = (r % across) * TILE;
    let base = offsets(t / per);
    let fast = whole && p0 + TILE <= P && q0 + TILE <= Q;
    let xi = base.x + (p0 + line) * ps + q0 + 4u * quad;
    if (fast) {
      let a0 = x[xi >> 2u];
      let a1 = x[(xi + xstep) >> 2u];
      let a2 = x[(xi + 2u * xstep) >> 2u];
      let a3 = x[(xi + 3u * xstep) >> 2u];
      tile[line * QUADS + load_at] = a0;
      tile[(line + 16u) * QUADS + (load_at ^ 4u)] = a1;
      tile[(line + 32u) * QUADS + load_at] = a2;
      tile[(line + 48u) * QUADS + (load_at ^ 4u)] = a3;
    } else {
      let q = q0 + 4u * quad;
      tile[line * QUADS + load_at] = load_part(xi, valid(p0 + line, P, q, Q));
      tile[(line + 16u) * QUADS + (load_at ^ 4u)] = load_part(xi + xstep, valid(p0 + line + 16u, P, q, Q));
      tile[(line + 32u) * QUADS + load_at] = load_part(xi + 2u * xstep, valid(p0 + line + 32u, P, q, Q));
      tile[(line + 48u) * QUADS + (load_at ^ 4u)] = load_part(xi + 3u * xstep, valid(p0 + line + 48u, P, q, Q));
    }
    workgroupBarrier();

    // Block rows are p = p0 + 4 quad..; component j of each is q = q0 + 4 line + j, a row of out.
    let b0 = tile[(4u * quad) * QUADS + block_at];
    let b1 = tile[(4u * quad + 1u) * QUADS + block_at];
    let b2 = tile[(4u * quad + 2u) * QUADS + block_at];
    let b3 = tile[(4u * quad + 3u) * QUADS + block_at];
    let oq = q0 + 4u * line;  // the first of four rows of out
    let op = p0 + 4u * quad;  // their first column
    let oi = base.y + oq * qs + op;
    if (fast) {
      out[oi >> 2u] = vec4f(b0.x, b1.x, b2.x, b3.x);
      out[(oi + qs) >> 2u] = vec4f(b0.y, b1.y, b2.y, b3.y);
      out[(oi + 2u * qs) >> 2u] = vec4f(b0.z, b1.z, b2.z, b3.z);
      out[(oi + 3u * qs) >> 2u] = vec4f(b0.w, b1.w, b2.w, b3.w);
    } else {
      store_part(oi, valid(oq, Q, op, P), vec4f(b0.x, b1.x, b2.x, b3.x));
      store_part(oi + qs, valid(oq + 1u, Q, op, P), vec4f(b0.y, b1.y, b2.y, b3.y));
      store_part(oi + 2u * qs, valid(oq + 2u, Q, op, P), vec4f(b0.z, b1.z, b2.z, b3.z));
      store_part(oi + 3u * qs, valid(oq + 3u, Q, op, P), vec4f(b0.w, b1.w, b2.w, b3.w));
    }
    // The next tile overwrites the tile only after every invocation has read this one.
    workgroupBarrier();
  }
}
