/**
 * Reference for channel normalisation: what correct means, in plain TypeScript.
 *
 * `channelNorm({ x, N, C, L, weight, bias, eps, activation })` gives, for `x` `[N, C, L]` (L the
 * product of the spatial dimensions), at every sample n and position l,
 * `out[n, c, l] = x[n, c, l] / max(‖x[n, :, l]‖₂, eps) · √C · weight[c] + bias[c]`, which is
 * `torch.nn.functional.normalize(x, dim=1, eps=eps) * C ** 0.5 * weight + bias`: the Wan 2.1 VAE's
 * `RMS_norm` with `channel_first=True` (its `gamma` is `weight`, its optional `bias` is `bias`).
 *
 * - The norm is over the C channels of one position, not over the positions of a channel (that
 *   would be an instance norm) and not over the whole sample.
 * - eps bounds the norm from below (`F.normalize`'s `clamp_min`), it is not added to it or to the
 *   mean square: a position whose norm is below eps is divided by eps. An all-zero position gives
 *   zeros (then the bias). eps defaults to 1e-12, `F.normalize`'s default, and must be a finite
 *   f32 >= 0 (with eps = 0 an all-zero position gives NaN, 0 / 0, as torch does).
 * - √C makes it the RMS form: for a position whose norm exceeds eps this is
 *   `x / sqrt(mean_c(x²)) · weight`, an RMSNorm over channels without an eps inside the root.
 * - weight and bias are per channel, `[C]`, each optional (absent: ones and zeros), applied after the
 *   normalisation and the √C.
 * - `activation: "silu"` applies `y · sigmoid(y)` to the result (the SiLU that follows every
 *   `RMS_norm` of the Wan VAE's residual blocks and head), as `F.silu` would.
 *
 * The norm is accumulated in f64 and the result rounded to f32 once.
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

/**
 * The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the
 * arguments; its `weight` and `bias` are booleans).
 */
const KEYS: readonly string[] = ["x", "weight", "bias", "N", "C", "L", "eps", "activation"];

/** The eps used when none is given: `torch.nn.functional.normalize`'s default. */
export const CHANNEL_NORM_DEFAULT_EPS = 1e-12;

/** Activations the normalisation can be followed by in the same pass. */
export const CHANNEL_NORM_ACTIVATIONS = ["silu"] as const;

/** The sizes and scalars of a channel_norm call: `x` is `[N, C, L]`. */
export interface ChannelNormShape {
  /** Batch (>= 1). */
  N: number;
  /** Channels, the axis normalised over (>= 1). */
  C: number;
  /** Positions per channel: the product of the spatial dimensions (>= 1). */
  L: number;
  /** The least the norm is taken to be (`F.normalize`'s eps); a finite f32 >= 0. Default 1e-12. */
  eps?: number;
  /** Applied to the result: `"silu"`, or nothing when absent. */
  activation?: typeof CHANNEL_NORM_ACTIVATIONS[number];
}

/** Arguments of {@link channelNorm}. */
export interface ChannelNormArgs extends ChannelNormShape {
  /** Input, `[N, C, L]` row-major. */
  x: Float32Array;
  /** Optional per-channel scale (the VAE's `gamma`), `[C]`. Absent means ones. */
  weight?: Float32Array;
  /** Optional per-channel shift, `[C]`. Absent means zeros. */
  bias?: Float32Array;
}

/**
 * Validates a channel_norm shape.
 *
 * @param shape `N`, `C`, `L`, `eps`, `activation`
 * @returns the eps to use
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateChannelNormShape } from "@xpu/ops/ops/channel_norm";
 * validateChannelNormShape({ N: 1, C: 384, L: 128 * 128 }); // 1e-12
 * ```
 */
export function validateChannelNormShape(shape: ChannelNormShape): number {
  requireArgs("channelNorm", "shape", shape, "{ N, C, L, eps?, activation? }", KEYS);
  requireInt("channelNorm", "N", shape.N, 1, U32_MAX);
  requireInt("channelNorm", "C", shape.C, 1, U32_MAX);
  requireInt("channelNorm", "L", shape.L, 1, U32_MAX);
  if (shape.activation !== undefined) {
    requireOneOf("channelNorm", "activation", shape.activation, CHANNEL_NORM_ACTIVATIONS);
  }
  const eps = requireF32("channelNorm", "eps", shape.eps ?? CHANNEL_NORM_DEFAULT_EPS);
  if (eps < 0) throw new Error(`channelNorm: eps must be >= 0, got ${eps}`);
  return eps;
}

/**
 * Validates {@link channelNorm}'s arguments: the shape, then `x`, the weight and the bias.
 *
 * @param args the arguments
 * @returns the eps to use
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateChannelNorm } from "@xpu/ops/ops/channel_norm";
 * validateChannelNorm({ x: new Float32Array(6), N: 1, C: 3, L: 2, weight: new Float32Array(3) }); // 1e-12
 * ```
 */
export function validateChannelNorm(args: ChannelNormArgs): number {
  requireArgs("channelNorm", "args", args, "{ x, N, C, L, weight?, bias?, eps?, activation? }", KEYS);
  const eps = validateChannelNormShape(args);
  requireArray("channelNorm", "x", args.x, "Float32Array", [args.N * args.C * args.L, "N * C * L"]);
  if (args.weight !== undefined) requireArray("channelNorm", "weight", args.weight, "Float32Array", [args.C, "C"]);
  if (args.bias !== undefined) requireArray("channelNorm", "bias", args.bias, "Float32Array", [args.C, "C"]);
  return eps;
}

/**
 * Normalises every position of `x` `[N, C, L]` over its channels to norm √C, then applies the
 * per-channel weight and bias and the optional activation.
 *
 * @param args input, shape, optional weight and bias `[C]`, eps and activation
 * @returns a new Float32Array of length N * C * L
 *
 * @example
 * ```ts
 * import { channelNorm } from "@xpu/ops/ops/channel_norm";
 * // One position of two channels [3, 4]: norm 5, times sqrt(2).
 * channelNorm({ x: new Float32Array([3, 4]), N: 1, C: 2, L: 1 }); // [0.8485..., 1.1313...]
 * ```
 */
export function channelNorm(args: ChannelNormArgs): Float32Array {
  const eps = validateChannelNorm(args);
  const { x, N, C, L, weight, bias, activation } = args;
  const root = Math.sqrt(C);
  const out = new Float32Array(N * C * L);
  for (let n = 0; n < N; n++) {
    for (let l = 0; l < L; l++) {
      let squares = 0;
      for (let c = 0; c < C; c++) squares += x[(n * C + c) * L + l] ** 2;
      const norm = Math.max(Math.sqrt(squares), eps);
      for (let c = 0; c < C; c++) {
        const i = (n * C + c) * L + l;
        const y = (x[i] / norm) * root * (weight ? weight[c] : 1) + (bias ? bias[c] : 0);
        out[i] = activation === "silu" ? y / (1 + Math.exp(-y)) : y;
      }
    }
  }
  return out;
}
