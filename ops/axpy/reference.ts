/**
 * Reference for axpy: what correct means, in plain TypeScript.
 *
 * `axpy` is `out[i] = y[i] + a * x[i]` with a scalar `a`, as `torch.add(y, x, alpha=a)` (BLAS's
 * saxpy by name). `x` and `y` have the same length; nothing is broadcast.
 *
 * - `a` is rounded to f32 first, as torch casts `alpha` to the tensors' dtype.
 * - Each element is rounded once: the result is the f32 nearest the exact `y + a * x` (ties to
 *   even), which is what a fused multiply-add gives. Multiply-then-add rounds the product first:
 *   at `a = f32(0.1)`, `x = 3`, `y = -f32(0.3)` it cancels to exactly 0, where this gives -2^-27.
 *   Computing `y + a * x` in f64 and rounding that to f32 is not quite enough either: `a * x` is
 *   exact in f64 but the sum may round to an f32 midpoint that the exact sum was not on, so the
 *   f64 sum's own rounding error decides the direction at such midpoints.
 *
 * @module
 */

import { requireArray, requireNumber } from "../validate.ts";

/** Arguments of {@link axpy}. */
export interface AxpyArgs {
  /** The scalar multiplier; rounded to f32. */
  a: number;
  /** The scaled operand. */
  x: Float32Array;
  /** The added operand, same length as `x`. */
  y: Float32Array;
}

/**
 * Validates {@link axpy}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateAxpy(args: AxpyArgs): void {
  requireNumber("axpy", "a", args.a);
  if (!Number.isFinite(Math.fround(args.a))) {
    throw new Error(`axpy: a must be finite in f32 (|a| <= 3.4028234663852886e38), got ${args.a}`);
  }
  requireArray("axpy", "x", args.x, "Float32Array");
  requireArray("axpy", "y", args.y, "Float32Array", [args.x.length, "x.length"]);
}

/**
 * `a * x + y` rounded once to f32, for f32 `a`, `x`, `y`.
 *
 * The product of two f32 values is exact in f64, so only the f64 sum rounds. When that sum lands
 * exactly on a midpoint between two f32 values, the exact sum was on one side of it, and the sum's
 * rounding error (recovered exactly) says which.
 */
function fmaF32(a: number, x: number, y: number): number {
  const product = a * x;
  const sum = product + y;
  const yPart = sum - product;
  const sumError = (product - (sum - yPart)) + (y - yPart);
  const rounded = Math.fround(sum);
  if (sumError === 0 || rounded === sum || !Number.isFinite(rounded)) return rounded;
  const otherNeighbour = sum + (sum - rounded);
  if (Math.fround(otherNeighbour) !== otherNeighbour) return rounded;
  return (sumError > 0) === (otherNeighbour > rounded) ? otherNeighbour : rounded;
}

/**
 * `y + a * x` elementwise, each element rounded once.
 *
 * @param args the scalar and the two operands
 * @returns a new Float32Array
 *
 * @example
 * ```ts
 * import { axpy } from "@xpu/ops";
 * axpy({ a: 2, x: new Float32Array([1, 2]), y: new Float32Array([10, 20]) }); // [12, 24]
 * ```
 */
export function axpy(args: AxpyArgs): Float32Array {
  validateAxpy(args);
  const a = Math.fround(args.a);
  const out = new Float32Array(args.x.length);
  for (let i = 0; i < out.length; i++) out[i] = fmaF32(a, args.x[i], args.y[i]);
  return out;
}
