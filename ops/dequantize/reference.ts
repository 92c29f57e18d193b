/**
 * Reference for dequantize: what correct means, in plain TypeScript.
 *
 * The int32 accumulators of an int8 GEMM — activations `[M, K]` times weights `[N, K]^T` — back to
 * f32, applying both scales: `acc` is `[M, N]` row-major, `aScales` is `[M]` (one per activation
 * row, as quantize gives), `wScales` is `[N]` (one per weight row, i.e. per output channel):
 *
 *     out[m, n] = acc[m, n] * aScales[m] * wScales[n]
 *
 * evaluated left to right in f32, as `acc.float() * a_scales[:, None] * w_scales[None, :]` is in
 * torch: `acc` is rounded to the nearest f32 (ties to even; it is exact below 2^24 in magnitude),
 * multiplied by `aScales[m]` and rounded, then by `wScales[n]` and rounded. Multiplying the two
 * scales first is a different function: at acc = 1001, aScales = f32(0.01), wScales = f32(0.03)
 * it gives 0.3002999722957611 where this gives 0.3003000020980835.
 *
 * NaN and ±Infinity in the scales propagate as in that torch expression: a NaN scale gives NaN,
 * an infinite one gives ±Infinity, or NaN where the accumulator is 0 (0 * Infinity).
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["acc", "aScales", "wScales", "M", "N"];

/** The sizes of a {@link dequantize} call: what a plan needs. */
export interface DequantizeShape {
  /** Rows of `acc` (>= 1). */
  M: number;
  /** Columns of `acc` (>= 1). */
  N: number;
}

/** Arguments of {@link dequantize}. */
export interface DequantizeArgs extends DequantizeShape {
  /** The accumulators, `[M, N]` row-major. */
  acc: Int32Array;
  /** One scale per row of `acc` (per activation row, as quantize gives them), `[M]`. */
  aScales: Float32Array;
  /** One scale per column of `acc` (per output channel), `[N]`. */
  wScales: Float32Array;
}

/**
 * Validates {@link dequantize}'s sizes (what {@link DequantizeShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateDequantizeShape } from "@xpu/ops/ops/dequantize";
 * validateDequantizeShape({ M: 16, N: 4096 }); // passes
 * ```
 */
export function validateDequantizeShape(shape: DequantizeShape): void {
  const op = "dequantize";
  requireArgs(op, "shape", shape, "{ M, N }", KEYS);
  requireInt(op, "M", shape.M, 1, U32_MAX);
  requireInt(op, "N", shape.N, 1, U32_MAX);
}

/**
 * Validates {@link dequantize}'s arguments: the sizes, then `acc` and the scales.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateDequantize } from "@xpu/ops/ops/dequantize";
 * const acc = new Int32Array(6);
 * validateDequantize({ acc, aScales: new Float32Array(2), wScales: new Float32Array(3), M: 2, N: 3 }); // passes
 * ```
 */
export function validateDequantize(args: DequantizeArgs): void {
  const op = "dequantize";
  requireArgs(op, "args", args, "{ acc, aScales, wScales, M, N }", KEYS);
  validateDequantizeShape(args);
  requireArray(op, "acc", args.acc, "Int32Array", [args.M * args.N, "M * N"]);
  requireArray(op, "aScales", args.aScales, "Float32Array", [args.M, "M"]);
  requireArray(op, "wScales", args.wScales, "Float32Array", [args.N, "N"]);
}

/**
 * Converts int32 GEMM accumulators to f32, applying the activation and the weight scale.
 *
 * @param args the accumulators `[M, N]`, the scales `[M]` and `[N]`, and the shape
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { dequantize } from "@xpu/ops";
 * const acc = new Int32Array([10, -4]);
 * dequantize({ acc, aScales: new Float32Array([0.5]), wScales: new Float32Array([0.25, 2]), M: 1, N: 2 }); // [1.25, -4]
 * ```
 */
export function dequantize(args: DequantizeArgs): Float32Array {
  validateDequantize(args);
  const { acc, aScales, wScales, M, N } = args;
  const out = new Float32Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      out[m * N + n] = Math.fround(Math.fround(acc[m * N + n]) * aScales[m]) * wScales[n];
    }
  }
  return out;
}
