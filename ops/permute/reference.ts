/**
 * Reference for permute: a tensor's axes put in another order, in plain TypeScript.
 *
 * - `permute` matches `x.permute(*dims).contiguous()`: output axis `a` is input axis `dims[a]`,
 *   so the output shape is `dims.map((d) => shape[d])`. Not the inverse reading ("input axis `a`
 *   goes to position `dims[a]`"), which agrees with it only when the permutation is its own
 *   inverse, as every rank-2 one is.
 * - A negative entry of `dims` counts from the end, as torch's permute allows: `[-1, 0]` on a
 *   rank-2 tensor is `[1, 0]`.
 * - `dims` must name every axis exactly once: a repeated, missing or out-of-range axis throws.
 * - Rank 1 to 6 ({@link MAX_PERMUTE_RANK}): the kernel's params carry six sizes and strides.
 *   Adjacent axes that stay adjacent can be merged by the caller to fit a higher rank.
 * - Dimensions may be 0, as in torch; the result is then empty.
 *
 * Values are moved, never computed, so the GPU must match exactly. The reference walks the input
 * in its own order with a coordinate counter and scatters each element to its place in the output;
 * the kernel gathers instead, so the two share no index arithmetic.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, requireShape } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["x", "shape", "dims"];

/** The highest rank `permute` accepts. */
export const MAX_PERMUTE_RANK = 6;

/** What to permute: the tensor's shape and the axis order, without the data. */
export interface PermuteShape {
  /** The shape of `x`, rank 1 to {@link MAX_PERMUTE_RANK}; dimensions are integers >= 0. */
  shape: readonly number[];
  /** For each output axis, the input axis it comes from; negative counts from the end. */
  dims: readonly number[];
}

/** Arguments of {@link permute}. */
export interface PermuteArgs extends PermuteShape {
  /** The tensor, row-major, with as many elements as the product of `shape`. */
  x: Float32Array;
}

/**
 * Validates a shape and an axis order (what {@link PermuteShape} holds) and returns the order with
 * negative axes resolved.
 *
 * @param permutation the shape and the axis order
 * @returns `dims` with every entry in `[0, rank)`
 * @throws Error naming the bad argument: a shape of the wrong rank or with a bad dimension, or
 *   `dims` of the wrong length or with an out-of-range, repeated or missing axis
 * @example
 * ```ts
 * import { validatePermuteShape } from "@xpu/ops/ops/permute";
 * validatePermuteShape({ shape: [2, 3, 4], dims: [0, -1, 1] }); // [0, 2, 1]
 * ```
 */
export function validatePermuteShape(permutation: PermuteShape): number[] {
  requireArgs("permute", "shape", permutation, "{ shape, dims }", KEYS);
  const { shape, dims } = permutation;
  requireShape("permute", "shape", shape, 1, MAX_PERMUTE_RANK);
  const rank = shape.length;
  if (!Array.isArray(dims) || dims.length !== rank) {
    throw new Error(
      `permute: dims must have one entry per axis of shape [${shape.join(", ")}] (${rank}), got ${
        JSON.stringify(dims)
      }`,
    );
  }
  const resolved = dims.map((d, i) => {
    requireInt("permute", `dims[${i}] (rank ${rank})`, d, -rank, rank - 1);
    return d < 0 ? d + rank : d;
  });
  const repeated = resolved.find((d, i) => resolved.indexOf(d) !== i);
  if (repeated !== undefined) {
    throw new Error(
      `permute: dims [${dims.join(", ")}] name axis ${repeated} twice; dims must be a permutation of ` +
        `0..${rank - 1}, negative entries counting from the end`,
    );
  }
  return resolved;
}

/**
 * Validates {@link permute}'s arguments.
 *
 * @param args the arguments
 * @returns `dims` with negative axes resolved, as {@link validatePermuteShape}
 * @throws Error naming the bad argument
 * @example
 * ```ts
 * import { validatePermute } from "@xpu/ops/ops/permute";
 * validatePermute({ x: new Float32Array(6), shape: [2, 3], dims: [1, 0] }); // [1, 0]
 * ```
 */
export function validatePermute(args: PermuteArgs): number[] {
  requireArgs("permute", "args", args, "{ x, shape, dims }", KEYS);
  const dims = validatePermuteShape(args);
  requireArray("permute", "x", args.x, "Float32Array", [
    args.shape.reduce((p, d) => p * d, 1),
    `the product of shape [${args.shape.join(", ")}]`,
  ]);
  return dims;
}

/**
 * Puts the axes of `x` in the order `dims`, as `x.permute(*dims).contiguous()`.
 *
 * @param args the tensor, its shape and the axis order
 * @returns a new Float32Array, row-major in the shape `dims.map((d) => shape[d])`
 *
 * @example
 * ```ts
 * import { permute } from "@xpu/ops";
 * const x = new Float32Array([0, 1, 2, 3, 4, 5]); // [[[0, 1, 2]], [[3, 4, 5]]], shape [2, 1, 3]
 * permute({ x, shape: [2, 1, 3], dims: [2, 0, 1] }); // shape [3, 2, 1]: [0, 3, 1, 4, 2, 5]
 * ```
 */
export function permute(args: PermuteArgs): Float32Array {
  const dims = validatePermute(args);
  const { x, shape } = args;
  const outShape = dims.map((d) => shape[d]);
  const out = new Float32Array(x.length);
  const at = shape.map(() => 0); // the input coordinates of x[source]
  for (let source = 0; source < x.length; source++) {
    let target = 0;
    for (let a = 0; a < dims.length; a++) target = target * outShape[a] + at[dims[a]];
    out[target] = x[source];
    for (let axis = shape.length - 1; axis >= 0 && ++at[axis] === shape[axis]; axis--) at[axis] = 0;
  }
  return out;
}
