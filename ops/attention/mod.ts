/**
 * attention: scaled dot-product attention, unfused, in two dispatches (entry points `scores` and
 * `weighted_sum`): torch 2.11's `F.scaled_dot_product_attention(q, k, v, attn_mask, is_causal, scale)`
 * with `q` `[B, H, L, D]`, `k` `[B, H, S, D]`, `v` `[B, H, S, Dv]`, f32 row-major.
 *
 * Conventions, each pinned by a test that the alternative fails (torch the arbiter, goldens/gen.py):
 * - scale is 1/sqrt(D), the query's head dim (not Dv's), unless `scale` is given;
 * - `causal` is upper-left aligned: key j is visible to row i iff `j <= i + queryOffset`. `queryOffset`
 *   0 is torch's `is_causal=True` when L != S, not the lower-right alignment some libraries use;
 *   `queryOffset = S - L` gives torch's `causal_lower_right` (a query block appended to a KV cache);
 * - `mask` is torch's float `attn_mask`, added to the scores, `-Infinity` masking a key, not a boolean
 *   mask: the additive form is what composes with alibi and other biases. It broadcasts from
 *   `maskShape` `[mB, mH, mL, S]`, each of mB, mH, mL either 1 or the full size. {@link keyPaddingBias}
 *   turns a boolean mask into it with torch's boolean `attn_mask` polarity (true = attend), the
 *   reverse of `nn.MultiheadAttention`'s `key_padding_mask`;
 * - `causal` together with `mask` throws, as torch does;
 * - a row whose every key is masked gives zeros, as SDPA's `aten::_safe_softmax`, not the NaN of
 *   `torch.softmax` (so ops/softmax, which keeps torch.softmax's NaN, is not reused between the two
 *   dispatches: the second dispatch does its own safe softmax and the weighted sum in one);
 * - NaN and ±Infinity as torch's math backend (nonfinite.test.ts; reference.ts says where torch's
 *   backends disagree and which this follows): a NaN or +inf score makes its row NaN, a masked key's v
 *   is multiplied by its probability 0 (NaN where that v is NaN or infinite). `weighted_sum` tells a
 *   dead score (LOWEST or -inf) from its bits (harness/wgsl/live_score.wgsl), so a NaN score is live;
 *   `s > LOWEST` dropped it, and a NaN query row came out 0.
 *
 * The two dispatches (each folding a grid beyond 65,535 workgroups into a second dimension): `scores` writes the `[B, H, L, S]` score matrix (scaled, masked; a key hidden by
 * causal is stored as the lowest finite f32), `weighted_sum` takes each row's safe softmax and sums the
 * rows of v with it. The score matrix is the point of this op's existence beside flash_attention: it is
 * the obviously-right composition, and it costs 4·B·H·L·S bytes of memory (a test counts the bytes the
 * two plans bind). Run them with {@link attentionGpu}, or with {@link attentionPlan} and
 * `gpu.submit([scores, [q, k, mask, s]], [weightedSum, [s, v, out]])` on resident tensors.
 *
 * Neither kernel is tuned: this op is the reference-shaped composition, and flash_attention is the fast
 * one. On the H200 (2026-12-02, Deno 2.9.6 over Vulkan, GPU timestamps, harness/timing.ts, median of 10)
 * at B = 1, H = 32, L = S = 2048, D = 128, causal: `scores` 37.3 ms (0.92 TFLOP/s), `weighted_sum`
 * 19.5 ms (1.76 TFLOP/s counting every score's Dv multiply-adds).
 *
 * Refused, with an error naming the argument, before any GPU work: B, H, L, S, D, Dv not integers in
 * [1, 2^24]; a scale that is not a finite f32; queryOffset not an integer within ±2^30; a maskShape that
 * is not `[1|B, 1|H, 1|L, S]`, or one without a mask; causal with mask; arrays of the wrong type or
 * length.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type GpuTensor, type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { overrideEntry, type Resolution } from "../../harness/resolve.ts";
import { maskLength, maskParams } from "./kernel_params.ts";
import { type AttentionVariant, KERNELS } from "./kernels.gen.ts";
import {
  type AttentionArgs,
  type AttentionShape,
  type ResolvedAttentionShape,
  validateAttention,
  validateAttentionShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type AttentionVariant, KERNELS };

const SCORES_PARAMS: readonly ParamField[] = [
  { name: "L", type: "u32" },
  { name: "S", type: "u32" },
  { name: "H", type: "u32" },
  { name: "group", type: "u32" },
  { name: "D", type: "u32" },
  { name: "scale", type: "f32" },
  { name: "causal", type: "u32" },
  { name: "offset", type: "i32" },
  { name: "masked", type: "u32" },
  { name: "mask_b", type: "u32" },
  { name: "mask_h", type: "u32" },
  { name: "mask_i", type: "u32" },
  { name: "key_tiles", type: "u32" },
  { name: "row_tiles", type: "u32" },
  { name: "BH", type: "u32", of: "B * H" },
];

const SUM_PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32", of: "B * H * L" },
  { name: "L", type: "u32" },
  { name: "S", type: "u32" },
  { name: "H", type: "u32" },
  { name: "group", type: "u32" },
  { name: "Dv", type: "u32" },
];

const ENTRIES = ["scores", "weighted_sum"] as const;

/** The two dispatches of attention, in order. */
export interface AttentionPlans {
  /** Bindings q, k, mask (one placeholder element without a mask), scores `[B, H, L, S]`. */
  scores: KernelPlan;
  /** Bindings scores, v, out `[B, H, L, Dv]`. */
  weightedSum: KernelPlan;
}

/** The kernel of one of the two entry points: the override's variant when it names one of that entry point. */
function kernelFor(
  gpu: ResidentDevice,
  entry: (typeof ENTRIES)[number],
  options: KernelOptions<AttentionVariant> | undefined,
): Resolution {
  if (options?.override !== undefined) {
    const named = overrideEntry(options.override)!;
    if (!(ENTRIES as readonly string[]).includes(named)) {
      throw new Error(
        `attention: override "${options?.override}" is not a variant of entry point "scores" or "weighted_sum"`,
      );
    }
    if (named === entry) return gpu.resolve(KERNELS, entry, options);
  }
  return gpu.resolve(KERNELS, entry);
}

/**
 * The two plans of attention for a validated shape. The kernels take a shape with kvHeads < H (query
 * head h reads KV head h / (H / kvHeads)), but no op plans them so and no test runs it: gqa uses
 * flash_attention's kernels and its own decode.
 *
 * @param gpu the device
 * @param op the op name the plans report
 * @param shape the validated shape
 * @param options kernel override (applies to the entry point it names)
 * @returns the scores plan and the weighted-sum plan
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { attentionPlansOf, validateAttentionShape } from "@xpu/ops/ops/attention";
 * const gpu = await acquireDevice();
 * const shape = validateAttentionShape({ B: 1, H: 2, L: 4, S: 4, D: 8, causal: true });
 * const { scores, weightedSum } = attentionPlansOf(gpu, "attention", shape); // what attentionPlan returns
 * gpu.destroy();
 * ```
 */
export function attentionPlansOf(
  gpu: ResidentDevice,
  op: string,
  shape: ResolvedAttentionShape,
  options?: KernelOptions<AttentionVariant>,
): AttentionPlans {
  requireDevice("attention", gpu);
  checkOptions(op, options);
  const { B, H, kvHeads, L, S, D, Dv } = shape;
  const group = H / kvHeads;
  const scoreCount = B * H * L * S;
  const maskBytes = shape.maskShape ? 4 * maskLength(shape) : 0;
  const scores: KernelPlan = {
    op,
    kernel: kernelFor(gpu, "scores", options),
    bindings: [
      { name: "q", dtype: "f32", length: B * H * L * D, role: "input" },
      { name: "k", dtype: "f32", length: B * kvHeads * S * D, role: "input" },
      { name: "mask", dtype: "f32", length: maskLength(shape), role: "input" },
      { name: "scores", dtype: "f32", length: scoreCount, role: "output" },
    ],
    params: packParams(
      SCORES_PARAMS,
      {
        L,
        S,
        H,
        group,
        D,
        scale: shape.scale,
        causal: Number(shape.causal),
        offset: shape.queryOffset,
        ...maskParams(shape),
        key_tiles: Math.ceil(S / 16),
        row_tiles: Math.ceil(L / 16),
        BH: B * H,
      },
      op,
    ),
    workgroups: foldWorkgroups(
      Math.ceil(S / 16) * Math.ceil(L / 16) * B * H,
      gpu.limits.maxComputeWorkgroupsPerDimension,
    ),
    // Read q, k and the mask once, write the scores once; D multiply-adds per score.
    cost: { bytes: 4 * (B * H * L * D + B * kvHeads * S * D + scoreCount) + maskBytes, flops: 2 * scoreCount * D },
  };
  const weightedSum: KernelPlan = {
    op,
    kernel: kernelFor(gpu, "weighted_sum", options),
    bindings: [
      { name: "scores", dtype: "f32", length: scoreCount, role: "input" },
      { name: "v", dtype: "f32", length: B * kvHeads * S * Dv, role: "input" },
      { name: "out", dtype: "f32", length: B * H * L * Dv, role: "output" },
    ],
    params: packParams(SUM_PARAMS, { rows: B * H * L, L, S, H, group, Dv }, op),
    workgroups: foldWorkgroups(B * H * L, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Read the scores and v once, write out once; Dv multiply-adds per score.
    cost: { bytes: 4 * (scoreCount + B * kvHeads * S * Dv + B * H * L * Dv), flops: 2 * scoreCount * Dv },
  };
  return { scores, weightedSum };
}

/**
 * Plans attention's two dispatches.
 *
 * @param gpu the device
 * @param shape the sizes and scalars (`maskShape` when a mask will be bound)
 * @param options kernel override (a variant of `scores` or of `weighted_sum`; it applies to that one)
 * @returns the scores plan and the weighted-sum plan, to be submitted in that order
 * @throws Error naming a bad argument
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { attentionPlan } from "@xpu/ops/ops/attention";
 * const gpu = await acquireDevice();
 * const { scores, weightedSum } = attentionPlan(gpu, { B: 1, H: 2, L: 4, S: 4, D: 8, causal: true });
 * scores.bindings.map((b) => b.name); // q, k, then the mask and the stored scores
 * gpu.destroy();
 * ```
 */
export function attentionPlan(
  gpu: ResidentDevice,
  shape: AttentionShape,
  options?: KernelOptions<AttentionVariant>,
): AttentionPlans {
  requireDevice("attention", gpu);
  checkOptions("attention", options);
  return attentionPlansOf(gpu, "attention", validateAttentionShape(shape), options);
}

/**
 * Runs two-dispatch attention plans on host arrays (one command buffer) and reads the output back.
 *
 * @param gpu the device
 * @param plans the two plans
 * @param args the arrays
 * @returns the output
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { attentionPlan, runAttentionPlans } from "@xpu/ops/ops/attention";
 * const gpu = await acquireDevice();
 * const args = {
 *   q: new Float32Array([1, 0]),
 *   k: new Float32Array([1, 0, 1, 0]),
 *   v: new Float32Array([2, 4]),
 *   B: 1, H: 1, L: 1, S: 2, D: 2, Dv: 1,
 * };
 * const out = await runAttentionPlans(gpu, attentionPlan(gpu, args), args); // [3]: the average of the values
 * gpu.destroy();
 * ```
 */
export async function runAttentionPlans(
  gpu: ResidentDevice,
  plans: AttentionPlans,
  args: AttentionArgs,
): Promise<Float32Array> {
  requireDevice("attention", gpu);
  const { scores, weightedSum } = plans;
  const made: GpuTensor[] = [];
  const keep = <T extends GpuTensor>(t: T): T => {
    made.push(t);
    return t;
  };
  try {
    const q = keep(gpu.upload(args.q, "q"));
    const k = keep(gpu.upload(args.k, "k"));
    const v = keep(gpu.upload(args.v, "v"));
    const mask = keep(gpu.upload(args.mask ?? new Float32Array(1), "mask"));
    const s = keep(gpu.alloc("f32", scores.bindings[3].length, "scores"));
    const out = keep(gpu.alloc("f32", weightedSum.bindings[2].length, "out"));
    await gpu.submit([scores, [q, k, mask, s]], [weightedSum, [s, v, out]]);
    return await gpu.read(out) as Float32Array;
  } finally {
    for (const t of made) t.buffer.destroy();
  }
}

/**
 * Scaled dot-product attention on the GPU, unfused: the score matrix, then the weighted sum.
 *
 * @param gpu the device
 * @param args as {@link attention}
 * @param options kernel override
 * @returns the output, `[B, H, L, Dv]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { attentionGpu, keyPaddingBias } from "@xpu/ops/ops/attention";
 * const gpu = await acquireDevice();
 * const [B, H, L, S, D] = [1, 1, 2, 3, 4];
 * const q = new Float32Array(B * H * L * D).fill(0.5);
 * const k = new Float32Array(B * H * S * D).fill(0.25);
 * const v = new Float32Array(B * H * S * D).fill(1);
 * const mask = keyPaddingBias([true, true, false]); // the third key is padding
 * const out = await attentionGpu(gpu, { q, k, v, B, H, L, S, D, mask, maskShape: [1, 1, 1, S] });
 * gpu.destroy();
 * ```
 */
export async function attentionGpu(
  gpu: ResidentDevice,
  args: AttentionArgs,
  options?: KernelOptions<AttentionVariant>,
): Promise<Float32Array> {
  requireDevice("attention", gpu);
  checkOptions("attention", options);
  const shape = validateAttention(args);
  return await runAttentionPlans(gpu, attentionPlansOf(gpu, "attention", shape, options), args);
}
