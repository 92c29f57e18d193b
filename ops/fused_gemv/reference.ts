/**
 * Reference for fused_gemv: a decode step's weight product with its neighbours folded in, what
 * correct means, in plain TypeScript (f64).
 *
 * `fusedGemv(args)` is `out (op)= act(W · in(x))` for one row of activations `x` `[K]` and a weight
 * `W` `[N, K]` in the form matvec's GEMVs read it (f32, or the q8 / q4g128 wire formats with their
 * scales, dequantized exactly):
 * - input `plain`: `in(x) = x`; input `norm`: `in(x) = x / sqrt(mean(x^2) + eps) * normWeight`
 *   (transformers' LlamaRMSNorm, `F.rms_norm(x, (K,), normWeight, eps)`).
 * - output `store`: `out[out0 + n] = y[n]`; `add`: `out[out0 + n] += y[n]` (the residual
 *   connection); `swiglu`: the weight's rows come in pairs, gate and up of one channel (rows 2j and
 *   2j + 1), and `out[out0 + j] = silu(y[2j]) * y[2j + 1]` (`F.silu(gate) * up` of a feed-forward
 *   whose gate and up weights are interleaved row by row). Elements of `out` outside the written
 *   range keep their values.
 *
 * Refused, naming the argument: N or K not an integer >= 1, K not a multiple of 4 (the kernels read
 * activations as vec4s), an odd N with `swiglu`, an `out` shorter than `out0` plus what is written,
 * arrays of the wrong type or length, an eps that is negative or not a finite f32.
 *
 * @module
 */

import { Q4_GROUP, unpackQ4, unpackQ8 } from "../matvec/reference.ts";
import { requireArgs, requireArray, requireF32, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

/** The weight formats: f32, matvec's q8 (a scale a row) and q4g128 (a scale per 128 columns). */
export const FUSED_GEMV_FORMATS = ["f32", "q8", "q4g128"] as const;
/** A weight format. */
export type FusedGemvFormat = typeof FUSED_GEMV_FORMATS[number];
/** What the product reads: `x` as it is, or its RMSNorm. */
export type FusedGemvInput = "plain" | "norm";
/** What the product does with its result: store it, add it to `out`, or apply SwiGLU to row pairs. */
export type FusedGemvOutput = "store" | "add" | "swiglu";

/** The eps used when none is given (transformers' LlamaRMSNorm default). */
export const FUSED_GEMV_DEFAULT_EPS = 1e-6;

/** Every key of {@link fusedGemv}'s arguments (its shape's among them). */
const KEYS: readonly string[] = [
  "format",
  "weight",
  "scales",
  "x",
  "normWeight",
  "out",
  "N",
  "K",
  "input",
  "output",
  "out0",
  "outLength",
  "eps",
  "layoutRows",
];

/** Sizes and scalars of a {@link fusedGemv} call: what a plan needs. */
export interface FusedGemvShape {
  /** The weight's format. */
  format: FusedGemvFormat;
  /** Rows of the weight (even with `swiglu`). */
  N: number;
  /** Columns of the weight and length of `x`, a multiple of 4. */
  K: number;
  /** The product's input. */
  input: FusedGemvInput;
  /** What it does with its result. */
  output: FusedGemvOutput;
  /** The first element of `out` written (for `swiglu`, counted in pairs); default 0. */
  out0?: number;
  /** Length of `out`; default `out0` plus what is written. */
  outLength?: number;
  /** RMSNorm's epsilon (with `norm`); default 1e-6. */
  eps?: number;
  /**
   * The rows that choose the kernels' layout, default N: a row block of a weight held in blocks
   * passes the whole weight's, so every block runs the layout the whole would (the reference has
   * no layouts).
   */
  layoutRows?: number;
}

/** Arguments of {@link fusedGemv}. */
export interface FusedGemvArgs extends FusedGemvShape {
  /** f32 `[N, K]`, or the packed codes: q8 `[N, ceil(K / 4)]`, q4g128 `[N, ceil(K / 8)]` words. */
  weight: Float32Array | Uint32Array;
  /** q8: `[N]`; q4g128: `[N, ceil(K / 128)]`; absent for f32. */
  scales?: Float32Array;
  /** The activations, `[K]`. */
  x: Float32Array;
  /** RMSNorm's weight `[K]` (with `norm`; not read otherwise). */
  normWeight?: Float32Array;
  /** The output as it is before the call, `[outLength]`. */
  out: Float32Array;
}

/**
 * The u32 words (f32: floats) of one weight row, and its scales, per format.
 *
 * @param format the weight's format
 * @param K its columns
 * @returns the words and the scales of a row
 *
 * @example
 * ```ts
 * import { fusedGemvRowWords } from "@xpu/ops/ops/fused_gemv";
 * fusedGemvRowWords("q4g128", 2048); // { words: 256, scales: 16 }
 * ```
 */
export function fusedGemvRowWords(format: FusedGemvFormat, K: number): { words: number; scales: number } {
  if (format === "f32") return { words: K, scales: 0 };
  if (format === "q8") return { words: Math.ceil(K / 4), scales: 1 };
  return { words: Math.ceil(K / 8), scales: Math.ceil(K / Q4_GROUP) };
}

/**
 * Validates {@link fusedGemv}'s sizes and scalars.
 *
 * @param shape the sizes
 * @returns out0, outLength and eps with their defaults, and `written`, the elements the call writes
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateFusedGemvShape } from "@xpu/ops/ops/fused_gemv";
 * validateFusedGemvShape({ format: "q8", N: 16384, K: 2048, input: "norm", output: "swiglu" });
 * // { out0: 0, outLength: 8192, eps: 1e-6, written: 8192 }
 * ```
 */
export function validateFusedGemvShape(
  shape: FusedGemvShape,
): { out0: number; outLength: number; eps: number; written: number } {
  return checkShape(shape, "outLength");
}

/** {@link validateFusedGemvShape}, naming the output's length as the caller gave it (`outLength`, or `out.length`). */
function checkShape(
  shape: FusedGemvShape,
  outLengthName: string,
): { out0: number; outLength: number; eps: number; written: number } {
  const op = "fusedGemv";
  requireArgs(op, "shape", shape, "{ format, N, K, input, output, out0?, outLength?, eps? }", KEYS);
  requireOneOf(op, "format", shape.format, FUSED_GEMV_FORMATS);
  requireOneOf(op, "input", shape.input, ["plain", "norm"]);
  requireOneOf(op, "output", shape.output, ["store", "add", "swiglu"]);
  const N = requireInt(op, "N", shape.N, 1, U32_MAX);
  const K = requireInt(op, "K", shape.K, 1, U32_MAX);
  if (K % 4 !== 0) throw new Error(`${op}: K must be a multiple of 4 (activations are read as vec4s), got ${K}`);
  if (shape.output === "swiglu" && N % 2 !== 0) {
    throw new Error(`${op}: N must be even with output "swiglu" (rows come in gate/up pairs), got ${N}`);
  }
  const written = shape.output === "swiglu" ? N / 2 : N;
  const out0 = requireInt(op, "out0", shape.out0 ?? 0, 0, U32_MAX);
  const outLength = requireInt(op, outLengthName, shape.outLength ?? out0 + written, out0 + written, U32_MAX);
  if (shape.layoutRows !== undefined) requireInt(op, "layoutRows", shape.layoutRows, 1, U32_MAX);
  const eps = requireF32(op, "eps", shape.eps ?? FUSED_GEMV_DEFAULT_EPS);
  if (eps < 0) throw new Error(`${op}: eps must be >= 0, got ${eps}`);
  return { out0, outLength, eps, written };
}

/**
 * Validates {@link fusedGemv}'s arguments: the sizes, then the arrays.
 *
 * @param args the arguments
 * @returns as {@link validateFusedGemvShape}
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateFusedGemv } from "@xpu/ops/ops/fused_gemv";
 * const args = { format: "f32", N: 2, K: 4, input: "plain", output: "add" } as const;
 * validateFusedGemv({ ...args, weight: new Float32Array(8), x: new Float32Array(4), out: new Float32Array(2) });
 * ```
 */
export function validateFusedGemv(
  args: FusedGemvArgs,
): { out0: number; outLength: number; eps: number; written: number } {
  const op = "fusedGemv";
  requireArgs(
    op,
    "args",
    args,
    "{ format, weight, scales?, x, normWeight?, out, N, K, input, output, out0?, eps? }",
    KEYS,
  );
  const checked = args.outLength === undefined && args.out instanceof Float32Array
    ? checkShape({ ...args, outLength: args.out.length }, "out.length")
    : validateFusedGemvShape(args);
  const { format, N, K } = args;
  const per = fusedGemvRowWords(format, K);
  requireArray(op, "weight", args.weight, format === "f32" ? "Float32Array" : "Uint32Array", [
    N * per.words,
    format === "f32" ? "N * K" : `N * ${per.words} words`,
  ]);
  if (format !== "f32") requireArray(op, "scales", args.scales, "Float32Array", [N * per.scales, `N * ${per.scales}`]);
  requireArray(op, "x", args.x, "Float32Array", [K, "K"]);
  if (args.input === "norm") requireArray(op, "normWeight", args.normWeight, "Float32Array", [K, "K"]);
  requireArray(op, "out", args.out, "Float32Array", [checked.outLength, "outLength"]);
  return checked;
}

/**
 * The fused decode product (see the module doc).
 *
 * @param args the weight (and scales), x, the norm weight, out as it is, the sizes
 * @returns a new `out`, the written elements the f32 rounding of their f64 values
 *
 * @example
 * ```ts
 * import { fusedGemv } from "@xpu/ops/ops/fused_gemv";
 * // [[1, 0, 0, 0], [0, 2, 0, 0]] · [3, 4, 0, 0], added to [10, 20]
 * const weight = new Float32Array([1, 0, 0, 0, 0, 2, 0, 0]);
 * fusedGemv({ format: "f32", weight, x: new Float32Array([3, 4, 0, 0]), out: new Float32Array([10, 20]), N: 2, K: 4, input: "plain", output: "add" });
 * // [13, 28]
 * ```
 */
export function fusedGemv(args: FusedGemvArgs): Float32Array {
  const { out0, eps } = validateFusedGemv(args);
  const { N, K, x } = args;
  let xin: number[] = Array.from(x);
  if (args.input === "norm") {
    let squares = 0;
    for (const v of x) squares += v * v;
    const inv = 1 / Math.sqrt(squares / K + eps);
    xin = xin.map((v, k) => v * inv * args.normWeight![k]);
  }
  const value = weightValues(args);
  const y = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    let s = 0;
    for (let k = 0; k < K; k++) s += value(n, k) * xin[k];
    y[n] = s;
  }
  const out = Float32Array.from(args.out);
  if (args.output === "swiglu") {
    for (let j = 0; j < N / 2; j++) out[out0 + j] = silu(y[2 * j]) * y[2 * j + 1];
  } else {
    for (let n = 0; n < N; n++) out[out0 + n] = (args.output === "add" ? out[out0 + n] : 0) + y[n];
  }
  return out;
}

/** silu(v) = v * sigmoid(v) in f64, the sigmoid written so that it never overflows. */
function silu(v: number): number {
  const e = Math.exp(-Math.abs(v));
  return v * (v >= 0 ? 1 / (1 + e) : e / (1 + e));
}

/** W[n, k] as a function, dequantized for q8 and q4g128 (code times its scale, in f64). */
function weightValues(args: FusedGemvArgs): (n: number, k: number) => number {
  const { format, N, K, weight, scales } = args;
  if (format === "f32") return (n, k) => weight[n * K + k];
  const codes = format === "q8" ? unpackQ8(weight as Uint32Array, N, K) : unpackQ4(weight as Uint32Array, N, K);
  if (format === "q8") return (n, k) => codes[n * K + k] * scales![n];
  const groups = Math.ceil(K / Q4_GROUP);
  return (n, k) => codes[n * K + k] * scales![n * groups + Math.floor(k / Q4_GROUP)];
}
