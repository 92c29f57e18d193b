/**
 * Reference for elementwise add and multiply: what correct means, in plain TypeScript.
 *
 * - `elementwise` matches `torch.add(a, b)` / `torch.mul(a, b)` for two tensors of the same shape
 *   (flattened). Lengths must be equal: no broadcast is inferred from lengths.
 * - `elementwiseRows` is the same two operations with `b` broadcast along the last dimension:
 *   `a` is `[S, D]`, `b` is `[D]`, as `a + b` in torch (alignment from the right, like a Linear's
 *   bias). S and D are explicit because lengths alone admit two broadcasts: a `[3, 3]` and a `[3]`
 *   give `a + c` (c along each row) or `a + c.unsqueeze(1)` (c down each column), and only the
 *   first is this function. `b.length` must be D, so torch's refusal of `[2, 3] + [6]` is kept.
 *
 * Each result is the f32 rounding of the exact f64 result, which is what one f32 add or multiply
 * gives, so the GPU must match exactly.
 *
 * @module
 */

import { requireArray, requireInt, requireOneOf } from "../validate.ts";

/** The elementwise operations. */
export const ELEMENTWISE_OPS = ["add", "multiply"] as const;
/** One of {@link ELEMENTWISE_OPS}. */
export type ElementwiseOp = typeof ELEMENTWISE_OPS[number];

/** Arguments of {@link elementwise}. */
export interface ElementwiseArgs {
  /** `add` or `multiply`. */
  op: ElementwiseOp;
  /** Left operand. */
  a: Float32Array;
  /** Right operand, same length as `a`. */
  b: Float32Array;
}

/** Arguments of {@link elementwiseRows}. */
export interface ElementwiseRowsArgs {
  /** `add` or `multiply`. */
  op: ElementwiseOp;
  /** Left operand, `[S, D]` row-major. */
  a: Float32Array;
  /** Right operand, `[D]`, broadcast over the S rows. */
  b: Float32Array;
  /** Rows of `a`. */
  S: number;
  /** Columns of `a` and length of `b`. */
  D: number;
}

/**
 * Validates {@link elementwise}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateElementwise(args: ElementwiseArgs): void {
  requireOneOf("elementwise", "op", args.op, ELEMENTWISE_OPS);
  requireArray("elementwise", "a", args.a, "Float32Array");
  requireArray("elementwise", "b", args.b, "Float32Array", [args.a.length, "a.length"]);
}

/**
 * Validates {@link elementwiseRows}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateElementwiseRows(args: ElementwiseRowsArgs): void {
  const name = "elementwiseRows";
  requireOneOf(name, "op", args.op, ELEMENTWISE_OPS);
  requireInt(name, "S", args.S, 1);
  requireInt(name, "D", args.D, 1);
  requireArray(name, "a", args.a, "Float32Array", [args.S * args.D, "S * D"]);
  requireArray(name, "b", args.b, "Float32Array", [args.D, "D"]);
}

function apply(op: ElementwiseOp, x: number, y: number): number {
  return op === "add" ? x + y : x * y;
}

/**
 * `a (+|*) b` elementwise over equal lengths.
 *
 * @param args operation and operands
 * @returns a new Float32Array
 *
 * @example
 * ```ts
 * import { elementwise } from "./reference.ts";
 * elementwise({ op: "add", a: new Float32Array([1, 2]), b: new Float32Array([10, 20]) }); // [11, 22]
 * ```
 */
export function elementwise(args: ElementwiseArgs): Float32Array {
  validateElementwise(args);
  const out = new Float32Array(args.a.length);
  for (let i = 0; i < out.length; i++) out[i] = apply(args.op, args.a[i], args.b[i]);
  return out;
}

/**
 * `a[s, d] (+|*) b[d]`: `b` broadcast along the last dimension of `a`.
 *
 * @param args operation, operands and the shape `[S, D]` of `a`
 * @returns a new Float32Array of length S * D
 *
 * @example
 * ```ts
 * import { elementwiseRows } from "./reference.ts";
 * const a = new Float32Array([0, 1, 2, 3, 4, 5, 6, 7, 8]);
 * elementwiseRows({ op: "add", a, b: new Float32Array([1, 2, 3]), S: 3, D: 3 }); // [1, 3, 5, 4, 6, 8, 7, 9, 11]
 * ```
 */
export function elementwiseRows(args: ElementwiseRowsArgs): Float32Array {
  validateElementwiseRows(args);
  const out = new Float32Array(args.S * args.D);
  for (let s = 0; s < args.S; s++) {
    for (let d = 0; d < args.D; d++) out[s * args.D + d] = apply(args.op, args.a[s * args.D + d], args.b[d]);
  }
  return out;
}
