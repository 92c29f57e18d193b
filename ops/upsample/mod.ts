/**
 * upsample: `nearestUpsample2d` (entry point `kernel`), nearest-neighbour 2D upsampling over
 * `[N, C, H, W]` as `torch.nn.functional.interpolate(x, size=(outH, outW), mode="nearest")`.
 *
 * Conventions, each pinned by a test that the alternative fails (torch 2.11 goldens):
 * - The source index is `min(floor(dst * f32(in / out)), in - 1)` in f32, torch's formula: at
 *   H = 14 -> 46, output row 23 copies source row 6 (exact integer arithmetic, `dst * in / out`,
 *   says 7; half-pixel centres, `"nearest-exact"`, say 7 too).
 * - The `size=` path: the output size is given, never a float scale factor (at H = 3, scale_factor
 *   1.6 and size 4 map rows differently in torch).
 * - Downsampling is refused; `align_corners` is not a parameter (torch raises for it in this mode).
 *
 * Refused besides, with an error naming the argument: sizes that are not integers >= 1, output
 * sizes of 2^24 or more (the index would no longer be exact in f32), and `x` of the wrong type or
 * length.
 *
 * Why an op of its own: a decoder that upsamples by nearest neighbour and then convolves (to avoid
 * conv_transpose's checkerboard) needs this and conv; neither substitutes for the other. One read and
 * one write per output element (the least the op can move). When `outW % 4 == 0` each invocation
 * writes one vec4 column of two output rows: the column's source indices are found once, and the
 * second row, when it copies the same source row as the first (every pair of a 2x upsample), is
 * written from the same vec4 without a second load. Otherwise the kernel writes four vec4s per
 * invocation per block of a grid-stride loop, every read issued before the first write.
 *
 * On the H200 (Deno 2.9.6 over Vulkan, GPU timestamps, median of 10; fractions of the same run's
 * read probe; harness/baselines/nvidia-h200-log/27-bandops-bench.json, 2026-12-02, probe 4,593
 * GB/s) 2x of [1, 128, 256, 256] 0.0480 ms (76.1%), of [1, 512, 128, 128] 0.0483 ms (75.7%), 126 x
 * 127 -> 252 x 254 over [4, 256] planes (the stream) 0.115 ms (62.0%). A plain vec4 copy of 32 MiB
 * read and 128 MiB written (the first shape's bytes) reached 84.0% of the probe
 * (harness/baselines/nvidia-h200-log/27-bandops-explore.json), so 85% is out of reach there for any
 * kernel. In 27-bandops-round2.json (probe 4,518 GB/s) the tiles of two rows took the first shape
 * from 0.0518 ms (71.7%, the previous kernel: four vec4s of the stream per invocation) to 0.0471 ms
 * (78.9%), and [1, 512, 128, 128] from 0.0506 to 0.0471 ms; tiles of four rows 0.0488 and 0.0486
 * ms; the previous kernel with its index arithmetic replaced by a plain `x[q / 4]` 0.0492 and
 * 0.0493 ms, so the index arithmetic cost 3-5%.
 *
 * @module
 */

import { streamWorkgroups } from "../../harness/grid.ts";
import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type UpsampleVariant } from "./kernels.gen.ts";
import {
  type NearestUpsample2dArgs,
  type NearestUpsample2dShape,
  validateNearestUpsample2d,
  validateNearestUpsample2dShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type UpsampleVariant };

/** The kernel's uniform, in WGSL declaration order. */
const PARAMS: readonly ParamField[] = [
  { name: "h", type: "u32" },
  { name: "w", type: "u32" },
  { name: "out_h", type: "u32" },
  { name: "out_w", type: "u32" },
  { name: "scale_h", type: "f32" },
  { name: "scale_w", type: "f32" },
  { name: "n", type: "u32" },
];

/** Output elements one workgroup writes per block when outW % 4 != 0: 256 invocations x 4 vec4s (`WG * PER * 4` in the WGSL). */
const BLOCK_ELEMENTS = 256 * 4 * 4;
/** Invocations per workgroup (`WG` in the WGSL). */
const WG = 256;

/**
 * Plans `nearestUpsample2d` on the GPU.
 *
 * @param gpu the device
 * @param shape `N`, `C`, `H`, `W` and the output size `outH`, `outW`
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output, `[N, C, outH, outW]`)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { nearestUpsample2dPlan } from "@xpu/ops/ops/upsample";
 * const gpu = await acquireDevice();
 * const plan = nearestUpsample2dPlan(gpu, { N: 1, C: 128, H: 64, W: 64, outH: 128, outW: 128 });
 * ```
 */
export function nearestUpsample2dPlan(
  gpu: ResidentDevice,
  shape: NearestUpsample2dShape,
  options?: KernelOptions<UpsampleVariant>,
): KernelPlan {
  checkOptions("nearestUpsample2d", options);
  validateNearestUpsample2dShape(shape);
  const { N, C, H, W, outH, outW } = shape;
  const n = N * C * H * W;
  const outN = N * C * outH * outW;
  const maxPerDimension = gpu.limits.maxComputeWorkgroupsPerDimension;
  const values = {
    h: H,
    w: W,
    out_h: outH,
    out_w: outW,
    scale_h: Math.fround(H / outH),
    scale_w: Math.fround(W / outW),
    n: outN,
  };
  return {
    op: "upsample",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: outN, role: "output" },
    ],
    params: packParams(PARAMS, values, "upsample"),
    // outW % 4 == 0: one invocation per tile of two output rows by one vec4 column; otherwise the
    // grid-stride stream.
    workgroups: outW % 4 === 0
      ? foldWorkgroups(Math.ceil(((outW / 4) * Math.ceil((N * C * outH) / 2)) / WG), maxPerDimension)
      : streamWorkgroups(outN, BLOCK_ELEMENTS, maxPerDimension),
    // The input read once and the output written once; no arithmetic on the values.
    cost: { bytes: 4 * (n + outN), flops: 0 },
  };
}

/**
 * Nearest-neighbour upsampling of `x` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link nearestUpsample2d}
 * @param options kernel override
 * @returns the upsampled tensor, `[N, C, outH, outW]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { nearestUpsample2dGpu } from "@xpu/ops/ops/upsample";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 2, 3, 4]);
 * await nearestUpsample2dGpu(gpu, { x, N: 1, C: 1, H: 2, W: 2, outH: 4, outW: 4 });
 * ```
 */
export async function nearestUpsample2dGpu(
  gpu: ResidentDevice,
  args: NearestUpsample2dArgs,
  options?: KernelOptions<UpsampleVariant>,
): Promise<Float32Array> {
  checkOptions("nearestUpsample2d", options);
  validateNearestUpsample2d(args);
  const [out] = await gpu.run(nearestUpsample2dPlan(gpu, args, options), [args.x]);
  return out as Float32Array;
}
