/**
 * Benchmark cases of elementwise: same-length add, and add with a row broadcast. The largest shape
 * of each (768 MiB and 512 MiB moved) is far past the H200's 50 MB L2; 4099 exercises the tail.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { elementwisePlan, elementwiseRowsPlan, KERNELS } from "./mod.ts";

/** elementwise's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ n: number }>({
    op: "elementwise",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ n: 2 ** 24 }, { n: 2 ** 26 }],
    quick: [{ n: 4099 }, { n: 2 ** 16 }, { n: 2 ** 20 }],
    label: ({ n }) => `${n}`,
    plan: (gpu, { n }, options) => elementwisePlan(gpu, { op: "add", n }, options),
    inputs: ({ n }, seed) => [randomInput(n, seed), randomInput(n, seed + 1)],
  }),
  defineCase<{ S: number; D: number }>({
    op: "elementwise",
    entry: "rows",
    sources: KERNELS,
    gpu: [{ S: 1024, D: 4096 }, { S: 16384, D: 4096 }],
    quick: [{ S: 64, D: 256 }, { S: 1024, D: 1024 }],
    label: ({ S, D }) => `${S}x${D}`,
    plan: (gpu, { S, D }, options) => elementwiseRowsPlan(gpu, { op: "add", S, D }, options),
    inputs: ({ S, D }, seed) => [randomInput(S * D, seed), randomInput(D, seed + 1)],
  }),
];
