/**
 * Benchmark cases of moe at a Mixtral-like prefill (4,096 tokens, 8 experts, top 2, hidden 4,096)
 * and a DeepSeek/Qwen3-like one (64 experts, top 8): the router over the logits, dispatch's slot
 * assignment, and gather of the experts' outputs (capacity factor 1.25).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, moeDispatchPlan, moeGatherPlan, moeRouterPlan } from "./mod.ts";
import type { MoeVariant } from "./kernels.gen.ts";

interface Shape {
  T: number;
  E: number;
  k: number;
  D: number;
}
const capacityOf = ({ T, E, k }: Shape) => Math.ceil((1.25 * T * k) / E);
/** k distinct experts per token, spread evenly (expert (t + r * stride) mod E). */
function experts({ T, E, k }: Shape, seed: number): Int32Array {
  const stride = Math.max(1, Math.floor(E / k));
  return Int32Array.from({ length: T * k }, (_, i) => (Math.floor(i / k) + seed + (i % k) * stride) % E);
}
const GPU: Shape[] = [{ T: 4096, E: 8, k: 2, D: 4096 }, { T: 4096, E: 64, k: 8, D: 2048 }];
const QUICK: Shape[] = [{ T: 64, E: 8, k: 2, D: 64 }];
const label = ({ T, E, k, D }: Shape) => `${T}x${E}x${k}x${D}`;

/** moe's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, MoeVariant>({
    op: "moeRouter",
    entry: "router",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, { T, E, k }, options) => moeRouterPlan(gpu, { T, E, k, normTopkProb: true }, options),
    inputs: ({ T, E }, seed) => [randomInput(T * E, seed)],
  }),
  defineCase<Shape, MoeVariant>({
    op: "moeDispatch",
    entry: "dispatch",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, s, options) => moeDispatchPlan(gpu, { T: s.T, E: s.E, k: s.k, capacity: capacityOf(s) }, options),
    inputs: (s, seed) => [experts(s, seed)],
  }),
  defineCase<Shape, MoeVariant>({
    op: "moeGather",
    entry: "gather",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, s, options) => moeGatherPlan(gpu, { T: s.T, k: s.k, slots: s.E * capacityOf(s), D: s.D }, options),
    inputs: (s, seed) => {
      const slots = s.E * capacityOf(s);
      return [
        randomInput(slots * s.D, seed),
        Int32Array.from({ length: s.T * s.k }, (_, i) => (i * 7919 + seed) % slots),
        randomInput(s.T * s.k, seed + 1, 0.1, 0.5),
      ];
    },
  }),
];
