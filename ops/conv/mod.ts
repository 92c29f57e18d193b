/**
 * conv: `torch.nn.functional.conv1d` / `conv2d` / `conv3d`, the cross-correlation with stride,
 * padding (integer counts), dilation, groups (depthwise included) and an optional bias, over
 * `[N, C, L]`, `[N, C, H, W]` and `[N, C, D, H, W]` with torch's weight layout
 * `[Cout, Cin / groups, ...kernel]`. Entry points `tile64` (64 x 256 tiles), its two-stage form
 * `tile64_pipelined` and `kernel` (128 x 128 tiles); {@link conv2dPlan} and its siblings pick one.
 *
 * Conventions, each pinned by a test against torch goldens that the alternative fails:
 * - the kernel is not flipped (a cross-correlation, as torch), on any axis;
 * - the spatial arguments are a number or a tuple in torch's order (`[H, W]`, `[D, H, W]`); a 3-D
 *   shape read in any other order gives a differently shaped or different result;
 * - padding is zeros on both sides, an integer count per axis; output size
 *   `floor((in + 2p - d(k - 1) - 1) / s) + 1`;
 * - groups: output channel co reads the input channels of its group, `co / (Cout / groups)`;
 * - NaN and ±Infinity as torch (nonfinite.test.ts): the zero padding is multiplied by the weight like
 *   any input, so an infinite tap gives NaN (0 * inf) where its window reaches the padding; a
 *   non-finite x reaches only the outputs whose window covers it.
 *
 * Refused, with an error naming the argument, before any GPU work: sizes that are not integers
 * >= 1, Cin or Cout not divisible by groups, torch's `'same'` / `'valid'` strings (`'same'` pads
 * asymmetrically for an even effective kernel, which one count per axis cannot say), a kernel
 * larger than the padded input (an empty output), and arrays of the wrong type or length. There is
 * no `padding_mode`: reflect and causal padding belong to ops/pad.
 *
 * How it runs: an implicit GEMM (1-D and 2-D are 3-D with unit outer axes). Per group, the output
 * `[cout_g, N * outSpatial]` is `weight [cout_g, (Cin / groups) * kvol]` times the im2col matrix of
 * `x`, whose columns are gathered while staging into workgroup memory and never exist in memory.
 * The tiles and k-steps are ops/matmul's register-blocked design (8 x 8 outputs per invocation in
 * named vec4 accumulators, 64 FMAs per four reads of workgroup memory); K is walked as blocks of 8
 * input channels for each kernel position in turn, so the bounds of the input position are found
 * once per block and the loads of a block coalesce along the output's last axis (see
 * wgsl/include/conv_gemm.wgsl). `tile64` tiles 64 output channels by 256 positions, `kernel` 128 by
 * 128. The plans take `tile64`, which was the faster at every shape of the H200 run
 * (harness/baselines/nvidia-h200-log/signal-conv-norm-snake.txt; GPU timestamps, batch 1, with
 * bias): conv2d 3 x 3 128 -> 128 at 512 x 512, 25.7 TFLOP/s against 21.6; 512 -> 512 at 128 x 128,
 * 26.0 against 21.6; conv3d 3 x 3 x 3 64 -> 64 at 16 x 128 x 128, 25.4 against 12.4 (half of
 * kernel's rows idle); conv1d k7 512 -> 512 over 16,384, 26.0 against 21.9. They take `kernel` only
 * where the GEMM has at most 128 columns and more than 64 output channels per group (a small
 * spatial map, many channels), where `tile64`'s 256 columns would be at least half empty; that
 * rule is reasoned, not measured. Depthwise and other narrow groups are correct but use little of
 * a tile (each block of 8 channels holds 1 real one when Cin / groups = 1): not a speed target here.
 *
 * `tile64_pipelined` is `tile64` with another walk over K (wgsl/tile64_pipelined.wgsl says the
 * design): two stages of a block in 20 KiB of workgroup memory, the next block's 10 loads per
 * invocation issued into registers before this block's k-steps and stored to the other stage after
 * them, one barrier per block against tile64's two, ops/matmul's pipelined form applied to the
 * gathered operands. Its outputs are bit-identical to tile64's (a test holds it to that). It has
 * not been timed on a GPU yet, so the plans do not take it (`planned: false`): once the bench (which
 * times it beside `tile64` at every shape) shows it faster, ops/matmul's rule (gemm_tiling.ts) would
 * take it in place of `tile64` where the adapter's target is `nvidia`, the device grants its 20 KiB
 * (WebGPU's default is 16 KiB) and the grid has at least ops/matmul's PIPELINED_MIN_TILES (80)
 * tiles. An override may name it on any device; one that does not grant its workgroup memory refuses it before dispatch, with a LimitError
 * naming the kernel, maxComputeWorkgroupStorageSize and the bytes.
 *
 * Every convolution, 1 x 1 included, runs these kernels and binds `x`, `weight`, `bias` (empty
 * when there is none) and `out`, in that order, so a caller binds every plan of the op the same
 * way and an error names the op and its own entry points. (A plain 1 x 1 convolution is also
 * `weight [Cout, Cin] @ x [Cin, spatial]`, a matmul; the plans do not hand it to ops/matmul, whose
 * operands bind in the other order and whose errors name matmul's kernels.)
 *
 * @module
 */

import { foldWorkgroups, requireWorkgroupStorage, workgroupBytesOf } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type HostArray, type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { gemmTiling } from "./gemm_tiling.ts";
import { type ConvVariant, KERNELS } from "./kernels.gen.ts";
import {
  type Conv1dArgs,
  type Conv1dShape,
  type Conv2dArgs,
  type Conv2dShape,
  type Conv3dArgs,
  type Conv3dShape,
  type ConvGeometry,
  validateConv1d,
  validateConv1dShape,
  validateConv2d,
  validateConv2dShape,
  validateConv3d,
  validateConv3dShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type ConvVariant, KERNELS };

const FIELDS = [
  "cin",
  "cout",
  "groups",
  "cin_g",
  "cout_g",
  "has_bias",
  "kvol",
  "cols",
  "in_d",
  "in_h",
  "in_w",
  "in_hw",
  "in_sp",
  "out_w",
  "out_hw",
  "out_sp",
  "k_h",
  "k_w",
  "stride_d",
  "stride_h",
  "stride_w",
  "pad_d",
  "pad_h",
  "pad_w",
  "dil_d",
  "dil_h",
  "dil_w",
  "tiles_m",
  "tiles_n",
] as const;
/** What the derived fields are made of, for a size too large for a u32. */
const OF: Partial<Record<typeof FIELDS[number], string>> = {
  kvol: "the kernel's positions (the product of kernelSize)",
  cols: "N times the output's positions",
  in_hw: "H * W",
  in_sp: "the input's positions (L, H * W or D * H * W)",
  out_hw: "the output's height times its width",
  out_sp: "the output's positions",
};
const PARAMS: readonly ParamField[] = FIELDS.map((name) => ({ name, type: "u32", of: OF[name] }));

const product = (xs: number[]) => xs.reduce((p, v) => p * v, 1);
/** A per-axis argument padded to three axes (outer axes first) with `fill`. */
const threeD = (values: number[], fill: number) => [...Array(3 - values.length).fill(fill), ...values];

/**
 * Plans a convolution of any rank from its validated geometry.
 *
 * @param gpu the device
 * @param g the geometry (from `validateConv<N>dShape`)
 * @param hasBias whether a bias is bound
 * @param options kernel override: a variant of `kernel`, `tile64` or `tile64_pipelined` (which also
 *   picks the tile)
 * @returns the plan
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { convPlan, validateConv2dShape } from "@xpu/ops/ops/conv";
 * const gpu = await acquireDevice();
 * const geometry = validateConv2dShape({ N: 1, Cin: 3, Cout: 8, H: 16, W: 16, kernelSize: 3, padding: 1 });
 * const plan = convPlan(gpu, geometry, true); // what conv2dPlan returns for the same shape with a bias
 * gpu.destroy();
 * ```
 */
export function convPlan(
  gpu: ResidentDevice,
  g: ConvGeometry,
  hasBias: boolean,
  options?: KernelOptions<ConvVariant>,
): KernelPlan {
  requireDevice("conv", gpu);
  checkOptions(g.op, options);
  const outSpatial = product(g.output), inSpatial = product(g.input), kvol = product(g.kernel);
  const cinG = g.Cin / g.groups, coutG = g.Cout / g.groups;
  const xLength = g.N * g.Cin * inSpatial, outLength = g.N * g.Cout * outSpatial;
  const weightLength = g.Cout * cinG * kvol;
  // Each operand read once and the result written once; a multiply and an add per term.
  const cost = {
    bytes: 4 * (xLength + weightLength + (hasBias ? g.Cout : 0) + outLength),
    flops: 2 * g.N * g.Cout * outSpatial * cinG * kvol,
  };
  const cols = g.N * outSpatial;
  // Not yet timed on a GPU: only an override takes it until the bench has measured it.
  const pipelined = { entry: "tile64_pipelined", source: KERNELS.tile64_pipelined, planned: false };
  const { kernel, tilesM, tilesN } = gemmTiling(gpu, KERNELS, g.op, coutG, cols, options, pipelined, g.groups);
  // The pipelined tile needs more workgroup memory than WebGPU's default: refused before dispatch.
  const where = `${g.op}/${kernel.variant}`;
  requireWorkgroupStorage(gpu, where, workgroupBytesOf(kernel.source, where));
  const [inD, inH, inW] = threeD(g.input, 1), [, outH, outW] = threeD(g.output, 1);
  const [, kH, kW] = threeD(g.kernel, 1), [sD, sH, sW] = threeD(g.stride, 1);
  const [pD, pH, pW] = threeD(g.padding, 0), [dD, dH, dW] = threeD(g.dilation, 1);
  return {
    op: g.op,
    kernel,
    bindings: [
      { name: "x", dtype: "f32", length: xLength, role: "input" },
      { name: "weight", dtype: "f32", length: weightLength, role: "input" },
      { name: "bias", dtype: "f32", length: hasBias ? g.Cout : 0, role: "input" },
      { name: "out", dtype: "f32", length: outLength, role: "output" },
    ],
    params: packParams(PARAMS, {
      cin: g.Cin,
      cout: g.Cout,
      groups: g.groups,
      cin_g: cinG,
      cout_g: coutG,
      has_bias: Number(hasBias),
      kvol,
      cols,
      in_d: inD,
      in_h: inH,
      in_w: inW,
      in_hw: inH * inW,
      in_sp: inSpatial,
      out_w: outW,
      out_hw: outH * outW,
      out_sp: outSpatial,
      k_h: kH,
      k_w: kW,
      stride_d: sD,
      stride_h: sH,
      stride_w: sW,
      pad_d: pD,
      pad_h: pH,
      pad_w: pW,
      dil_d: dD,
      dil_h: dH,
      dil_w: dW,
      tiles_m: tilesM,
      tiles_n: tilesN,
    }, g.op),
    workgroups: foldWorkgroups(g.groups * tilesM * tilesN, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost,
  };
}

/**
 * Plans `conv1d` on the GPU.
 *
 * @param gpu the device
 * @param shape the sizes and arguments, and whether a bias is bound
 * @param options kernel override: a variant of `kernel`, `tile64` or `tile64_pipelined`
 * @returns the plan; bindings `x`, `weight`, `bias` (inputs; `bias` empty when absent) and `out`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { conv1dPlan } from "@xpu/ops/ops/conv";
 * const gpu = await acquireDevice();
 * const plan = conv1dPlan(gpu, { N: 1, Cin: 4, Cout: 8, L: 64, kernelSize: 7, padding: 3, bias: true });
 * plan.bindings.map((b) => b.name); // ["x", "weight", "bias", "out"], for every kernel size
 * gpu.destroy();
 * ```
 */
export function conv1dPlan(
  gpu: ResidentDevice,
  shape: Conv1dShape & { bias?: boolean },
  options?: KernelOptions<ConvVariant>,
): KernelPlan {
  requireDevice("conv1d", gpu);
  checkOptions("conv1d", options);
  return convPlan(gpu, validateConv1dShape(shape), shape.bias ?? false, options);
}

/**
 * Plans `conv2d` on the GPU.
 *
 * @param gpu the device
 * @param shape the sizes and arguments, and whether a bias is bound
 * @param options kernel override: a variant of `kernel`, `tile64` or `tile64_pipelined`
 * @returns the plan; bindings `x`, `weight`, `bias` (inputs; `bias` empty when absent) and `out`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { conv2dPlan } from "@xpu/ops/ops/conv";
 * const gpu = await acquireDevice();
 * const plan = conv2dPlan(gpu, { N: 1, Cin: 4, Cout: 8, H: 16, W: 16, kernelSize: 3, padding: 1, bias: true });
 * plan.bindings.map((b) => b.name); // ["x", "weight", "bias", "out"], for every kernel size
 * gpu.destroy();
 * ```
 */
export function conv2dPlan(
  gpu: ResidentDevice,
  shape: Conv2dShape & { bias?: boolean },
  options?: KernelOptions<ConvVariant>,
): KernelPlan {
  requireDevice("conv2d", gpu);
  checkOptions("conv2d", options);
  return convPlan(gpu, validateConv2dShape(shape), shape.bias ?? false, options);
}

/**
 * Plans `conv3d` on the GPU.
 *
 * @param gpu the device
 * @param shape the sizes and arguments, and whether a bias is bound
 * @param options kernel override: a variant of `kernel`, `tile64` or `tile64_pipelined`
 * @returns the plan; bindings `x`, `weight`, `bias` (inputs; `bias` empty when absent) and `out`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { conv3dPlan } from "@xpu/ops/ops/conv";
 * const gpu = await acquireDevice();
 * const plan = conv3dPlan(gpu, { N: 1, Cin: 2, Cout: 4, D: 4, H: 8, W: 8, kernelSize: 3, padding: 1, bias: true });
 * plan.bindings.map((b) => b.name); // ["x", "weight", "bias", "out"], for every kernel size
 * gpu.destroy();
 * ```
 */
export function conv3dPlan(
  gpu: ResidentDevice,
  shape: Conv3dShape & { bias?: boolean },
  options?: KernelOptions<ConvVariant>,
): KernelPlan {
  requireDevice("conv3d", gpu);
  checkOptions("conv3d", options);
  return convPlan(gpu, validateConv3dShape(shape), shape.bias ?? false, options);
}

/** Runs a conv plan on host arrays, binding each by name. */
async function runConv(
  gpu: ResidentDevice,
  plan: KernelPlan,
  arrays: { x: Float32Array; weight: Float32Array; bias?: Float32Array },
): Promise<Float32Array> {
  const byName: Record<string, HostArray> = {
    x: arrays.x,
    weight: arrays.weight,
    bias: arrays.bias ?? new Float32Array(0),
  };
  const inputs = plan.bindings.filter((b) => b.role === "input").map((b) => byName[b.name]);
  const [out] = await gpu.run(plan, inputs);
  return out as Float32Array;
}

/**
 * `F.conv1d` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link conv1d}
 * @param options kernel override
 * @returns the result, `[N, Cout, Lout]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { conv1dGpu } from "@xpu/ops/ops/conv";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 4, 9, 16, 25]);
 * const out = await conv1dGpu(gpu, { x, weight: new Float32Array([-1, 1]), N: 1, Cin: 1, Cout: 1, L: 5, kernelSize: 2, dilation: 2 });
 * gpu.destroy();
 * ```
 */
export async function conv1dGpu(
  gpu: ResidentDevice,
  args: Conv1dArgs,
  options?: KernelOptions<ConvVariant>,
): Promise<Float32Array> {
  requireDevice("conv1d", gpu);
  checkOptions("conv1d", options);
  const g = validateConv1d(args);
  return await runConv(gpu, convPlan(gpu, g, args.bias !== undefined, options), args);
}

/**
 * `F.conv2d` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link conv2d}
 * @param options kernel override
 * @returns the result, `[N, Cout, Hout, Wout]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { conv2dGpu } from "@xpu/ops/ops/conv";
 * const gpu = await acquireDevice();
 * const x = new Float32Array(2 * 5 * 5).fill(1);
 * const weight = new Float32Array(4 * 2 * 3 * 3).fill(0.5);
 * const out = await conv2dGpu(gpu, { x, weight, N: 1, Cin: 2, Cout: 4, H: 5, W: 5, kernelSize: 3, padding: 1 });
 * gpu.destroy();
 * ```
 */
export async function conv2dGpu(
  gpu: ResidentDevice,
  args: Conv2dArgs,
  options?: KernelOptions<ConvVariant>,
): Promise<Float32Array> {
  requireDevice("conv2d", gpu);
  checkOptions("conv2d", options);
  const g = validateConv2d(args);
  return await runConv(gpu, convPlan(gpu, g, args.bias !== undefined, options), args);
}

/**
 * `F.conv3d` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link conv3d}
 * @param options kernel override
 * @returns the result, `[N, Cout, Dout, Hout, Wout]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { conv3dGpu } from "@xpu/ops/ops/conv";
 * const gpu = await acquireDevice();
 * const x = new Float32Array(3 * 4 * 4).fill(1);
 * const weight = new Float32Array(2 * 1 * 3 * 3 * 3).fill(1);
 * const out = await conv3dGpu(gpu, { x, weight, N: 1, Cin: 1, Cout: 2, D: 3, H: 4, W: 4, kernelSize: 3, padding: [1, 0, 0] });
 * gpu.destroy();
 * ```
 */
export async function conv3dGpu(
  gpu: ResidentDevice,
  args: Conv3dArgs,
  options?: KernelOptions<ConvVariant>,
): Promise<Float32Array> {
  requireDevice("conv3d", gpu);
  checkOptions("conv3d", options);
  const g = validateConv3d(args);
  return await runConv(gpu, convPlan(gpu, g, args.bias !== undefined, options), args);
}
