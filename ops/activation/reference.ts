/**
 * Reference for activation: what correct means, in plain TypeScript.
 *
 * One op, `activation({ kind, x, alpha })`, elementwise over `x`:
 *
 * | kind        | function                                        | torch                                           |
 * | ----------- | ----------------------------------------------- | ----------------------------------------------- |
 * | `relu2`     | relu(x)^2                                       | `torch.relu(x) ** 2`                            |
 * | `silu`      | x * sigmoid(x)                                  | `torch.nn.functional.silu`                      |
 * | `elu`       | x > 0 ? x : alpha * (exp(x) - 1)                | `torch.nn.ELU(alpha)`, alpha defaulting to 1    |
 * | `tanh`      | tanh(x)                                         | `torch.tanh`                                    |
 * | `gelu`      | x * Phi(x) = x/2 * (1 + erf(x / sqrt 2))        | `torch.nn.functional.gelu` (approximate="none") |
 * | `gelu_tanh` | x/2 * (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) | `torch.nn.functional.gelu(approximate="tanh")`  |
 *
 * Each value is computed in f64 and rounded to f32 once. `gelu` and `gelu_tanh` are different
 * functions, not one function and its shortcut: they differ by up to 4.73e-4, at x = 2.699.
 *
 * Refused: `alpha` for any kind but `elu` (it would be silently ignored), and NaN or infinite
 * elements of `x` (WGSL lets a compiler assume neither occurs, so a kernel's answer for them is
 * undefined).
 *
 * JavaScript has no erf, so this module defines {@link erf} and {@link erfc} to about 1e-15.
 *
 * @module
 */

import { requireArray, requireNumber, requireOneOf } from "../validate.ts";

/** The activation functions. */
export const ACTIVATION_KINDS = ["relu2", "silu", "elu", "tanh", "gelu", "gelu_tanh"] as const;
/** One of {@link ACTIVATION_KINDS}. */
export type ActivationKind = typeof ACTIVATION_KINDS[number];

/** Arguments of {@link activation}. */
export interface ActivationArgs {
  /** Which function. */
  kind: ActivationKind;
  /** The input; every element finite. */
  x: Float32Array;
  /** elu's alpha (default 1, as torch.nn.ELU), rounded to f32; only for `elu`. */
  alpha?: number;
}

/**
 * Validates {@link activation}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateActivation(args: ActivationArgs): void {
  const op = "activation";
  requireOneOf(op, "kind", args.kind, ACTIVATION_KINDS);
  requireArray(op, "x", args.x, "Float32Array");
  for (let i = 0; i < args.x.length; i++) {
    if (!Number.isFinite(args.x[i])) throw new Error(`${op}: x must be finite, but x[${i}] is ${args.x[i]}`);
  }
  if (args.alpha === undefined) return;
  if (args.kind !== "elu") throw new Error(`${op}: alpha applies only to kind "elu", not "${args.kind}"`);
  requireNumber(op, "alpha", args.alpha);
  if (!Number.isFinite(Math.fround(args.alpha))) {
    throw new Error(`${op}: alpha must be finite in f32 (|alpha| <= 3.4028234663852886e38), got ${args.alpha}`);
  }
}

const TWO_OVER_SQRT_PI = 2 / Math.sqrt(Math.PI);
const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
/** Below this, erf's series; above it, erfc's continued fraction. */
const SERIES_LIMIT = 1.5;
/** Terms of erfc's continued fraction: enough for 1e-15 at SERIES_LIMIT. */
const FRACTION_DEPTH = 80;

/** erf for |z| < SERIES_LIMIT: 2/sqrt(pi) e^(-z^2) sum_n 2^n z^(2n+1) / (1 * 3 * ... * (2n + 1)). */
function erfSeries(z: number): number {
  const z2 = z * z;
  let term = z;
  let sum = z;
  for (let n = 1; Math.abs(term) > 1e-17 * Math.abs(sum); n++) {
    term *= (2 * z2) / (2 * n + 1);
    sum += term;
  }
  return TWO_OVER_SQRT_PI * Math.exp(-z2) * sum;
}

/** erfc for z >= SERIES_LIMIT: e^(-z^2)/sqrt(pi) / (z + (1/2)/(z + 1/(z + (3/2)/(z + 2/(z + ...))))). */
function erfcFraction(z: number): number {
  let denominator = z;
  for (let k = FRACTION_DEPTH; k >= 1; k--) denominator = z + k / 2 / denominator;
  return Math.exp(-z * z) / (Math.sqrt(Math.PI) * denominator);
}

/**
 * The error function, to about 1e-15 absolute.
 *
 * @param z any number
 * @returns erf(z)
 *
 * @example
 * ```ts
 * import { erf } from "@xpu/ops";
 * erf(1); // 0.8427007929497149
 * ```
 */
export function erf(z: number): number {
  if (Number.isNaN(z)) return NaN;
  if (Math.abs(z) < SERIES_LIMIT) return erfSeries(z);
  return Math.sign(z) * (1 - erfcFraction(Math.abs(z)));
}

/**
 * The complementary error function 1 - erf(z), to about 1e-14 relative (so it keeps its precision
 * in the tail, where 1 - erf(z) would cancel to 0).
 *
 * @param z any number
 * @returns erfc(z)
 *
 * @example
 * ```ts
 * import { erfc } from "@xpu/ops";
 * erfc(3); // 2.209049699858544e-5
 * ```
 */
export function erfc(z: number): number {
  if (Number.isNaN(z)) return NaN;
  if (z < 0) return 2 - erfc(-z);
  if (z < SERIES_LIMIT) return 1 - erfSeries(z);
  return erfcFraction(z);
}

/** The logistic sigmoid 1 / (1 + e^-v), without overflow for any v. */
function sigmoid(v: number): number {
  const e = Math.exp(-Math.abs(v));
  return v >= 0 ? 1 / (1 + e) : e / (1 + e);
}

function evaluate(kind: ActivationKind, v: number, alpha: number): number {
  switch (kind) {
    case "relu2":
      return v > 0 ? v * v : 0;
    case "silu":
      return v * sigmoid(v);
    case "elu":
      return v > 0 ? v : alpha * Math.expm1(v);
    case "tanh":
      return Math.tanh(v);
    case "gelu":
      // Phi(v) = erfc(-v / sqrt 2) / 2 keeps its precision where 1 + erf(v / sqrt 2) cancels.
      return v * 0.5 * erfc(-v / Math.SQRT2);
    case "gelu_tanh":
      // (1 + tanh(u)) / 2 is sigmoid(2u), which does not cancel for negative u.
      return v * sigmoid(2 * SQRT_2_OVER_PI * (v + 0.044715 * v * v * v));
  }
}

/**
 * Applies an activation function elementwise.
 *
 * @param args the kind, the input and, for `elu`, alpha
 * @returns a new Float32Array, each element the f32 rounding of the f64 value
 *
 * @example
 * ```ts
 * import { activation } from "@xpu/ops";
 * activation({ kind: "relu2", x: new Float32Array([-1, 3]) }); // [0, 9]
 * activation({ kind: "elu", x: new Float32Array([-1]), alpha: 0.5 }); // [-0.31606027...]
 * ```
 */
export function activation(args: ActivationArgs): Float32Array {
  validateActivation(args);
  const alpha = Math.fround(args.alpha ?? 1);
  return args.x.map((v) => evaluate(args.kind, v, alpha));
}
