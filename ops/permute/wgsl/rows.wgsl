// permute/rows: out = x.permute(dims).contiguous() for a permutation whose last input axis stays
// last, after the host (mod.ts, collapsePermutation) has dropped size-1 axes and merged input axes
// that stay neighbours. The output is then a sequence of rows of `inner` contiguous elements (the
// merged last axes), each copied from one place in x: an attention head split [B, S, H, D] ->
// [B, H, S, D], say. mod.ts plans this kernel for such permutations where `kernel.nvidia` is
// resolved; the portable `kernel` gathers every permutation itself.
//
// Invocations stream vec4s of the output: four per invocation per block of 256 * 4, all four loads
// before the first store, blocks dealt to workgroups in a grid-stride loop. Each finds its source
// row from the row index split over the outer axes. With inner % 4 == 0 every source vec4 is
// 16-byte aligned (the outer axes' strides in x are multiples of inner); otherwise elements move
// one at a time.
//
// It is a module of its own, with no workgroup memory and no barrier, rather than a mode of
// `kernel.nvidia`, whose tiles take 16 KiB of workgroup memory. Measured on the H200, 2026-11-30,
// GPU timestamps, warm clocks: this copy in a module with the tiles' workgroup memory and barriers
// took 0.286 ms at 16x2048x32x128-perm0213 (83.0% of 4,520 GB/s) and 0.116 ms at
// 32x128x64x64-perm0213 (25.7%); the same code in a module without any, 0.266 ms (89.3%) and
// 0.104 ms (28.5%).
//
// Outer axes sit at the end of five slots, in output order, the last fastest; unused leading slots
// have size 1 and are skipped. Every write is bound-checked: nothing lands past element n - 1, and
// the grid may have any shape (the host dispatches at most 65,535 workgroups in x and never folds).
struct Params {
  n: u32,      // elements
  inner: u32,  // elements per output row (the merged last axes)
  axes: u32,   // outer axes in use, 0..5, in the last slots
  size0: u32,  // sizes of the outer axes
  size1: u32,
  size2: u32,
  size3: u32,
  size4: u32,
  xs0: u32,    // their strides in x
  xs1: u32,
  xs2: u32,
  xs3: u32,
  xs4: u32,
}

@group(0) @binding(0) var<storage, read> x: array<vec4f>;
@group(0) @binding(1) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(2) var<uniform> params: Params;

const WG: u32 = 256u;
const PER: u32 = 4u;  // vec4s per invocation per block

// One step of splitting a row index over the slots: state is (rest of the index, offset in x);
// the slot's coordinate is rest % size.
fn split(state: ptr<function, vec2u>, size: u32, x_stride: u32) {
  let rest = (*state).x;
  let quotient = rest / size;
  let coordinate = rest - quotient * size;
  *state = vec2u(quotient, (*state).y + coordinate * x_stride);
}

// Offset in x of output row `row`, its index split over the used slots, the last slot fastest.
// Written out slot by slot (not a loop over an array) so the compiler keeps everything in
// registers; the tests on params.axes are uniform.
fn row_offset(row: u32) -> u32 {
  var state = vec2u(row, 0u);
  let axes = params.axes;
  if (axes > 0u) {
    split(&state, params.size4, params.xs4);
  }
  if (axes > 1u) {
    split(&state, params.size3, params.xs3);
  }
  if (axes > 2u) {
    split(&state, params.size2, params.xs2);
  }
  if (axes > 3u) {
    split(&state, params.size1, params.xs1);
  }
  if (axes > 4u) {
    split(&state, params.size0, params.xs0);
  }
  return state.y;
}

fn x_at(i: u32) -> f32 {
  return x[i >> 2u][i & 3u];
}

// Where in x output element e comes from.
fn source_of(e: u32) -> u32 {
  let row = e / params.inner;
  return row_offset(row) + (e - row * params.inner);
}

fn quad_whole(q: u32) -> vec4f {
  return x[source_of(4u * q) >> 2u];
}

fn quad_each(q: u32) -> vec4f {
  var v = vec4f(0.0);
  for (var j = 0u; j < 4u; j++) {
    let e = 4u * q + j;
    if (e < params.n) {
      v[j] = x_at(source_of(e));
    }
  }
  return v;
}

@compute @workgroup_size(256)
fn main(
  @builtin(local_invocation_index) lid: u32,
  @builtin(workgroup_id) group: vec3u,
  @builtin(num_workgroups) groups: vec3u,
) {
  let first = group.x + group.y * groups.x;
  let whole = (params.inner & 3u) == 0u;  // then n % 4 == 0 too
  let quads = params.n / 4u;               // vec4s entirely inside the output
  let span = WG * PER;
  for (var block = first * span; block < quads; block += groups.x * groups.y * span) {
    let i = block + lid;
    if (whole && block + span <= quads) {
      let v0 = quad_whole(i);
      let v1 = quad_whole(i + WG);
      let v2 = quad_whole(i + 2u * WG);
      let v3 = quad_whole(i + 3u * WG);
      out[i] = v0;
      out[i + WG] = v1;
      out[i + 2u * WG] = v2;
      out[i + 3u * WG] = v3;
    } else {
      for (var k = 0u; k < PER; k++) {
        let j = i + k * WG;
        if (j < quads) {
          if (whole) {
            out[j] = quad_whole(j);
          } else {
            out[j] = quad_each(j);
          }
        }
      }
    }
  }
  // The n % 4 elements past the last whole vec4, one component at a time.
  let rest = params.n % 4u;
  if (rest != 0u && first == 0u && lid == 0u) {
    let v = quad_each(quads);
    for (var j = 0u; j < rest; j++) {
      out[quads][j] = v[j];
    }
  }
}
