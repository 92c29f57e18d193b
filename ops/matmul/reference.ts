/**
 * Reference for matrix multiplication: what correct means, in plain TypeScript.
 *
 * - `matmul` is `torch.mm(a, b)`: `a` is `[M, K]`, `b` is `[K, N]`, both f32 row-major, and the
 *   result is `[M, N]`. `b` is read as `[K, N]`, not as a transposed `[N, K]`.
 * - `matmulLinear` is `F.linear(a, weight)`, i.e. `a @ weight^T`: the f32 weight in a Linear layer's
 *   orientation, `[N, K]` (one row per output feature), as checkpoints store it and as the quantized
 *   products below take theirs.
 * - `matmulQ8` is `F.linear(a, dequant(weight))`, i.e. `a @ dequant(weight)^T`: the activations `a`
 *   are `[M, K]` and the weight is a Linear layer's `[N, K]` (one row per output feature), held as
 *   int8 codes packed four to a u32, least-significant byte first, two's complement, `[N, ceil(K/4)]`
 *   words with zero padding at the end of each row, and one f32 scale per row, `scale[N]`:
 *   `out[m, n] = scales[n] * sum_k a[m, k] * code[n, k]`.
 * - `matmulQ4G128` is the same at four bits: eight two's-complement nibbles per u32, least
 *   significant nibble first, `[N, ceil(K/8)]` words, and one scale per group of 128 consecutive
 *   columns of a row, `scales[N, ceil(K/128)]`: `out[m, n] = sum_k a[m, k] * code[n, k] *
 *   scales[n, floor(k / 128)]`.
 * - `matmulF16` is `torch.mm(a.half().float(), b.half().float())`: `a` `[M, K]` and `b` `[K, N]` held
 *   as IEEE binary16, row-major, two halves per u32 word, the lower-indexed element in the low 16
 *   bits, element `e` of a matrix in word `e >> 1` (a row straddles two words when its length is
 *   odd), `ceil(M * K / 2)` and `ceil(K * N / 2)` words; the half in the high bits of an odd-length
 *   matrix's last word is padding and ignored. The sums are `matmul`'s: the halves are decoded to
 *   their exact values and multiplied as such. {@link packF16} writes the format (rounding to nearest,
 *   ties to even, as torch's `.half()`) and {@link unpackF16} reads it.
 *
 * Every product but `matmulF16` takes a fused epilogue ({@link MatmulEpilogueArgs}; the dp4a products
 * of reference_dp4a.ts too), applied to each output `y[m, n]` of the product ({@link applyEpilogue})
 * in this order, each step only when asked for:
 *
 *     v = y[m, n] + bias[n]                       bias    [N]
 *     v = activation(v)                           "gelu" (erf), "gelu_tanh" or "silu"
 *     v = v * gate[floor(m / gateRows), n]        gate    [M / gateRows, N], gateRows | M
 *     out[m, n] = c[m, n] + v   (accumulate)      c       [M, N], the output's prior content
 *
 * `gelu` is `F.gelu(v)` (approximate="none": `v/2 * (1 + erf(v / sqrt 2))`), `gelu_tanh` is
 * `F.gelu(v, approximate="tanh")`, `silu` is `F.silu(v)`. The gate is a modulation vector per batch
 * item broadcast over its tokens: rows `m` of `a` are `M / gateRows` batch items of `gateRows` tokens
 * each, token-major, so row `m` belongs to item `floor(m / gateRows)` (not `m % (M / gateRows)`).
 * With `accumulate`, the result is added to `c` (a residual stream updated in place). The whole
 * chain is evaluated in f64 on the f64 product and rounded to f32 once.
 *
 * Codes in the padding of a row's last word (columns K and beyond) are ignored. A nibble decodes to
 * [-8, 7] and a byte to [-128, 127] whatever produced them; the quantizers only emit [-7, 7] and
 * [-127, 127], but the decoding is the format's, not the quantizer's.
 *
 * Sums are accumulated in f64 and rounded to f32 once. The decoding here is arithmetic (division,
 * remainder, subtraction), independent of the kernels' bit extraction.
 *
 * Refused, with an error naming the argument: M, N or K that is not an integer >= 1 (an empty
 * dimension is far likelier a shape bug than a request for an empty or all-zero product), arrays of
 * the wrong type or length, an activation that is not one of {@link MATMUL_ACTIVATIONS}, a gateRows
 * that is not an integer >= 1 dividing M, a gate without gateRows or gateRows without a gate,
 * accumulate without c or c without accumulate, a `bias` or `accumulate` of the plans' shape that is
 * not a boolean, and any epilogue argument given to `matmulF16` (it has none).
 *
 * @module
 */

import { erfc } from "../activation/reference.ts";
import { requireArgs, requireArray, requireInt, requireOneOf, shown, U32_MAX } from "../validate.ts";

/** The activations a product's fused epilogue can apply (torch's names: `F.gelu`, `F.gelu(approximate="tanh")`, `F.silu`). */
export const MATMUL_ACTIVATIONS = ["gelu", "gelu_tanh", "silu"] as const;
/** One of {@link MATMUL_ACTIVATIONS}. */
export type MatmulActivation = typeof MATMUL_ACTIVATIONS[number];

/**
 * A fused epilogue as the plans take it (in the shape, beside `M`, `N`, `K`): which steps run, and so
 * which bindings the plan has. Any step makes the plan take the op's fused kernel, whose bindings
 * are `a`, `b` or `weight`, [`scales`], `bias`, `gate`, `c`; `bias` and `gate` have length 0 (any f32
 * tensor may be bound there) when their step is off.
 */
export interface MatmulEpilogue {
  /** Add `bias[n]`: binding `bias`, `[N]`. */
  bias?: boolean;
  /** Apply `F.gelu` (erf), `F.gelu(approximate="tanh")` or `F.silu` after the bias. */
  activation?: MatmulActivation;
  /**
   * Tokens per batch item: multiply by `gate[floor(m / gateRows), n]`, binding `gate`,
   * `[M / gateRows, N]`. An integer >= 1 dividing M.
   */
  gateRows?: number;
  /** Add the result to `c`'s prior content (`c += ...`): `c` is bound read and written (role `inout`). */
  accumulate?: boolean;
}

/** A fused epilogue with its tensors, as the references and the one-shot GPU calls take it. */
export interface MatmulEpilogueArgs {
  /** `[N]`, added to every row of the product. */
  bias?: Float32Array;
  /** Applied after the bias. */
  activation?: MatmulActivation;
  /** `[M / gateRows, N]`: row `m` of the result is multiplied by row `floor(m / gateRows)`. Needs `gateRows`. */
  gate?: Float32Array;
  /** Tokens per batch item (rows of the result per row of `gate`), an integer >= 1 dividing M. Needs `gate`. */
  gateRows?: number;
  /** Add the result to `c`. Needs `c`. */
  accumulate?: boolean;
  /** `[M, N]`, the output's prior content, which `accumulate` adds the result to. */
  c?: Float32Array;
}

/** Arguments of {@link matmul}, with an optional fused epilogue. */
export interface MatmulArgs extends MatmulEpilogueArgs {
  /** Left operand, `[M, K]` row-major. */
  a: Float32Array;
  /** Right operand, `[K, N]` row-major. */
  b: Float32Array;
  /** Rows of `a` and of the result. */
  M: number;
  /** Columns of `b` and of the result. */
  N: number;
  /** Columns of `a`, rows of `b`: the axis summed over. */
  K: number;
}

/** Arguments of {@link matmulLinear}: `a @ weight^T` with an f32 weight `[N, K]`, with an optional fused epilogue. */
export interface MatmulLinearArgs extends MatmulEpilogueArgs {
  /** Activations, `[M, K]` row-major. */
  a: Float32Array;
  /** A Linear layer's weight, `[N, K]` row-major (one row per output feature). */
  weight: Float32Array;
  /** Rows of `a` and of the result (tokens). */
  M: number;
  /** Rows of the weight, columns of the result (output features). */
  N: number;
  /** Columns of `a` and of the weight (input features). */
  K: number;
}

/** Arguments of {@link matmulQ8}: activations times an int8 weight with one scale per row, with an optional fused epilogue. */
export interface MatmulQ8Args extends MatmulEpilogueArgs {
  /** Activations, `[M, K]` row-major f32. */
  a: Float32Array;
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

/** Arguments of {@link matmulQ4G128}: activations times an int4 weight with one scale per 128 columns, with an optional fused epilogue. */
export interface MatmulQ4G128Args extends MatmulEpilogueArgs {
  /** Activations, `[M, K]` row-major f32. */
  a: Float32Array;
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

/** Arguments of {@link matmulF16}: both operands as packed halves. */
export interface MatmulF16Args {
  /** Left operand `[M, K]` packed by {@link packF16}: `ceil(M * K / 2)` words. */
  a: Uint32Array;
  /** Right operand `[K, N]` packed by {@link packF16}: `ceil(K * N / 2)` words. */
  b: Uint32Array;
  /** Rows of `a` and of the result. */
  M: number;
  /** Columns of `b` and of the result. */
  N: number;
  /** Columns of `a`, rows of `b`: the axis summed over. */
  K: number;
}

/** Columns of a weight row that share one scale in the q4 format. */
const Q4_GROUP = 128;

/** The sizes of a product: `[M, K] x [K, N]` (or a `[N, K]` weight) gives `[M, N]`. */
export interface MatmulShape {
  /** Rows of `a` and of the result (>= 1). */
  M: number;
  /** Columns of the result (>= 1). */
  N: number;
  /** The axis summed over (>= 1). */
  K: number;
}

/**
 * The fields of a fused epilogue, in a plan's shape ({@link MatmulEpilogue}) or a call's arguments
 * ({@link MatmulEpilogueArgs}): what every product but `matmulF16` accepts beside its operands and
 * sizes, and what `matmulF16` refuses by name.
 */
export const MATMUL_EPILOGUE_FIELDS = ["bias", "activation", "gate", "gateRows", "accumulate", "c"] as const;

/**
 * The keys each product's shape or arguments may carry: its operands, sizes and epilogue (a plan may
 * be given the arguments).
 */
const KEYS = {
  matmul: ["a", "b", "M", "N", "K", ...MATMUL_EPILOGUE_FIELDS],
  matmulLinear: ["a", "weight", "M", "N", "K", ...MATMUL_EPILOGUE_FIELDS],
  matmulQ8: ["a", "weight", "scales", "M", "N", "K", ...MATMUL_EPILOGUE_FIELDS],
  matmulQ4G128: ["a", "weight", "scales", "M", "N", "K", ...MATMUL_EPILOGUE_FIELDS],
  matmulF16: ["a", "b", "M", "N", "K"],
} as const satisfies Record<string, readonly string[]>;

function requireDims(op: keyof typeof KEYS, shape: MatmulShape): void {
  requireArgs(op, "shape", shape, "{ M, N, K }", KEYS[op]);
  requireInt(op, "M", shape.M, 1, U32_MAX);
  requireInt(op, "N", shape.N, 1, U32_MAX);
  requireInt(op, "K", shape.K, 1, U32_MAX);
}

function requireBoolean(op: string, name: string, value: unknown): void {
  if (value !== undefined && typeof value !== "boolean") {
    throw new Error(`${op}: ${name} must be a boolean, got ${shown(value)}`);
  }
}

function requireGateRows(op: string, gateRows: unknown, M: number): void {
  if (gateRows === undefined) return;
  const rows = requireInt(op, "gateRows", gateRows, 1, U32_MAX);
  if (M % rows !== 0) {
    throw new Error(`${op}: gateRows (tokens per batch item) must divide M = ${M}, got ${rows}`);
  }
}

/**
 * Validates the epilogue's steps in a plan's shape (its sizes already checked): `bias` and
 * `accumulate` booleans, `activation` one of {@link MATMUL_ACTIVATIONS}, `gateRows` an integer >= 1
 * dividing M. Each product's shape validation calls it.
 *
 * @param op the product, for the message
 * @param shape the sizes and the epilogue's steps
 * @throws Error naming the bad step and what was expected
 *
 * @example
 * ```ts
 * import { requireEpilogue } from "@xpu/ops/ops/matmul";
 * requireEpilogue("matmulQ8Dp4a", { M: 6, N: 4, K: 8, gateRows: 3, activation: "silu" }); // passes; gateRows: 4 throws (it must divide M)
 * ```
 */
export function requireEpilogue(op: string, shape: MatmulShape & MatmulEpilogue): void {
  requireBoolean(op, "bias", shape.bias);
  if (shape.activation !== undefined) requireOneOf(op, "activation", shape.activation, MATMUL_ACTIVATIONS);
  requireGateRows(op, shape.gateRows, shape.M);
  requireBoolean(op, "accumulate", shape.accumulate);
}

/**
 * Validates the epilogue's arguments of a reference or one-shot GPU call (its sizes already checked):
 * `bias` `[N]`, `activation` one of {@link MATMUL_ACTIVATIONS}, `gate` `[M / gateRows, N]` with its
 * `gateRows` (an integer >= 1 dividing M), and the prior `c` `[M, N]` exactly when `accumulate` is
 * true. Each product's argument validation calls it.
 *
 * @param op the product, for the message
 * @param args the sizes and the epilogue's arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { requireEpilogueArgs } from "@xpu/ops/ops/matmul";
 * requireEpilogueArgs("matmulQ8Dp4a", { M: 2, N: 3, K: 4, bias: new Float32Array(3) }); // passes; a bias of length 2 throws
 * ```
 */
export function requireEpilogueArgs(op: string, args: MatmulShape & MatmulEpilogueArgs): void {
  const { M, N } = args;
  if (args.bias !== undefined) requireArray(op, "bias", args.bias, "Float32Array", [N, "N"]);
  if (args.activation !== undefined) requireOneOf(op, "activation", args.activation, MATMUL_ACTIVATIONS);
  requireGateRows(op, args.gateRows, M);
  if (args.gateRows !== undefined) {
    requireArray(op, "gate", args.gate, "Float32Array", [(M / args.gateRows) * N, "M / gateRows * N"]);
  } else if (args.gate !== undefined) {
    throw new Error(`${op}: gate needs gateRows (tokens per batch item: rows of the result per row of gate)`);
  }
  requireBoolean(op, "accumulate", args.accumulate);
  if (args.accumulate) {
    requireArray(op, "c", args.c, "Float32Array", [M * N, "M * N"]);
  } else if (args.c !== undefined) {
    throw new Error(`${op}: c (the prior output) is read only with accumulate: true`);
  }
}

/**
 * Refuses the epilogue arguments by name, for a product that has no fused epilogue (`matmulF16`);
 * checked before the unknown keys, which would name them less clearly.
 *
 * @param op the product, for the message
 * @param record its shape or arguments
 * @throws Error naming the first epilogue argument given
 *
 * @example
 * ```ts
 * import { refuseEpilogue } from "@xpu/ops/ops/matmul";
 * refuseEpilogue("matmulF16", { M: 1, N: 1, K: 1 }); // passes; with bias: true it throws "matmulF16: bias is not supported (matmulF16 has no fused epilogue)"
 * ```
 */
export function refuseEpilogue(op: string, record: unknown): void {
  if (record === null || typeof record !== "object") return;
  for (const field of MATMUL_EPILOGUE_FIELDS) {
    if ((record as Record<string, unknown>)[field] !== undefined) {
      throw new Error(`${op}: ${field} is not supported (${op} has no fused epilogue)`);
    }
  }
}

/**
 * Whether a plan's shape asks for a fused epilogue (any step on), and so for the op's fused kernel.
 *
 * @param shape the plan's shape
 * @returns true when bias or accumulate is true, or activation or gateRows is given
 *
 * @example
 * ```ts
 * import { hasEpilogue } from "@xpu/ops/ops/matmul";
 * hasEpilogue({}); // false
 * hasEpilogue({ bias: false, accumulate: false }); // false: every step off
 * hasEpilogue({ activation: "gelu" }); // true
 * ```
 */
export function hasEpilogue(shape: MatmulEpilogue): boolean {
  return shape.bias === true || shape.activation !== undefined || shape.gateRows !== undefined ||
    shape.accumulate === true;
}

/**
 * The plan options of a call's epilogue arguments: `bias: true` where a bias is given.
 *
 * @param args the epilogue arguments
 * @returns the same epilogue as a plan takes it
 *
 * @example
 * ```ts
 * import { epilogueOf } from "@xpu/ops/ops/matmul";
 * epilogueOf({ bias: new Float32Array(4), activation: "silu" }); // { bias: true, activation: "silu", gateRows: undefined, accumulate: undefined }
 * ```
 */
export function epilogueOf(args: MatmulEpilogueArgs): MatmulEpilogue {
  return {
    bias: args.bias !== undefined,
    activation: args.activation,
    gateRows: args.gateRows,
    accumulate: args.accumulate,
  };
}

/**
 * Validates {@link matmul}'s sizes and epilogue (what a plan's shape holds).
 *
 * @param shape the sizes and the epilogue's steps
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulShape } from "@xpu/ops/ops/matmul";
 * validateMatmulShape({ M: 512, N: 4096, K: 4096 }); // passes; M: 0 throws "matmul: M must be an integer >= 1, got 0"
 * validateMatmulShape({ M: 512, N: 4096, K: 4096, gateRows: 256 }); // passes; gateRows: 300 throws (it must divide M)
 * ```
 */
export function validateMatmulShape(shape: MatmulShape & MatmulEpilogue): void {
  requireDims("matmul", shape);
  requireEpilogue("matmul", shape);
}

/**
 * Validates {@link matmulLinear}'s sizes and epilogue (what a plan's shape holds).
 *
 * @param shape the sizes and the epilogue's steps
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulLinearShape } from "@xpu/ops/ops/matmul";
 * validateMatmulLinearShape({ M: 4608, N: 10240, K: 3840, activation: "silu" }); // passes; activation: "relu" throws
 * ```
 */
export function validateMatmulLinearShape(shape: MatmulShape & MatmulEpilogue): void {
  requireDims("matmulLinear", shape);
  requireEpilogue("matmulLinear", shape);
}

/**
 * Validates {@link matmulQ8}'s sizes and epilogue (what a plan's shape holds).
 *
 * @param shape the sizes and the epilogue's steps
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulQ8Shape } from "@xpu/ops/ops/matmul";
 * validateMatmulQ8Shape({ M: 512, N: 4096, K: 4096 }); // passes; M: 0 throws "matmulQ8: M must be an integer >= 1, got 0"
 * ```
 */
export function validateMatmulQ8Shape(shape: MatmulShape & MatmulEpilogue): void {
  requireDims("matmulQ8", shape);
  requireEpilogue("matmulQ8", shape);
}

/**
 * Validates {@link matmulQ4G128}'s sizes and epilogue (what a plan's shape holds).
 *
 * @param shape the sizes and the epilogue's steps
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulQ4G128Shape } from "@xpu/ops/ops/matmul";
 * validateMatmulQ4G128Shape({ M: 512, N: 4096, K: 4096 }); // passes; M: 0 throws "matmulQ4G128: M must be an integer >= 1, got 0"
 * ```
 */
export function validateMatmulQ4G128Shape(shape: MatmulShape & MatmulEpilogue): void {
  requireDims("matmulQ4G128", shape);
  requireEpilogue("matmulQ4G128", shape);
}

/**
 * Validates {@link matmulF16}'s sizes (what {@link MatmulShape} holds); it has no epilogue, and
 * refuses one.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMatmulF16Shape } from "@xpu/ops/ops/matmul";
 * validateMatmulF16Shape({ M: 512, N: 4096, K: 4096 }); // passes; M: 0 throws "matmulF16: M must be an integer >= 1, got 0"
 * ```
 */
export function validateMatmulF16Shape(shape: MatmulShape): void {
  refuseEpilogue("matmulF16", shape);
  requireDims("matmulF16", shape);
}

/**
 * Validates {@link matmul}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmul } from "@xpu/ops/ops/matmul";
 * validateMatmul({ a: new Float32Array(6), b: new Float32Array(12), M: 2, N: 4, K: 3 }); // passes
 * ```
 */
export function validateMatmul(args: MatmulArgs): void {
  requireArgs("matmul", "args", args, "{ a, b, M, N, K }", KEYS.matmul);
  requireDims("matmul", args);
  requireArray("matmul", "a", args.a, "Float32Array", [args.M * args.K, "M * K"]);
  requireArray("matmul", "b", args.b, "Float32Array", [args.K * args.N, "K * N"]);
  requireEpilogueArgs("matmul", args);
}

/**
 * Validates {@link matmulLinear}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmulLinear } from "@xpu/ops/ops/matmul";
 * validateMatmulLinear({ a: new Float32Array(6), weight: new Float32Array(12), M: 2, N: 4, K: 3 }); // weight [N, K]
 * ```
 */
export function validateMatmulLinear(args: MatmulLinearArgs): void {
  const op = "matmulLinear";
  requireArgs(op, "args", args, "{ a, weight, M, N, K }", KEYS[op]);
  requireDims(op, args);
  requireArray(op, "a", args.a, "Float32Array", [args.M * args.K, "M * K"]);
  requireArray(op, "weight", args.weight, "Float32Array", [args.N * args.K, "N * K"]);
  requireEpilogueArgs(op, args);
}

/**
 * Validates {@link matmulQ8}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmulQ8 } from "@xpu/ops/ops/matmul";
 * validateMatmulQ8({ a: new Float32Array(8), weight: new Uint32Array(3), scales: new Float32Array(3), M: 2, N: 3, K: 4 });
 * ```
 */
export function validateMatmulQ8(args: MatmulQ8Args): void {
  const op = "matmulQ8";
  requireArgs(op, "args", args, "{ a, weight, scales, M, N, K }", KEYS[op]);
  requireDims(op, args);
  requireArray(op, "a", args.a, "Float32Array", [args.M * args.K, "M * K"]);
  requireArray(op, "weight", args.weight, "Uint32Array", [args.N * Math.ceil(args.K / 4), "N * ceil(K / 4)"]);
  requireArray(op, "scales", args.scales, "Float32Array", [args.N, "N"]);
  requireEpilogueArgs(op, args);
}

/**
 * Validates {@link matmulQ4G128}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmulQ4G128 } from "@xpu/ops/ops/matmul";
 * const weight = new Uint32Array(3); // [N = 3, ceil(K / 8) = 1]
 * validateMatmulQ4G128({ a: new Float32Array(8), weight, scales: new Float32Array(3), M: 2, N: 3, K: 4 });
 * ```
 */
export function validateMatmulQ4G128(args: MatmulQ4G128Args): void {
  const op = "matmulQ4G128";
  requireArgs(op, "args", args, "{ a, weight, scales, M, N, K }", KEYS[op]);
  requireDims(op, args);
  requireArray(op, "a", args.a, "Float32Array", [args.M * args.K, "M * K"]);
  requireArray(op, "weight", args.weight, "Uint32Array", [args.N * Math.ceil(args.K / 8), "N * ceil(K / 8)"]);
  requireArray(op, "scales", args.scales, "Float32Array", [args.N * Math.ceil(args.K / 128), "N * ceil(K / 128)"]);
  requireEpilogueArgs(op, args);
}

/**
 * Validates {@link matmulF16}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 * @example
 * ```ts
 * import { validateMatmulF16 } from "@xpu/ops/ops/matmul";
 * validateMatmulF16({ a: new Uint32Array(3), b: new Uint32Array(3), M: 2, N: 2, K: 3 }); // halves, two to a word
 * ```
 */
export function validateMatmulF16(args: MatmulF16Args): void {
  const op = "matmulF16";
  refuseEpilogue(op, args);
  requireArgs(op, "args", args, "{ a, b, M, N, K }", KEYS[op]);
  requireDims(op, args);
  requireArray(op, "a", args.a, "Uint32Array", [Math.ceil((args.M * args.K) / 2), "ceil(M * K / 2)"]);
  requireArray(op, "b", args.b, "Uint32Array", [Math.ceil((args.K * args.N) / 2), "ceil(K * N / 2)"]);
}

/**
 * The binary16 bits (sign, 5 exponent bits, 10 fraction bits) nearest an f32 value, given as its
 * bits, rounded to nearest, ties to even.
 */
function halfBits(f: number): number {
  const sign = (f >>> 16) & 0x8000;
  const exponent = (f >>> 23) & 0xff; // biased by 127; a half's is biased by 15
  const fraction = f & 0x7fffff;
  if (exponent === 0xff) return sign | (fraction === 0 ? 0x7c00 : 0x7e00);
  // 2^16 and above: past the largest half whatever the rounding.
  if (exponent >= 127 + 16) return sign | 0x7c00;
  // The bits to round (`significand`), of which the low `shift` fall below the half's last bit,
  // and the half's bits before rounding (`kept`).
  let significand: number;
  let shift: number;
  let kept: number;
  if (exponent >= 127 - 14) {
    // A normal half: the top 10 of the 23 fraction bits under the rebiased exponent.
    significand = fraction;
    shift = 13;
    kept = ((exponent - 127 + 15) << 10) | (fraction >>> 13);
  } else {
    // A subnormal half (or zero): the significand, implicit bit included, in units of 2^-24. Below
    // 2^-25 (and for f32 subnormals) everything rounds to zero.
    shift = 126 - exponent;
    if (exponent === 0 || shift > 24) return sign;
    significand = 0x800000 | fraction;
    kept = significand >>> shift;
  }
  const rest = significand & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  // Rounding up carries into the exponent field where the kept bits are all ones: to the next
  // binade, from the largest subnormal to the smallest normal, and from 65504 to infinity.
  if (rest > half || (rest === half && (kept & 1) === 1)) kept++;
  return sign | kept;
}

/** The value of binary16 bits. */
function halfValue(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0x1f) return fraction === 0 ? sign * Infinity : NaN;
  if (exponent === 0) return sign * fraction * 2 ** -24;
  return sign * (1024 + fraction) * 2 ** (exponent - 25);
}

/**
 * Packs f32 values as IEEE binary16, two to a u32, the lower-indexed one in the low 16 bits (the
 * format of {@link matmulF16}'s operands, which WGSL's `unpack2x16float` reads). Rounds to nearest,
 * ties to even, as torch's `.half()`: magnitudes of 65520 and above become infinities, NaN stays
 * NaN, values below the smallest normal half (2^-14) become subnormals (multiples of 2^-24), and
 * those at most 2^-25 become zeros of their sign. An odd-length input leaves the high half of the
 * last word zero.
 *
 * @param x the values, row-major
 * @returns `ceil(x.length / 2)` words
 *
 * @example
 * ```ts
 * import { packF16 } from "@xpu/ops";
 * packF16(new Float32Array([1, -2, 0.5])); // [0xc0003c00, 0x3800]
 * ```
 */
export function packF16(x: Float32Array): Uint32Array {
  requireArray("packF16", "x", x, "Float32Array");
  const bits = new Uint32Array(x.buffer, x.byteOffset, x.length);
  const words = new Uint32Array(Math.ceil(x.length / 2));
  for (let e = 0; e < x.length; e++) words[e >> 1] |= halfBits(bits[e]) << (16 * (e & 1));
  return words;
}

/**
 * Reads `length` binary16 values packed by {@link packF16}: every half is exact in f32.
 *
 * @param words the packed values, at least `ceil(length / 2)` words
 * @param length how many values
 * @returns a new Float32Array of `length` values
 *
 * @example
 * ```ts
 * import { unpackF16 } from "@xpu/ops";
 * unpackF16(new Uint32Array([0xc0003c00, 0x3800]), 3); // [1, -2, 0.5]
 * ```
 */
export function unpackF16(words: Uint32Array, length: number): Float32Array {
  requireInt("unpackF16", "length", length);
  requireArray("unpackF16", "words", words, "Uint32Array");
  if (words.length < Math.ceil(length / 2)) {
    throw new Error(
      `unpackF16: words must have length >= ceil(length / 2) = ${Math.ceil(length / 2)}, got ${words.length}`,
    );
  }
  const out = new Float32Array(length);
  for (let e = 0; e < length; e++) out[e] = halfValue((words[e >> 1] >>> (16 * (e & 1))) & 0xffff);
  return out;
}

/** Decodes a packed `[N, K]` weight to its f64 values, `code * scaleOf(n, k)`, row-major. */
function dequantizeRows(
  weight: Uint32Array,
  N: number,
  K: number,
  bits: 8 | 4,
  scaleOf: (n: number, k: number) => number,
): Float64Array {
  const perWord = 32 / bits;
  const wordsPerRow = Math.ceil(K / perWord);
  const levels = 2 ** bits;
  const values = new Float64Array(N * K);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      const word = weight[n * wordsPerRow + Math.floor(k / perWord)];
      const unsigned = Math.floor(word / 2 ** (bits * (k % perWord))) % levels;
      const code = unsigned >= levels / 2 ? unsigned - levels : unsigned;
      values[n * K + k] = code * scaleOf(n, k);
    }
  }
  return values;
}

/** The logistic sigmoid 1 / (1 + e^-v), without overflow for any v. */
function sigmoid(v: number): number {
  const e = Math.exp(-Math.abs(v));
  return v >= 0 ? 1 / (1 + e) : e / (1 + e);
}

/** An activation in f64 (ops/activation's definitions; torch's `F.gelu`, `F.gelu(approximate="tanh")`, `F.silu`). */
function activate(kind: MatmulActivation, v: number): number {
  switch (kind) {
    case "gelu":
      // Phi(v) = erfc(-v / sqrt 2) / 2 keeps its precision where 1 + erf(v / sqrt 2) cancels.
      return v * 0.5 * erfc(-v / Math.SQRT2);
    case "gelu_tanh":
      // (1 + tanh(u)) / 2 is sigmoid(2u), which does not cancel for negative u.
      return v * sigmoid(2 * Math.sqrt(2 / Math.PI) * (v + 0.044715 * v * v * v));
    case "silu":
      return v * sigmoid(v);
  }
}

/**
 * The fused epilogue of the products' references, applied to a product `y` `[M, N]` given in f64:
 * each output's chain (`+ bias[n]`, the activation, `x gate[floor(m / gateRows), n]`, `c[m, n] +`,
 * each step only where its argument is given, as the module doc says) evaluated in f64 and rounded
 * to f32 once. Every reference but `matmulF16`'s ends with it (the dp4a ones too), so all of them
 * share one definition of the epilogue.
 *
 * @param y the product, `[M, N]` row-major, f64
 * @param args `M`, `N` and the epilogue's arguments ({@link MatmulEpilogueArgs}); other fields (the
 *   operands, `K`) are ignored
 * @returns a new Float32Array `[M, N]`
 * @throws Error naming the bad argument, as the products' validation does
 *
 * @example
 * ```ts
 * import { applyEpilogue } from "@xpu/ops/ops/matmul";
 * const y = new Float64Array([1, -2]); // [M = 1, N = 2]
 * applyEpilogue(y, { M: 1, N: 2, bias: new Float32Array([1, 2]), accumulate: true, c: new Float32Array([10, 10]) }); // [12, 10]
 * ```
 */
export function applyEpilogue(
  y: Float64Array,
  args: Pick<MatmulShape, "M" | "N"> & MatmulEpilogueArgs,
): Float32Array {
  const op = "applyEpilogue";
  requireArgs(op, "args", args, "{ M, N }");
  const M = requireInt(op, "M", args.M, 1, U32_MAX);
  const N = requireInt(op, "N", args.N, 1, U32_MAX);
  if (!(y instanceof Float64Array) || y.length !== M * N) {
    const got = y instanceof Float64Array
      ? `length ${y.length}`
      : y === null || typeof y !== "object"
      ? shown(y)
      : (y as object).constructor.name;
    throw new Error(`${op}: y must be a Float64Array of length M * N = ${M * N}, got ${got}`);
  }
  requireEpilogueArgs(op, { ...args, K: 1 });
  const { bias, activation, gate, gateRows, c } = args;
  const out = new Float32Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let v = y[m * N + n];
      if (bias) v += bias[n];
      if (activation) v = activate(activation, v);
      if (gate && gateRows) v *= gate[Math.floor(m / gateRows) * N + n];
      if (args.accumulate && c) v += c[m * N + n];
      out[m * N + n] = v;
    }
  }
  return out;
}

/**
 * `y[m, n] = sum_k a[m, k] * w[n, k]` in f64, then {@link applyEpilogue} (the epilogue of `args` in
 * f64, rounded to f32 once).
 */
function linear(
  a: Float32Array,
  w: Float64Array,
  args: MatmulShape & MatmulEpilogueArgs,
): Float32Array {
  const { M, N, K } = args;
  const y = new Float64Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let v = 0;
      for (let k = 0; k < K; k++) v += a[m * K + k] * w[n * K + k];
      y[m * N + n] = v;
    }
  }
  return applyEpilogue(y, args);
}

/**
 * `a @ b`, as `torch.mm`, and an optional fused epilogue (see the module doc).
 *
 * @param args `a` `[M, K]`, `b` `[K, N]`, the shape and the epilogue's arguments
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmul } from "@xpu/ops";
 * const a = new Float32Array([1, 2, 3, 4]);
 * const b = new Float32Array([5, 6, 7, 8]);
 * matmul({ a, b, M: 2, N: 2, K: 2 }); // [19, 22, 43, 50]
 * // Two batch items of one token (gateRows 1): row m times gate row m, added to c.
 * const gate = new Float32Array([1, 1, 0, 0]);
 * matmul({ a, b, M: 2, N: 2, K: 2, gate, gateRows: 1, accumulate: true, c: new Float32Array([1, 1, 1, 1]) }); // [20, 23, 1, 1]
 * ```
 */
export function matmul(args: MatmulArgs): Float32Array {
  validateMatmul(args);
  const { a, b, N, K } = args;
  const bTransposed = new Float64Array(N * K);
  for (let k = 0; k < K; k++) {
    for (let n = 0; n < N; n++) bTransposed[n * K + k] = b[k * N + n];
  }
  return linear(a, bTransposed, args);
}

/**
 * `a @ weight^T` with an f32 weight in a Linear layer's orientation `[N, K]`, as `F.linear(a,
 * weight)`, and an optional fused epilogue (see the module doc).
 *
 * @param args activations `[M, K]`, the weight `[N, K]`, the shape and the epilogue's arguments
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulLinear } from "@xpu/ops";
 * const a = new Float32Array([1, 2, 3, 4]); // [M = 2, K = 2]
 * const weight = new Float32Array([5, 6, 7, 8]); // [N = 2, K = 2]: rows (5, 6) and (7, 8)
 * matmulLinear({ a, weight, M: 2, N: 2, K: 2 }); // [17, 23, 39, 53]
 * matmulLinear({ a, weight, M: 2, N: 2, K: 2, bias: new Float32Array([1, -1]), activation: "silu" });
 * ```
 */
export function matmulLinear(args: MatmulLinearArgs): Float32Array {
  validateMatmulLinear(args);
  return linear(args.a, Float64Array.from(args.weight), args);
}

/**
 * `a @ dequant(weight)^T` with an int8 weight and one scale per weight row, as
 * `F.linear(a, codes * scale[:, None])`, and an optional fused epilogue (see the module doc).
 *
 * @param args activations `[M, K]`, the packed `[N, K]` weight, `scale[N]`, the shape and the
 *   epilogue's arguments
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulQ8 } from "@xpu/ops";
 * // codes [1, 2, 3, 4] in one word (least-significant byte first), scale 0.5, a = [1, 1, 1, 1]
 * matmulQ8({ a: new Float32Array([1, 1, 1, 1]), weight: new Uint32Array([0x04030201]), scales: new Float32Array([0.5]), M: 1, N: 1, K: 4 }); // [5]
 * ```
 */
export function matmulQ8(args: MatmulQ8Args): Float32Array {
  validateMatmulQ8(args);
  const w = dequantizeRows(args.weight, args.N, args.K, 8, (n) => args.scales[n]);
  return linear(args.a, w, args);
}

/**
 * `a @ dequant(weight)^T` with an int4 weight and one scale per group of 128 columns of each
 * weight row, as `F.linear(a, codes * scales.repeat_interleave(128, 1)[:, :K])`, and an optional
 * fused epilogue (see the module doc).
 *
 * @param args activations `[M, K]`, the packed `[N, K]` weight, `scales[N, ceil(K/128)]`, the shape
 *   and the epilogue's arguments
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulQ4G128 } from "@xpu/ops";
 * // codes [1, -1] (nibbles 0x1, 0xF, least-significant first), scale 2, a = [3, 1]
 * matmulQ4G128({ a: new Float32Array([3, 1]), weight: new Uint32Array([0xf1]), scales: new Float32Array([2]), M: 1, N: 1, K: 2 }); // [4]
 * ```
 */
export function matmulQ4G128(args: MatmulQ4G128Args): Float32Array {
  validateMatmulQ4G128(args);
  const groups = Math.ceil(args.K / Q4_GROUP);
  const w = dequantizeRows(
    args.weight,
    args.N,
    args.K,
    4,
    (n, k) => args.scales[n * groups + Math.floor(k / Q4_GROUP)],
  );
  return linear(args.a, w, args);
}

/**
 * `a @ b` with both operands stored as halves: decoded exactly, then {@link matmul}.
 *
 * @param args `a` `[M, K]` and `b` `[K, N]` packed by {@link packF16}, and the shape
 * @returns a new Float32Array `[M, N]`
 *
 * @example
 * ```ts
 * import { matmulF16, packF16 } from "@xpu/ops";
 * const a = packF16(new Float32Array([1, 2, 3, 4]));
 * const b = packF16(new Float32Array([5, 6, 7, 8]));
 * matmulF16({ a, b, M: 2, N: 2, K: 2 }); // [19, 22, 43, 50]
 * ```
 */
export function matmulF16(args: MatmulF16Args): Float32Array {
  validateMatmulF16(args);
  const { M, N, K } = args;
  return matmul({ a: unpackF16(args.a, M * K), b: unpackF16(args.b, K * N), M, N, K });
}
