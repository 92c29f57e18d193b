/**
 * Reference for multi-axis rotary position embedding (`ropeAxes`), in plain TypeScript.
 *
 * `x` is `[tokens, heads, headDim]` and each token has one integer position per axis
 * (`positions` `[tokens, axes]`, Int32, as Z-Image's `ids`: the caller decides them, nothing is
 * derived from a patch grid). The head's channels are shared among the axes, `axesDims` (even, summing
 * to headDim), and the channels of axis a turn with that token's position on axis a:
 *
 * ```
 * invFreq_a[j] = theta_a ^ (-2j / axesDims[a])     j = 0 .. axesDims[a]/2 - 1
 * angle        = positions[t, a] * invFreq_a[j]
 * ```
 *
 * The exponent is normalised by the axis's own channel count, not by headDim (Z-Image's
 * RopeEmbedder, Tongyi-MAI/Z-Image @ 26f23ed, and Cosmos-Predict2's VideoRopePosition3DEmb both do
 * so). `theta` is one base for every axis (Z-Image: 256) or one per axis (Cosmos-Predict2 2B as
 * Anima uses it: 10000 for t and 10000 · 4^(42/40) ≈ 42,870.9 for h and w, its NTK extrapolation
 * ratio of 4 folded into the base). Two pairings:
 *
 * - `"adjacent"` (default): the head is split into contiguous per-axis blocks (Z-Image's
 *   [32, 48, 48]) and channel pairs are (2i, 2i+1) inside them, Z-Image's
 *   `torch.view_as_complex(x.reshape(..., -1, 2))`, the same convention as {@link rope}.
 * - `"half"`: channel c pairs with c + headDim/2, and each half of the head holds every axis's
 *   axesDims[a]/2 frequencies in axis order: Cosmos-Predict2's `cat([t, h, w] * 2)` applied with
 *   transformer-engine's non-interleaved `rotate_half` (for Anima, [t22 h21 w21 | t22 h21 w21]).
 *   With one axis this is HF Llama's rotate_half.
 *
 * Angles are computed, never tabulated (upstream's `axes_lens` is not a parameter), so a negative
 * position turns backwards instead of wrapping to the end of a table. No scaling, head range or
 * cache. Accumulation is f64, each output rounded to f32 once; invFreq is rounded to f32 first.
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

/** How the channels of an axis are paired (see the module doc). */
export type RopePairing = "adjacent" | "half";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["x", "positions", "tokens", "heads", "headDim", "axesDims", "theta", "pairing"];

/** Sizes and scalars of {@link ropeAxes}. */
export interface RopeAxesShape {
  /** Tokens, >= 1. */
  tokens: number;
  /** Heads per token, >= 1. */
  heads: number;
  /** Channels per head: the sum of axesDims. */
  headDim: number;
  /** Channels of each axis, each even and >= 2 (Z-Image: [32, 48, 48]). */
  axesDims: readonly number[];
  /** One base for every axis, or one per axis; each > 0. */
  theta: number | readonly number[];
  /** Pairing, default "adjacent". */
  pairing?: RopePairing;
}

/** Arguments of {@link ropeAxes}. */
export interface RopeAxesArgs extends RopeAxesShape {
  /** Input, `[tokens, heads, headDim]` row-major. */
  x: Float32Array;
  /** Each token's position on each axis, `[tokens, axes]` row-major. */
  positions: Int32Array;
}

/** Per channel pair of a head: its axis, its inverse frequency (f32) and its two channels. */
export interface RopeAxesPairs {
  /** Axis of pair i, `[headDim / 2]`. */
  axis: Uint32Array;
  /** Inverse frequency of pair i, `[headDim / 2]`, rounded to f32. */
  invFreq: Float32Array;
  /** First channel of pair i (rotated to `x0 cos - x1 sin`). */
  first: Uint32Array;
  /** Second channel of pair i (rotated to `x0 sin + x1 cos`). */
  second: Uint32Array;
  /** The pairing. */
  pairing: RopePairing;
}

/**
 * Validates {@link ropeAxes}'s sizes and scalars and lays out its channel pairs.
 *
 * @param shape the sizes and scalars
 * @returns the channel pairs of one head
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateRopeAxesShape } from "@xpu/ops/ops/rope";
 * validateRopeAxesShape({ tokens: 1, heads: 1, headDim: 6, axesDims: [2, 4], theta: 256 }).axis; // [0, 1, 1]
 * ```
 */
export function validateRopeAxesShape(shape: RopeAxesShape): RopeAxesPairs {
  requireArgs("ropeAxes", "shape", shape, "{ tokens, heads, headDim, axesDims, theta, pairing? }", KEYS);
  requireInt("ropeAxes", "tokens", shape.tokens, 1, U32_MAX);
  requireInt("ropeAxes", "heads", shape.heads, 1, U32_MAX);
  requireInt("ropeAxes", "headDim", shape.headDim, 2, U32_MAX);
  const dims = shape.axesDims;
  if (!Array.isArray(dims) || dims.length < 1) {
    throw new Error(`ropeAxes: axesDims must be a non-empty array of even channel counts, got ${String(dims)}`);
  }
  dims.forEach((d, a) => {
    requireInt("ropeAxes", `axesDims[${a}]`, d, 2);
    if (d % 2 !== 0) throw new Error(`ropeAxes: axesDims[${a}] must be even, got ${d}`);
  });
  const sum = dims.reduce((s, d) => s + d, 0);
  if (sum !== shape.headDim) {
    throw new Error(`ropeAxes: axesDims must sum to headDim = ${shape.headDim}, got ${sum}`);
  }
  const thetas = typeof shape.theta === "number" ? dims.map(() => shape.theta as number) : shape.theta;
  if (!Array.isArray(thetas) || thetas.length !== dims.length) {
    throw new Error(`ropeAxes: theta must be a number or one per axis (${dims.length}), got ${String(shape.theta)}`);
  }
  thetas.forEach((t, a) => {
    requireF32("ropeAxes", `theta[${a}]`, t);
    if (t <= 0) throw new Error(`ropeAxes: theta[${a}] must be > 0, got ${t}`);
  });
  const pairing = requireOneOf("ropeAxes", "pairing", shape.pairing ?? "adjacent", ["adjacent", "half"]);
  const half = shape.headDim / 2;
  const pairs: RopeAxesPairs = {
    axis: new Uint32Array(half),
    invFreq: new Float32Array(half),
    first: new Uint32Array(half),
    second: new Uint32Array(half),
    pairing,
  };
  let i = 0;
  dims.forEach((d, a) => {
    for (let j = 0; j < d / 2; j++, i++) {
      pairs.axis[i] = a;
      pairs.invFreq[i] = 1 / thetas[a] ** ((2 * j) / d);
      // Adjacent: pairs are numbered in channel order, so pair i is channels 2i, 2i + 1 (inside its
      // axis's block). Half: pair i is channel i of the first half and its partner i + headDim/2.
      pairs.first[i] = pairing === "adjacent" ? 2 * i : i;
      pairs.second[i] = pairing === "adjacent" ? 2 * i + 1 : i + half;
    }
  });
  return pairs;
}

/**
 * Validates {@link ropeAxes}'s arguments.
 *
 * @param args the arguments
 * @returns as {@link validateRopeAxesShape}
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateRopeAxes } from "@xpu/ops/ops/rope";
 * const x = new Float32Array(6), positions = new Int32Array([0, 3]); // one token, one head, two axes
 * validateRopeAxes({ x, positions, tokens: 1, heads: 1, headDim: 6, axesDims: [2, 4], theta: [10000, 256] }).invFreq; // [1, 1, 1 / 16]
 * ```
 */
export function validateRopeAxes(args: RopeAxesArgs): RopeAxesPairs {
  requireArgs("ropeAxes", "args", args, "{ x, positions, tokens, heads, headDim, axesDims, theta, pairing? }", KEYS);
  const pairs = validateRopeAxesShape(args);
  const { tokens, heads, headDim } = args;
  requireArray("ropeAxes", "x", args.x, "Float32Array", [tokens * heads * headDim, "tokens * heads * headDim"]);
  requireArray("ropeAxes", "positions", args.positions, "Int32Array", [
    tokens * args.axesDims.length,
    "tokens * axes",
  ]);
  return pairs;
}

/**
 * Multi-axis rotary position embedding of `x` `[tokens, heads, headDim]` (see the module doc).
 *
 * @param args input, sizes, positions `[tokens, axes]`, per-axis channel counts, theta and pairing
 * @returns a new Float32Array `[tokens, heads, headDim]`
 *
 * @example
 * ```ts
 * import { ropeAxes } from "@xpu/ops/ops/rope";
 * // One token at (t, h) = (0, 1), one head of two axes of 2 channels: only the second pair turns, by 1 radian.
 * ropeAxes({
 *   x: new Float32Array([1, 0, 1, 0]), tokens: 1, heads: 1, headDim: 4, axesDims: [2, 2], theta: 256,
 *   positions: new Int32Array([0, 1]),
 * }); // [1, 0, cos 1, sin 1]
 * ```
 */
export function ropeAxes(args: RopeAxesArgs): Float32Array {
  const { axis, invFreq, first, second } = validateRopeAxes(args);
  const { x, tokens, heads, headDim, positions } = args;
  const axes = args.axesDims.length;
  const out = new Float32Array(x.length);
  for (let t = 0; t < tokens; t++) {
    for (let h = 0; h < heads; h++) {
      const row = (t * heads + h) * headDim;
      for (let i = 0; i < headDim / 2; i++) {
        const angle = positions[t * axes + axis[i]] * invFreq[i];
        const a = x[row + first[i]], b = x[row + second[i]];
        out[row + first[i]] = a * Math.cos(angle) - b * Math.sin(angle);
        out[row + second[i]] = a * Math.sin(angle) + b * Math.cos(angle);
      }
    }
  }
  return out;
}
