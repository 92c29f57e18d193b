/**
 * Benchmark cases of dequantize: int32 GEMM accumulators of square and tall shapes back to f32.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { dequantizePlan, KERNELS } from "./mod.ts";
import type { DequantizeVariant } from "./kernels.gen.ts";

/**
 * Accumulators spread over about +-2^24 (as an int8 GEMM with K in the thousands gives), never
 * all zero (xorshift32).
 *
 * @param length number of values
 * @param seed any integer
 * @returns the values
 */
function randomAccumulators(length: number, seed: number): Int32Array {
  const out = new Int32Array(length);
  let s = (seed ^ 0x1b873593) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    out[i] = (s | 0) >> 7;
  }
  return out;
}

/** dequantize's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ M: number; N: number }, DequantizeVariant>({
    op: "dequantize",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ M: 2048, N: 2048 }, { M: 4096, N: 4096 }, { M: 8192, N: 8192 }, { M: 32768, N: 2048 }],
    quick: [{ M: 64, N: 256 }, { M: 1024, N: 1024 }],
    label: ({ M, N }) => `${M}x${N}`,
    plan: (gpu, shape, options) => dequantizePlan(gpu, shape, options),
    inputs: ({ M, N }, seed) => [
      randomAccumulators(M * N, seed),
      randomInput(M, seed + 1, 1e-4, 1e-2),
      randomInput(N, seed + 2, 1e-4, 1e-2),
    ],
  }),
];
