/**
 * Reference for group normalisation: what correct means, in plain TypeScript.
 *
 * `groupNorm({ x, N, C, L, groups, weight, bias, eps })` is
 * `torch.nn.functional.group_norm(x, groups, weight, bias, eps)` (torch's `num_groups`) for `x`
 * `[N, C, *]`, viewed as `[N, C, L]` with L the product of the trailing (spatial) dimensions:
 *
 * - The C channels fall into `groups` groups of C / groups consecutive channels; each sample's group
 *   is normalised over its (C / groups) x L values together, one mean and one variance per
 *   (sample, group). Not layernorm over a longer row and not per channel: groups = 1 normalises the
 *   whole sample, groups = C is instance normalisation.
 * - The variance is the biased one (divided by (C / groups) x L, not by one less).
 * - eps is added to the variance inside the square root; it defaults to 1e-5 (torch's default) and
 *   must be a finite f32 >= 0.
 * - weight and bias are per channel, `[C]`, each optional (absent: ones and zeros), applied after
 *   the normalisation.
 * - C % groups != 0 throws, as torch does.
 * - `activation: "silu"` applies `y · sigmoid(y)` to the result, bias included: the GroupNorm → SiLU
 *   of the VAE decoders' residual blocks and heads, `F.silu(F.group_norm(...))`.
 *
 * Mean and variance are computed in two passes in f64 (values like 100 ± 1 lose nothing to
 * cancellation), and the result is rounded to f32 once.
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

/**
 * The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the
 * arguments; its `weight` and `bias` are booleans).
 */
const KEYS: readonly string[] = ["x", "weight", "bias", "N", "C", "L", "groups", "eps", "activation"];

/** The eps used when none is given (torch's default). */
export const GROUP_NORM_DEFAULT_EPS = 1e-5;

/** Activations the normalisation can be followed by in the same pass. */
export const GROUP_NORM_ACTIVATIONS = ["silu"] as const;

/** The sizes and scalars of a group_norm call: `x` is `[N, C, L]`. */
export interface GroupNormShape {
  /** Batch (>= 1). */
  N: number;
  /** Channels (>= 1), a multiple of `groups`. */
  C: number;
  /** Elements per channel: the product of the spatial dimensions (>= 1). */
  L: number;
  /** Number of groups (torch's `num_groups`), >= 1, dividing C. */
  groups: number;
  /** Added to the variance inside the square root; a finite f32 >= 0. Default 1e-5. */
  eps?: number;
  /** Applied to the result: `"silu"`, or nothing when absent. */
  activation?: typeof GROUP_NORM_ACTIVATIONS[number];
}

/** Arguments of {@link groupNorm}. */
export interface GroupNormArgs extends GroupNormShape {
  /** Input, `[N, C, L]` row-major. */
  x: Float32Array;
  /** Optional per-channel scale, `[C]`. Absent means ones. */
  weight?: Float32Array;
  /** Optional per-channel shift, `[C]`. Absent means zeros. */
  bias?: Float32Array;
}

/**
 * Validates a group_norm shape.
 *
 * @param shape `N`, `C`, `L`, `groups`, `eps`
 * @returns the eps to use
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateGroupNormShape } from "@xpu/ops/ops/group_norm";
 * validateGroupNormShape({ N: 1, C: 512, L: 64 * 64, groups: 32 }); // 1e-5; groups: 30 throws (C must be divisible by it)
 * ```
 */
export function validateGroupNormShape(shape: GroupNormShape): number {
  requireArgs("groupNorm", "shape", shape, "{ N, C, L, groups, eps?, activation? }", KEYS);
  requireInt("groupNorm", "N", shape.N, 1, U32_MAX);
  requireInt("groupNorm", "C", shape.C, 1, U32_MAX);
  requireInt("groupNorm", "L", shape.L, 1, U32_MAX);
  requireInt("groupNorm", "groups", shape.groups, 1, U32_MAX);
  if (shape.C % shape.groups !== 0) {
    throw new Error(`groupNorm: C must be divisible by groups, got C = ${shape.C} and groups = ${shape.groups}`);
  }
  const eps = requireF32("groupNorm", "eps", shape.eps ?? GROUP_NORM_DEFAULT_EPS);
  if (eps < 0) throw new Error(`groupNorm: eps must be >= 0, got ${eps}`);
  if (shape.activation !== undefined) {
    requireOneOf("groupNorm", "activation", shape.activation, GROUP_NORM_ACTIVATIONS);
  }
  return eps;
}

/**
 * Validates {@link groupNorm}'s arguments.
 *
 * @param args the arguments
 * @returns the eps to use
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateGroupNorm } from "@xpu/ops/ops/group_norm";
 * validateGroupNorm({ x: new Float32Array(8), N: 1, C: 4, L: 2, groups: 2, eps: 1e-6, weight: new Float32Array(4) }); // 1e-6
 * ```
 */
export function validateGroupNorm(args: GroupNormArgs): number {
  requireArgs("groupNorm", "args", args, "{ x, weight?, bias?, N, C, L, groups, eps?, activation? }", KEYS);
  const eps = validateGroupNormShape(args);
  requireArray("groupNorm", "x", args.x, "Float32Array", [args.N * args.C * args.L, "N * C * L"]);
  if (args.weight !== undefined) requireArray("groupNorm", "weight", args.weight, "Float32Array", [args.C, "C"]);
  if (args.bias !== undefined) requireArray("groupNorm", "bias", args.bias, "Float32Array", [args.C, "C"]);
  return eps;
}

/**
 * Group normalisation of `x` `[N, C, L]`, then the optional per-channel weight and bias and the
 * optional activation.
 *
 * @param args input, shape, groups, optional weight and bias, eps and activation
 * @returns a new Float32Array of length N * C * L
 *
 * @example
 * ```ts
 * import { groupNorm } from "@xpu/ops/ops/group_norm";
 * // One group of two channels [1, 3] and [5, 7]: mean 4, variance 5.
 * groupNorm({ x: new Float32Array([1, 3, 5, 7]), N: 1, C: 2, L: 2, groups: 1, eps: 0 });
 * ```
 */
export function groupNorm(args: GroupNormArgs): Float32Array {
  const eps = validateGroupNorm(args);
  const { x, N, C, L, groups, weight, bias, activation } = args;
  const perGroup = C / groups;
  const out = new Float32Array(N * C * L);
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < groups; g++) {
      const channels = Array.from({ length: perGroup }, (_, i) => g * perGroup + i);
      const values = channels.flatMap((c) => Array.from(x.subarray((n * C + c) * L, (n * C + c + 1) * L)));
      const mean = values.reduce((s, v) => s + v, 0) / values.length;
      const variance = values.reduce((s, v) => s + (v - mean) ** 2, 0) / values.length;
      const std = Math.sqrt(variance + eps);
      for (const c of channels) {
        const scale = weight ? weight[c] : 1;
        const shift = bias ? bias[c] : 0;
        for (let l = 0; l < L; l++) {
          const i = (n * C + c) * L + l;
          const y = ((x[i] - mean) / std) * scale + shift;
          out[i] = activation === "silu" ? y / (1 + Math.exp(-y)) : y;
        }
      }
    }
  }
  return out;
}
