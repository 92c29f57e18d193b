/**
 * Reference for matmul's products on integer dot products (`matmulQ8Dp4a`, `matmulQ4G128Dp4a`):
 * what their kernels compute, in plain TypeScript.
 *
 * Both operands are int8 codes with f32 scales. The activations `a` `[M, K]` are quantised per row
 * (llama.cpp's q8_1 idea, without its sums): ops/quantize's `quantizePacked` on the f32 rows gives
 * `[M, ceil(K/4)]` words of four codes in [-127, 127] (least significant byte first, two's
 * complement) and `aScales[m] = absmax / 127`. The weight is one of ops/matvec's formats, as
 * `matmulQ8` and `matmulQ4G128` read it. Then, with `sum` an exact integer sum of code products:
 *
 * - `matmulQ8Dp4a`: `c[m, n] = sum_k codeA[m, k] codeW[n, k] * aScales[m] * scales[n]`;
 * - `matmulQ4G128Dp4a`: `c[m, n] = aScales[m] * sum_g scales[n, g] * sum_{k in g} codeA[m, k] codeW[n, k]`,
 *   `g` the groups of 128 columns.
 *
 * Both take matmul's fused epilogue (reference.ts defines it: `+ bias[n]`, an activation,
 * `x gate[floor(m / gateRows), n]`, `c +=`), applied to that value, the finished product after the
 * weight's and the activations' scales, by the same {@link applyEpilogue} as the other products.
 *
 * The reference takes each integer sum exactly and the rest (the epilogue included) in f64, rounded
 * once to f32. The kernels take the same integer sums exactly (i32, by `dot4I8Packed`) and differ
 * only in the f32 roundings after them (the sum converted to f32 and multiplied by the scales; for q4
 * also the f32 sum over groups; then each step of an epilogue, in f32, its activation as
 * ops/activation computes it): dp4a.test.ts holds them to that. Codes in the padding of a row's last
 * word (k >= K) are ignored, in `a` and in the weight.
 *
 * What it costs against the f32 path (`matmulQ8` and `matmulQ4G128`, f32 activations): the
 * activations' rounding to 255 levels per row. accuracy.test.ts in this directory states the bound
 * on realistic data, and models/fortune/dp4a-accuracy.json the model-level figures.
 *
 * Non-finite activations: an int8 row cannot hold them, so the result cannot match torch's (where a
 * NaN makes its row's outputs NaN and an Inf gives ±Inf or NaN per output). ops/quantize's plans
 * mark such a row with scale NaN and codes 0, and both the reference and the kernels then give NaN
 * for every output of that row (0 times a NaN scale). A non-finite weight scale gives what f64
 * gives for `sum * aScale * scale` (±Inf, or NaN where the sum is 0), again the same in both.
 *
 * Refused, with an error naming the argument: M, N or K not an integer >= 1; for `matmulQ8Dp4a` a
 * K above {@link MATMUL_DP4A_MAX_K}, past which an i32 sum of K products of int8 codes could
 * overflow; arrays of the wrong type or length; and a bad epilogue, as the other products refuse it.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";
import {
  applyEpilogue,
  MATMUL_EPILOGUE_FIELDS,
  type MatmulEpilogue,
  type MatmulEpilogueArgs,
  type MatmulShape,
  requireEpilogue,
  requireEpilogueArgs,
} from "./reference.ts";

/**
 * The largest K `matmulQ8Dp4a` takes: any K products of int8 codes (each at most 128^2 = 16,384 in
 * magnitude) sum within i32.
 */
export const MATMUL_DP4A_MAX_K: number = Math.floor((2 ** 31 - 1) / 128 ** 2);

/** Columns of a weight row that share one scale in the q4 format. */
const Q4_GROUP = 128;

/**
 * Arguments of {@link matmulQ8Dp4a}: int8 activations times an int8 weight, one scale per row of
 * each, with an optional fused epilogue.
 */
export interface MatmulQ8Dp4aArgs extends MatmulEpilogueArgs {
  /** Activations `[M, K]` as int8 codes: `[M, ceil(K/4)]` words (ops/quantize's `quantizePacked`). */
  a: Uint32Array;
  /** `[M]`, one scale per row of `a`. */
  aScales: Float32Array;
  /** The weight `[N, K]` packed by `packQ8`: `[N, ceil(K/4)]` words. */
  weight: Uint32Array;
  /** `[N]`, one scale per weight row. */
  scales: Float32Array;
  /** Rows of `a` and of the result (tokens). */
  M: number;
  /** Rows of the weight, columns of the result (output features). */
  N: number;
  /** Columns of `a` and of the weight (input features). */
  K: number;
}

/**
 * Arguments of {@link matmulQ4G128Dp4a}: int8 activations times an int4 weight with one scale per 128
 * columns, with an optional fused epilogue.
 */
export interface MatmulQ4G128Dp4aArgs extends MatmulEpilogueArgs {
  /** Activations `[M, K]` as int8 codes: `[M, ceil(K/4)]` words (ops/quantize's `quantizePacked`). */
  a: Uint32Array;
  /** `[M]`, one scale per row of `a`. */
  aScales: Float32Array;
  /** The weight `[N, K]` packed by `packQ4`: `[N, ceil(K/8)]` words. */
  weight: Uint32Array;
  /** `[N, ceil(K/128)]`, one scale per 128 consecutive columns of a weight row. */
  scales: Float32Array;
  /** Rows of `a` and of the result (tokens). */
  M: number;
  /** Rows of the weight, columns of the result (output features). */
  N: number;
  /** Columns of `a` and of the weight (input features). */
  K: number;
}

type Dp4aOp = "matmulQ8Dp4a" | "matmulQ4G128Dp4a";

/** The keys a shape or the arguments may carry (a plan may be given the arguments). */
const KEYS = ["a", "aScales", "weight", "scales", "M", "N", "K", ...MATMUL_EPILOGUE_FIELDS] as const;

/** The sizes of a shape (`what` "shape") or of the arguments ("args"). */
function requireDims(op: Dp4aOp, shape: MatmulShape, what: "shape" | "args"): void {
  requireArgs(op, what, shape, what === "shape" ? "{ M, N, K }" : "{ a, aScales, weight, scales, M, N, K }", KEYS);
  requireInt(op, "M", shape.M, 1, U32_MAX);
  requireInt(op, "N", shape.N, 1, U32_MAX);
  requireInt(op, "K", shape.K, 1, op === "matmulQ8Dp4a" ? MATMUL_DP4A_MAX_K : U32_MAX);
}

/**
 * Validates {@link matmulQ8Dp4a}'s sizes and epilogue (what a plan's shape holds).
 *
 * @param shape the sizes and the epilogue's steps
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulQ8Dp4aShape } from "@xpu/ops/ops/matmul";
 * validateMatmulQ8Dp4aShape({ M: 512, N: 2048, K: 2048 }); // passes; K: 200000 throws (an i32 sum could overflow)
 * validateMatmulQ8Dp4aShape({ M: 512, N: 2048, K: 2048, activation: "silu" }); // passes; activation: "relu" throws
 * ```
 */
export function validateMatmulQ8Dp4aShape(shape: MatmulShape & MatmulEpilogue): void {
  requireDims("matmulQ8Dp4a", shape, "shape");
  requireEpilogue("matmulQ8Dp4a", shape);
}

/**
 * Validates {@link matmulQ4G128Dp4a}'s sizes and epilogue (what a plan's shape holds).
 *
 * @param shape the sizes and the epilogue's steps
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulQ4G128Dp4aShape } from "@xpu/ops/ops/matmul";
 * validateMatmulQ4G128Dp4aShape({ M: 512, N: 2048, K: 2048 }); // passes; M: 0 throws "matmulQ4G128Dp4a: M must be an integer >= 1, got 0"
 * validateMatmulQ4G128Dp4aShape({ M: 512, N: 2048, K: 2048, gateRows: 256 }); // passes; gateRows: 300 throws (it must divide M)
 * ```
 */
export function validateMatmulQ4G128Dp4aShape(shape: MatmulShape & MatmulEpilogue): void {
  requireDims("matmulQ4G128Dp4a", shape, "shape");
  requireEpilogue("matmulQ4G128Dp4a", shape);
}

function requireActivations(op: Dp4aOp, args: MatmulQ8Dp4aArgs | MatmulQ4G128Dp4aArgs): void {
  requireArray(op, "a", args.a, "Uint32Array", [args.M * Math.ceil(args.K / 4), "M * ceil(K / 4)"]);
  requireArray(op, "aScales", args.aScales, "Float32Array", [args.M, "M"]);
}

/**
 * Validates {@link matmulQ8Dp4a}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulQ8Dp4a } from "@xpu/ops/ops/matmul";
 * const words = new Uint32Array(2); // [2, ceil(4 / 4)]
 * validateMatmulQ8Dp4a({ a: words, aScales: new Float32Array(2), weight: words, scales: new Float32Array(2), M: 2, N: 2, K: 4 });
 * ```
 */
export function validateMatmulQ8Dp4a(args: MatmulQ8Dp4aArgs): void {
  const op = "matmulQ8Dp4a";
  requireDims(op, args, "args");
  requireActivations(op, args);
  requireArray(op, "weight", args.weight, "Uint32Array", [args.N * Math.ceil(args.K / 4), "N * ceil(K / 4)"]);
  requireArray(op, "scales", args.scales, "Float32Array", [args.N, "N"]);
  requireEpilogueArgs(op, args);
}

/**
 * Validates {@link matmulQ4G128Dp4a}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulQ4G128Dp4a } from "@xpu/ops/ops/matmul";
 * const a = new Uint32Array(2); // [M = 2, ceil(4 / 4)]
 * validateMatmulQ4G128Dp4a({ a, aScales: new Float32Array(2), weight: new Uint32Array(3), scales: new Float32Array(3), M: 2, N: 3, K: 4 });
 * ```
 */
export function validateMatmulQ4G128Dp4a(args: MatmulQ4G128Dp4aArgs): void {
  const op = "matmulQ4G128Dp4a";
  requireDims(op, args, "args");
  requireActivations(op, args);
  requireArray(op, "weight", args.weight, "Uint32Array", [args.N * Math.ceil(args.K / 8), "N * ceil(K / 8)"]);
  requireArray(op, "scales", args.scales, "Float32Array", [args.N * Math.ceil(args.K / Q4_GROUP), "N * ceil(K / 128)"]);
  requireEpilogueArgs(op, args);
}

/**
 * Code k of a row of `bits`-bit two's-complement codes packed least significant first, the row's
 * words starting at `base`.
 */
function codeAt(words: Uint32Array, base: number, k: number, bits: 8 | 4): number {
  const perWord = 32 / bits;
  const unsigned = Math.floor(words[base + Math.floor(k / perWord)] / 2 ** (bits * (k % perWord))) % 2 ** bits;
  return unsigned >= 2 ** (bits - 1) ? unsigned - 2 ** bits : unsigned;
}

/** Rows of codes decoded to numbers, `[rows, K]`, from rows of `ceil(K / (32 / bits))` words. */
function decodeRows(words: Uint32Array, rows: number, K: number, bits: 8 | 4): Int32Array {
  const wordsPerRow = Math.ceil(K / (32 / bits));
  const codes = new Int32Array(rows * K);
  for (let r = 0; r < rows; r++) for (let k = 0; k < K; k++) codes[r * K + k] = codeAt(words, r * wordsPerRow, k, bits);
  return codes;
}

/** The exact integer sum of code products of rows m of `a` and n of `w` over columns [k0, k1). */
function integerDot(a: Int32Array, w: Int32Array, m: number, n: number, K: number, k0: number, k1: number): number {
  let sum = 0;
  for (let k = k0; k < k1; k++) sum += a[m * K + k] * w[n * K + k];
  return sum;
}

/**
 * `dequant(a) @ dequant(weight)^T` with int8 activations and an int8 weight, each with one scale per
 * row: the exact integer sum of code products times both scales, and an optional fused epilogue
 * (see the module doc).
 *
 * @param args the packed activations `[M, K]` and their `aScales[M]`, the packed `[N, K]` weight and
 *   its `scales[N]`, the shape and the epilogue's arguments
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulQ8Dp4a } from "@xpu/ops/ops/matmul";
 * // a's codes [1, 2, 3, 4] at scale 0.5; the weight's [1, 1, 1, -1] at scale 2: (1 + 2 + 3 - 4) * 0.5 * 2
 * const args = { a: new Uint32Array([0x04030201]), aScales: new Float32Array([0.5]), weight: new Uint32Array([0xff010101]), scales: new Float32Array([2]), M: 1, N: 1, K: 4 };
 * matmulQ8Dp4a(args); // [2]
 * matmulQ8Dp4a({ ...args, bias: new Float32Array([1]), activation: "silu" }); // [silu(3)] = [2.8577...]
 * ```
 */
export function matmulQ8Dp4a(args: MatmulQ8Dp4aArgs): Float32Array {
  validateMatmulQ8Dp4a(args);
  const { M, N, K } = args;
  const a = decodeRows(args.a, M, K, 8);
  const w = decodeRows(args.weight, N, K, 8);
  const y = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) y[m * N + n] = integerDot(a, w, m, n, K, 0, K) * args.aScales[m] * args.scales[n];
  }
  return applyEpilogue(y, args);
}

/**
 * `dequant(a) @ dequant(weight)^T` with int8 activations (one scale per row) and an int4 weight with
 * one scale per 128 columns of a row: per group, the exact integer sum of code products times the
 * group's scale, summed over the groups, times the row's activation scale, and an optional fused
 * epilogue (see the module doc).
 *
 * @param args the packed activations `[M, K]` and their `aScales[M]`, the packed `[N, K]` weight and
 *   its `scales[N, ceil(K/128)]`, the shape and the epilogue's arguments
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulQ4G128Dp4a } from "@xpu/ops/ops/matmul";
 * // a's codes [3, 1] at scale 0.5; the weight's nibbles [1, -1] (0x1, 0xf) at scale 2: (3 - 1) * 2 * 0.5
 * matmulQ4G128Dp4a({ a: new Uint32Array([0x0103]), aScales: new Float32Array([0.5]), weight: new Uint32Array([0xf1]), scales: new Float32Array([2]), M: 1, N: 1, K: 2 }); // [2]
 * ```
 */
export function matmulQ4G128Dp4a(args: MatmulQ4G128Dp4aArgs): Float32Array {
  validateMatmulQ4G128Dp4a(args);
  const { M, N, K } = args;
  const groups = Math.ceil(K / Q4_GROUP);
  const a = decodeRows(args.a, M, K, 8);
  const w = decodeRows(args.weight, N, K, 4);
  const y = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let sum = 0;
      for (let g = 0; g < groups; g++) {
        const k1 = Math.min(K, (g + 1) * Q4_GROUP);
        sum += integerDot(a, w, m, n, K, g * Q4_GROUP, k1) * args.scales[n * groups + g];
      }
      y[m * N + n] = sum * args.aScales[m];
    }
  }
  return applyEpilogue(y, args);
}
