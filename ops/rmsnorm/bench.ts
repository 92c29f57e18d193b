/**
 * Benchmark cases of rmsnorm (one shared weight row): rows held in registers (up to 8,192
 * elements, short rows sharing a workgroup) and long rows streamed in chunks (65,536, read twice).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, rmsnormPlan } from "./mod.ts";

/** rmsnorm's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ N: number; D: number }>({
    op: "rmsnorm",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { N: 1024, D: 1024 },
      { N: 4096, D: 4096 },
      { N: 8192, D: 8192 },
      { N: 65536, D: 1024 },
      { N: 1024, D: 65536 },
    ],
    quick: [{ N: 64, D: 256 }, { N: 256, D: 1024 }, { N: 4, D: 12288 }],
    label: ({ N, D }) => `${N}x${D}`,
    plan: (gpu, { N, D }, options) => rmsnormPlan(gpu, { N, D, groups: 1, eps: 1e-6 }, options),
    inputs: ({ N, D }, seed) => [randomInput(N * D, seed), randomInput(D, seed + 1)],
  }),
];
