// The params of every matmul kernel, packed by mod.ts: c is [m, n], a is [m, k] (b, or the weight's
// transpose, [k, n]).
struct Params {
  m: u32,
  n: u32,
  k: u32,
}
