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
 * The decode path also at the Sarashina2.2-1B shape (16 query over 8 KV heads of 112, 512 positions)
 * beside the KV-cache path's `cache_decode` (one dispatch with RoPE and the cache write, the Llama
 * engine's) at the same shape with 16 slices, and at 767 positions and Llama-3-8B's 8,192: the two
 * decode paths compared in one run. The cache path's prefill (`cache_write+cache_prefill`) at a chunk
 * of 512 rows. Cache shapes are `H x kvHeads x D x maxSeq x positions[xsplits]`.
 *
 * @module
 */

import type { GqaVariant } from "./kernels.gen.ts";
import type { FlashAttentionVariant } from "../flash_attention/kernels.gen.ts";
import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import { KERNELS as FLASH_KERNELS } from "../flash_attention/mod.ts";
import { DECODE_CHUNK, gqaCacheDecodePlan, gqaCachePrefillPlan, gqaPlan, KERNELS } from "./mod.ts";

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
  { B: 1, H: 16, kvHeads: 8, L: 1, S: 512, D: 112 },
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

interface CacheShape {
  H: number;
  kvHeads: number;
  D: number;
  maxSeq: number;
  /** The cache length: pos0 + 1 for a decode step, pos0 + L for a prefill. */
  positions: number;
  /** Slices of a decode step; absent for a prefill of `L` rows. */
  splits?: number;
  L?: number;
}
const cacheLabel = ({ H, kvHeads, D, maxSeq, positions, splits, L }: CacheShape) =>
  `${H}x${kvHeads}x${D}x${maxSeq}x${positions}${splits ? `x${splits}` : `x${L}rows`}`;

/** A cache's inputs: projections, a table of (cos, sin), K and V filled, the state at the call's first position. */
function cacheInputs({ H, kvHeads, D, maxSeq, positions, L }: CacheShape, seed: number) {
  const rows = L ?? 1;
  return [
    randomInput(rows * (H + 2 * kvHeads) * D, seed),
    randomInput(maxSeq * D, seed + 1, 0.1, 1),
    randomInput(kvHeads * maxSeq * D, seed + 2),
    randomInput(kvHeads * maxSeq * D, seed + 3),
    new Uint32Array([positions - rows, 0, 0, 0]),
  ];
}

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
  defineCase<CacheShape, GqaVariant>({
    op: "gqa",
    entry: "cache_decode",
    sources: KERNELS,
    gpu: [
      { H: 16, kvHeads: 8, D: 112, maxSeq: 768, positions: 512, splits: 16 },
      { H: 16, kvHeads: 8, D: 112, maxSeq: 768, positions: 767, splits: 16 },
      { H: 32, kvHeads: 8, D: 128, maxSeq: 8192, positions: 8192, splits: 32 },
    ],
    quick: [{ H: 8, kvHeads: 2, D: 64, maxSeq: 1024, positions: 1024, splits: 8 }],
    label: cacheLabel,
    plan: (gpu, shape, options) => gqaCacheDecodePlan(gpu, { ...shape, L: 1, splits: shape.splits! }, options),
    // qkv, table, keys, values, state, then the scratch: partial (any) and counters (zeros, kept so).
    inputs: (shape, seed) => [
      ...cacheInputs(shape, seed),
      new Uint32Array(shape.H * shape.splits! * (shape.D + 2)),
      new Uint32Array(shape.H),
    ],
  }),
  defineCase<CacheShape>({
    op: "gqa",
    entry: "cache_write+cache_prefill",
    sources: KERNELS,
    gpu: [{ H: 16, kvHeads: 8, D: 112, maxSeq: 768, positions: 512, L: 512 }],
    quick: [{ H: 8, kvHeads: 2, D: 64, maxSeq: 128, positions: 64, L: 64 }],
    label: cacheLabel,
    plan: (gpu, shape) => gqaCachePrefillPlan(gpu, { ...shape, L: shape.L! }).sequence,
    inputs: (shape, seed) => cacheInputs(shape, seed),
  }),
];
