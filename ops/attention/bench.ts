/**
 * Benchmark cases of attention's two dispatches, each timed alone: `scores` (q k^T into the
 * `[B, H, L, S]` matrix) and `weighted_sum` (safe softmax of each row, then the sum of v's rows). Shapes
 * are `B x H x L x S x D`, causal; the GPU shapes keep the score matrix within a 2 GiB binding
 * (8 heads of 2048 x 2048: 128 MiB; 32 heads: 512 MiB). The weighted sum's inputs are random scores.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { attentionPlan, type AttentionShape, KERNELS } from "./mod.ts";
import type { AttentionVariant } from "./kernels.gen.ts";

type Shape = Required<Pick<AttentionShape, "B" | "H" | "L" | "S" | "D">>;
const label = ({ B, H, L, S, D }: Shape) => `${B}x${H}x${L}x${S}x${D}`;
const GPU: Shape[] = [{ B: 1, H: 8, L: 2048, S: 2048, D: 128 }, { B: 1, H: 32, L: 2048, S: 2048, D: 128 }];
const QUICK: Shape[] = [{ B: 1, H: 2, L: 64, S: 64, D: 64 }, { B: 1, H: 4, L: 128, S: 200, D: 128 }];

/** attention's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, AttentionVariant>({
    op: "attention",
    entry: "scores",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => attentionPlan(gpu, { ...shape, causal: true }, options).scores,
    inputs: ({ B, H, L, S, D }, seed) => [
      randomInput(B * H * L * D, seed),
      randomInput(B * H * S * D, seed + 1),
      new Float32Array(1),
    ],
  }),
  defineCase<Shape, AttentionVariant>({
    op: "attention",
    entry: "weighted_sum",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape, options) => attentionPlan(gpu, { ...shape, causal: true }, options).weightedSum,
    inputs: ({ B, H, L, S, D }, seed) => [randomInput(B * H * L * S, seed, 0, 8), randomInput(B * H * S * D, seed + 1)],
  }),
];
