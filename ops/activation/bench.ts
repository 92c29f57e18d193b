/**
 * Benchmark cases of activation: every kind at 2^26 elements (512 MiB moved, far past the H200's
 * 50 MB L2), and gelu, the costliest per element, also at 2^20 and 2^24. Shapes are labelled
 * `<kind>:<n>` because all kinds share the one entry point. Inputs span [-8, 8), both sides of
 * every piecewise definition. silu also at 384 x 16,384 elements, the bytes channel_norm's
 * `1x384x16384` moves (24 + 24 MiB): what a streaming kernel reaches at that size, in the same run.
 * The gated kinds (entry point `gated`) at 2^26 elements and at Z-Image's feed-forward of 4,096
 * tokens (4,096 x 10,240 elements). `gated_pairs` at the Llama engine's prefill: a chunk of 512 rows,
 * the Sarashina2.2-1B feed-forward (8,192 channels) whole and in the two pieces the engine runs it in.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import {
  ACTIVATION_KINDS,
  type ActivationKind,
  activationPlan,
  GATED_ACTIVATION_KINDS,
  type GatedActivationKind,
  gatedActivationPlan,
  KERNELS,
  swigluPairsPlan,
  type SwigluPairsShape,
} from "./mod.ts";
import type { ActivationVariant } from "./kernels.gen.ts";

type Shape = { kind: ActivationKind; n: number };

/** activation's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, ActivationVariant>({
    op: "activation",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { kind: "gelu", n: 2 ** 24 },
      { kind: "silu", n: 384 * 16384 },
      ...ACTIVATION_KINDS.map((kind) => ({ kind, n: 2 ** 26 })),
    ],
    quick: [{ kind: "gelu", n: 4099 }, ...ACTIVATION_KINDS.map((kind) => ({ kind, n: 2 ** 16 }))],
    label: ({ kind, n }) => `${kind}:${n}`,
    plan: (gpu, { kind, n }, options) => activationPlan(gpu, { kind, n }, options),
    inputs: ({ n }, seed) => [randomInput(n, seed, 0, 8)],
  }),
  defineCase<{ kind: GatedActivationKind; n: number }, ActivationVariant>({
    op: "activation",
    entry: "gated",
    sources: KERNELS,
    gpu: [...GATED_ACTIVATION_KINDS.map((kind) => ({ kind, n: 2 ** 26 })), { kind: "swiglu", n: 4096 * 10240 }],
    quick: [{ kind: "swiglu", n: 4099 }, { kind: "geglu", n: 2 ** 16 }],
    label: ({ kind, n }) => `${kind}:${n}`,
    plan: (gpu, { kind, n }, options) => gatedActivationPlan(gpu, { kind, n }, options),
    inputs: ({ n }, seed) => [randomInput(n, seed, 0, 8), randomInput(n, seed + 1)],
  }),
  defineCase<SwigluPairsShape, ActivationVariant>({
    op: "activation",
    entry: "gated_pairs",
    sources: KERNELS,
    gpu: [{ rows: 512, pairs: 8192, outCols: 8192, col0: 0 }, { rows: 512, pairs: 4096, outCols: 8192, col0: 4096 }],
    quick: [{ rows: 8, pairs: 1000, outCols: 2048, col0: 1000 }],
    label: ({ rows, pairs, outCols, col0 }) => `${rows}x${pairs}x${outCols}x${col0}`,
    plan: (gpu, shape, options) => swigluPairsPlan(gpu, shape, options),
    inputs: (
      { rows, pairs, outCols },
      seed,
    ) => [randomInput(2 * rows * pairs, seed, 0, 8), randomInput(rows * outCols, seed + 1)],
  }),
];
