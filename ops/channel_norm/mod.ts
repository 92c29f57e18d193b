/**
 * channel_norm: `torch.nn.functional.normalize(x, dim=1, eps=eps) * C ** 0.5 * weight + bias` over
 * `x` `[N, C, L]` (L the product of the spatial dimensions), optionally followed by SiLU (entry point
 * `kernel`). This is the Wan 2.1 VAE's `RMS_norm` with `channel_first=True` (its `gamma` is `weight`;
 * its bias is absent unless built with `bias=True`), whose every use in the decoder's residual blocks
 * and head is followed by `nn.SiLU()`: `activation: "silu"` does both in one pass.
 *
 * Conventions, each pinned by a test against torch goldens that the alternative fails:
 * - the norm is over the channels of one position (torch's dim 1), not over a channel's positions
 *   (instance norm) or the whole sample;
 * - eps bounds the norm from below, `x / max(‖x‖₂, eps)` (`F.normalize`'s `clamp_min`), default
 *   1e-12: it is not added to the norm, nor to a mean square inside a root as RMSNorm's eps is; an
 *   all-zero position gives zeros (then the bias);
 * - the result is scaled by √C (the RMS form), then by weight and shifted by bias, per channel;
 * - `activation: "silu"` is `F.silu` of that result, the bias included;
 * - NaN and ±Infinity as torch (nonfinite.test.ts): a NaN makes its position's norm NaN and
 *   `clamp_min` keeps it, so the whole position is NaN (the kernel reads the NaN from the norm's bits,
 *   where WGSL's `max` may return eps); an infinity makes the norm inf, so the position's finite
 *   channels give 0 and the infinity NaN.
 *
 * Refused, with an error naming the argument, before any GPU work: N, C or L that is not an integer
 * >= 1, arrays of the wrong type or length, an eps that is negative or not a finite f32, and an
 * activation other than `"silu"`. A tensor past the device's `maxStorageBufferBindingSize` (a
 * browser's 128 MiB is 32 Mi floats: 1 x 128 channels x 512 x 512) is refused, not split: the
 * limits guard throws a `LimitError` naming the binding (`x` or `out`) and its bytes before
 * anything is uploaded (`channelNormGpu`) or encoded (a plan submitted on resident tensors).
 * Splitting a larger activation (by sample, or into channel-contiguous bindings) is the caller's
 * decision.
 *
 * The kernel takes positions in quads (4 consecutive positions of one channel, a vec4 when
 * L % 4 == 0); a workgroup of 256 invocations covers 256 / lanes consecutive quads of one sample and
 * all their channels, each invocation up to 8 channels of one quad held in registers (lanes, a power
 * of two, is the fewest that hold C this way: 64 for the VAE's 384 channels, 16 quads or 64
 * positions a workgroup). Neighbouring invocations read neighbouring vec4s of one channel row; each
 * quad's four sums of squares are reduced over its lanes through workgroup memory, and the held
 * values are normalised and written: x is read once and written once, 8 bytes per element, the
 * least the op can move. Rows with L % 4 != 0, or more than 2,048 channels, take a general path
 * that reads each quad's channels twice (the second time from cache) and masks positions past L.
 * More than 65,535 workgroups fold into a second grid dimension.
 *
 * Not yet timed on a GPU. The bench's `1x384x16384` (the VAE's 384-channel stage at a 128 x 128
 * latent) moves only 48 MiB, a size at which a plain vec4 copy falls well short of the bandwidth
 * probe's 1 GiB rate (on the H200 a copy of 32 + 32 MiB reached 66.8% of it:
 * `harness/baselines/nvidia-h200-log/27-bandops-explore.txt`); activation's bench has silu over the
 * same bytes (`silu:6291456`), what a streaming kernel reaches at that size in the same run. The
 * bench's larger rows are the decoder's later stages at a 1024 x 1024 image.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { type ChannelNormVariant, KERNELS } from "./kernels.gen.ts";
import {
  type ChannelNormArgs,
  type ChannelNormShape,
  validateChannelNorm,
  validateChannelNormShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type ChannelNormVariant, KERNELS };

/** The kernel's uniform, in WGSL declaration order. */
const PARAMS: readonly ParamField[] = [
  { name: "samples", type: "u32" },
  { name: "c", type: "u32" },
  { name: "l", type: "u32" },
  { name: "quads", type: "u32" },
  { name: "blocks", type: "u32" },
  { name: "lanes", type: "u32" },
  { name: "resident", type: "u32" },
  { name: "has_weight", type: "u32" },
  { name: "has_bias", type: "u32" },
  { name: "activation", type: "u32" },
  { name: "eps", type: "f32" },
  { name: "root", type: "f32" },
];

/** Invocations per workgroup (`WG` in the WGSL). */
const WORKGROUP = 256;
/** Channels one invocation holds in registers (`PER` in the WGSL). */
const PER = 8;

/** How the kernel lays out a shape: invocations per quad, quads per workgroup, workgroups per sample. */
export interface ChannelNormLayout {
  /** Invocations sharing one quad of positions (a power of two, at most 256). */
  lanes: number;
  /** Quads of positions per workgroup: 256 / lanes. */
  span: number;
  /** Quads of positions per channel: ceil(L / 4). */
  quads: number;
  /** Workgroups per sample: ceil(quads / span). */
  blocks: number;
  /** Whether every channel of a quad fits its lanes' registers (C <= 8 * lanes). */
  resident: boolean;
}

/**
 * How the kernel lays out a shape: the fewest lanes (a power of two, at most 256) whose 8 registers
 * each hold every channel of a quad of positions, and the workgroups that cover the positions.
 *
 * @param shape `N`, `C`, `L`
 * @returns lanes, quads per workgroup, quads per channel, workgroups per sample, residency
 *
 * @example
 * ```ts
 * import { channelNormLayout } from "@xpu/ops/ops/channel_norm";
 * channelNormLayout({ N: 1, C: 384, L: 128 * 128 }); // { lanes: 64, span: 4, quads: 4096, blocks: 1024, resident: true }
 * ```
 */
export function channelNormLayout(shape: ChannelNormShape): ChannelNormLayout {
  validateChannelNormShape(shape);
  let lanes = 1;
  while (lanes < WORKGROUP && lanes * PER < shape.C) lanes *= 2;
  const span = WORKGROUP / lanes;
  const quads = Math.ceil(shape.L / 4);
  return { lanes, span, quads, blocks: Math.ceil(quads / span), resident: shape.C <= PER * lanes };
}

/**
 * Plans `channel_norm` on the GPU.
 *
 * @param gpu the device
 * @param shape `N`, `C`, `L`, `eps`, `activation`, and whether a weight and a bias are bound
 * @param options kernel override
 * @returns the plan; bindings `x`, `weight`, `bias` (inputs; `[C]` each, empty when absent) and `out`
 * @throws Error naming the argument, as {@link validateChannelNormShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { channelNormPlan } from "@xpu/ops/ops/channel_norm";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([3, 0, 4, 0])); // [N = 1, C = 2, L = 2]
 * const gamma = gpu.upload(new Float32Array([1, 2]));
 * const none = gpu.alloc("f32", 0);
 * const out = gpu.alloc("f32", 4);
 * await gpu.submit([channelNormPlan(gpu, { N: 1, C: 2, L: 2, weight: true }), [x, gamma, none, out]]);
 * const y = await gpu.read(out); // ~[0.849, 0, 2.263, 0]: the all-zero position stays zero
 * gpu.destroy();
 * ```
 */
export function channelNormPlan(
  gpu: ResidentDevice,
  shape: ChannelNormShape & { weight?: boolean; bias?: boolean },
  options?: KernelOptions<ChannelNormVariant>,
): KernelPlan {
  requireDevice("channelNorm", gpu);
  checkOptions("channelNorm", options);
  const eps = validateChannelNormShape(shape);
  const { N, C, L } = shape;
  const { lanes, quads, blocks, resident } = channelNormLayout(shape);
  const hasWeight = shape.weight ?? false, hasBias = shape.bias ?? false;
  const silu = shape.activation === "silu";
  const n = N * C * L;
  return {
    op: "channel_norm",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "weight", dtype: "f32", length: hasWeight ? C : 0, role: "input" },
      { name: "bias", dtype: "f32", length: hasBias ? C : 0, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(PARAMS, {
      samples: N,
      c: C,
      l: L,
      quads,
      blocks,
      lanes,
      resident: Number(resident),
      has_weight: Number(hasWeight),
      has_bias: Number(hasBias),
      activation: silu ? 1 : 0,
      eps,
      root: Math.sqrt(C),
    }, "channel_norm"),
    workgroups: foldWorkgroups(N * blocks, gpu.limits.maxComputeWorkgroupsPerDimension, "channelNorm"),
    // x read once and out written once, weight and bias once. Per element a square and an add for
    // the norm and a multiply to normalise, one more for the weight and for the bias; SiLU's
    // sigmoid (exp, add, divide) and product are 4 more.
    cost: {
      bytes: 8 * n + 4 * C * (Number(hasWeight) + Number(hasBias)),
      flops: (3 + Number(hasWeight) + Number(hasBias) + (silu ? 4 : 0)) * n,
    },
  };
}

/**
 * Channel normalisation on the GPU.
 *
 * @param gpu the device
 * @param args as {@link channelNorm}
 * @param options kernel override
 * @returns the result, `[N, C, L]`
 * @throws Error naming the argument, as {@link validateChannelNorm}
 * @throws LimitError naming `x` or `out` when it exceeds maxStorageBufferBindingSize
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { channelNormGpu } from "@xpu/ops/ops/channel_norm";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([3, 4]); // one position of two channels: norm 5
 * const y = await channelNormGpu(gpu, { x, N: 1, C: 2, L: 1, activation: "silu" }); // silu([0.849, 1.131])
 * gpu.destroy();
 * ```
 */
export async function channelNormGpu(
  gpu: ResidentDevice,
  args: ChannelNormArgs,
  options?: KernelOptions<ChannelNormVariant>,
): Promise<Float32Array> {
  requireDevice("channelNorm", gpu);
  checkOptions("channelNorm", options);
  validateChannelNorm(args);
  const plan = channelNormPlan(
    gpu,
    { ...args, weight: args.weight !== undefined, bias: args.bias !== undefined },
    options,
  );
  const none = new Float32Array(0);
  const [out] = await gpu.run(plan, [args.x, args.weight ?? none, args.bias ?? none]);
  return out as Float32Array;
}
