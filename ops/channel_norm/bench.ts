/**
 * Benchmark cases of channel_norm, all with a weight (the Wan VAE's gamma): the decoder's 384-channel
 * stage at a 128 x 128 latent (`1x384x16384`, 48 MiB moved) and at 256 x 256, its 192- and 96-channel
 * stages at a 1024 x 1024 image (512 x 512 and 1024 x 1024 positions: 384 and 768 MiB moved), and the
 * same norm followed by SiLU as the residual blocks use it (`:silu`).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { channelNormPlan, KERNELS } from "./mod.ts";
import type { ChannelNormVariant } from "./kernels.gen.ts";

type Shape = { N: number; C: number; L: number; silu?: boolean };

/** channel_norm's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, ChannelNormVariant>({
    op: "channel_norm",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      { N: 1, C: 384, L: 128 * 128 },
      { N: 1, C: 384, L: 128 * 128, silu: true },
      { N: 1, C: 384, L: 256 * 256 },
      { N: 1, C: 192, L: 512 * 512, silu: true },
      { N: 1, C: 96, L: 1024 * 1024, silu: true },
    ],
    quick: [{ N: 1, C: 384, L: 1024 }, { N: 2, C: 96, L: 1023, silu: true }, { N: 1, C: 16, L: 4096 }],
    label: ({ N, C, L, silu }) => `${N}x${C}x${L}${silu ? ":silu" : ""}`,
    plan: (gpu, { N, C, L, silu }, options) =>
      channelNormPlan(gpu, { N, C, L, weight: true, activation: silu ? "silu" : undefined }, options),
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed), randomInput(C, seed + 1), new Float32Array(0)],
  }),
];
