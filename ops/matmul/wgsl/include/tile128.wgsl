// The 128 x 128 tile of matmul/kernel and matmul/f16storage (kernel.wgsl says the design and why):
// its constants, workgroup memory and main, all of the kernel but its bindings and loads. The
// including kernel declares Params and params (m, n, k), c as array<vec4f>, and the staging loads:
// the checked load_a(row, k) and load_b(k, col), each four consecutive f32 values, zeros outside
// the matrix, and the unchecked a_quad(i) and b_quad(i), vec4 i of a and of b as f32.
// #include "tile128_decls.wgsl"

// #include "store_c.wgsl"

// #include "gemm_stage_t.wgsl"

@compute @workgroup_size(256)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "tile128_origin.wgsl"
// #include "tile128_kn_loop.wgsl"

// #include "tile128_store_interior.wgsl"
}
