/**
 * conv_transpose: `torch.nn.functional.conv_transpose1d(x, weight, bias, stride, padding,
 * output_padding, groups, dilation)` over `x` `[N, Cin, L]` with torch's weight layout
 * `[Cin, Cout / groups, K]`. Entry points `tile64` (64 x 256 tiles) and `kernel` (128 x 128);
 * {@link convTranspose1dPlan} picks one by size.
 *
 * Conventions, each pinned by a test against torch goldens that the alternative fails:
 * - weight `[Cin, Cout / groups, K]` (input channels first), not conv1d's `[Cout, Cin / groups, K]`;
 * - the kernel is not flipped relative to `out[s * stride - padding + k * dilation] += x[s] * w[k]`;
 * - `padding` crops both ends of the full result (it does not pad the input);
 * - `outputPadding` lengthens the trailing end only, and those positions get only the bias;
 * - groups: input channel ci feeds the output channels of its group, `ci / (Cin / groups)`;
 * - NaN and ±Infinity as torch (nonfinite.test.ts): an output sums only the taps that land on it
 *   from inside the input, so an infinite tap gives NaN only against a zero x, and outputs no tap
 *   reaches are the bias alone. The GEMM below also multiplies taps that land from outside the input
 *   (their x staged as 0), which adds nothing to a finite sum but NaN to one with an infinite or NaN
 *   tap; a sum that comes out NaN is therefore formed again tap by tap at the store (a bit test per
 *   output, outside the k-steps), which is NaN again only where torch's is.
 *
 * Refused, with an error naming the argument, before any GPU work: sizes that are not integers
 * >= 1, Cin or Cout not divisible by groups, an `outputPadding` not smaller than stride or dilation
 * (torch's rule), a padding that crops the whole output, and arrays of the wrong type or length.
 * `weight_norm` is an offline conversion, not a flag here.
 *
 * How it runs: output position u = t + padding receives only the taps with k * dilation = u (mod
 * stride), so the outputs split into `stride` phases, and within a phase the op is a plain
 * correlation: per (group, phase), an implicit GEMM of the transposed weight
 * `[Cout / groups, (Cin / groups) * taps]` with the gathered input, in ops/conv's register-blocked
 * tiles (see wgsl/include/conv_transpose_gemm.wgsl). No multiply is spent on a tap that misses a
 * position, which a scatter over every tap would do (stride - 1 of every stride), and no time on
 * other phases' taps: each workgroup finds its phase's first tap once and steps
 * `stride / gcd(stride, dilation)` taps at a time from it. Visiting all K taps and skipping the
 * others (the kernel before) cost a third of the time at K = 16, stride 8. The plan takes `tile64`
 * except for GEMMs of at most 128 columns per phase with more than 64 output channels per group (as
 * ops/conv, whose measurements chose the rule); at both bench shapes `tile64` is 1.08-1.13x
 * `kernel`'s rate.
 *
 * On the H200 (GPU timestamps, median of 20 after warm clocks, Deno 2.9.6, 2026-12-02;
 * harness/baselines/nvidia-h200-log/32-convt-ab.txt): 512 -> 256 channels, K = 16, stride 8, 2,048
 * inputs: 0.397 ms, 21.6 TFLOP/s with `tile64` (the skipping kernel: 0.600 ms, 14.3); 256 -> 128,
 * K = 8, stride 4, 16,384 inputs: 0.443 ms, 19.4 (16.1). Holding the next block's loads in
 * registers during the k-steps (one or two stage buffers) was slower at both shapes, 15.6-17.8
 * TFLOP/s with the 64 x 256 tile, and was not kept. These GEMMs are small (8.6 GFLOP): 256
 * workgroups over 132 multiprocessors, each with a K of only 1,024 (512 channels x 2 taps). The
 * kernels as committed passed this module's tests on the H200 (`32-convt-tests.txt` there); their
 * code is the timed candidates' (`walk64`, `walk128` in the log) with comments added.
 *
 * Whether a 2-D transposed convolution is needed: not by the image models the spec names. Read in
 * diffusers' sources (huggingface/diffusers): the `AutoencoderKL` decoder (Z-Image's VAE, FLUX's)
 * upsamples in `UpDecoderBlock2D` (`models/unets/unet_2d_blocks.py`) with
 * `Upsample2D(out_channels, use_conv=True)`, which in `models/upsampling.py` is a nearest
 * interpolation followed by a 3 x 3 `Conv2d` (a `ConvTranspose2d` only under
 * `use_conv_transpose=True`, which the decoder never sets); `AutoencoderKLQwenImage`
 * (`models/autoencoders/autoencoder_kl_qwenimage.py`, the Qwen-Image / Wan-2.1 VAE that Anima
 * decodes with) upsamples in `QwenImageResample` with `Upsample(scale_factor=2,
 * mode="nearest-exact")` then `Conv2d(dim, dim // 2, 3, padding=1)`, and in time with a causal
 * `Conv3d` whose doubled channels are folded into frames. Neither has a `ConvTranspose2d`. (Which
 * VAE each model ships is from their model cards, not checked against a checkpoint here.) The
 * spec's upsample row says the same ("the nearest upsample -> conv half of a decoder that avoids
 * conv_transpose's checkerboard"), and its op list marks conv_transpose 1-D. The audio decoders
 * that do transpose (DAC-style codecs, MioCodec, BigVGAN) use `ConvTranspose1d`. So there is no
 * 2-D entry point.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { gemmTiling } from "../conv/gemm_tiling.ts";
import { type ConvTransposeVariant, KERNELS } from "./kernels.gen.ts";
import {
  type ConvTranspose1dArgs,
  type ConvTranspose1dShape,
  validateConvTranspose1d,
  validateConvTranspose1dShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type ConvTransposeVariant, KERNELS };

const FIELDS = [
  "cin",
  "cout",
  "groups",
  "cin_g",
  "cout_g",
  "has_bias",
  "k",
  "stride",
  "padding",
  "dilation",
  "l_in",
  "l_out",
  "j_count",
  "cols",
  "tiles_m",
  "tiles_n",
  "tap_step",
  "shift_step",
] as const;
/** What the derived fields are made of, for a size too large for a u32. */
const OF: Partial<Record<typeof FIELDS[number], string>> = {
  l_out: "the output length, (L - 1) * stride - 2 * padding + dilation * (kernelSize - 1) + outputPadding + 1",
  j_count: "the output length / stride",
  cols: "N times the output length / stride",
};
const PARAMS: readonly ParamField[] = FIELDS.map((name) => ({ name, type: "u32", of: OF[name] }));

/** Greatest common divisor of two integers >= 1. */
function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * Plans `conv_transpose1d` on the GPU.
 *
 * @param gpu the device
 * @param shape the sizes and arguments, and whether a bias is bound
 * @param options kernel override: a variant of `kernel` or `tile64` (which also picks the tile)
 * @returns the plan; bindings `x`, `weight`, `bias` (inputs; `bias` empty when absent) and `out`,
 *   one workgroup per (group, phase, output-channel tile, column tile)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { convTranspose1dPlan } from "@xpu/ops/ops/conv_transpose";
 * const gpu = await acquireDevice();
 * const plan = convTranspose1dPlan(gpu, { N: 1, Cin: 8, Cout: 4, L: 32, kernelSize: 16, stride: 8, padding: 4, bias: true });
 * plan.bindings.map((b) => b.name); // ["x", "weight", "bias", "out"]
 * gpu.destroy();
 * ```
 */
export function convTranspose1dPlan(
  gpu: ResidentDevice,
  shape: ConvTranspose1dShape & { bias?: boolean },
  options?: KernelOptions<ConvTransposeVariant>,
): KernelPlan {
  requireDevice("convTranspose1d", gpu);
  checkOptions("convTranspose1d", options);
  const g = validateConvTranspose1dShape(shape);
  const hasBias = shape.bias ?? false;
  const cinG = g.Cin / g.groups, coutG = g.Cout / g.groups;
  const jCount = Math.ceil(g.Lout / g.stride);
  const cols = g.N * jCount;
  const common = gcd(g.stride, g.dilation);
  const { kernel, tilesM, tilesN } = gemmTiling(gpu, KERNELS, "conv_transpose1d", coutG, cols, options);
  const xLength = g.N * g.Cin * g.L, weightLength = g.Cin * coutG * g.K, outLength = g.N * g.Cout * g.Lout;
  return {
    op: "conv_transpose1d",
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
      k: g.K,
      stride: g.stride,
      padding: g.padding,
      dilation: g.dilation,
      l_in: g.L,
      l_out: g.Lout,
      j_count: jCount,
      cols,
      tiles_m: tilesM,
      tiles_n: tilesN,
      tap_step: g.stride / common,
      shift_step: g.dilation / common,
    }, "conv_transpose1d"),
    workgroups: foldWorkgroups(g.groups * g.stride * tilesM * tilesN, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Each operand read once and the result written once; every input element meets every tap of
    // its group's weight once, a multiply and an add each (the convention for a transposed
    // convolution's FLOPs; the few products that land in the cropped padding are counted too).
    cost: {
      bytes: 4 * (xLength + weightLength + (hasBias ? g.Cout : 0) + outLength),
      flops: 2 * g.N * g.Cin * coutG * g.L * g.K,
    },
  };
}

/**
 * `F.conv_transpose1d` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link convTranspose1d}
 * @param options kernel override
 * @returns the result, `[N, Cout, Lout]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { convTranspose1dGpu } from "@xpu/ops/ops/conv_transpose";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 10, 100]);
 * const weight = new Float32Array([1, 2, 3, 4]);
 * const out = await convTranspose1dGpu(gpu, { x, weight, N: 1, Cin: 1, Cout: 1, L: 3, kernelSize: 4, stride: 2, padding: 1 });
 * gpu.destroy();
 * ```
 */
export async function convTranspose1dGpu(
  gpu: ResidentDevice,
  args: ConvTranspose1dArgs,
  options?: KernelOptions<ConvTransposeVariant>,
): Promise<Float32Array> {
  requireDevice("convTranspose1d", gpu);
  checkOptions("convTranspose1d", options);
  validateConvTranspose1d(args);
  const plan = convTranspose1dPlan(gpu, { ...args, bias: args.bias !== undefined }, options);
  const [out] = await gpu.run(plan, [args.x, args.weight, args.bias ?? new Float32Array(0)]);
  return out as Float32Array;
}
