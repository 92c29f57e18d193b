/**
 * Reference for dequantize: what correct means, in plain TypeScript.
 *
 * The int32 accumulators of an int8 GEMM — activations `[M, K]` times weights `[N, K]^T` — back to
 * f32, applying both scales: `acc` is `[M, N]` row-major, `aScale` is `[M]` (one per activation
 * row, as quantize gives), `wScale` is `[N]` (one per weight row, i.e. per output channel):
 *
 *     out[m, n] = acc[m, n] * aScale[m] * wScale[n]
 *
 * evaluated left to right in f32, as `acc.float() * a_scale[:, None] * w_scale[None, :]` is in
 * torch: `acc` is rounded to the nearest f32 (ties to even; it is exact below 2^24 in magnitude),
 * multiplied by `aScale[m]` and rounded, then by `wScale[n]` and rounded. Multiplying the two
 * scales first is a different function: at acc = 1001, aScale = f32(0.01), wScale = f32(0.03)
 * it gives 0.3002999722957611 where this gives 0.3003000020980835.
 *
 * Non-finite scales are refused.
 *
 * @module
 */

import { requireArray, requireInt } from "../validate.ts";

/** Arguments of {@link dequantize}. */
export interface DequantizeArgs {
  /** The accumulators, `[M, N]` row-major. */
  acc: Int32Array;
  /** One scale per row of `acc` (per activation row), finite. */
  aScale: Float32Array;
  /** One scale per column of `acc` (per output channel), finite. */
  wScale: Float32Array;
  /** Rows of `acc`. */
  M: number;
  /** Columns of `acc`. */
  N: number;
}

function requireFinite(name: string, values: Float32Array): void {
  for (let i = 0; i < values.length; i++) {
    if (!Number.isFinite(values[i])) {
      throw new Error(`dequantize: ${name} must be finite, but ${name}[${i}] is ${values[i]}`);
    }
  }
}

/**
 * Validates {@link dequantize}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument
 */
export function validateDequantize(args: DequantizeArgs): void {
  const op = "dequantize";
  requireInt(op, "M", args.M, 1);
  requireInt(op, "N", args.N, 1);
  requireArray(op, "acc", args.acc, "Int32Array", [args.M * args.N, "M * N"]);
  requireArray(op, "aScale", args.aScale, "Float32Array", [args.M, "M"]);
  requireArray(op, "wScale", args.wScale, "Float32Array", [args.N, "N"]);
  requireFinite("aScale", args.aScale);
  requireFinite("wScale", args.wScale);
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
 * dequantize({ acc, aScale: new Float32Array([0.5]), wScale: new Float32Array([0.25, 2]), M: 1, N: 2 }); // [1.25, -4]
 * ```
 */
export function dequantize(args: DequantizeArgs): Float32Array {
  validateDequantize(args);
  const { acc, aScale, wScale, M, N } = args;
  const out = new Float32Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      out[m * N + n] = Math.fround(Math.fround(acc[m * N + n]) * aScale[m]) * wScale[n];
    }
  }
  return out;
}
