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
 * NaN and ±Infinity propagate as torch 2.11's float32 CPU kernels give them (pinned by the goldens):
 * NaN gives NaN for every kind; +Infinity gives +Infinity, except tanh (1); -Infinity gives 0 for
 * relu2, -alpha for elu, -1 for tanh, and NaN for silu and both gelus, whose formulas multiply
 * -Infinity by a factor that is exactly 0 there (`-inf / (1 + exp(inf))`, `-inf * 0.5 * (1 +
 * erf(-inf))`). One departure: gelu(+Infinity) is +Infinity, the limit and what the formula gives;
 * torch's CPU kernel gives NaN there.
 *
 * Refused: `alpha` for any kind but `elu` (it would be silently ignored), and an alpha that is not
 * a finite f32.
 *
 * Gated activations, `gatedActivation({ kind, gate, up })`, elementwise over two inputs of one
 * length: `f(gate) * up`, the product of a feed-forward's gate and up projections.
 *
 * | kind     | function              | torch                                                      |
 * | -------- | --------------------- | ---------------------------------------------------------- |
 * | `swiglu` | silu(gate) * up       | `F.silu(w1(x)) * w3(x)` (Llama, Qwen3, Z-Image FFNs)       |
 * | `geglu`  | gelu(gate) * up (erf) | `F.gelu(gate) * up` (diffusers' GEGLU, approximate="none") |
 *
 * The activation applies to `gate` only (swapping the inputs gives a different function), in f64,
 * and the product is rounded to f32 once; NaN and ±Infinity propagate through the product as IEEE
 * arithmetic gives them (silu(+Infinity) * 0 is NaN, as in torch).
 *
 * JavaScript has no erf, so this module defines {@link erf} and {@link erfc} to about 1e-15.
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

/** The activation functions. */
export const ACTIVATION_KINDS = ["relu2", "silu", "elu", "tanh", "gelu", "gelu_tanh"] as const;
/** One of {@link ACTIVATION_KINDS}. */
export type ActivationKind = typeof ACTIVATION_KINDS[number];

/** The keys an {@link activation} shape or arguments object may carry (a plan may be given the arguments). */
const KEYS: readonly string[] = ["kind", "x", "n", "alpha"];

/** The kind, length and scalar of an {@link activation} call: what a plan needs. */
export interface ActivationShape {
  /** Which function. */
  kind: ActivationKind;
  /** Elements of `x` (>= 0). */
  n: number;
  /** elu's alpha (default 1, as torch.nn.ELU), a finite f32; only for `elu`. */
  alpha?: number;
}

/** Arguments of {@link activation}. */
export interface ActivationArgs {
  /** Which function. */
  kind: ActivationKind;
  /** The input; NaN and ±Infinity propagate as torch's formulas give them. */
  x: Float32Array;
  /** elu's alpha (default 1, as torch.nn.ELU), rounded to f32; only for `elu`. */
  alpha?: number;
}

/**
 * Validates {@link activation}'s kind, length and alpha (what {@link ActivationShape} holds).
 *
 * @param shape the kind, the length and alpha
 * @returns alpha as the kernel takes it (1 when absent)
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateActivationShape } from "@xpu/ops/ops/activation";
 * validateActivationShape({ kind: "elu", n: 1024, alpha: 0.5 }); // 0.5
 * ```
 */
export function validateActivationShape(shape: ActivationShape): number {
  const op = "activation";
  requireArgs(op, "shape", shape, "{ kind, n, alpha? }", KEYS);
  requireOneOf(op, "kind", shape.kind, ACTIVATION_KINDS);
  requireInt(op, "n", shape.n, 0, U32_MAX);
  if (shape.alpha === undefined) return 1;
  if (shape.kind !== "elu") throw new Error(`${op}: alpha applies only to kind "elu", not "${shape.kind}"`);
  return requireF32(op, "alpha", shape.alpha);
}

/**
 * Validates {@link activation}'s arguments: the kind and alpha, then `x`.
 *
 * @param args the arguments
 * @returns alpha as the kernel takes it (1 when absent)
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateActivation } from "@xpu/ops/ops/activation";
 * validateActivation({ kind: "gelu", x: new Float32Array([NaN, 1]) }); // 1: NaN propagates, as in torch
 * ```
 */
export function validateActivation(args: ActivationArgs): number {
  const op = "activation";
  requireArgs(op, "args", args, "{ kind, x, alpha? }", KEYS);
  requireOneOf(op, "kind", args.kind, ACTIVATION_KINDS);
  requireArray(op, "x", args.x, "Float32Array");
  return validateActivationShape({ kind: args.kind, n: args.x.length, alpha: args.alpha });
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
      return Math.max(v, 0) ** 2; // NaN stays NaN, as torch.relu
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

/** The gated activations: `f(gate) * up`. */
export const GATED_ACTIVATION_KINDS = ["swiglu", "geglu"] as const;
/** One of {@link GATED_ACTIVATION_KINDS}. */
export type GatedActivationKind = typeof GATED_ACTIVATION_KINDS[number];

/** The keys a {@link gatedActivation} shape or arguments object may carry (a plan may be given the arguments). */
const GATED_KEYS: readonly string[] = ["kind", "gate", "up", "n"];

/** The kind and length of a {@link gatedActivation} call: what a plan needs. */
export interface GatedActivationShape {
  /** Which function: `swiglu` (silu of the gate) or `geglu` (gelu of the gate, erf form). */
  kind: GatedActivationKind;
  /** Elements of each input and of the result (>= 0). */
  n: number;
}

/** Arguments of {@link gatedActivation}. */
export interface GatedActivationArgs {
  /** Which function: `swiglu` (silu of the gate) or `geglu` (gelu of the gate, erf form). */
  kind: GatedActivationKind;
  /** The input the activation applies to (a feed-forward's `w1 x`). */
  gate: Float32Array;
  /** The input it multiplies (`w3 x`), of the gate's length. */
  up: Float32Array;
}

/**
 * Validates {@link gatedActivation}'s kind and length (what {@link GatedActivationShape} holds).
 *
 * @param shape the kind and the length
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateGatedActivationShape } from "@xpu/ops/ops/activation";
 * validateGatedActivationShape({ kind: "swiglu", n: 10240 }); // passes
 * ```
 */
export function validateGatedActivationShape(shape: GatedActivationShape): void {
  const op = "gatedActivation";
  requireArgs(op, "shape", shape, "{ kind, n }", GATED_KEYS);
  requireOneOf(op, "kind", shape.kind, GATED_ACTIVATION_KINDS);
  requireInt(op, "n", shape.n, 0, U32_MAX);
}

/**
 * Validates {@link gatedActivation}'s arguments: the kind, then `gate` and `up`, of one length.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateGatedActivation } from "@xpu/ops/ops/activation";
 * validateGatedActivation({ kind: "geglu", gate: new Float32Array(4), up: new Float32Array(4) }); // passes
 * ```
 */
export function validateGatedActivation(args: GatedActivationArgs): void {
  const op = "gatedActivation";
  requireArgs(op, "args", args, "{ kind, gate, up }", GATED_KEYS);
  requireOneOf(op, "kind", args.kind, GATED_ACTIVATION_KINDS);
  requireArray(op, "gate", args.gate, "Float32Array");
  requireArray(op, "up", args.up, "Float32Array", [args.gate.length, "gate.length"]);
  validateGatedActivationShape({ kind: args.kind, n: args.gate.length });
}

/**
 * A gated activation elementwise: `silu(gate) * up` (swiglu) or `gelu(gate) * up` (geglu).
 *
 * @param args the kind, the gate and the up input
 * @returns a new Float32Array, each element the f32 rounding of the f64 value
 *
 * @example
 * ```ts
 * import { gatedActivation } from "@xpu/ops";
 * gatedActivation({ kind: "swiglu", gate: new Float32Array([0, 1]), up: new Float32Array([5, 2]) }); // [0, 1.4621...]
 * ```
 */
export function gatedActivation(args: GatedActivationArgs): Float32Array {
  validateGatedActivation(args);
  const f: ActivationKind = args.kind === "swiglu" ? "silu" : "gelu";
  const { up } = args;
  return args.gate.map((g, i) => evaluate(f, g, 1) * up[i]);
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
  const alpha = Math.fround(validateActivation(args));
  return args.x.map((v) => evaluate(args.kind, v, alpha));
}

/** Every key of {@link swigluPairs}'s arguments (its shape's among them). */
const SWIGLU_PAIRS_KEYS: readonly string[] = ["x", "out", "rows", "pairs", "outCols", "col0"];

/** The sizes of a {@link swigluPairs} call. */
export interface SwigluPairsShape {
  /** Rows of `x` and of `out`, an integer >= 1. */
  rows: number;
  /** (gate, up) pairs in a row of `x`, an integer >= 1: `x` is `[rows, 2 * pairs]`. */
  pairs: number;
  /** Columns of `out`, at least `col0 + pairs`. */
  outCols: number;
  /** The first column of `out` the results fill. */
  col0: number;
}

/** Arguments of {@link swigluPairs}. */
export interface SwigluPairsArgs extends SwigluPairsShape {
  /** `[rows, 2 * pairs]`: gate j at column 2j, up j at 2j + 1. */
  x: Float32Array;
  /** `[rows, outCols]`; its columns outside `[col0, col0 + pairs)` are kept. */
  out: Float32Array;
}

/**
 * Validates {@link swigluPairs}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateSwigluPairsShape } from "@xpu/ops/ops/activation";
 * validateSwigluPairsShape({ rows: 2, pairs: 4, outCols: 8, col0: 4 }); // passes
 * ```
 */
export function validateSwigluPairsShape(shape: SwigluPairsShape): void {
  const op = "swigluPairs";
  requireArgs(op, "shape", shape, "{ rows, pairs, outCols, col0 }", SWIGLU_PAIRS_KEYS);
  requireInt(op, "rows", shape.rows, 1, U32_MAX);
  requireInt(op, "pairs", shape.pairs, 1, U32_MAX);
  requireInt(op, "col0", shape.col0, 0, U32_MAX);
  requireInt(op, "outCols", shape.outCols, shape.col0 + shape.pairs, U32_MAX);
}

/**
 * Validates {@link swigluPairs}'s arguments: the sizes, then `x` and `out`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateSwigluPairs } from "@xpu/ops/ops/activation";
 * validateSwigluPairs({ x: new Float32Array(4), out: new Float32Array(3), rows: 1, pairs: 2, outCols: 3, col0: 1 });
 * ```
 */
export function validateSwigluPairs(args: SwigluPairsArgs): void {
  requireArgs("swigluPairs", "args", args, "{ x, out, rows, pairs, outCols, col0 }", SWIGLU_PAIRS_KEYS);
  validateSwigluPairsShape(args);
  requireArray("swigluPairs", "x", args.x, "Float32Array", [2 * args.rows * args.pairs, "2 * rows * pairs"]);
  requireArray("swigluPairs", "out", args.out, "Float32Array", [args.rows * args.outCols, "rows * outCols"]);
}

/**
 * SwiGLU of interleaved (gate, up) pairs into a column range: `out[r, col0 + j] = silu(x[r, 2j]) *
 * x[r, 2j + 1]`, the other columns of `out` kept. The same function as {@link gatedActivation}'s
 * swiglu with `gate = x[:, 0::2]`, `up = x[:, 1::2]`: a feed-forward whose gate and up projections
 * are one matrix with interleaved rows.
 *
 * @param args the pairs, the output and the sizes
 * @returns a new `[rows, outCols]` matrix, the placed elements each the f32 rounding of the f64 value
 *
 * @example
 * ```ts
 * import { swigluPairs } from "@xpu/ops/ops/activation";
 * swigluPairs({ x: new Float32Array([0, 5, 1, 2]), out: new Float32Array(3), rows: 1, pairs: 2, outCols: 3, col0: 1 });
 * // [0, 0, 1.4621...]
 * ```
 */
export function swigluPairs(args: SwigluPairsArgs): Float32Array {
  validateSwigluPairs(args);
  const { x, rows, pairs, outCols, col0 } = args;
  const out = Float32Array.from(args.out);
  for (let r = 0; r < rows; r++) {
    for (let j = 0; j < pairs; j++) {
      const at = r * 2 * pairs + 2 * j;
      out[r * outCols + col0 + j] = evaluate("silu", x[at], 1) * x[at + 1];
    }
  }
  return out;
}
