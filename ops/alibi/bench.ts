/**
 * Benchmark cases of alibi: the bias is written once per call (a write stream), at a Llama prefill of
 * 2,048 queries over 4,096 keys (32 heads: 1 GiB written; the full 4096 x 4096 bias, 2 GiB, exceeds
 * the largest binding), a smaller prefill and one decode step.
 *
 * @module
 */

import { type BenchCase, defineCase } from "../../harness/bench_case.ts";
import { alibiPlan, alibiSlopes, KERNELS } from "./mod.ts";
import type { AlibiVariant } from "./kernels.gen.ts";

/** alibi's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ H: number; L: number; S: number }, AlibiVariant>({
    op: "alibi",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ H: 32, L: 2048, S: 4096 }, { H: 12, L: 2048, S: 2048 }, { H: 32, L: 1, S: 8192 }],
    quick: [{ H: 12, L: 64, S: 64 }, { H: 20, L: 33, S: 257 }],
    label: ({ H, L, S }) => `${H}x${L}x${S}`,
    plan: (gpu, shape, options) => alibiPlan(gpu, shape, options),
    inputs: ({ H }) => [Float32Array.from(alibiSlopes(H))],
  }),
];
