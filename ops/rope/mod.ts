/**
 * rope: rotary position embedding (`rope`, entry point `kernel`) and multi-axis RoPE (`ropeAxes`,
 * entry point `axes`) of `x` `[tokens, heads, headDim]` (one sequence, token-major: a q or k
 * projection's output before any transpose; a batch is more tokens with explicit positions).
 *
 * `rope` matches transformers' Llama RoPE (`ROPE_INIT_FUNCTIONS` of v5.17 for none, linear,
 * dynamic NTK, YaRN and llama3, YaRN's attention factor applied to cos and sin) in the
 * adjacent-pair convention (2i, 2i+1); `permuteRopeChannels` turns a rotate_half checkpoint's q/k
 * weights into that convention, and the goldens prove the equivalence against transformers'
 * `apply_rotary_pos_emb`. Positions are f32 (fractional allowed) plus an f32 `offset` (the KV
 * cache's length); an optional angle table `ropeCache` `[cacheLength, headDim/2]` serves integer
 * positions inside it and every other position is computed (never wrapped); `headOffset` /
 * `headCount` rotate a range of whole heads and copy the rest. `ropeAxes` is Z-Image's multi-axis
 * RoPE (explicit Int32 positions `[tokens, axes]`, contiguous per-axis blocks, the exponent
 * normalised by the axis's own channel count) with a theta per axis and `pairing: "half"` for
 * Cosmos-Predict2. See `reference.ts` and `axes_reference.ts` for the definitions and the reasons.
 *
 * Refused, with an error naming the argument: sizes that are not integers >= 1, an odd headDim or
 * axis dim, axis dims that do not sum to headDim, a head range outside the heads, a non-positive
 * or non-f32 theta or scaling field, a cache whose length is not a multiple of headDim/2, arrays of
 * the wrong type or length.
 *
 * The kernels (one read and one write of each element, vec4 loads and stores): with
 * headDim % 4 == 0 (`ropeAxes` "half": % 8), one invocation per (token, 8 heads, vec4 column of a
 * head): the column's angles are computed once (f32 `p * invFreq`, reduced to [-pi, pi] before
 * `cos`/`sin`, since WGSL promises their accuracy only there) and reused for the 8 heads, whose
 * vec4s are all loaded before the first store. Other head sizes take one invocation per vec4 of the
 * flat array, each element finding its pair. invFreq (and the attention factor) are computed once on
 * the host in f64, rounded to f32 and bound as a table, so the kernels know nothing of the scalings.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6 over Vulkan, GPU timestamps, median of 10 after
 * warm-up, against the 4,517 GB/s bandwidth probe of the same run): rope at 4096 x 32 x 128
 * (128 MiB moved) 0.0413 ms = 3,252 GB/s, 72.0%; at 8192 x 32 x 128 0.0734 ms, 80.9%; ropeAxes at
 * 4096 x 32 x 128 73.2% with adjacent pairs and 67.0% with half pairing. That is short of 85% at
 * the 4,096-token shape; the figure rises with the size as a plain stream's does (a plain read
 * reached 84% of its 1 GiB rate at 64 MB in the baseline), and what share of the gap belongs to the
 * kernel rather than the size has not been measured.
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type RopeVariant } from "./kernels.gen.ts";
import {
  type RopeArgs,
  type RopeAxesArgs,
  type RopeAxesShape,
  type RopeShape,
  validateRope,
  validateRopeAxes,
  validateRopeAxesShape,
  validateRopeShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type RopeVariant };

/** Heads per invocation (`HPI` in both kernels). */
const HPI = 8;
const WG = 256;

/**
 * Plans `rope` on the GPU.
 *
 * @param gpu the device
 * @param shape sizes and scalars as {@link RopeShape} (`cacheLength` the angle table's rows, 0 for none)
 * @param options kernel override
 * @returns the plan; bindings `x`, `positions` `[tokens]`, `invFreq` `[headDim/2]`, `ropeCache`
 *   (inputs) and `out`
 *
 * @example Resident tensors: one token at position 1, one pair of channels
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { ropeFrequencies, ropePlan } from "@xpu/ops/ops/rope";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 0]));
 * const positions = gpu.upload(new Float32Array([1]));
 * const invFreq = gpu.upload(ropeFrequencies(2).invFreq); // [1]: the pair turns by its position, in radians
 * const none = gpu.alloc("f32", 0); // no angle table
 * const out = gpu.alloc("f32", 2);
 * await gpu.submit([ropePlan(gpu, { tokens: 1, heads: 1, headDim: 2 }), [x, positions, invFreq, none, out]]);
 * const y = await gpu.read(out); // [cos 1, sin 1]
 * gpu.destroy();
 * ```
 */
export function ropePlan(gpu: ResidentDevice, shape: RopeShape, options?: KernelOptions<RopeVariant>): KernelPlan {
  checkOptions("rope", options);
  const { offset, headOffset, headCount, cacheLength, attentionFactor } = validateRopeShape(shape);
  const { tokens, heads, headDim } = shape;
  const total = tokens * heads * headDim;
  const chunks = Math.ceil(heads / HPI);
  const invocations = headDim % 4 === 0 ? tokens * chunks * (headDim / 4) : Math.ceil(total / 4);
  return {
    op: "rope",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: total, role: "input" },
      { name: "positions", dtype: "f32", length: tokens, role: "input" },
      { name: "invFreq", dtype: "f32", length: headDim / 2, role: "input" },
      { name: "ropeCache", dtype: "f32", length: cacheLength * (headDim / 2), role: "input" },
      { name: "out", dtype: "f32", length: total, role: "output" },
    ],
    params: packParams(
      [
        { name: "tokens", type: "u32" },
        { name: "heads", type: "u32" },
        { name: "headDim", type: "u32" },
        { name: "headOffset", type: "u32" },
        { name: "headEnd", type: "u32" },
        { name: "cacheLength", type: "u32" },
        { name: "offset", type: "f32" },
        { name: "attentionFactor", type: "f32" },
        { name: "chunks", type: "u32" },
        { name: "total", type: "u32" },
      ],
      {
        tokens,
        heads,
        headDim,
        headOffset,
        headEnd: headOffset + headCount,
        cacheLength,
        offset,
        attentionFactor,
        chunks,
        total,
      },
      "rope",
    ),
    workgroups: foldWorkgroups(Math.ceil(invocations / WG), gpu.limits.maxComputeWorkgroupsPerDimension),
    // x read once and written once, plus the positions; per rotated pair 6 FLOPs (4 products, 2 sums).
    cost: { bytes: 8 * total + 4 * tokens, flops: 3 * tokens * headCount * headDim },
  };
}

/**
 * Rotary position embedding on the GPU.
 *
 * @param gpu the device
 * @param args as {@link rope}
 * @param options kernel override
 * @returns the result, `[tokens, heads, headDim]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { ropeGpu } from "@xpu/ops/ops/rope";
 * const gpu = await acquireDevice();
 * const q = new Float32Array(5 * 32 * 128).fill(1); // [tokens 5, heads 32, headDim 128]
 * const turned = await ropeGpu(gpu, { x: q, tokens: 5, heads: 32, headDim: 128, theta: 500000, offset: 17 });
 * gpu.destroy();
 * ```
 */
export async function ropeGpu(
  gpu: ResidentDevice,
  args: RopeArgs,
  options?: KernelOptions<RopeVariant>,
): Promise<Float32Array> {
  checkOptions("rope", options);
  const { invFreq, cacheLength } = validateRope(args);
  const plan = ropePlan(gpu, { ...args, cacheLength }, options);
  const positions = args.positions ?? Float32Array.from({ length: args.tokens }, (_, t) => t);
  const [out] = await gpu.run(plan, [args.x, positions, invFreq, args.ropeCache ?? new Float32Array(0)]);
  return out as Float32Array;
}

/**
 * Plans `ropeAxes` on the GPU.
 *
 * @param gpu the device
 * @param shape sizes, axis dims, theta and pairing, as {@link RopeAxesShape}
 * @param options kernel override
 * @returns the plan; bindings `x`, `positions` `[tokens, axes]` (i32), `pairAxis` `[headDim/2]`
 *   (u32), `invFreq` `[headDim/2]` (inputs) and `out`
 *
 * @example Resident tensors: one token at (t, h) = (0, 1), two axes of one pair each
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { ropeAxesPlan, validateRopeAxesShape } from "@xpu/ops/ops/rope";
 * const gpu = await acquireDevice();
 * const shape = { tokens: 1, heads: 1, headDim: 4, axesDims: [2, 2], theta: 256 };
 * const { axis, invFreq } = validateRopeAxesShape(shape); // each pair's axis and inverse frequency
 * const x = gpu.upload(new Float32Array([1, 0, 1, 0]));
 * const positions = gpu.upload(new Int32Array([0, 1]));
 * const out = gpu.alloc("f32", 4);
 * await gpu.submit([ropeAxesPlan(gpu, shape), [x, positions, gpu.upload(axis), gpu.upload(invFreq), out]]);
 * const y = await gpu.read(out); // [1, 0, cos 1, sin 1]: only the second axis's pair turns
 * gpu.destroy();
 * ```
 */
export function ropeAxesPlan(
  gpu: ResidentDevice,
  shape: RopeAxesShape,
  options?: KernelOptions<RopeVariant>,
): KernelPlan {
  checkOptions("ropeAxes", options);
  const { pairing } = validateRopeAxesShape(shape);
  const { tokens, heads, headDim } = shape;
  const axes = shape.axesDims.length;
  const total = tokens * heads * headDim;
  const chunks = Math.ceil(heads / HPI);
  const mode = pairing === "adjacent" && headDim % 4 === 0 ? 0 : pairing === "half" && headDim % 8 === 0 ? 1 : 2;
  const invocations = mode === 2 ? Math.ceil(total / 4) : tokens * chunks * (headDim / (mode === 0 ? 4 : 8));
  return {
    op: "ropeAxes",
    kernel: gpu.resolve(KERNELS, "axes", options),
    bindings: [
      { name: "x", dtype: "f32", length: total, role: "input" },
      { name: "positions", dtype: "i32", length: tokens * axes, role: "input" },
      { name: "pairAxis", dtype: "u32", length: headDim / 2, role: "input" },
      { name: "invFreq", dtype: "f32", length: headDim / 2, role: "input" },
      { name: "out", dtype: "f32", length: total, role: "output" },
    ],
    params: packParams(
      [
        { name: "tokens", type: "u32" },
        { name: "heads", type: "u32" },
        { name: "headDim", type: "u32" },
        { name: "axes", type: "u32" },
        { name: "mode", type: "u32" },
        { name: "halfPairs", type: "u32" },
        { name: "chunks", type: "u32" },
        { name: "total", type: "u32" },
      ],
      { tokens, heads, headDim, axes, mode, halfPairs: Number(pairing === "half"), chunks, total },
      "ropeAxes",
    ),
    workgroups: foldWorkgroups(Math.ceil(invocations / WG), gpu.limits.maxComputeWorkgroupsPerDimension),
    // x read once and written once, plus the positions; 6 FLOPs per pair.
    cost: { bytes: 8 * total + 4 * tokens * axes, flops: 3 * total },
  };
}

/**
 * Multi-axis rotary position embedding on the GPU.
 *
 * @param gpu the device
 * @param args as {@link ropeAxes}
 * @param options kernel override
 * @returns the result, `[tokens, heads, headDim]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { ropeAxesGpu } from "@xpu/ops/ops/rope";
 * const gpu = await acquireDevice();
 * // Z-Image: 128-channel heads split [32, 48, 48], theta 256, (frame, row, column) per token.
 * const x = new Float32Array(4 * 30 * 128).fill(1);
 * const positions = new Int32Array([0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 1]);
 * const out = await ropeAxesGpu(gpu, { x, positions, tokens: 4, heads: 30, headDim: 128, axesDims: [32, 48, 48], theta: 256 });
 * gpu.destroy();
 * ```
 */
export async function ropeAxesGpu(
  gpu: ResidentDevice,
  args: RopeAxesArgs,
  options?: KernelOptions<RopeVariant>,
): Promise<Float32Array> {
  checkOptions("ropeAxes", options);
  const { axis, invFreq } = validateRopeAxes(args);
  const plan = ropeAxesPlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x, args.positions, axis, invFreq]);
  return out as Float32Array;
}
