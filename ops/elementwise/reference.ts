/**
 * Reference for elementwise add and multiply: what correct means, in plain TypeScript.
 *
 * - `elementwise` matches `torch.add(a, b)` / `torch.mul(a, b)` for two tensors of the same shape
 *   (flattened). Lengths must be equal: no broadcast is inferred from lengths.
 * - `elementwiseRows` is the same two operations with `b` broadcast along the last dimension:
 *   `a` is `[rows, cols]`, `b` is `[cols]`, as `a + b` in torch (alignment from the right, like a Linear's
 *   bias). rows and cols are explicit because lengths alone admit two broadcasts: a `[3, 3]` and a `[3]`
 *   give `a + c` (c along each row) or `a + c.unsqueeze(1)` (c down each column), and only the
 *   first is this function. `b.length` must be cols, so torch's refusal of `[2, 3] + [6]` is kept.
 *
 * Each result is the f32 rounding of the exact f64 result, which is what one f32 add or multiply
 * gives, so the GPU must match exactly.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["op", "n", "a", "b"];
/** The keys elementwiseRows' shape or arguments may carry. */
const ROWS_KEYS: readonly string[] = ["op", "a", "b", "rows", "cols"];

/** The elementwise operations. */
export const ELEMENTWISE_OPS = ["add", "multiply"] as const;
/** One of {@link ELEMENTWISE_OPS}. */
export type ElementwiseOp = typeof ELEMENTWISE_OPS[number];

/** The size of an {@link elementwise} call: what a plan needs. */
export interface ElementwiseShape {
  /** `add` or `multiply`. */
  op: ElementwiseOp;
  /** Elements of each operand (>= 0). */
  n: number;
}

/** Arguments of {@link elementwise}. */
export interface ElementwiseArgs {
  /** `add` or `multiply`. */
  op: ElementwiseOp;
  /** Left operand. */
  a: Float32Array;
  /** Right operand, same length as `a`. */
  b: Float32Array;
}

/** The sizes of an {@link elementwiseRows} call: what a plan needs. */
export interface ElementwiseRowsShape {
  /** `add` or `multiply`. */
  op: ElementwiseOp;
  /** Rows of `a` (>= 1). */
  rows: number;
  /** Columns of `a` and length of `b` (>= 1). */
  cols: number;
}

/** Arguments of {@link elementwiseRows}. */
export interface ElementwiseRowsArgs extends ElementwiseRowsShape {
  /** Left operand, `[rows, cols]` row-major. */
  a: Float32Array;
  /** Right operand, `[cols]`, broadcast over the rows. */
  b: Float32Array;
}

/**
 * Validates {@link elementwise}'s operation and length (what {@link ElementwiseShape} holds).
 *
 * @param shape the operation and the length
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateElementwiseShape } from "@xpu/ops/ops/elementwise";
 * validateElementwiseShape({ op: "add", n: 1024 }); // passes
 * ```
 */
export function validateElementwiseShape(shape: ElementwiseShape): void {
  requireArgs("elementwise", "shape", shape, "{ op, n }", KEYS);
  requireOneOf("elementwise", "op", shape.op, ELEMENTWISE_OPS);
  requireInt("elementwise", "n", shape.n, 0, U32_MAX);
}

/**
 * Validates {@link elementwise}'s arguments: the operation, then `a` and `b`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateElementwise } from "@xpu/ops/ops/elementwise";
 * validateElementwise({ op: "add", a: new Float32Array(2), b: new Float32Array(2) }); // passes
 * ```
 */
export function validateElementwise(args: ElementwiseArgs): void {
  requireArgs("elementwise", "args", args, "{ op, a, b }", KEYS);
  requireOneOf("elementwise", "op", args.op, ELEMENTWISE_OPS);
  requireArray("elementwise", "a", args.a, "Float32Array");
  requireArray("elementwise", "b", args.b, "Float32Array", [args.a.length, "a.length"]);
  validateElementwiseShape({ op: args.op, n: args.a.length });
}

/**
 * Validates {@link elementwiseRows}'s operation and sizes (what {@link ElementwiseRowsShape} holds).
 *
 * @param shape the operation and the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateElementwiseRowsShape } from "@xpu/ops/ops/elementwise";
 * validateElementwiseRowsShape({ op: "multiply", rows: 4, cols: 3 }); // passes
 * ```
 */
export function validateElementwiseRowsShape(shape: ElementwiseRowsShape): void {
  const name = "elementwiseRows";
  requireArgs(name, "shape", shape, "{ op, rows, cols }", ROWS_KEYS);
  requireOneOf(name, "op", shape.op, ELEMENTWISE_OPS);
  requireInt(name, "rows", shape.rows, 1, U32_MAX);
  requireInt(name, "cols", shape.cols, 1, U32_MAX);
}

/**
 * Validates {@link elementwiseRows}'s arguments: the operation and sizes, then `a` and `b`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateElementwiseRows } from "@xpu/ops/ops/elementwise";
 * validateElementwiseRows({ op: "add", a: new Float32Array(6), b: new Float32Array(3), rows: 2, cols: 3 }); // passes
 * ```
 */
export function validateElementwiseRows(args: ElementwiseRowsArgs): void {
  const name = "elementwiseRows";
  requireArgs(name, "args", args, "{ op, a, b, rows, cols }", ROWS_KEYS);
  validateElementwiseRowsShape(args);
  requireArray(name, "a", args.a, "Float32Array", [args.rows * args.cols, "rows * cols"]);
  requireArray(name, "b", args.b, "Float32Array", [args.cols, "cols"]);
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
 * import { elementwise } from "@xpu/ops";
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
 * @param args operation, operands and the shape `[rows, cols]` of `a`
 * @returns a new Float32Array of length rows * cols
 *
 * @example
 * ```ts
 * import { elementwiseRows } from "@xpu/ops";
 * const a = new Float32Array([0, 1, 2, 3, 4, 5, 6, 7, 8]);
 * elementwiseRows({ op: "add", a, b: new Float32Array([1, 2, 3]), rows: 3, cols: 3 }); // [1, 3, 5, 4, 6, 8, 7, 9, 11]
 * ```
 */
export function elementwiseRows(args: ElementwiseRowsArgs): Float32Array {
  validateElementwiseRows(args);
  const out = new Float32Array(args.rows * args.cols);
  for (let s = 0; s < args.rows; s++) {
    for (let d = 0; d < args.cols; d++) out[s * args.cols + d] = apply(args.op, args.a[s * args.cols + d], args.b[d]);
  }
  return out;
}
