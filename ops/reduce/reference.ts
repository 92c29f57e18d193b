/**
 * Reference for reduce: sum, max, min and mean along one axis, in plain TypeScript.
 *
 * - `reduce` matches `torch.sum` / `torch.amax` / `torch.amin` / `torch.mean` called as
 *   `fn(x, dim)`: keepdim is False, so the output shape is `shape` with `dim` removed.
 * - `dim` follows torch: a negative axis counts from the end (-1 is the last), and an axis
 *   outside `[-rank, rank)` throws.
 * - max and min propagate NaN: a row holding a NaN reduces to NaN, as torch.amax / amin do, not
 *   to the largest of its other values, as a NaN-ignoring max (C's fmax, WGSL's max) would give.
 * - An axis of length 0 reduces to torch's answers where torch has one: sum gives 0 (the empty
 *   sum) and mean gives NaN (0 / 0). max and min throw, as torch.amax / amin do: an empty row has
 *   no largest element, and inventing -Infinity for it would hide a shape mistake.
 * - Other axes may have length 0 too; the result is then empty.
 *
 * Sums are accumulated in f64 and rounded to f32 once, so the reference is the exactly rounded
 * sum; the GPU sums in f32 in a different order and is held to it within a stated tolerance.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, requireOneOf, requireShape } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["op", "x", "shape", "dim"];

/** The reductions. */
export const REDUCE_OPS = ["sum", "max", "min", "mean"] as const;
/** One of {@link REDUCE_OPS}. */
export type ReduceOp = typeof REDUCE_OPS[number];

/** What to reduce: the operation, the tensor's shape and the axis, without the data. */
export interface ReduceShape {
  /** `sum`, `max`, `min` or `mean`. */
  op: ReduceOp;
  /** The shape of `x`, rank >= 1; dimensions are integers >= 0. */
  shape: readonly number[];
  /** The axis to reduce, in `[-rank, rank)`; negative counts from the end. */
  dim: number;
}

/** Arguments of {@link reduce}. */
export interface ReduceArgs extends ReduceShape {
  /** The tensor, row-major, with as many elements as the product of `shape`. */
  x: Float32Array;
}

/** A reduction seen as `[outer, length, inner]`, reducing the middle axis. */
export interface ReduceView {
  /** The axis in `[0, rank)`. */
  dim: number;
  /** Product of the dimensions before the axis. */
  outer: number;
  /** Length of the reduced axis. */
  length: number;
  /** Product of the dimensions after the axis. */
  inner: number;
  /** The output's shape: `shape` without the axis (torch's keepdim=False). */
  outShape: number[];
}

const product = (dims: readonly number[]): number => dims.reduce((p, d) => p * d, 1);

/**
 * Validates a reduction's operation, shape and dim (what {@link ReduceShape} holds) and views it as
 * `[outer, length, inner]`.
 *
 * @param reduction the operation, the shape and the dim
 * @returns the normalised dim, the view and the output shape
 * @throws Error naming the bad argument, or the reduction when max / min meet an empty dim
 *
 * @example
 * ```ts
 * import { validateReduceShape } from "@xpu/ops/ops/reduce";
 * validateReduceShape({ op: "sum", shape: [2, 3, 4], dim: -2 }); // { dim: 1, outer: 2, length: 3, inner: 4, outShape: [2, 4] }
 * ```
 */
export function validateReduceShape(reduction: ReduceShape): ReduceView {
  requireArgs("reduce", "shape", reduction, "{ op, shape, dim }", KEYS);
  const { op, shape, dim } = reduction;
  requireOneOf("reduce", "op", op, REDUCE_OPS);
  requireShape("reduce", "shape", shape);
  const rank = shape.length;
  requireInt("reduce", `dim (rank ${rank})`, dim, -rank, rank - 1);
  const positive = dim < 0 ? dim + rank : dim;
  const length = shape[positive];
  if (length === 0 && (op === "max" || op === "min")) {
    throw new Error(
      `reduce: ${op} over dim ${dim} of shape [${shape.join(", ")}], which has length 0: ` +
        `an empty row has no ${op === "max" ? "largest" : "smallest"} element (torch.a${op} refuses it too)`,
    );
  }
  return {
    dim: positive,
    outer: product(shape.slice(0, positive)),
    length,
    inner: product(shape.slice(positive + 1)),
    outShape: shape.filter((_, i) => i !== positive),
  };
}

/**
 * Validates {@link reduce}'s arguments.
 *
 * @param args the arguments
 * @returns the view of the reduction, as {@link validateReduceShape}
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateReduce } from "@xpu/ops/ops/reduce";
 * validateReduce({ op: "max", x: new Float32Array(6), shape: [2, 3], dim: 1 }).outShape; // [2]
 * ```
 */
export function validateReduce(args: ReduceArgs): ReduceView {
  requireArgs("reduce", "args", args, "{ op, x, shape, dim }", KEYS);
  const view = validateReduceShape(args);
  requireArray("reduce", "x", args.x, "Float32Array", [
    view.outer * view.length * view.inner,
    `the product of shape [${args.shape.join(", ")}]`,
  ]);
  return view;
}

/**
 * Reduces `x` along `dim` with sum, max, min or mean.
 *
 * @param args the operation, the tensor, its shape and the axis
 * @returns a new Float32Array holding the result, shaped as `validateReduceShape(args).outShape`
 *
 * @example
 * ```ts
 * import { reduce } from "@xpu/ops";
 * const x = new Float32Array([1, 2, 3, 4, 5, 6]);
 * reduce({ op: "sum", x, shape: [2, 3], dim: 0 }); // [5, 7, 9]
 * reduce({ op: "max", x, shape: [2, 3], dim: -1 }); // [3, 6]
 * ```
 */
export function reduce(args: ReduceArgs): Float32Array {
  const { outer, length, inner } = validateReduce(args);
  const { op, x } = args;
  const out = new Float32Array(outer * inner);
  for (let o = 0; o < outer; o++) {
    for (let i = 0; i < inner; i++) {
      const row = Array.from({ length }, (_, l) => x[(o * length + l) * inner + i]);
      out[o * inner + i] = reduceRow(op, row);
    }
  }
  return out;
}

function reduceRow(op: ReduceOp, row: number[]): number {
  // Math.max and Math.min return NaN when any argument is NaN: torch's convention, not fmax's.
  if (op === "max") return row.reduce((m, v) => Math.max(m, v));
  if (op === "min") return row.reduce((m, v) => Math.min(m, v));
  let sum = 0;
  for (const v of row) sum += v;
  return op === "sum" ? sum : sum / row.length;
}
