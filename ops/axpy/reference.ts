/**
 * Reference for axpy: what correct means, in plain TypeScript.
 *
 * `axpy` is `out[i] = y[i] + alpha * x[i]` with a scalar `alpha`, as `torch.add(y, x, alpha=alpha)` (BLAS's
 * saxpy by name). `x` and `y` have the same length; nothing is broadcast.
 *
 * - `alpha` is rounded to f32 first, as torch casts it to the tensors' dtype.
 * - Each element is rounded once: the result is the f32 nearest the exact `y + alpha * x` (ties to
 *   even), which is what a fused multiply-add gives. Multiply-then-add rounds the product first:
 *   at `alpha = f32(0.1)`, `x = 3`, `y = -f32(0.3)` it cancels to exactly 0, where this gives -2^-27.
 *   Computing `y + alpha * x` in f64 and rounding that to f32 is not quite enough either: `a * x` is
 *   exact in f64 but the sum may round to an f32 midpoint that the exact sum was not on, so the
 *   f64 sum's own rounding error decides the direction at such midpoints.
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["alpha", "n", "x", "y"];

/** The length and scalar of an {@link axpy} call: what a plan needs. */
export interface AxpyShape {
  /** The scalar multiplier (torch's `alpha`); a finite f32, rounded to f32. */
  alpha: number;
  /** Elements of `x` and `y` (>= 0). */
  n: number;
}

/** Arguments of {@link axpy}. */
export interface AxpyArgs {
  /** The scalar multiplier (torch's `alpha`); a finite f32, rounded to f32. */
  alpha: number;
  /** The scaled operand. */
  x: Float32Array;
  /** The added operand, same length as `x`. */
  y: Float32Array;
}

/**
 * Validates {@link axpy}'s scalar and length (what {@link AxpyShape} holds).
 *
 * @param shape the scalar and the length
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateAxpyShape } from "@xpu/ops/ops/axpy";
 * validateAxpyShape({ alpha: 0.5, n: 1024 }); // passes; alpha: 1e39 throws (Infinity as an f32)
 * ```
 */
export function validateAxpyShape(shape: AxpyShape): void {
  requireArgs("axpy", "shape", shape, "{ alpha, n }", KEYS);
  requireF32("axpy", "alpha", shape.alpha);
  requireInt("axpy", "n", shape.n, 0, U32_MAX);
}

/**
 * Validates {@link axpy}'s arguments: the scalar, then `x` and `y`.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateAxpy } from "@xpu/ops/ops/axpy";
 * validateAxpy({ alpha: 2, x: new Float32Array(3), y: new Float32Array(3) }); // passes
 * ```
 */
export function validateAxpy(args: AxpyArgs): void {
  requireArgs("axpy", "args", args, "{ alpha, x, y }", KEYS);
  requireF32("axpy", "alpha", args.alpha);
  requireArray("axpy", "x", args.x, "Float32Array");
  requireArray("axpy", "y", args.y, "Float32Array", [args.x.length, "x.length"]);
  validateAxpyShape({ alpha: args.alpha, n: args.x.length });
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
 * `y + alpha * x` elementwise, each element rounded once.
 *
 * @param args the scalar and the two operands
 * @returns a new Float32Array
 *
 * @example
 * ```ts
 * import { axpy } from "@xpu/ops";
 * axpy({ alpha: 2, x: new Float32Array([1, 2]), y: new Float32Array([10, 20]) }); // [12, 24]
 * ```
 */
export function axpy(args: AxpyArgs): Float32Array {
  validateAxpy(args);
  const a = Math.fround(args.alpha);
  const out = new Float32Array(args.x.length);
  for (let i = 0; i < out.length; i++) out[i] = fmaF32(a, args.x[i], args.y[i]);
  return out;
}
