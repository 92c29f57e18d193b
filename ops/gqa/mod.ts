/**
 * gqa: grouped-query and multi-query attention, one op parameterised by `kvHeads` (kvHeads = 1 is MQA,
 * kvHeads = H is attention unchanged): torch 2.11's `F.scaled_dot_product_attention(..., enable_gqa=True)`
 * with `k` and `v` of `kvHeads` heads. Every convention of ops/attention holds (1/sqrt(D) scale,
 * upper-left `causal` with `queryOffset`, the additive `mask` broadcast by `maskShape`, whose head axis
 * counts query heads, causal with mask refused, zeros for a fully masked row), and:
 * - groups are contiguous: query head h reads KV head `floor(h / (H / kvHeads))`, as `enable_gqa=True`
 *   (torch repeats each KV head H / kvHeads times, `repeat_interleave`), not `h % kvHeads`;
 * - H not a multiple of kvHeads throws rather than guessing a grouping;
 * - {@link kvCacheBytes} gives the cache the grouping saves (Llama-3-8B: 67,108,864 bytes per layer
 *   with 8 KV heads against 268,435,456 with 32);
 * - NaN and ±Infinity as ops/attention's reference (nonfinite.test.ts): a NaN or +inf score makes its
 *   row NaN (`decode` tells a dead score from its bits, and `combine` / `combine_wide` keep a split whose
 *   sum is NaN, which `sum > 0` dropped), a masked key's v is multiplied by 0, and a fully masked row is
 *   that sum (0, or NaN from a NaN v), where the combines wrote 0; `combine_wide` reads zeros past the last
 *   split, where 0 times a repeated infinite output made NaN. A key hidden by `causal` is no part of
 *   its row whatever its v: `decode` adds the keys of a chunk that not all of a workgroup's rows see
 *   only to the rows that see them (0 times a NaN or infinite v is NaN), as flash_attention's kernels
 *   do on a tile's diagonal (its mod.ts).
 *
 * Two paths, chosen by {@link gqaPlan} (or forced with `path`):
 * - `decode` (L <= {@link DECODE_MAX_L}, D and Dv <= 128): flash-decoding in two dispatches. Entry
 *   point `decode` splits the keys into chunks of 128; each workgroup takes one KV head, one chunk and
 *   up to 4 query rows of that head's group (4 query heads at L = 1 for Llama-3's 32/8) and reads each
 *   K and V row of its chunk once for all of them, writing per row an unnormalised partial output with
 *   its max and sum; the second dispatch merges the chunks: entry point `combine` up to
 *   {@link COMBINE_MAX_SPLITS} chunks (one workgroup per output row, the partials read 128 at a time,
 *   four loads in flight), `combine_wide` beyond (a workgroup per output row and 8 quads of Dv, its
 *   loads issued before the max is reduced), the faster of the two on each side of that count on the
 *   H200 when run right after `decode`. Decode attention is bandwidth-bound (a
 *   KV cache read once per token), so what matters is that the cache is read once per KV head, not per
 *   query head, and by enough workgroups at once (64 chunks x 8 KV heads at S = 8,192: 512 workgroups
 *   of 128 invocations) to keep the memory system busy. A group of more than 4 rows (MQA with many heads, or L > 1) takes a workgroup
 *   per 4 rows, each reading the chunk again (from L2 when they run together). Workgroups beyond
 *   65,535 fold into a second grid dimension.
 * - `prefill` (otherwise): flash_attention's kernel, which maps query head h to KV head h / group.
 * Both take flash_attention's `layout`: `"BHLD"` (default) or token-major `"BLHD"` (q `[B, L, H, D]`,
 * k `[B, S, kvHeads, D]`, v `[B, S, kvHeads, Dv]`, out `[B, L, H, Dv]`); the decode path writes its
 * partials in the output's row order, so its combine is the same for both.
 *
 * Measured on the H200 (2026-12-02T05:48Z, Deno 2.9.6 over Vulkan, GPU timestamps, warm clocks, median
 * of 30; log harness/baselines/nvidia-h200-log/28-gqa-whole.txt; read probe 4,589 GB/s at 1 GiB, and
 * 3,339 GB/s, 73% of it, for the same kernel reading 64 MiB once), 32 query over 8 KV heads, L = 1,
 * D = 128, f32, counting K and V once: the operation as it runs, both dispatches in one compute pass
 * with one timestamp pair around it, took 0.0371 ms at S = 8,192 (64 MiB: 1,809 GB/s, 39.4% of the
 * probe; the kernels before, 0.0379 ms, 38.6%) and 0.1021 ms at S = 32,768 (2,629 GB/s, 57.3%; before,
 * 0.1156 ms, 50.6%). Timed as two passes with a timestamp pair each, `decode` took 0.0313 ms at
 * S = 8,192 (46.7%) and 0.0933 ms at S = 32,768 (62.7%), `combine` 0.0082 ms (64 splits) and
 * `combine_wide` 0.0116 ms (256 splits); the two passes' pairs leave about 6.5 us between them that
 * neither counts, so their sum is not the operation's time. torch reached 177 GB/s at S = 8,192 in
 * an earlier run whose output was not kept. What was tried and not kept is in the headers of
 * decode.wgsl and combine_wide.wgsl (logs 28-gqa-ab.txt and 28-gqa-ab2.txt of the same directory).
 *
 * A third path works on a KV cache as a generation loop keeps it (`gqaCache`: `[kvHeads, maxSeq, D]`
 * per layer, the call's first position `pos0` read on the GPU from a `state` buffer that the loop's
 * sampler advances, so a decode step is the same dispatches at every position), from the fused
 * projection `[q | k | v]` of each row, with RoPE (adjacent pairs, a (cos, sin) table) and the cache
 * write folded in:
 * - `cache_decode` (one row, {@link gqaCacheDecodePlan}): one dispatch, one workgroup of 128 per
 *   (query head, slice of the cache): each rotates its query and its KV head's new key itself, uses
 *   the new key and value from workgroup memory, and the first slice of the first query head of a
 *   KV head writes them into the cache; slices are combined in the same dispatch by the last
 *   workgroup of a head to finish (an atomic counter), so a decode layer's attention is one dispatch
 *   with no RoPE dispatch before it. At the Sarashina2.2-1B shape (16/8 heads of 112, maxSeq 768,
 *   24 layers' caches in one pass, GPU timestamps, median of 15, H200, Deno 2.9.6, 2026-12-02) it
 *   takes 12.8-14.0 us a layer at 512-767 positions with 16 or 24 slices alike (16.0-17.2 us in a pass
 *   of its own); what was tried and not kept is in `harness/baselines/nvidia-h200-log/35-attn-ab.txt`.
 *   It was the Llama engine's kernel (now models/llama), moved here unchanged. Against this op's own
 *   `decode` + `combine` (two dispatches, keys in 128-key chunks, no RoPE): not yet compared at one
 *   shape on the H200; the bench rows `gqa/cache_decode` and `gqa/decode+combine` at 16/8 heads of
 *   112 and 512 positions are that comparison.
 * - `cache_write` then `cache_prefill` (several rows, {@link gqaCachePrefillPlan}): RoPE and the cache
 *   write of every row, then each row attends over positions `0 ..= pos0 + r`, one workgroup per
 *   (query head, row), the same online softmax as `cache_decode`.
 * Both score `CHUNK` positions at a time (a pipeline constant, 1,024; fewer only to test the online
 * softmax across chunks) and take D up to 256.
 *
 * Refused, with an error naming the argument, before any GPU work: everything attention refuses, H not
 * a multiple of kvHeads, D or Dv not a multiple of 4 (the kernels read vec4s), a layout other than
 * `"BHLD"` or `"BLHD"`; `path: "decode"` with D or Dv over 128; an override that names no kernel of the
 * path taken.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import {
  type BindingSpec,
  type GpuTensor,
  type KernelPlan,
  type KernelSequence,
  kernelSequence,
  requireDevice,
  type ResidentDevice,
} from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { overrideEntry } from "../../harness/resolve.ts";
import { maskLength, maskParams } from "../attention/kernel_params.ts";
import {
  FLASH_ENTRIES,
  type FlashAttentionVariant,
  flashKernel,
  flashPlanOf,
  layoutStrides,
} from "../flash_attention/mod.ts";
import { checkOptions, requireOneOf } from "../validate.ts";
import { type GqaVariant, KERNELS } from "./kernels.gen.ts";
import {
  type GqaArgs,
  type GqaCacheArgs,
  type GqaCacheShape,
  type GqaShape,
  type ResolvedFlashShape,
  validateGqa,
  validateGqaCache,
  validateGqaCacheShape,
  validateGqaShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type GqaVariant, KERNELS };

/** Keys per split of the decode path (`CHUNK` in decode.wgsl). */
export const DECODE_CHUNK = 128;
/** Query rows per workgroup of the decode path. */
const DECODE_ROWS = 4;
/** Most splits `combine` merges; more go to `combine_wide`. */
export const COMBINE_MAX_SPLITS = 64;
/** Quads of Dv per `combine_wide` workgroup (`QG` in combine_wide.wgsl). */
const WIDE_QUADS = 8;
/** The entry points of the decode path. */
const DECODE_ENTRIES = ["decode", "combine", "combine_wide"];
/** Longest L for which {@link gqaPlan} takes the decode path by default. */
export const DECODE_MAX_L = 8;
/** Largest D and Dv of the decode path (32 quads). */
const DECODE_MAX_DIM = 128;

const DECODE_PARAMS: readonly ParamField[] = [
  { name: "L", type: "u32" },
  { name: "S", type: "u32" },
  { name: "H", type: "u32" },
  { name: "group", type: "u32" },
  { name: "rows", type: "u32" },
  { name: "dq", type: "u32" },
  { name: "dvq", type: "u32" },
  { name: "splits", type: "u32" },
  { name: "scale", type: "f32" },
  { name: "causal", type: "u32" },
  { name: "offset", type: "i32" },
  { name: "masked", type: "u32" },
  { name: "mask_b", type: "u32" },
  { name: "mask_h", type: "u32" },
  { name: "mask_i", type: "u32" },
  { name: "row_groups", type: "u32" },
  { name: "BKV", type: "u32" },
  { name: "q_head", type: "u32" },
  { name: "q_step", type: "u32" },
  { name: "kv_head", type: "u32" },
  { name: "kv_step", type: "u32" },
];

const COMBINE_PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32" },
  { name: "splits", type: "u32" },
  { name: "dvq", type: "u32" },
];

const WIDE_PARAMS: readonly ParamField[] = [...COMBINE_PARAMS, { name: "groups", type: "u32" }];

/** The keys of {@link GqaOptions} beside `override`. */
const OPTION_KEYS: readonly string[] = ["path"];

/**
 * Options of the gqa entry points: a kernel override (a variant of gqa's decode path or of
 * flash_attention's, which runs the prefill path), and which path to take.
 */
export interface GqaOptions extends KernelOptions<GqaVariant | FlashAttentionVariant> {
  /** `decode` (split keys + combine) or `prefill` (flash_attention's kernel); default by shape. */
  path?: "decode" | "prefill";
}

/** The dispatches of one gqa call, in order. */
export interface GqaPlans {
  /** Which path the plans take. */
  path: "decode" | "prefill";
  /**
   * decode: `decode` [q, k, v, mask, partOut, partStats] then `combine` or `combine_wide`
   * [partOut, partStats, out];
   * prefill: one plan [q, k, v, mask, out]. The mask binding is one placeholder element without a mask.
   */
  steps: readonly KernelPlan[];
  /**
   * decode: the two steps as one operation, run in one pass: bindings [q, k, v, mask, out],
   * intermediates [partOut, partStats], its cost the operation's (q, K, V and out once). What
   * {@link gqaGpu} submits, and what the bench times as `decode+combine`.
   */
  sequence?: KernelSequence;
}

function decodeFits(shape: ResolvedFlashShape): boolean {
  return shape.D <= DECODE_MAX_DIM && shape.Dv <= DECODE_MAX_DIM;
}

/**
 * The plans of gqa for a validated shape.
 *
 * @param gpu the device
 * @param shape the validated shape
 * @param options override and path
 * @returns the path and its plans
 * @throws Error when `path: "decode"` is asked for with D or Dv over 128, or an override names no
 *   kernel of the path taken
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { gqaPlansOf, validateGqaShape } from "@xpu/ops/ops/gqa";
 * const gpu = await acquireDevice();
 * const shape = validateGqaShape({ B: 1, H: 32, kvHeads: 8, L: 1, S: 4096, D: 128 });
 * gqaPlansOf(gpu, shape).path; // "decode": one query row per head
 * gqaPlansOf(gpu, shape, { path: "prefill" }).steps.length; // 1: flash_attention's kernel
 * gpu.destroy();
 * ```
 */
export function gqaPlansOf(gpu: ResidentDevice, shape: ResolvedFlashShape, options?: GqaOptions): GqaPlans {
  requireDevice("gqa", gpu);
  checkOptions("gqa", options, OPTION_KEYS);
  const { override, path: asked } = options ?? {};
  if (asked !== undefined) requireOneOf("gqa", "path", asked, ["decode", "prefill"]);
  const named = overrideEntry(override);
  const flashNamed = named !== undefined && FLASH_ENTRIES.includes(named);
  const path = asked ??
    (named !== undefined && DECODE_ENTRIES.includes(named)
      ? "decode"
      : flashNamed
      ? "prefill"
      : shape.L <= DECODE_MAX_L && decodeFits(shape)
      ? "decode"
      : "prefill");
  if (path === "prefill") {
    // The override reaches the prefill path too: a variant of a flash entry point forces it, any other
    // name (a decode-path kernel's included) is refused by flashKernel, naming the prefill entry points.
    const kernel = flashKernel(gpu, "gqa", shape, { override });
    return { path, steps: [flashPlanOf(gpu, "gqa", shape, kernel)] };
  }
  if (!decodeFits(shape)) {
    throw new Error(
      `gqa: the decode path takes D and Dv up to ${DECODE_MAX_DIM}, got D = ${shape.D}, Dv = ${shape.Dv}`,
    );
  }
  if (named !== undefined && !DECODE_ENTRIES.includes(named)) {
    throw new Error(
      `gqa: override "${override}" is not a variant of entry point "decode", "combine" or "combine_wide"`,
    );
  }
  const { B, H, kvHeads, L, S, D, Dv } = shape;
  const group = H / kvHeads;
  const rows = group * L;
  const splits = Math.ceil(S / DECODE_CHUNK);
  const outRows = B * H * L;
  const maskBytes = shape.maskShape ? 4 * maskLength(shape) : 0;
  const rowGroups = Math.ceil(rows / DECODE_ROWS);
  const decode: KernelPlan = {
    op: "gqa",
    kernel: gpu.resolve(KERNELS, "decode", named === "decode" ? { override } : {}),
    bindings: [
      { name: "q", dtype: "f32", length: B * H * L * D, role: "input" },
      { name: "k", dtype: "f32", length: B * kvHeads * S * D, role: "input" },
      { name: "v", dtype: "f32", length: B * kvHeads * S * Dv, role: "input" },
      { name: "mask", dtype: "f32", length: maskLength(shape), role: "input" },
      { name: "partOut", dtype: "f32", length: outRows * splits * Dv, role: "output" },
      { name: "partStats", dtype: "f32", length: outRows * splits * 2, role: "output" },
    ],
    params: packParams(
      DECODE_PARAMS,
      {
        L,
        S,
        H,
        group,
        rows,
        dq: D / 4,
        dvq: Dv / 4,
        splits,
        scale: shape.scale,
        causal: Number(shape.causal),
        offset: shape.queryOffset,
        ...maskParams(shape),
        row_groups: rowGroups,
        BKV: B * kvHeads,
        ...layoutStrides(shape),
      },
      "gqa",
    ),
    workgroups: foldWorkgroups(splits * rowGroups * B * kvHeads, gpu.limits.maxComputeWorkgroupsPerDimension),
    // The least this pass must move: q, K and V once (once per KV head, the point of the op), the mask,
    // and the partials it writes; D + Dv multiply-adds per (row, key) pair.
    cost: {
      bytes: 4 * (B * H * L * D + B * kvHeads * S * (D + Dv) + outRows * splits * (Dv + 2)) + maskBytes,
      flops: 2 * B * H * L * S * (D + Dv),
    },
  };
  // The combine: `combine` up to COMBINE_MAX_SPLITS splits, `combine_wide` beyond (or as overridden).
  const wide = named === "combine_wide" || (named !== "combine" && splits > COMBINE_MAX_SPLITS);
  const dvq = Dv / 4;
  const groups = Math.ceil(dvq / WIDE_QUADS);
  const combineEntry = wide ? "combine_wide" : "combine";
  const combine: KernelPlan = {
    op: "gqa",
    kernel: gpu.resolve(KERNELS, combineEntry, named === combineEntry ? { override } : {}),
    bindings: [
      { name: "partOut", dtype: "f32", length: outRows * splits * Dv, role: "input" },
      { name: "partStats", dtype: "f32", length: outRows * splits * 2, role: "input" },
      { name: "out", dtype: "f32", length: outRows * Dv, role: "output" },
    ],
    params: wide
      ? packParams(WIDE_PARAMS, { rows: outRows, splits, dvq, groups }, "gqa")
      : packParams(COMBINE_PARAMS, { rows: outRows, splits, dvq }, "gqa"),
    workgroups: foldWorkgroups(wide ? outRows * groups : outRows, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Read the partials once, write out once; per partial element a multiply-add.
    cost: { bytes: 4 * (outRows * splits * (Dv + 2) + outRows * Dv), flops: 2 * outRows * splits * (Dv + 1) },
  };
  const [q, k, v, mask, partOut, partStats] = decode.bindings;
  const out = combine.bindings[2];
  const sequence = kernelSequence("gqa", [q, k, v, mask, out], [partOut, partStats], [
    { plan: decode, tensors: [0, 1, 2, 3, 5, 6] },
    { plan: combine, tensors: [5, 6, 4] },
  ], {
    bytes: 4 * (q.length + k.length + v.length + out.length) + maskBytes,
    flops: decode.cost.flops + combine.cost.flops,
  });
  return { path, steps: [decode, combine], sequence };
}

/**
 * Plans gqa on the GPU.
 *
 * @param gpu the device
 * @param shape the sizes and scalars, with kvHeads (`maskShape` when a mask will be bound)
 * @param options kernel override (a variant of `decode`, `combine` or `combine_wide` forces the decode
 *   path, and a combine's the combine; a variant of flash_attention's `tiled`, `staged` or `kernel`
 *   forces the prefill path and that kernel; any other name throws, on either path) and `path`
 * @returns the path and its plans, to be submitted in order (see {@link GqaPlans} for the bindings)
 * @throws Error naming a bad argument
 *
 * @example Resident tensors: one decode step, submitted as its sequence
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { gqaPlan } from "@xpu/ops/ops/gqa";
 * const gpu = await acquireDevice();
 * // Two query heads share one KV head of three cached positions.
 * const { path, sequence } = gqaPlan(gpu, { B: 1, H: 2, kvHeads: 1, L: 1, S: 3, D: 4 }); // path "decode"
 * const q = gpu.upload(new Float32Array(8).fill(1));
 * const k = gpu.upload(new Float32Array(12).fill(1));
 * const v = gpu.upload(new Float32Array([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]));
 * const mask = gpu.alloc("f32", 1); // a placeholder: no mask
 * const out = gpu.alloc("f32", 8);
 * const [partOut, partStats] = sequence!.intermediates.map((t) => gpu.alloc("f32", t.length));
 * await gpu.submitSequence(sequence!, [q, k, v, mask, out, partOut, partStats]); // bindings, then intermediates
 * const y = await gpu.read(out); // [2, 2, 2, 2, 2, 2, 2, 2]: equal scores, so each head averages v
 * gpu.destroy();
 * ```
 */
export function gqaPlan(gpu: ResidentDevice, shape: GqaShape, options?: GqaOptions): GqaPlans {
  requireDevice("gqa", gpu);
  checkOptions("gqa", options, OPTION_KEYS);
  return gqaPlansOf(gpu, validateGqaShape(shape), options);
}

/**
 * Grouped-query attention on the GPU.
 *
 * @param gpu the device
 * @param args as {@link gqa}
 * @param options kernel override and path
 * @returns the output, `[B, H, L, Dv]` (`[B, L, H, Dv]` with layout `"BLHD"`)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { gqaGpu } from "@xpu/ops/ops/gqa";
 * const gpu = await acquireDevice();
 * // One decode step: 8 query heads over 2 KV heads, a cache of 300 positions.
 * const [B, H, kvHeads, L, S, D] = [1, 8, 2, 1, 300, 64];
 * const q = new Float32Array(B * H * L * D).fill(0.1);
 * const k = new Float32Array(B * kvHeads * S * D).fill(0.2);
 * const v = new Float32Array(B * kvHeads * S * D).fill(0.3);
 * const out = await gqaGpu(gpu, { q, k, v, B, H, kvHeads, L, S, D });
 * gpu.destroy();
 * ```
 */
export async function gqaGpu(gpu: ResidentDevice, args: GqaArgs, options?: GqaOptions): Promise<Float32Array> {
  requireDevice("gqa", gpu);
  checkOptions("gqa", options, OPTION_KEYS);
  const shape = validateGqa(args);
  const { path, steps, sequence } = gqaPlansOf(gpu, shape, options);
  const mask = args.mask ?? new Float32Array(1);
  if (path === "prefill") {
    const [out] = await gpu.run(steps[0], [args.q, args.k, args.v, mask]);
    return out as Float32Array;
  }
  const made: GpuTensor[] = [];
  const keep = (t: GpuTensor): GpuTensor => {
    made.push(t);
    return t;
  };
  try {
    const tensors = [...sequence!.bindings, ...sequence!.intermediates].map((spec, i) =>
      keep(i < 4 ? gpu.upload([args.q, args.k, args.v, mask][i], spec.name) : gpu.alloc("f32", spec.length, spec.name))
    );
    await gpu.submitSequence(sequence!, tensors);
    return await gpu.read(tensors[4]) as Float32Array;
  } finally {
    for (const t of made) t.buffer.destroy();
  }
}

/** Most slices `cache_decode` splits the cache into (the combine holds one per invocation of 128). */
export const CACHE_MAX_SPLITS = 128;

const CACHE_PARAMS: readonly ParamField[] = [
  { name: "heads", type: "u32" },
  { name: "kv_heads", type: "u32" },
  { name: "dim", type: "u32" },
  { name: "max_seq", type: "u32" },
];
const CACHE_ATTENTION_PARAMS: readonly ParamField[] = [
  ...CACHE_PARAMS,
  { name: "scale", type: "f32" },
  { name: "splits", type: "u32" },
];

function requireIntIn(name: string, value: number, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new Error(`gqaCache: ${name} must be an integer in [${min}, ${max}], got ${value}`);
  }
  return value;
}

/** The attention kernels' pipeline constants: the positions scored at once. */
function chunkOf(shape: GqaCacheShape): Record<string, number> {
  return { CHUNK: shape.chunk ?? 1024 };
}

/**
 * Plans one decode step's attention on a KV cache: RoPE of the row's query and key, the cache write
 * and the attention over positions `0 ..= state.pos0`, in one dispatch (`cache_decode`).
 *
 * @param gpu the device
 * @param shape `H`, `kvHeads`, `D`, `maxSeq` (`L` must be 1), `scale`; `splits`: slices of the cache,
 *   1 to {@link CACHE_MAX_SPLITS}; `positions`: the cache length the cost counts (default maxSeq: the
 *   position is read on the GPU)
 * @param options kernel override
 * @returns the plan; bindings `qkv` (`[(H + 2 * kvHeads) * D]`), `table` (`[maxSeq, D / 2, 2]`),
 *   `keys`, `values` (`[kvHeads, maxSeq, D]`, the row's written at pos0), `out` (`[H, D]`), `state`
 *   (u32 [4]: `[pos0, ...]`), `partial` (u32, scratch) and `counters` (u32 [H], zeros when first used;
 *   the kernel leaves them so)
 * @throws Error naming the argument, as {@link validateGqaCacheShape}, or L or splits
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gqaCacheDecodePlan } from "@xpu/ops/ops/gqa";
 * const gpu = await acquireDevice();
 * const plan = gqaCacheDecodePlan(gpu, { H: 2, kvHeads: 1, D: 4, maxSeq: 8, L: 1, splits: 2 });
 * const tensors = plan.bindings.map((b) => gpu.alloc(b.dtype, b.length, b.name)); // zeros; state: position 0
 * gpu.device.queue.writeBuffer(tensors[1].buffer, 0, new Float32Array(32).map((_, i) => (i % 2 ? 0 : 1))); // cos 1
 * gpu.device.queue.writeBuffer(tensors[0].buffer, 0, new Float32Array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]));
 * await gpu.submit([plan, tensors]);
 * console.log(await gpu.read(tensors[4])); // both heads: the only value, [1, 2, 3, 4]
 * gpu.destroy();
 * ```
 */
export function gqaCacheDecodePlan(
  gpu: ResidentDevice,
  shape: GqaCacheShape & { splits: number; positions?: number },
  options?: KernelOptions<GqaVariant>,
): KernelPlan {
  requireDevice("gqaCacheDecode", gpu);
  checkOptions("gqaCache", options);
  const scale = validateGqaCacheShape(shape);
  const { H, kvHeads, D, maxSeq } = shape;
  if (shape.L !== 1) throw new Error(`gqaCache: the decode plan takes one row (L = 1), got L = ${shape.L}`);
  const splits = requireIntIn("splits", shape.splits, 1, CACHE_MAX_SPLITS);
  const positions = requireIntIn("positions", shape.positions ?? maxSeq, 1, maxSeq);
  const cache = kvHeads * maxSeq * D;
  return {
    op: "gqa",
    kernel: gpu.resolve(KERNELS, "cache_decode", options),
    bindings: [
      { name: "qkv", dtype: "f32", length: (H + 2 * kvHeads) * D, role: "input" },
      { name: "table", dtype: "f32", length: maxSeq * D, role: "input" },
      { name: "keys", dtype: "f32", length: cache, role: "inout" },
      { name: "values", dtype: "f32", length: cache, role: "inout" },
      { name: "out", dtype: "f32", length: H * D, role: "output" },
      { name: "state", dtype: "u32", length: 4, role: "input" },
      { name: "partial", dtype: "u32", length: H * splits * (D + 2), role: "inout" },
      { name: "counters", dtype: "u32", length: H, role: "inout" },
    ],
    params: packParams(
      CACHE_ATTENTION_PARAMS,
      { heads: H, kv_heads: kvHeads, dim: D, max_seq: maxSeq, scale, splits },
      "gqaCache",
    ),
    constants: chunkOf(shape),
    workgroups: [H, 1, splits],
    // K and V of `positions` positions read once per KV head, the row's projections, the output; a
    // multiply-add per (head, position, channel) for the scores and for the values.
    cost: {
      bytes: 4 * (2 * kvHeads * positions * D + (H + 2 * kvHeads) * D + H * D),
      flops: 4 * H * positions * D,
    },
  };
}

/** The dispatches of a prefill call on a KV cache (see {@link gqaCachePrefillPlan}). */
export interface GqaCachePrefill {
  /** `cache_write`: bindings `qkv`, `table`, `q` (output), `keys`, `values`, `state`. */
  write: KernelPlan;
  /** `cache_prefill`: bindings `q`, `keys`, `values`, `out`, `state`, `partial`, `counters` (unused scratch). */
  attend: KernelPlan;
  /**
   * Both as one operation: bindings `qkv`, `table`, `keys`, `values`, `out`, `state`; intermediates
   * `q`, `partial`, `counters`.
   */
  sequence: KernelSequence;
}

/**
 * Plans a call of several rows on a KV cache: RoPE and the cache write of every row
 * (`cache_write`), then each row's attention over positions `0 ..= pos0 + r` (`cache_prefill`).
 *
 * @param gpu the device
 * @param shape `H`, `kvHeads`, `D`, `maxSeq`, `L`, `scale`; `positions`: the cache length the cost
 *   counts after the call (default maxSeq)
 * @param options kernel override (a variant of `cache_write` or `cache_prefill`)
 * @returns the two plans and their sequence
 * @throws Error naming the argument, as {@link validateGqaCacheShape}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gqaCachePrefillPlan } from "@xpu/ops/ops/gqa";
 * const gpu = await acquireDevice();
 * const { sequence } = gqaCachePrefillPlan(gpu, { H: 2, kvHeads: 1, D: 4, maxSeq: 8, L: 3 });
 * sequence.steps.map((s) => s.plan.kernel.variant); // ["cache_write", "cache_prefill"]
 * gpu.destroy();
 * ```
 */
export function gqaCachePrefillPlan(
  gpu: ResidentDevice,
  shape: GqaCacheShape & { positions?: number },
  options?: KernelOptions<GqaVariant>,
): GqaCachePrefill {
  requireDevice("gqaCachePrefill", gpu);
  checkOptions("gqaCache", options);
  const scale = validateGqaCacheShape(shape);
  const { H, kvHeads, D, maxSeq, L } = shape;
  const positions = requireIntIn("positions", shape.positions ?? maxSeq, L, maxSeq);
  const named = overrideEntry(options?.override);
  if (named !== undefined && named !== "cache_write" && named !== "cache_prefill") {
    throw new Error(
      `gqaCache: override "${options!.override}" is not a variant of entry point "cache_write" or "cache_prefill"`,
    );
  }
  const cache = kvHeads * maxSeq * D;
  const width = (H + 2 * kvHeads) * D;
  const qkv: BindingSpec = { name: "qkv", dtype: "f32", length: L * width, role: "input" };
  const table: BindingSpec = { name: "table", dtype: "f32", length: maxSeq * D, role: "input" };
  const q: BindingSpec = { name: "q", dtype: "f32", length: L * H * D, role: "output" };
  const keys: BindingSpec = { name: "keys", dtype: "f32", length: cache, role: "inout" };
  const values: BindingSpec = { name: "values", dtype: "f32", length: cache, role: "inout" };
  const state: BindingSpec = { name: "state", dtype: "u32", length: 4, role: "input" };
  const out: BindingSpec = { name: "out", dtype: "f32", length: L * H * D, role: "output" };
  const partial: BindingSpec = { name: "partial", dtype: "u32", length: 1, role: "inout" };
  const counters: BindingSpec = { name: "counters", dtype: "u32", length: 1, role: "inout" };
  const write: KernelPlan = {
    op: "gqa",
    kernel: gpu.resolve(KERNELS, "cache_write", named === "cache_write" ? options : {}),
    bindings: [qkv, table, q, keys, values, state],
    params: packParams(CACHE_PARAMS, { heads: H, kv_heads: kvHeads, dim: D, max_seq: maxSeq }, "gqaCache"),
    workgroups: L,
    // The projections read; the rotated queries and the rows' keys and values written; 6 FLOPs a pair rotated.
    cost: { bytes: 8 * L * width, flops: 3 * L * (H + kvHeads) * D },
  };
  const attend: KernelPlan = {
    op: "gqa",
    kernel: gpu.resolve(KERNELS, "cache_prefill", named === "cache_prefill" ? options : {}),
    bindings: [
      { ...q, role: "input" },
      { ...keys, role: "input" },
      { ...values, role: "input" },
      out,
      state,
      partial,
      counters,
    ],
    params: packParams(
      CACHE_ATTENTION_PARAMS,
      { heads: H, kv_heads: kvHeads, dim: D, max_seq: maxSeq, scale, splits: 1 },
      "gqaCache",
    ),
    constants: chunkOf(shape),
    workgroups: [H, L, 1],
    // Each (row, head) reads its positions' K and V (heads of one KV head share them through L2, not
    // in the kernel); a multiply-add per (row, head, position, channel), twice.
    cost: { bytes: 4 * (2 * L * H * positions * D + 2 * L * H * D), flops: 4 * L * H * positions * D },
  };
  const sequence = kernelSequence("gqa", [qkv, table, keys, values, out, state], [q, partial, counters], [
    { plan: write, tensors: [0, 1, 6, 2, 3, 5] },
    { plan: attend, tensors: [6, 2, 3, 4, 5, 7, 8] },
  ], {
    bytes: 4 * (L * width + 2 * kvHeads * positions * D + L * H * D),
    flops: write.cost.flops + attend.cost.flops,
  });
  return { write, attend, sequence };
}

/**
 * Attention of a call's rows over a KV cache on the GPU ({@link gqaCache}): one row through the
 * decode plan (in `splits` slices, default 1), several through the prefill plans.
 *
 * @param gpu the device
 * @param args as {@link gqaCache}, with `splits` (and `chunk`) for the kernels
 * @param options kernel override
 * @returns `out` and the caches with the call's positions written
 * @throws Error naming the argument, as {@link validateGqaCache}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gqaCacheGpu } from "@xpu/ops/ops/gqa";
 * const gpu = await acquireDevice();
 * const { out } = await gqaCacheGpu(gpu, {
 *   H: 1, kvHeads: 1, D: 4, maxSeq: 1, L: 1, pos0: 0,
 *   qkv: new Float32Array([1, 0, 0, 0, 1, 0, 0, 0, 5, 6, 7, 8]), table: new Float32Array([1, 0, 1, 0]),
 *   keys: new Float32Array(4), values: new Float32Array(4),
 * });
 * console.log(out); // Float32Array [5, 6, 7, 8]
 * gpu.destroy();
 * ```
 */
export async function gqaCacheGpu(
  gpu: ResidentDevice,
  args: GqaCacheArgs & { splits?: number },
  options?: KernelOptions<GqaVariant>,
): Promise<{ out: Float32Array; keys: Float32Array; values: Float32Array }> {
  requireDevice("gqaCache", gpu);
  checkOptions("gqaCache", options);
  validateGqaCache(args);
  const made: GpuTensor[] = [];
  const keep = (t: GpuTensor) => {
    made.push(t);
    return t;
  };
  try {
    const state = keep(gpu.upload(new Uint32Array([args.pos0, 0, 0, 0]), "state"));
    const [qkv, table, keys, values] = [args.qkv, args.table, args.keys, args.values].map((a) => keep(gpu.upload(a)));
    const out = keep(gpu.alloc("f32", args.L * args.H * args.D, "out"));
    if (args.L === 1) {
      const plan = gqaCacheDecodePlan(gpu, { ...args, splits: args.splits ?? 1 }, options);
      const partial = keep(gpu.alloc("u32", plan.bindings[6].length, "partial"));
      const counters = keep(gpu.alloc("u32", args.H, "counters"));
      await gpu.submit([plan, [qkv, table, keys, values, out, state, partial, counters]]);
    } else {
      const { sequence } = gqaCachePrefillPlan(gpu, args, options);
      const scratch = sequence.intermediates.map((b) => keep(gpu.alloc(b.dtype, b.length, b.name)));
      await gpu.submitSequence(sequence, [qkv, table, keys, values, out, state, ...scratch]);
    }
    const [o, k, v] = await Promise.all([out, keys, values].map((t) => gpu.read(t)));
    return { out: o as Float32Array, keys: k as Float32Array, values: v as Float32Array };
  } finally {
    for (const t of made) t.buffer.destroy();
  }
}
