/**
 * Benchmark cases of rope and ropeAxes: one read and one write of `[tokens, heads, headDim]`, at a
 * Llama prefill (4,096 tokens, 32 heads of 128: 64 MiB each way), twice that,
 * and a decode step of 8 tokens; ropeAxes at the same prefill shape split as Z-Image ([32, 48, 48],
 * adjacent pairs) and as Cosmos-Predict2 ([44, 42, 42], half pairing, a theta per axis).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, ropeAxesPlan, ropeFrequencies, type RopePairing, ropePlan, validateRopeAxesShape } from "./mod.ts";
import type { RopeVariant } from "./kernels.gen.ts";

interface RopeBenchShape {
  tokens: number;
  heads: number;
  headDim: number;
}
interface AxesBenchShape extends RopeBenchShape {
  axesDims: number[];
  pairing: RopePairing;
  theta: number | number[];
}

/** rope's and ropeAxes' benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<RopeBenchShape, RopeVariant>({
    op: "rope",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ tokens: 4096, heads: 32, headDim: 128 }, { tokens: 8192, heads: 32, headDim: 128 }, {
      tokens: 8,
      heads: 32,
      headDim: 128,
    }],
    quick: [{ tokens: 64, heads: 8, headDim: 64 }, { tokens: 33, heads: 5, headDim: 80 }],
    label: ({ tokens, heads, headDim }) => `${tokens}x${heads}x${headDim}`,
    plan: (gpu, shape, options) => ropePlan(gpu, { ...shape, theta: 500000 }, options),
    inputs: ({ tokens, heads, headDim }, seed) => [
      randomInput(tokens * heads * headDim, seed),
      Float32Array.from({ length: tokens }, (_, t) => t + 100),
      ropeFrequencies(headDim, 500000).invFreq,
      new Float32Array(0),
    ],
  }),
  defineCase<AxesBenchShape, RopeVariant>({
    op: "ropeAxes",
    entry: "axes",
    sources: KERNELS,
    // The two DiTs: Z-Image (adjacent pairs, theta 256, axes 32/48/48 over 4,096 + 512 tokens, 30
    // heads) and Anima (split-half, a theta per axis, axes 44/42/42, 16 heads at 1024^2).
    gpu: [
      { tokens: 4608, heads: 30, headDim: 128, axesDims: [32, 48, 48], pairing: "adjacent", theta: 256 },
      {
        tokens: 4096,
        heads: 16,
        headDim: 128,
        axesDims: [44, 42, 42],
        pairing: "half",
        theta: [10000, 42870.94, 42870.94],
      },
    ],
    quick: [{ tokens: 64, heads: 4, headDim: 128, axesDims: [44, 42, 42], pairing: "half", theta: 10000 }],
    label: ({ tokens, heads, headDim, axesDims, pairing }) =>
      `${tokens}x${heads}x${headDim}-axes${axesDims.join(",")}${pairing === "half" ? "-half" : ""}`,
    plan: (gpu, shape, options) => ropeAxesPlan(gpu, shape, options),
    inputs: (shape, seed) => {
      const { axis, invFreq } = validateRopeAxesShape(shape);
      const { tokens, heads, headDim, axesDims } = shape;
      return [
        randomInput(tokens * heads * headDim, seed),
        Int32Array.from({ length: tokens * axesDims.length }, (_, e) => (e * 7 + seed) % 64),
        axis,
        invFreq,
      ];
    },
  }),
];
