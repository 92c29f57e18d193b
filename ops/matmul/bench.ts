/**
 * Benchmark cases of matmul: the dense GEMM at square sizes and at a prefill shape, the two
 * weight-quantized GEMMs at prefill shapes, and the f16-storage GEMM (its one, 128 x 128, entry
 * point) at 4096^3 and the longer prefill shape.
 *
 * Each entry point is its own case and always times its own tile, whatever size the plans' tile rule
 * would pick, so that one run compares the 128 x 128 and the 64 x 64 kernels at every shape (the
 * evidence for `LARGE_TILE_MIN_TILES`); its variant is resolved for the device, or forced one by one
 * with `--all-variants`. The prefill shapes are a Llama-3-8B MLP up-projection (K = 4096 to
 * N = 14336) over a 512-token prompt and over a 64-token one. The dense GEMM also runs at mel's
 * projection of 30 s of 24 kHz audio (2,813 frames of 513 bins to 128 bands), the rate ops/mel's
 * `kernel` is held to.
 *
 * @module
 */

import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import {
  KERNELS,
  matmulF16Plan,
  matmulPlan,
  matmulQ4G128Plan,
  matmulQ8Plan,
  type MatmulShape,
  packF16,
} from "./mod.ts";

const label = ({ M, N, K }: MatmulShape) => `${M}x${N}x${K}`;
const SQUARES: MatmulShape[] = [1024, 2048, 4096].map((n) => ({ M: n, N: n, K: n }));
const PREFILL: MatmulShape = { M: 512, N: 14336, K: 4096 };
const SHORT_PREFILL: MatmulShape = { M: 64, N: 14336, K: 4096 };
const MEL: MatmulShape = { M: 2813, N: 128, K: 513 };
const QUICK: MatmulShape[] = [64, 128, 256].map((n) => ({ M: n, N: n, K: n }));

/** Random words: every code a decoder may meet (the decode's cost does not depend on the values). */
function randomWords(length: number, seed: number): Uint32Array {
  return new Uint32Array(randomInput(length, seed).buffer);
}

function dense(entry: string): BenchCase {
  return defineCase<MatmulShape>({
    op: "matmul",
    entry,
    sources: KERNELS,
    gpu: [...SQUARES, MEL, PREFILL], // the peer runs at the last
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => matmulPlan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ M, N, K }, seed) => [randomInput(M * K, seed), randomInput(K * N, seed + 1)],
  });
}

function q8(entry: string): BenchCase {
  return defineCase<MatmulShape>({
    op: "matmulQ8",
    entry,
    sources: KERNELS,
    gpu: [PREFILL, SHORT_PREFILL],
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
  return defineCase<MatmulShape>({
    op: "matmulQ4G128",
    entry,
    sources: KERNELS,
    gpu: [PREFILL, SHORT_PREFILL],
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

function f16(entry: string): BenchCase {
  return defineCase<MatmulShape>({
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
  dense("kernel"),
  dense("tile64"),
  q8("q8row"),
  q8("q8row_tile64"),
  q4("q4g128"),
  q4("q4g128_tile64"),
  f16("f16storage"),
];
