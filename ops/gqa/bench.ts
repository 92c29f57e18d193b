/**
 * Benchmark cases of gqa: the decode path as it runs, `decode+combine` (both dispatches in one pass,
 * between one pair of timestamps, its cost the operation's: q, K, V and out once: the bandwidth figure
 * that matters); its dispatches timed alone, `decode` (the split pass, whose cost counts K and V once
 * and its partials) and both combines, `combine` and
 * `combine_wide`, each forced at every shape (the plan takes `combine` up to 64 splits: S = 8,192, and
 * `combine_wide` beyond: S = 32,768), at Llama-3-8B's 32 query over 8 KV heads, D = 128, one query row,
 * caches of 8,192 and 32,768 positions (64 and 256 MiB of f32 K and V); and the prefill path
 * (flash_attention's `staged` kernel with 8 KV heads) at L = S = 4096, causal. Shapes are
 * `B x H x kvHeads x L x S x D`. The combines' inputs are random partials, rotated over several sets
 * (they fit in the L2), so that consecutive passes may overlap: their rows are throughput figures.
 *
 * @module
 */

import type { GqaVariant } from "./kernels.gen.ts";
import type { FlashAttentionVariant } from "../flash_attention/kernels.gen.ts";
import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import { KERNELS as FLASH_KERNELS } from "../flash_attention/mod.ts";
import { DECODE_CHUNK, gqaPlan, KERNELS } from "./mod.ts";

interface Shape {
  B: number;
  H: number;
  kvHeads: number;
  L: number;
  S: number;
  D: number;
}
const label = ({ B, H, kvHeads, L, S, D }: Shape) => `${B}x${H}x${kvHeads}x${L}x${S}x${D}`;
const DECODE_GPU: Shape[] = [
  { B: 1, H: 32, kvHeads: 8, L: 1, S: 8192, D: 128 },
  { B: 1, H: 32, kvHeads: 8, L: 1, S: 32768, D: 128 },
];
const DECODE_QUICK: Shape[] = [{ B: 1, H: 8, kvHeads: 2, L: 1, S: 1024, D: 64 }, {
  B: 1,
  H: 32,
  kvHeads: 8,
  L: 1,
  S: 2048,
  D: 128,
}];

/** gqa's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, GqaVariant>({
    op: "gqa",
    entry: "decode",
    sources: KERNELS,
    gpu: DECODE_GPU,
    quick: DECODE_QUICK,
    label,
    plan: (gpu, shape, options) => gqaPlan(gpu, shape, { ...options, path: "decode" }).steps[0],
    inputs: ({ B, H, kvHeads, L, S, D }, seed) => [
      randomInput(B * H * L * D, seed),
      randomInput(B * kvHeads * S * D, seed + 1),
      randomInput(B * kvHeads * S * D, seed + 2),
      new Float32Array(1),
    ],
  }),
  // The decode path as gqaGpu runs it: both dispatches in one pass, between one pair of timestamps.
  defineCase<Shape, GqaVariant>({
    op: "gqa",
    entry: "decode+combine",
    sources: KERNELS,
    gpu: DECODE_GPU,
    quick: DECODE_QUICK,
    label,
    plan: (gpu, shape, options) => gqaPlan(gpu, shape, { ...options, path: "decode" }).sequence!,
    inputs: ({ B, H, kvHeads, L, S, D }, seed) => [
      randomInput(B * H * L * D, seed),
      randomInput(B * kvHeads * S * D, seed + 1),
      randomInput(B * kvHeads * S * D, seed + 2),
      new Float32Array(1),
    ],
  }),
  ...(["combine", "combine_wide"] as const).map((entry) =>
    defineCase<Shape, GqaVariant>({
      op: "gqa",
      entry,
      sources: KERNELS,
      gpu: DECODE_GPU,
      quick: DECODE_QUICK,
      label,
      plan: (gpu, shape, options) =>
        gqaPlan(gpu, shape, { ...entryOptions(gpu, KERNELS, entry, options), path: "decode" }).steps[1],
      inputs: ({ B, H, L, S, D }, seed) => {
        const rows = B * H * L * Math.ceil(S / DECODE_CHUNK);
        return [randomInput(rows * D, seed), randomInput(rows * 2, seed + 1)];
      },
    })
  ),
  defineCase<Shape, FlashAttentionVariant>({
    op: "gqa",
    entry: "staged",
    sources: FLASH_KERNELS,
    gpu: [{ B: 1, H: 32, kvHeads: 8, L: 4096, S: 4096, D: 128 }],
    quick: [{ B: 1, H: 8, kvHeads: 2, L: 200, S: 200, D: 64 }],
    label,
    plan: (gpu, shape, options) =>
      gqaPlan(gpu, { ...shape, causal: true }, {
        ...entryOptions(gpu, FLASH_KERNELS, "staged", options),
        path: "prefill",
      })
        .steps[0],
    inputs: ({ B, H, kvHeads, L, S, D }, seed) => [
      randomInput(B * H * L * D, seed),
      randomInput(B * kvHeads * S * D, seed + 1),
      randomInput(B * kvHeads * S * D, seed + 2),
      new Float32Array(1),
    ],
  }),
];
