/**
 * Benchmark cases of elementwise: same-length add, and add with a row broadcast. The largest shape
 * of each (768 MiB and 512 MiB moved) is far past the H200's 50 MB L2; 4099 exercises the tail.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { elementwisePlan, elementwiseRowsPlan, KERNELS } from "./mod.ts";
import type { ElementwiseVariant } from "./kernels.gen.ts";

/** elementwise's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ n: number }, ElementwiseVariant>({
    op: "elementwise",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ n: 2 ** 24 }, { n: 2 ** 26 }],
    quick: [{ n: 4099 }, { n: 2 ** 16 }, { n: 2 ** 20 }],
    label: ({ n }) => `${n}`,
    plan: (gpu, { n }, options) => elementwisePlan(gpu, { op: "add", n }, options),
    inputs: ({ n }, seed) => [randomInput(n, seed), randomInput(n, seed + 1)],
  }),
  defineCase<{ rows: number; cols: number }, ElementwiseVariant>({
    op: "elementwise",
    entry: "rows",
    sources: KERNELS,
    gpu: [{ rows: 1024, cols: 4096 }, { rows: 16384, cols: 4096 }],
    quick: [{ rows: 64, cols: 256 }, { rows: 1024, cols: 1024 }],
    label: ({ rows, cols }) => `${rows}x${cols}`,
    plan: (gpu, { rows, cols }, options) => elementwiseRowsPlan(gpu, { op: "add", rows, cols }, options),
    inputs: ({ rows, cols }, seed) => [randomInput(rows * cols, seed), randomInput(cols, seed + 1)],
  }),
];
