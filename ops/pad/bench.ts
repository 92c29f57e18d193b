/**
 * Benchmark cases of pad: reflect on the last axis (scalar reads, the common audio case), replicate
 * on a middle axis with `inner % 4 == 0` (vec4 copies, a causal temporal pad), and constant; the GPU
 * shapes move 64 MiB or more each way. Two are a VAE decoder's at a 1024 x 1024 image, 256 MiB each
 * way: a 1-pixel constant border on the last axis of a 256-channel 512 x 512 feature map, and a
 * video VAE's causal temporal pad (2 frames before, replicate) of 128 channels x 8 frames x 256 x 256.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, padPlan } from "./mod.ts";
import type { PadShape } from "./reference.ts";
import type { PadVariant } from "./kernels.gen.ts";

/** pad's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<PadShape, PadVariant>({
    op: "pad",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { outer: 512, size: 32768, inner: 1, before: 3, after: 3, mode: "reflect" },
      { outer: 16, size: 16, inner: 65536, before: 2, after: 0, mode: "replicate" },
      { outer: 4096, size: 4096, inner: 1, before: 1, after: 1, mode: "constant", value: 0 },
      { outer: 256 * 512, size: 512, inner: 1, before: 1, after: 1, mode: "constant", value: 0 },
      { outer: 128, size: 8, inner: 256 * 256, before: 2, after: 0, mode: "replicate" },
    ],
    quick: [
      { outer: 64, size: 1001, inner: 1, before: 3, after: 3, mode: "reflect" },
      { outer: 4, size: 8, inner: 4096, before: 2, after: 0, mode: "replicate" },
    ],
    label: ({ outer, size, inner, before, after, mode }) => `${mode}-${outer}x${size}x${inner}-${before}+${after}`,
    plan: (gpu, shape, options) => padPlan(gpu, shape, options),
    inputs: ({ outer, size, inner }, seed) => [randomInput(outer * size * inner, seed)],
  }),
];
