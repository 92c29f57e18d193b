// Writes four consecutive k of one row of a, from column k of the block, into a's transposed stage:
// a_t[k + j][row / 4], component row % 4. Shared by matmul's f32-staged tiles (kernel, f16storage,
// linear, q4g128, q8row, tile64, linear_tile64 and the fused kernels) and gemm64_gathered.wgsl (stft,
// mel); the including kernel declares a_t, the workgroup array `array<array<vec4f, LANES>, STEP>`
// (LANES: vec4s across the tile's rows).
fn stage_t(row: u32, k: u32, v: vec4f) {
  let i = row / 4u;
  let c = row % 4u;
  a_t[k][i][c] = v.x;
  a_t[k + 1u][i][c] = v.y;
  a_t[k + 2u][i][c] = v.z;
  a_t[k + 3u][i][c] = v.w;
}
