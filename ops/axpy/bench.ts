/**
 * Benchmark cases of axpy: `kernel` (into a third buffer) and `inplace` (y updated through one
 * binding), each at 4, 64 and 256 MiB per array; the largest moves 768 MiB, far past the H200's
 * 50 MB L2. Both move 12 bytes per element (read x and y, write one array).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { axpyInplacePlan, axpyPlan, KERNELS } from "./mod.ts";
import type { AxpyVariant } from "./kernels.gen.ts";

const GPU_SIZES = [{ n: 2 ** 24 }, { n: 2 ** 26 }];
const QUICK_SIZES = [{ n: 4099 }, { n: 2 ** 16 }];
const A = 0.7;

/** axpy's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ n: number }, AxpyVariant>({
    op: "axpy",
    entry: "kernel",
    sources: KERNELS,
    gpu: GPU_SIZES,
    quick: QUICK_SIZES,
    label: ({ n }) => `${n}`,
    plan: (gpu, { n }, options) => axpyPlan(gpu, { alpha: A, n }, options),
    inputs: ({ n }, seed) => [randomInput(n, seed), randomInput(n, seed + 1)],
  }),
  defineCase<{ n: number }, AxpyVariant>({
    op: "axpy",
    entry: "inplace",
    sources: KERNELS,
    gpu: GPU_SIZES,
    quick: QUICK_SIZES,
    label: ({ n }) => `${n}`,
    plan: (gpu, { n }, options) => axpyInplacePlan(gpu, { alpha: A, n }, options),
    inputs: ({ n }, seed) => [randomInput(n, seed), randomInput(n, seed + 1)],
  }),
];
