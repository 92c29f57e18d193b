// The params of matmul's fused kernels (*_fused), packed by mod.ts: c is [m, n], a is [m, k], and
// the epilogue's flags (epilogue.wgsl), each the same for every invocation of a dispatch.
struct Params {
  m: u32,
  n: u32,
  k: u32,
  bias: u32,       // 1: add bias[col]
  activation: u32, // 0 none, 1 gelu, 2 gelu_tanh, 3 silu
  gate_rows: u32,  // 0: no gate; otherwise multiply by gate[row / gate_rows, col]
  accumulate: u32, // 1: add c's prior content
}
