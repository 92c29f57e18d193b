/**
 * Reference for dequantTranspose: what correct means, in plain TypeScript.
 *
 * `dequantTranspose({ weight, scales, N, K })` turns an int8 weight `[N, K]` (a Linear layer's
 * orientation: one row per output feature) into the f32 matrix `[K, N]`:
 * `out[k, n] = code[n, k] * scales[n]`, which is `(codes * scales[:, None]).T` in torch. The result
 * is the right-hand operand of a plain GEMM, so `matmul({ a, b: dequantTranspose(w), M, N, K })`
 * computes `F.linear(a, dequant(w))`.
 *
 * The weight is ops/matvec's q8 format: `[N, ceil(K/4)]` u32, code `k` of a row in byte `k % 4`
 * (least significant first) of word `k / 4`, two's complement, the padding of a row's last word
 * ignored; `scales` is `[N]`, one per row. A byte decodes to [-128, 127] whatever produced it.
 * Each output is the f64 product rounded to f32 once, which is exactly what one f32 multiply gives.
 *
 * Refused, with an error naming the argument: N or K not an integer >= 1, and arrays of the wrong
 * type or length.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["weight", "scales", "N", "K"];

/** The sizes of a {@link dequantTranspose} call: what a plan needs. */
export interface DequantTransposeShape {
  /** Rows of the weight, columns of the result (>= 1). */
  N: number;
  /** Columns of the weight, rows of the result (>= 1). */
  K: number;
}

/** Arguments of {@link dequantTranspose}. */
export interface DequantTransposeArgs extends DequantTransposeShape {
  /** The weight `[N, K]` packed by `packQ8`: `[N, ceil(K/4)]` words. */
  weight: Uint32Array;
  /** `[N]`, one scale per weight row. */
  scales: Float32Array;
}

/**
 * Validates {@link dequantTranspose}'s sizes (what {@link DequantTransposeShape} holds).
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateDequantTransposeShape } from "@xpu/ops/ops/dequant_transpose";
 * validateDequantTransposeShape({ N: 14336, K: 4096 }); // passes
 * ```
 */
export function validateDequantTransposeShape(shape: DequantTransposeShape): void {
  const op = "dequantTranspose";
  requireArgs(op, "shape", shape, "{ N, K }", KEYS);
  requireInt(op, "N", shape.N, 1, U32_MAX);
  requireInt(op, "K", shape.K, 1, U32_MAX);
}

/**
 * Validates {@link dequantTranspose}'s arguments: the sizes, then the weight and the scales.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateDequantTranspose } from "@xpu/ops/ops/dequant_transpose";
 * validateDequantTranspose({ weight: new Uint32Array(2), scales: new Float32Array(2), N: 2, K: 4 }); // passes
 * ```
 */
export function validateDequantTranspose(args: DequantTransposeArgs): void {
  const op = "dequantTranspose";
  requireArgs(op, "args", args, "{ weight, scales, N, K }", KEYS);
  validateDequantTransposeShape(args);
  requireArray(op, "weight", args.weight, "Uint32Array", [args.N * Math.ceil(args.K / 4), "N * ceil(K / 4)"]);
  requireArray(op, "scales", args.scales, "Float32Array", [args.N, "N"]);
}

/**
 * The int8 weight `[N, K]`, dequantized and transposed to `[K, N]`.
 *
 * @param args the packed weight, its row scales and its shape
 * @returns a new Float32Array `[K, N]`
 *
 * @example
 * ```ts
 * import { dequantTranspose } from "@xpu/ops";
 * // Two rows of three codes: [1, 2, 3] scaled by 0.5 and [-1, 0, 4] scaled by 2.
 * const weight = new Uint32Array([0x030201, 0x0400ff]);
 * dequantTranspose({ weight, scales: new Float32Array([0.5, 2]), N: 2, K: 3 }); // [0.5, -2, 1, 0, 1.5, 8]
 * ```
 */
export function dequantTranspose(args: DequantTransposeArgs): Float32Array {
  validateDequantTranspose(args);
  const { weight, scales, N, K } = args;
  const wordsPerRow = Math.ceil(K / 4);
  const out = new Float32Array(K * N);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const byte = Math.floor(weight[n * wordsPerRow + Math.floor(k / 4)] / 256 ** (k % 4)) % 256;
      const code = byte >= 128 ? byte - 256 : byte;
      out[k * N + n] = code * scales[n];
    }
  }
  return out;
}
