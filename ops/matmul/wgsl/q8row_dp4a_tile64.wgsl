// matmul/q8row_dp4a_tile64: q8row_dp4a's product (c = dequant(a) @ dequant(weight)^T, int8
// activations with a scale per row times a q8 weight, code products summed exactly in i32 by
// dot4I8Packed; q8row_dp4a.wgsl says the formats) in 64 x 64 tiles, for problems too small to keep a
// GPU busy with 128 x 128 ones: 128 invocations per workgroup, 8 x 4 outputs each in eight vec4i
// sums, K walked 32 words (128 codes) at a time through 16 KiB of workgroup memory holding both
// blocks as words, transposed so that one vec4u read gives a word of four rows: per word of K, three
// vec4u reads feed 32 dot4I8Packed. Why not 4 x 4 (two reads for 16): at the probe's 121 TOPS an
// H200 multiprocessor retires about 58 dot4I8Packed a clock, and 4 x 4 would need 116 bytes of
// workgroup memory a clock for them, about all it delivers (128); 8 x 4 needs 87. An estimate from
// those figures, not a measurement: the bench times this kernel.

// #include "params.wgsl"

// #include "dp4a_bindings.wgsl"

// #include "dp4a_tile64.wgsl"

// #include "dp4a_ops.wgsl"

// #include "store_c_scalar.wgsl"

// #include "dp4a_q8_loads.wgsl"

@compute @workgroup_size(128)
fn main(
  @builtin(workgroup_id) wid: vec3u,
  @builtin(num_workgroups) groups: vec3u,
  @builtin(local_invocation_index) lid: u32,
) {
// #include "dp4a_setup.wgsl"

// #include "dp4a_q8_product64.wgsl"

// #include "gemm64_store.wgsl"
}
