// The 128 x 128 tile of matmul/kernel and matmul/f16storage: everything but the bindings and the
// staging loads, which the including kernel declares (load_a(row, k) and load_b(k, col), each four
// consecutive f32 values, zeros outside the matrix). See kernel.wgsl for the design.
const TILE_M = 128u;
const TILE_N = 128u;
const STEP = 16u; // columns of a (rows of b) per block
const LANES = 32u; // vec4s across 128 rows or columns
const HALF = 16u; // vec4 offset of the bottom rows / right columns: 64 / 4

// a_t[k * LANES + i] holds a[row0 + 4i .. 4i + 3, k0 + k];
// b_s[k * LANES + j] holds b[k0 + k, col0 + 4j .. 4j + 3], as f32 whatever a and b are stored as.
var<workgroup> a_t: array<vec4f, STEP * LANES>;
var<workgroup> b_s: array<vec4f, STEP * LANES>;

// #include "store_c.wgsl"

// #include "stage_t.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile_origin.wgsl"
  let tx = lid % HALF;
  let ty = lid / HALF;

  // What this invocation stages per block: four consecutive k of two rows of a (a_row and
  // a_row + 64), and four consecutive columns of two rows of b (b_k and b_k + 8).
  let a_row = lid / 4u;
  let a_k = (lid % 4u) * 4u;
  let b_k = lid / LANES;
  let b_col = col0 + (lid % LANES) * 4u;
  let b_slot = b_k * LANES + lid % LANES;

// #include "acc128.wgsl"

  for (var k0 = 0u; k0 < params.k; k0 += STEP) {
    // All four loads before any store, so that they are in flight together.
    let a_top = load_a(row0 + a_row, k0 + a_k);
    let a_bottom = load_a(row0 + a_row + 64u, k0 + a_k);
    let b_top = load_b(k0 + b_k, b_col);
    let b_bottom = load_b(k0 + b_k + 8u, b_col);
    stage_t(a_row, a_k, a_top);
    stage_t(a_row + 64u, a_k, a_bottom);
    b_s[b_slot] = b_top;
    b_s[b_slot + 8u * LANES] = b_bottom;
    workgroupBarrier();
// #include "k_steps128.wgsl"
    // The next block's stores wait until every invocation has read this one.
    workgroupBarrier();
  }

// #include "store_acc128.wgsl"
}
