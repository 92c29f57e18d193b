/**
 * Benchmark cases of matmul: the dense GEMM at square sizes, at a prefill shape and at the diffusion
 * transformers' shapes; the same product with a Linear weight (`matmulLinear`), plain and with fused
 * epilogues, at the diffusion shapes; the two weight-quantized GEMMs at prefill shapes (Llama-3-8B's
 * and the engine's 1B products) and at Z-Image's FFN up-projection, and their int8-activation forms
 * on `dot4I8Packed` (`q8row_dp4a`, `q4g128_dp4a` and their `_tile64` kernels) at the same shapes,
 * with their fused kernels (`_fused`) at that FFN up-projection with the epilogues Z-Image puts
 * there (`silu(x W1^T)`, and `(x W3^T)` gated by it, one gate row per token); and the f16-storage
 * GEMM (its one, 128 x 128, entry point) at 4096^3 and the longer prefill shape.
 *
 * Each entry point is its own case and always times its own tile, whatever size the plans' tile rule
 * would pick, so that one run compares the 128 x 128 and the 64 x 64 kernels at every shape (the
 * evidence for `LARGE_TILE_MIN_TILES`); its variant is resolved for the device, or forced one by one
 * with `--all-variants`. The prefill shapes are a Llama-3-8B MLP up-projection (K = 4096 to
 * N = 14336) over a 512-token prompt and over a 64-token one. The dense GEMM also runs at mel's
 * projection of 30 s of 24 kHz audio (2,813 frames of 513 bins to 128 bands), the rate ops/mel's
 * `kernel` is held to.
 *
 * The diffusion shapes (M x N x K, M the tokens): Z-Image Turbo (6B DiT, 3840 wide, FFN 10240) over
 * 4,608 tokens, its FFN up-projection 4608x10240x3840, its attention projections 4608x3840x3840 and
 * its FFN down-projection 4608x3840x10240; Anima's MLP up-projection (2048 wide, MLP 8192) over 4,096
 * tokens, 4096x8192x2048. `linear`, `linear_tile64` and `linear_pipelined` also run at Qwen3-4B's
 * encoder products over 512 tokens (32 to 304 tiles of 128 x 128). The fused cases (`linear_fused`) time each with the epilogue its model puts
 * after it: SiLU after the FFN up-projection, GELU after Anima's, a gated accumulation into the
 * residual stream after the down-projection (gateRows 4608, one batch item) and a plain one after the
 * projections; beside the plain `linear` rows at the same shapes they give the epilogue's cost.
 * `kernel_pipelined`, `linear_pipelined` and `linear_fused_pipelined`, two-stage designs the plans
 * do not choose (mod.ts), are timed at 4096^3 (`kernel_pipelined` only), the diffusion shapes and the
 * prefill shape (the fused one at `linear_fused`'s cases), beside `kernel`, `linear` and `linear_fused`.
 * The dp4a products' pipelined 128 x 128 tiles (`q8row_dp4a_pipelined`, `q4g128_dp4a_pipelined`,
 * which the plans do not take until they are timed on a GPU; dp4a.ts) are timed at the engine's 1B prefill products, the prefill
 * shape and Z-Image's three product shapes, beside `q8row_dp4a` and `q4g128_dp4a`, which are timed at
 * those DiT shapes too; their fused forms at the fused dp4a rows' cases.
 * @module
 */

import type { MatmulVariant } from "./kernels.gen.ts";
import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import {
  KERNELS,
  type MatmulEpilogue,
  matmulF16Plan,
  matmulLinearPlan,
  matmulPlan,
  matmulQ4G128Dp4aPlan,
  matmulQ4G128Plan,
  matmulQ8Dp4aPlan,
  matmulQ8Plan,
  type MatmulShape,
  packF16,
} from "./mod.ts";

const label = ({ M, N, K }: MatmulShape) => `${M}x${N}x${K}`;
const SQUARES: MatmulShape[] = [1024, 2048, 4096].map((n) => ({ M: n, N: n, K: n }));
const PREFILL: MatmulShape = { M: 512, N: 14336, K: 4096 };
const SHORT_PREFILL: MatmulShape = { M: 64, N: 14336, K: 4096 };
/**
 * The engine's prefill products at the Sarashina2.2-1B shape (llm/config.ts, hidden 1792, 16 query
 * and 8 KV heads of 112, FFN 6272) over 512 tokens: the fused [q|k|v] projection, the output
 * projection, the fused gate/up and the down-projection.
 */
const PREFILL_1B: MatmulShape[] = [
  { M: 512, N: 3584, K: 1792 },
  { M: 512, N: 1792, K: 1792 },
  { M: 512, N: 12544, K: 1792 },
  { M: 512, N: 1792, K: 6272 },
];
const MEL: MatmulShape = { M: 2813, N: 128, K: 513 };
const QUICK: MatmulShape[] = [64, 128, 256].map((n) => ({ M: n, N: n, K: n }));
/** Z-Image's FFN up-projection, attention projections and FFN down-projection; Anima's MLP up-projection. */
const Z_FFN_UP: MatmulShape = { M: 4608, N: 10240, K: 3840 };
const Z_PROJECTION: MatmulShape = { M: 4608, N: 3840, K: 3840 };
const Z_FFN_DOWN: MatmulShape = { M: 4608, N: 3840, K: 10240 };
const ANIMA_MLP_UP: MatmulShape = { M: 4096, N: 8192, K: 2048 };
const DIFFUSION: MatmulShape[] = [Z_FFN_UP, Z_PROJECTION, Z_FFN_DOWN, ANIMA_MLP_UP];
/**
 * Qwen3-4B's encoder products over 512 tokens (hidden 2560, 32 query and 8 KV heads of 128, MLP
 * 9728): q, k and v, o, gate and up, down. Between 32 and 304 tiles of 128 x 128 each: where the
 * tile rule's crossover lies.
 */
const QWEN3_4B: MatmulShape[] = [
  { M: 512, N: 4096, K: 2560 },
  { M: 512, N: 1024, K: 2560 },
  { M: 512, N: 2560, K: 4096 },
  { M: 512, N: 9728, K: 2560 },
  { M: 512, N: 2560, K: 9728 },
];
/** The diffusion shapes with the epilogue each model fuses after the product. */
const DIFFUSION_FUSED: (MatmulShape & MatmulEpilogue)[] = [
  { ...Z_FFN_UP, activation: "silu" },
  { ...Z_PROJECTION, accumulate: true },
  { ...Z_FFN_DOWN, gateRows: Z_FFN_DOWN.M, accumulate: true },
  { ...ANIMA_MLP_UP, activation: "gelu" },
];
/**
 * Z-Image's FFN up-projections with their epilogues, as its blocks run them on int8 activations:
 * `silu(x W1^T)` and `(x W3^T) * silu(x W1^T)` (a gate of one row per token, gateRows 1). Beside the
 * plain dp4a rows at Z_FFN_UP they give the epilogue's cost.
 */
const Z_FFN_UP_FUSED: (MatmulShape & MatmulEpilogue)[] = [
  { ...Z_FFN_UP, activation: "silu" },
  { ...Z_FFN_UP, gateRows: 1 },
];
/**
 * The dp4a products' shapes: the engine's 1B prefill products, the two prefill shapes and Z-Image's
 * FFN up-projection.
 */
const DP4A: MatmulShape[] = [...PREFILL_1B, PREFILL, SHORT_PREFILL, Z_FFN_UP];
/**
 * The shapes at which both of the dp4a products' 128 x 128 tiles, single-stage and pipelined, are
 * timed: the 1B prefill products and the prefill shape (56 to 448 tiles of 128 x 128; the f32
 * pipelined tiles' rule starts at 80) and Z-Image's three product shapes.
 */
const DP4A_LARGE: MatmulShape[] = [...PREFILL_1B, PREFILL, Z_FFN_UP, Z_PROJECTION, Z_FFN_DOWN];
const QUICK_FUSED: (MatmulShape & MatmulEpilogue)[] = [
  { M: 64, N: 64, K: 64, activation: "gelu" },
  { M: 128, N: 128, K: 128, bias: true, activation: "silu" },
  { M: 256, N: 256, K: 256, gateRows: 128, accumulate: true },
];

/** Random words: every code a decoder may meet (the decode's cost does not depend on the values). */
function randomWords(length: number, seed: number): Uint32Array {
  return new Uint32Array(randomInput(length, seed).buffer);
}

function dense(entry: string, gpu: MatmulShape[]): BenchCase {
  return defineCase<MatmulShape, MatmulVariant>({
    op: "matmul",
    entry,
    sources: KERNELS,
    gpu,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => matmulPlan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ M, N, K }, seed) => [randomInput(M * K, seed), randomInput(K * N, seed + 1)],
  });
}

/** matmulLinear at its shapes, each with its epilogue (none for the plain entry points). */
function linear(entry: string, gpu: (MatmulShape & MatmulEpilogue)[], quick: (MatmulShape & MatmulEpilogue)[]) {
  return defineCase<MatmulShape & MatmulEpilogue, MatmulVariant>({
    op: "matmulLinear",
    entry,
    sources: KERNELS,
    gpu,
    quick,
    label,
    plan: (gpu, shape, options) => matmulLinearPlan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ M, N, K, bias, activation, gateRows, accumulate }, seed) => {
      const operands = [randomInput(M * K, seed), randomInput(N * K, seed + 1, 0.01, 0.03)];
      if (!bias && activation === undefined && gateRows === undefined && !accumulate) return operands;
      return [
        ...operands,
        bias ? randomInput(N, seed + 2) : new Float32Array(0),
        gateRows === undefined ? new Float32Array(0) : randomInput((M / gateRows) * N, seed + 3),
        ...(accumulate ? [randomInput(M * N, seed + 4)] : []),
      ];
    },
  });
}

function q8(entry: string): BenchCase {
  return defineCase<MatmulShape, MatmulVariant>({
    op: "matmulQ8",
    entry,
    sources: KERNELS,
    gpu: [PREFILL, SHORT_PREFILL, Z_FFN_UP, ...PREFILL_1B],
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => matmulQ8Plan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ M, N, K }, seed) => [
      randomInput(M * K, seed),
      randomWords(N * Math.ceil(K / 4), seed + 1),
      randomInput(N, seed + 2, 0.001, 0.02),
    ],
  });
}

function q4(entry: string): BenchCase {
  return defineCase<MatmulShape, MatmulVariant>({
    op: "matmulQ4G128",
    entry,
    sources: KERNELS,
    gpu: [PREFILL, SHORT_PREFILL, Z_FFN_UP, ...PREFILL_1B],
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => matmulQ4G128Plan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ M, N, K }, seed) => [
      randomInput(M * K, seed),
      randomWords(N * Math.ceil(K / 8), seed + 1),
      randomInput(N * Math.ceil(K / 128), seed + 2, 0.01, 0.1),
    ],
  });
}

/**
 * The dp4a products at the same shapes as q8 and q4 (the 1B prefill products first), on int8
 * activations as ops/quantize writes them (random words: any codes; the sums' cost does not depend on
 * them), or the fused entry points at their shapes, each with its epilogue. The activations'
 * quantisation, once per GEMM input, is ops/quantize's `packed` row.
 */
function dp4a(
  op: "matmulQ8Dp4a" | "matmulQ4G128Dp4a",
  entry: string,
  gpu: (MatmulShape & MatmulEpilogue)[] = DP4A,
  quick: (MatmulShape & MatmulEpilogue)[] = QUICK,
): BenchCase {
  const q8 = op === "matmulQ8Dp4a";
  return defineCase<MatmulShape & MatmulEpilogue, MatmulVariant>({
    op,
    entry,
    sources: KERNELS,
    gpu,
    quick,
    label,
    plan: (gpu, shape, options) =>
      (q8 ? matmulQ8Dp4aPlan : matmulQ4G128Dp4aPlan)(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ M, N, K, bias, activation, gateRows, accumulate }, seed) => {
      const operands = [
        randomWords(M * Math.ceil(K / 4), seed),
        randomInput(M, seed + 1, 0.001, 0.02),
        randomWords(N * Math.ceil(K / (q8 ? 4 : 8)), seed + 2),
        randomInput(q8 ? N : N * Math.ceil(K / 128), seed + 3, 0.001, 0.02),
      ];
      if (!bias && activation === undefined && gateRows === undefined && !accumulate) return operands;
      return [
        ...operands,
        bias ? randomInput(N, seed + 4) : new Float32Array(0),
        gateRows === undefined ? new Float32Array(0) : randomInput((M / gateRows) * N, seed + 5),
        ...(accumulate ? [randomInput(M * N, seed + 6)] : []),
      ];
    },
  });
}

function f16(entry: string): BenchCase {
  return defineCase<MatmulShape, MatmulVariant>({
    op: "matmulF16",
    entry,
    sources: KERNELS,
    gpu: [{ M: 4096, N: 4096, K: 4096 }, PREFILL],
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => matmulF16Plan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ M, N, K }, seed) => [packF16(randomInput(M * K, seed)), packF16(randomInput(K * N, seed + 1))],
  });
}

/** matmul's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  dense("kernel", [...SQUARES, MEL, ...DIFFUSION, PREFILL]), // the peer runs at the last
  dense("tile64", [...SQUARES, MEL, PREFILL]),
  dense("kernel_pipelined", [SQUARES[2], ...DIFFUSION, PREFILL]),
  linear("linear", [...DIFFUSION, PREFILL, ...QWEN3_4B], QUICK),
  linear("linear_pipelined", [...DIFFUSION, PREFILL, ...QWEN3_4B], QUICK),
  linear("linear_tile64", [SQUARES[0], PREFILL, ...QWEN3_4B], QUICK),
  linear("linear_fused", DIFFUSION_FUSED, QUICK_FUSED),
  linear("linear_fused_pipelined", DIFFUSION_FUSED, QUICK_FUSED),
  q8("q8row"),
  q8("q8row_tile64"),
  q4("q4g128"),
  q4("q4g128_tile64"),
  dp4a("matmulQ8Dp4a", "q8row_dp4a", [...DP4A, Z_PROJECTION, Z_FFN_DOWN]),
  dp4a("matmulQ8Dp4a", "q8row_dp4a_pipelined", DP4A_LARGE),
  dp4a("matmulQ8Dp4a", "q8row_dp4a_tile64"),
  dp4a("matmulQ4G128Dp4a", "q4g128_dp4a", [...DP4A, Z_PROJECTION, Z_FFN_DOWN]),
  dp4a("matmulQ4G128Dp4a", "q4g128_dp4a_pipelined", DP4A_LARGE),
  dp4a("matmulQ4G128Dp4a", "q4g128_dp4a_tile64"),
  dp4a("matmulQ8Dp4a", "q8row_dp4a_fused", Z_FFN_UP_FUSED, QUICK_FUSED),
  dp4a("matmulQ8Dp4a", "q8row_dp4a_fused_pipelined", Z_FFN_UP_FUSED, QUICK_FUSED),
  dp4a("matmulQ8Dp4a", "q8row_dp4a_tile64_fused", Z_FFN_UP_FUSED, QUICK_FUSED),
  dp4a("matmulQ4G128Dp4a", "q4g128_dp4a_fused", Z_FFN_UP_FUSED, QUICK_FUSED),
  dp4a("matmulQ4G128Dp4a", "q4g128_dp4a_fused_pipelined", Z_FFN_UP_FUSED, QUICK_FUSED),
  dp4a("matmulQ4G128Dp4a", "q4g128_dp4a_tile64_fused", Z_FFN_UP_FUSED, QUICK_FUSED),
  f16("f16storage"),
];
