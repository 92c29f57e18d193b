/**
 * flash_attention: scaled dot-product attention in one dispatch (entry points `tiled`, `staged` and `kernel`),
 * the same function as ops/attention, `F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale)`
 * of torch 2.11, with the same conventions, each pinned by a test that the alternative fails: scale 1/sqrt(D)
 * unless given; `causal` upper-left aligned, key j visible iff `j <= i + queryOffset` (`queryOffset = S - L`
 * is `causal_lower_right`); the additive float `mask` broadcast by `maskShape` (`keyPaddingBias` turns a
 * boolean one, true = attend, into it); `causal` with `mask` refused, as torch refuses it; a row with no
 * visible key gives zeros, as `aten::_safe_softmax`, not NaN. NaN and ±Infinity as ops/attention's
 * reference (nonfinite.test.ts): a NaN or +inf score makes its row NaN (the kernels tell a dead score
 * from its bits, harness/wgsl/live_score.wgsl; `s > LOWEST` dropped a NaN score, and a NaN query row came
 * out 0), a key masked by -inf has its v multiplied by 0, and a key hidden by `causal` is no part of its
 * row whatever its v, as in the reference. The kernels walk each tile's keys up to the last one its rows
 * see, so on the tile's diagonal a key hidden from one row is seen by another; there its p · v goes only
 * to the rows that see it (a select per product, in the blocks or chunks of v where some row of an
 * invocation does not see a key), since the hidden row's probability 0 times a NaN or infinite v is NaN
 * (which torch's math backend and its fused CPU kernel give: the "hidden" case of
 * ops/attention/goldens/sdpa_nonfinite.py).
 *
 * What makes it flash attention: the `[B, H, L, S]` score matrix is never stored. Each workgroup takes 128
 * query rows of one head and walks the keys in blocks (31 or 64), keeping a running max and sum per row and
 * rescaling its partial output whenever the max grows (online softmax). The plan binds q, k, v, the mask, the
 * output and the params and nothing else, so the bytes it binds grow linearly in L and S (a test counts them:
 * 132n + 80 bytes at B = H = 1, L = S = n, D = Dv = 8 with a `[1, 1, 1, n]` mask, against the unfused
 * attention's 4n² + 132n + 96; the spec states 132n + 44 and 4n² + 68n + 40 for its own bindings: the same
 * linear against quadratic growth, with other constants). Decode (L = 1) runs the same kernels, 127 of their
 * 128 rows idle; ops/gqa has the decode path that splits the keys.
 *
 * The kernels (see `wgsl/`), 256 invocations each, take any head dims that are multiples of 4: D is
 * walked in chunks (16 values at a time in `tiled`, 32 in `wide`, 128 in `staged`, 4 in `kernel`), so a
 * D of 512 costs more chunks of the same score loop, and no more registers or workgroup memory. Output
 * columns are tiled, 128 per workgroup (512 in `wide`), a larger Dv taking more workgroups (z), each
 * computing every score again; (row tile, head) pairs beyond 65,535 fold into a second grid dimension.
 * - `tiled` computes both products as register-tiled GEMMs, as matmul does: each invocation owns 8 query
 *   rows, their scores against 4 keys of a 64-key block and their outputs in 8 columns of v; q and k are
 *   staged 16 columns at a time, v 16 keys at a time, each chunk loaded one ahead; the row maxima are
 *   reduced through workgroup memory by the 16 invocations sharing the rows, the sums once at the end;
 *   probabilities for 64 keys x 128 rows in workgroup memory: 47,104 bytes in all.
 * - `wide` is `tiled` for wide value heads: 32 rows x 512 columns a workgroup (the same 8 x 8 outputs
 *   per invocation), so a Dv up to 512 computes its scores once where the 128-column kernels compute
 *   them ceil(Dv / 128) times (4 score products for 1 output product at the VAE's D = Dv = 512); the
 *   price is an 8 rows x 1 key score tile per invocation, q and k staged 32 columns at a time, v 8 keys
 *   at a time: 25,600 bytes in all.
 * - `buffered` is `tiled` with the score phase's chunks of q and k double-buffered (in the memory the
 *   probabilities take later), one barrier per chunk instead of two: 19 barriers a block at D = 128
 *   instead of 26, 41,984 bytes. The plan's first choice: on an H100 it was 3-5% faster than `tiled` at
 *   every shape measured (`1x30x4608x4608x128` 16.1 against 16.9 ms, `1x16x4096x4096x128` 6.27 against
 *   6.54, `1x16x4096x512x128` 0.765 against 0.789; harness/baselines/nvidia-h100-log/
 *   01-diffusion-rows-bench.txt), and it needs less workgroup memory, so `tiled` runs only when named.
 * - `staged` and `kernel`: scores of 4 rows x 4 keys per invocation; statistics by one invocation per
 *   row; output 8 rows x 8 columns of v per invocation in sixteen named vec4 accumulators; probabilities
 *   for 31 keys x 128 rows plus one slot of rescale factors in 16 KiB of workgroup memory.
 * - `kernel` reads q, k and v straight from memory in its loops: 16 KiB in all, WebGPU's default
 *   maxComputeWorkgroupStorageSize, so every device runs it (browsers included).
 * - `staged` stages each block's K (transposed) and then V in another 16 KiB with four coalesced loads
 *   per invocation, and its loops read workgroup memory: 32 KiB in all.
 * The plan takes `wide` for Dv over {@link NARROW_MAX_DV} (256) where the device grants its memory, and
 * otherwise the first of `buffered`, `staged` and `kernel` whose workgroup memory the device grants (the
 * H100 and H200: `buffered`; llvmpipe and most devices, 32 KiB: `staged`), and checks the kernel it takes against the
 * device's limit before dispatch (`{ override }` forces one). `wide`'s speed is not measured yet.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6 over Vulkan, GPU timestamps, harness/timing.ts, warm
 * clocks, median of 10; probes in the same run: read 4,519 GB/s, f32 FMA 64.4 TFLOP/s), `kernel` at the
 * issue's causal prefill (B = 1, H = 32, L = S = 4096, D = 128, FLOPs 2·B·H·L·S·D): 20.7 ms, 6.6 TFLOP/s,
 * against a target of 20. The same kernel with its output phase cut ran 14.0 ms and with its score loop
 * cut 6.0 ms: the score loop, which loads a quad of four new K rows per iteration (first touch: L2), is
 * where the time goes. `staged`, written after that run to take K and V through workgroup memory
 * instead, ran the same case in 9.09 ms (15.1 TFLOP/s, 23.5% of the FMA probe) in the baseline
 * (harness/baselines/nvidia-h200-log/21-bench.txt, where `kernel` took 21.0 ms); that is the figure
 * with a kept output, the ones above are from its author's run, whose output was not kept.
 *
 * `tiled` (2026-12-02, same conditions, harness/baselines/nvidia-h200-log/29-flash-bench.json; the A/B
 * runs before it in 29-flash-ab1.txt and 29-flash-ab2.txt): the same causal prefill in 6.45 ms, 21.3
 * TFLOP/s, 33.1% of the FMA probe (64.4), where `staged` took 9.08 ms in the same run. Its ablations
 * (29-flash-ab2.txt): score products cut 4.11 ms, output products cut 4.61, both cut 2.23 (staging,
 * barriers, softmax): the two products take about 2.4 and 1.9 ms, the rest a third of the time. With
 * 64 rows and 128 invocations (30 KiB) it ran 12.6 ms, without loading chunks ahead 7.28 (29-flash-ab1).
 *
 * Layout: `layout: "BHLD"` (the default) takes q `[B, H, L, D]`, k `[B, H, S, D]`, v `[B, H, S, Dv]` and
 * writes out `[B, H, L, Dv]`; `layout: "BLHD"` takes them token-major, as Linear layers write them (q
 * `[B, L, H, D]`, k `[B, S, H, D]`, v `[B, S, H, Dv]`, out `[B, L, H, Dv]`; gqa's kvHeads in place of H
 * for k and v), so a model needs no permute before or after. Every kernel reads either through four
 * row strides in its params ({@link layoutStrides}); the bindings, the grid and the cost are the same.
 * `tiled` stages q and k as runs of 4 quads (64 bytes) of a row and v as runs of 32 quads in either
 * layout; only the distance between two rows differs. (Token-major speed on the H200: not measured yet.)
 *
 * Refused, with an error naming the argument, before any GPU work: everything attention refuses (sizes
 * that are not integers >= 1, H not a multiple of kvHeads, a scale that is not a finite f32, a
 * queryOffset beyond ±2^30, a maskShape that does not broadcast, arrays of the wrong type or length,
 * causal with mask), D or Dv not a multiple of 4, and a layout other than `"BHLD"` or `"BLHD"`.
 *
 * @module
 */

import { foldWorkgroups, requireWorkgroupStorage, workgroupBytesOf } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import type { Resolution } from "../../harness/resolve.ts";
import { maskLength, maskParams } from "../attention/kernel_params.ts";
import { checkOptions, I32_MAX, requireArgs, requireInt, requireOneOf, shown, U32_MAX } from "../validate.ts";
import { type FlashAttentionVariant, KERNELS } from "./kernels.gen.ts";
import {
  type FlashAttentionArgs,
  type FlashAttentionShape,
  type ResolvedAttentionShape,
  type ResolvedFlashShape,
  validateFlashAttention,
  validateFlashAttentionShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type FlashAttentionVariant, KERNELS };

/**
 * The kernel's entry points: `wide` for wide value heads, the others in the plan's order of preference,
 * and `tiled`, which the plan takes only when named (`buffered` is the same kernel with double-buffered
 * staging, measured faster).
 */
export const FLASH_ENTRIES: readonly string[] = ["wide", "buffered", "staged", "kernel", "tiled"];
/** The 128-column kernels in the plan's order of preference: it takes the first whose workgroup memory fits. */
const NARROW_ENTRIES = ["buffered", "staged", "kernel"];
/**
 * The largest Dv the plan gives a 128-column kernel; above it, `wide` (512 columns a workgroup) where the
 * device grants its workgroup memory. The 128-column kernels compute every score ceil(Dv / 128) times,
 * `wide` once per 512 columns but for 32 rows a workgroup instead of 128. Where the two meet is to be
 * measured (the bench rows at Dv = 256 and 512); this bound puts Dv = 384 and 512 (the VAEs' single
 * heads) on `wide`.
 */
export const NARROW_MAX_DV = 256;

/**
 * Workgroup memory a kernel declares: the sum of its `var<workgroup>` arrays (harness/limits.ts
 * `workgroupBytesOf`; the source is the one truth, and the plans check it against the device's limit).
 *
 * @param source WGSL
 * @returns bytes
 *
 * @example
 * ```ts
 * import { KERNELS, workgroupBytes } from "@xpu/ops/ops/flash_attention";
 * workgroupBytes(KERNELS.kernel); // 16384: WebGPU's default limit, so every device runs it
 * workgroupBytes(KERNELS.tiled); // 47104
 * ```
 */
export function workgroupBytes(source: string): number {
  requireSource("workgroupBytes", source);
  return workgroupBytesOf(source, "flash_attention");
}

/** A kernel's `const NAME = <n>u;` (the source is the one truth for the grid). */
function kernelConst(source: string, name: string): number {
  requireSource(`flash_attention: ${name === "ROWS" ? "rowsPerWorkgroup" : "columnsPerWorkgroup"}`, source);
  const m = source.match(new RegExp(`^const ${name} = (\\d+)u;`, "m"));
  if (m === null) throw new Error(`flash_attention: the kernel declares no \`const ${name}\``);
  return Number(m[1]);
}

/** Requires a kernel's WGSL text (one of {@link KERNELS}' values). */
function requireSource(where: string, source: unknown): void {
  if (typeof source !== "string") {
    throw new Error(`${where}: source must be a kernel's WGSL text (a string), got ${shown(source)}`);
  }
}

/**
 * Query rows per workgroup of a kernel: its `const ROWS` (the source is the one truth).
 *
 * @param source WGSL
 * @returns rows
 *
 * @example
 * ```ts
 * import { KERNELS, rowsPerWorkgroup } from "@xpu/ops/ops/flash_attention";
 * rowsPerWorkgroup(KERNELS.kernel); // 128
 * rowsPerWorkgroup(KERNELS.wide); // 32
 * ```
 */
export function rowsPerWorkgroup(source: string): number {
  return kernelConst(source, "ROWS");
}

/**
 * Output columns per workgroup of a kernel: its `const COLS`; a larger Dv takes more workgroups (z),
 * each computing the scores again.
 *
 * @param source WGSL
 * @returns columns
 *
 * @example
 * ```ts
 * import { columnsPerWorkgroup, KERNELS } from "@xpu/ops/ops/flash_attention";
 * columnsPerWorkgroup(KERNELS.kernel); // 128
 * columnsPerWorkgroup(KERNELS.wide); // 512
 * ```
 */
export function columnsPerWorkgroup(source: string): number {
  return kernelConst(source, "COLS");
}

/**
 * The flash kernel for a device and shape: the variant an override names (of an entry of
 * {@link FLASH_ENTRIES}); else `wide` when Dv > {@link NARROW_MAX_DV} and the device grants its 25,600
 * bytes of workgroup memory; else the first of `buffered` (41,984 bytes), `staged` (32 KiB) and `kernel`
 * (16 KiB, WebGPU's default, so every device runs one) whose workgroup memory the device grants.
 *
 * @param gpu the device
 * @param op the op, for messages
 * @param shape the validated shape (its Dv decides)
 * @param options kernel override, of any name: gqa's options pass through here too, and a name
 *   that is no variant of {@link FLASH_ENTRIES} is refused (naming them)
 * @returns the resolved kernel
 * @throws Error naming the op and the entry points when an override names a variant of none of them
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { flashKernel, validateFlashAttentionShape } from "@xpu/ops/ops/flash_attention";
 * const gpu = await acquireDevice();
 * const shape = validateFlashAttentionShape({ B: 1, H: 8, L: 512, S: 512, D: 64 });
 * flashKernel(gpu, "flashAttention", shape).variant; // "buffered" where the device grants 41,984 bytes, else "staged" or "kernel"
 * flashKernel(gpu, "flashAttention", shape, { override: "kernel" }).variant; // "kernel"
 * gpu.destroy();
 * ```
 */
export function flashKernel(
  gpu: ResidentDevice,
  op: string,
  shape: ResolvedAttentionShape,
  options?: KernelOptions,
): Resolution {
  requireDevice("flashAttention", gpu);
  const granted = gpu.device.limits.maxComputeWorkgroupStorageSize;
  const fits = (entry: string) => workgroupBytes(gpu.resolve(KERNELS, entry).source) <= granted;
  const chosen = shape.Dv > NARROW_MAX_DV && fits("wide") ? "wide" : NARROW_ENTRIES.find(fits) ?? "kernel";
  return gpu.resolveAmong(KERNELS, op, FLASH_ENTRIES, chosen, options);
}

const PARAMS: readonly ParamField[] = [
  { name: "L", type: "u32" },
  { name: "S", type: "u32" },
  { name: "H", type: "u32" },
  { name: "group", type: "u32" },
  { name: "dq", type: "u32" },
  { name: "dvq", type: "u32" },
  { name: "scale", type: "f32" },
  { name: "causal", type: "u32" },
  { name: "offset", type: "i32" },
  { name: "masked", type: "u32" },
  { name: "mask_b", type: "u32" },
  { name: "mask_h", type: "u32" },
  { name: "mask_i", type: "u32" },
  { name: "tiles", type: "u32" },
  { name: "BH", type: "u32" },
  { name: "q_head", type: "u32" },
  { name: "q_step", type: "u32" },
  { name: "kv_head", type: "u32" },
  { name: "kv_step", type: "u32" },
];

/**
 * The row strides of a layout as the kernels read them (flash_bindings.wgsl; gqa's decode kernel takes
 * the same): rows between two heads and between two tokens, of q (and out) and of k (and v). A row is
 * one head's D (or Dv) values of one token.
 *
 * @param shape the resolved shape, with its layout
 * @returns `q_head`, `q_step`, `kv_head`, `kv_step`
 *
 * @example
 * ```ts
 * import { layoutStrides, validateFlashAttentionShape } from "@xpu/ops/ops/flash_attention";
 * const shape = { B: 1, H: 2, L: 3, S: 5, D: 4 };
 * layoutStrides(validateFlashAttentionShape(shape)); // { q_head: 3, q_step: 1, kv_head: 5, kv_step: 1 }
 * layoutStrides(validateFlashAttentionShape({ ...shape, layout: "BLHD" })); // { q_head: 1, q_step: 2, kv_head: 1, kv_step: 2 }
 * ```
 */
export function layoutStrides(shape: ResolvedFlashShape): Record<"q_head" | "q_step" | "kv_head" | "kv_step", number> {
  requireResolved("layoutStrides", shape);
  requireOneOf("layoutStrides", "layout", shape.layout, ["BHLD", "BLHD"]);
  const { H, kvHeads, L, S } = shape;
  return shape.layout === "BHLD"
    ? { q_head: L, q_step: 1, kv_head: S, kv_step: 1 }
    : { q_head: 1, q_step: H, kv_head: 1, kv_step: kvHeads };
}

/**
 * Pairs of (query row, key) the softmax weighs: L * S, or under causal those with j <= i + queryOffset.
 *
 * @param shape the resolved shape
 * @returns the count per head
 *
 * @example
 * ```ts
 * import { validateFlashAttentionShape, visiblePairs } from "@xpu/ops/ops/flash_attention";
 * visiblePairs(validateFlashAttentionShape({ B: 1, H: 1, L: 3, S: 3, D: 4 })); // 9
 * visiblePairs(validateFlashAttentionShape({ B: 1, H: 1, L: 3, S: 3, D: 4, causal: true })); // 6: 1 + 2 + 3
 * ```
 */
export function visiblePairs(shape: ResolvedAttentionShape): number {
  requireResolved("visiblePairs", shape);
  const { L, S, causal, queryOffset } = shape;
  if (!causal) return L * S;
  // Row i sees min(S, max(0, i + queryOffset + 1)) keys: none before row `seen`, S from row `full`
  // on, and between them one more per row (a closed form: L reaches 2^32 - 1).
  const seen = Math.min(L, Math.max(0, -queryOffset));
  const full = Math.min(L, Math.max(seen, S - queryOffset - 1));
  const rising = full - seen;
  return rising * (seen + queryOffset + 1) + (rising * (rising - 1)) / 2 + (L - full) * S;
}

/**
 * Requires a resolved attention shape (what validateFlashAttentionShape returns): its sizes integers,
 * queryOffset an integer and causal a boolean, so that a helper given anything else refuses it
 * naming the field instead of counting with NaN.
 */
function requireResolved(where: string, shape: ResolvedAttentionShape): void {
  requireArgs(where, "shape", shape, "(a resolved shape: validateFlashAttentionShape's result)");
  for (const key of ["B", "H", "kvHeads", "L", "S", "D", "Dv"] as const) requireInt(where, key, shape[key], 0, U32_MAX);
  requireInt(where, "queryOffset", shape.queryOffset, -I32_MAX - 1, I32_MAX);
  if (typeof shape.causal !== "boolean") {
    throw new Error(`${where}: causal must be a boolean, got ${shown(shape.causal)}`);
  }
}

/**
 * The plan of flash_attention's kernel for a validated shape, under any op name: flashAttention's own,
 * and gqa's prefill path (kvHeads < H).
 *
 * @param gpu the device
 * @param op the op name the plan reports
 * @param shape the validated shape
 * @param kernel the resolved kernel (a variant of flash_attention's `kernel`)
 * @returns the plan; bindings q, k, v, mask (one placeholder element without a mask), out
 * @throws LimitError when the device grants less workgroup memory than the kernel declares
 *
 * @example The prefill plan of a grouped shape, as gqa makes it
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { flashKernel, flashPlanOf } from "@xpu/ops/ops/flash_attention";
 * import { validateGqaShape } from "@xpu/ops/ops/gqa";
 * const gpu = await acquireDevice();
 * const shape = validateGqaShape({ B: 1, H: 4, kvHeads: 2, L: 16, S: 16, D: 8, causal: true });
 * const plan = flashPlanOf(gpu, "gqa", shape, flashKernel(gpu, "gqa", shape));
 * plan.bindings.map((b) => b.length); // [512, 256, 256, 1, 512]: q, k, v, mask, out
 * gpu.destroy();
 * ```
 */
export function flashPlanOf(
  gpu: ResidentDevice,
  op: string,
  shape: ResolvedFlashShape,
  kernel: Resolution,
): KernelPlan {
  requireDevice("flashAttention", gpu);
  requireWorkgroupStorage(gpu, `${op}/${kernel.variant}`, workgroupBytes(kernel.source));
  const { B, H, kvHeads, L, S, D, Dv } = shape;
  const tiles = Math.ceil(L / rowsPerWorkgroup(kernel.source));
  const pairs = B * H * visiblePairs(shape);
  // (row tile, head) pairs in x, folded into y past the per-dimension limit; output tiles in z.
  const [x, y] = foldWorkgroups(tiles * B * H, gpu.limits.maxComputeWorkgroupsPerDimension);
  return {
    op,
    kernel,
    bindings: [
      { name: "q", dtype: "f32", length: B * H * L * D, role: "input" },
      { name: "k", dtype: "f32", length: B * kvHeads * S * D, role: "input" },
      { name: "v", dtype: "f32", length: B * kvHeads * S * Dv, role: "input" },
      { name: "mask", dtype: "f32", length: maskLength(shape), role: "input" },
      { name: "out", dtype: "f32", length: B * H * L * Dv, role: "output" },
    ],
    params: packParams(
      PARAMS,
      {
        L,
        S,
        H,
        group: H / kvHeads,
        dq: D / 4,
        dvq: Dv / 4,
        scale: shape.scale,
        causal: Number(shape.causal),
        offset: shape.queryOffset,
        ...maskParams(shape),
        tiles,
        BH: B * H,
        ...layoutStrides(shape),
      },
      op,
    ),
    workgroups: [x, y, Math.ceil(Dv / columnsPerWorkgroup(kernel.source))],
    // Read q, k, v and the mask once, write out once; per visible (row, key) pair D multiply-adds for
    // the score and Dv for the output. Causal at L = S counts about half the pairs, so this is the
    // issue's 2·B·H·L·S·D for causal prefill at D = Dv (4·B·H·L·S·D without causal).
    cost: {
      bytes: 4 * (B * H * L * (D + Dv) + B * kvHeads * S * (D + Dv) + (shape.maskShape ? maskLength(shape) : 0)),
      flops: 2 * pairs * (D + Dv),
    },
  };
}

/**
 * Plans flash_attention on the GPU.
 *
 * @param gpu the device
 * @param shape the sizes and scalars (`maskShape` when a mask will be bound)
 * @param options kernel override
 * @returns the plan; bindings q, k, v, mask (one placeholder element without a mask), out
 * @throws Error naming a bad argument; LimitError when the device cannot run the kernel
 *
 * @example Resident tensors: upload once, submit the plan, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { flashAttentionPlan } from "@xpu/ops/ops/flash_attention";
 * const gpu = await acquireDevice();
 * // One head, one query, two keys: the query matches both equally, so the output averages v.
 * const q = gpu.upload(new Float32Array([1, 0, 0, 0]));
 * const k = gpu.upload(new Float32Array([1, 0, 0, 0, 1, 0, 0, 0]));
 * const v = gpu.upload(new Float32Array([2, 0, 0, 0, 4, 0, 0, 0]));
 * const mask = gpu.alloc("f32", 1); // a placeholder: no mask
 * const out = gpu.alloc("f32", 4);
 * const plan = flashAttentionPlan(gpu, { B: 1, H: 1, L: 1, S: 2, D: 4 });
 * await gpu.submit([plan, [q, k, v, mask, out]]);
 * const y = await gpu.read(out); // [3, 0, 0, 0]
 * gpu.destroy();
 * ```
 */
export function flashAttentionPlan(
  gpu: ResidentDevice,
  shape: FlashAttentionShape,
  options?: KernelOptions<FlashAttentionVariant>,
): KernelPlan {
  requireDevice("flashAttention", gpu);
  checkOptions("flashAttention", options);
  const resolved = validateFlashAttentionShape(shape);
  return flashPlanOf(gpu, "flashAttention", resolved, flashKernel(gpu, "flashAttention", resolved, options));
}

/**
 * Scaled dot-product attention on the GPU, one dispatch.
 *
 * @param gpu the device
 * @param args as {@link flashAttention}
 * @param options kernel override
 * @returns the output, `[B, H, L, Dv]` (`[B, L, H, Dv]` with layout `"BLHD"`)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { flashAttentionGpu } from "@xpu/ops/ops/flash_attention";
 * const gpu = await acquireDevice();
 * const [B, H, L, S, D] = [1, 2, 5, 5, 8];
 * const q = new Float32Array(B * H * L * D).fill(0.1);
 * const k = new Float32Array(B * H * S * D).fill(0.2);
 * const v = new Float32Array(B * H * S * D).fill(0.3);
 * const out = await flashAttentionGpu(gpu, { q, k, v, B, H, L, S, D, causal: true });
 * gpu.destroy();
 * ```
 */
export async function flashAttentionGpu(
  gpu: ResidentDevice,
  args: FlashAttentionArgs,
  options?: KernelOptions<FlashAttentionVariant>,
): Promise<Float32Array> {
  requireDevice("flashAttention", gpu);
  checkOptions("flashAttention", options);
  const shape = validateFlashAttention(args);
  const plan = flashPlanOf(gpu, "flashAttention", shape, flashKernel(gpu, "flashAttention", shape, options));
  const [out] = await gpu.run(plan, [args.q, args.k, args.v, args.mask ?? new Float32Array(1)]);
  return out as Float32Array;
}
