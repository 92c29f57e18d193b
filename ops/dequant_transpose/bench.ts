/**
 * Benchmark cases of dequantTranspose: an int8 weight `[N, K]` to the f32 `[K, N]` at Llama-3-8B's
 * projection shapes (`N x K`: attention 4096 x 4096, MLP up/gate 14336 x 4096, down 4096 x 14336).
 * The cost is the codes and scales read plus the f32 matrix written, four times the codes' bytes.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { dequantTransposePlan, KERNELS } from "./mod.ts";
import type { DequantTransposeVariant } from "./kernels.gen.ts";

/** dequantTranspose's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ N: number; K: number }, DequantTransposeVariant>({
    op: "dequantTranspose",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ N: 4096, K: 4096 }, { N: 14336, K: 4096 }, { N: 4096, K: 14336 }],
    quick: [{ N: 256, K: 256 }, { N: 1024, K: 1024 }],
    label: ({ N, K }) => `${N}x${K}`,
    plan: (gpu, shape, options) => dequantTransposePlan(gpu, shape, options),
    // Random words: every byte value (the decode's cost does not depend on the values).
    inputs: ({ N, K }, seed) => [
      new Uint32Array(randomInput(N * Math.ceil(K / 4), seed).buffer),
      randomInput(N, seed + 1, 0.001, 0.02),
    ],
  }),
];
