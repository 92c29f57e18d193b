/**
 * Benchmark cases of fused_gemv: each layout at the Sarashina2.2-1B decode products that take it, with
 * the input and output steps the Llama engine runs them with: QKV (3,584 x 2,048, RMSNorm in, stored),
 * O (2,048 x 1,792, added to the residual), gate/up (16,384 x 2,048, RMSNorm in, SwiGLU out) and down
 * (2,048 x 8,192, added). Shapes are `N x K:input>output`. The cost is the bytes each must read (the
 * weight as stored, x, the norm weight) and write.
 *
 * @module
 */

import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import {
  FUSED_GEMV_LAYOUTS,
  type FusedGemvFormat,
  type FusedGemvInput,
  fusedGemvLayout,
  type FusedGemvOutput,
  fusedGemvPlan,
  fusedGemvRowWords,
  type FusedGemvVariant,
  KERNELS,
} from "./mod.ts";

interface Shape {
  N: number;
  K: number;
  input: FusedGemvInput;
  output: FusedGemvOutput;
}
const PRODUCTS: Shape[] = [
  { N: 3584, K: 2048, input: "norm", output: "store" },
  { N: 2048, K: 1792, input: "plain", output: "add" },
  { N: 16384, K: 2048, input: "norm", output: "swiglu" },
  { N: 2048, K: 8192, input: "plain", output: "add" },
];
const QUICK: Shape[] = [{ N: 96, K: 256, input: "norm", output: "swiglu" }, {
  N: 64,
  K: 512,
  input: "plain",
  output: "add",
}];

function layoutCase(format: FusedGemvFormat, entry: string): BenchCase {
  return defineCase<Shape, FusedGemvVariant>({
    op: "fused_gemv",
    entry,
    sources: KERNELS,
    gpu: PRODUCTS.filter((s) => fusedGemvLayout(format, s.N) === entry),
    quick: QUICK,
    label: ({ N, K, input, output }) => `${N}x${K}:${input}>${output}`,
    plan: (gpu, shape, options) =>
      fusedGemvPlan(gpu, { ...shape, format, eps: 1e-5 }, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ N, K, output }, seed) => {
      const per = fusedGemvRowWords(format, K);
      const weight = format === "f32"
        ? randomInput(N * K, seed)
        : new Uint32Array(randomInput(N * per.words, seed).buffer);
      const scales = format === "f32" ? [] : [randomInput(N * per.scales, seed + 1, 0.001, 0.02)];
      return [
        weight,
        ...scales,
        randomInput(K, seed + 2),
        randomInput(K, seed + 3),
        randomInput(output === "swiglu" ? N / 2 : N, seed + 4),
      ];
    },
  });
}

/** fused_gemv's benchmark cases: one per layout, at the products that take it. */
export const BENCH: readonly BenchCase[] = (["f32", "q8", "q4g128"] as const).flatMap((format) =>
  FUSED_GEMV_LAYOUTS[format].map(({ entry }) => layoutCase(format, entry))
);
