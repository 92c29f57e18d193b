/**
 * Benchmark cases of upsample: 2x nearest upsampling of a VAE decoder's feature maps (vec4 rows),
 * among them the two 512-channel upsamplers of an SD-style VAE decoding a 1024 x 1024 image (128^2 and
 * 256^2 inputs: 32 and 128 MiB in, 128 and 512 MiB out), and a ragged 14 -> 46 resize (scalar path);
 * the GPU shapes write 64 MiB or more.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, nearestUpsample2dPlan } from "./mod.ts";
import type { NearestUpsample2dShape } from "./reference.ts";
import type { UpsampleVariant } from "./kernels.gen.ts";

/** upsample's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<NearestUpsample2dShape, UpsampleVariant>({
    op: "upsample",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { N: 1, C: 128, H: 256, W: 256, outH: 512, outW: 512 },
      { N: 1, C: 512, H: 128, W: 128, outH: 256, outW: 256 },
      { N: 1, C: 512, H: 256, W: 256, outH: 512, outW: 512 },
      { N: 4, C: 256, H: 126, W: 127, outH: 252, outW: 254 },
    ],
    quick: [
      { N: 1, C: 8, H: 32, W: 32, outH: 64, outW: 64 },
      { N: 2, C: 3, H: 14, W: 14, outH: 46, outW: 46 },
    ],
    label: ({ N, C, H, W, outH, outW }) => `${N}x${C}x${H}x${W}-to-${outH}x${outW}`,
    plan: (gpu, shape, options) => nearestUpsample2dPlan(gpu, shape, options),
    inputs: ({ N, C, H, W }, seed) => [randomInput(N * C * H * W, seed)],
  }),
];
