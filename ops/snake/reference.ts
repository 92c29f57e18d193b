/**
 * Reference for snake: what correct means, in plain TypeScript.
 *
 * Two functions over `x` `[N, C, L]`, each with learned per-channel parameters (length C):
 *
 * - {@link snake}: `out = x + sin(alpha[c] * x)^2 / (alpha[c] + 1e-9)`, the Snake activation
 *   (arXiv:2006.08195) as DAC's / DACVAE's `Snake1d`
 *   (`x + (alpha + 1e-9).reciprocal() * torch.sin(alpha * x).pow(2)`).
 * - {@link snakeBeta}: `out = x + sin(alpha[c] * x)^2 / (beta[c] + 1e-9)`, BigVGAN's `SnakeBeta`
 *   (`x + 1.0 / (beta + 0.000000001) * pow(sin(x * alpha), 2)`), MioCodec's decoder activation.
 *   beta = alpha gives {@link snake}.
 *
 * The epsilon is upstream's, {@link SNAKE_EPS} = 1e-9, inside the reciprocal: it guards the divisor,
 * so a channel whose divisor is 0 gives `x + sin(alpha x)^2 * 1e9`, finite, not Infinity or NaN.
 * Neither function exponentiates its parameters: BigVGAN stores log(alpha) and log(beta)
 * (`alpha_logscale=True`) and applies `exp` in its forward, while DACVAE stores the values; a
 * checkpoint's tensor does not say which, so that `exp` is the caller's job, done once when the
 * weights are loaded.
 *
 * Why its own op rather than an activation kind: alpha (and beta) are tensors read with a channel
 * stride (element i of `x` takes channel `floor(i / L) % C`), not a scalar hyperparameter like elu's
 * alpha, so the kernel needs the layout `[N, C, L]` and a binding per parameter.
 *
 * Each value is computed in f64 and rounded to f32 once. NaN and ±Infinity propagate as torch's: NaN
 * or ±Infinity in x gives NaN (the sine of an infinity is NaN), in alpha makes its channel NaN; NaN in
 * beta makes its channel NaN and ±Infinity in beta leaves the channel's x as it is (1 / inf is 0).
 * Refused: sizes that are not integers >= 1 and arrays of the wrong type or length.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** Upstream's epsilon inside the reciprocal (DAC's `1e-9`, BigVGAN's `no_div_by_zero = 0.000000001`). */
export const SNAKE_EPS = 1e-9;

/** The sizes of a snake call: `x` is `[N, C, L]`. */
export interface SnakeShape {
  /** Batch (>= 1). */
  N: number;
  /** Channels, the length of `alpha` (and `beta`) (>= 1). */
  C: number;
  /** Length of each channel's row (>= 1). */
  L: number;
}

/** Arguments of {@link snake}. */
export interface SnakeArgs extends SnakeShape {
  /** Input, `[N, C, L]` row-major. */
  x: Float32Array;
  /** Per-channel frequency, `[C]`, as stored values (not logarithms). */
  alpha: Float32Array;
}

/** Arguments of {@link snakeBeta}. */
export interface SnakeBetaArgs extends SnakeArgs {
  /** Per-channel divisor, `[C]`, as stored values (not logarithms). */
  beta: Float32Array;
}

/**
 * Validates a snake shape.
 *
 * @param shape `N`, `C`, `L`
 * @throws Error naming the bad size
 *
 * @example
 * ```ts
 * import { validateSnakeShape } from "@xpu/ops/ops/snake";
 * validateSnakeShape({ N: 1, C: 512, L: 16384 }); // passes
 * ```
 */
export function validateSnakeShape(shape: SnakeShape): void {
  requireArgs("snake", "shape", shape, "{ N, C, L }", ["x", "alpha", "beta", "N", "C", "L"]);
  requireInt("snake", "N", shape.N, 1, U32_MAX);
  requireInt("snake", "C", shape.C, 1, U32_MAX);
  requireInt("snake", "L", shape.L, 1, U32_MAX);
}

/**
 * Validates {@link snake}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateSnake } from "@xpu/ops/ops/snake";
 * validateSnake({ x: new Float32Array(6), alpha: new Float32Array([1, 2]), N: 1, C: 2, L: 3 }); // passes
 * ```
 */
export function validateSnake(args: SnakeArgs): void {
  requireArgs("snake", "args", args, "{ x, alpha, N, C, L }", ["x", "alpha", "N", "C", "L"]);
  checkSnakeArrays(args);
}

/** The shape, `x` and `alpha` of either form (snakeBeta checks its own keys first). */
function checkSnakeArrays(args: SnakeArgs): void {
  validateSnakeShape(args);
  requireArray("snake", "x", args.x, "Float32Array", [args.N * args.C * args.L, "N * C * L"]);
  requireArray("snake", "alpha", args.alpha, "Float32Array", [args.C, "C"]);
}

/**
 * Validates {@link snakeBeta}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateSnakeBeta } from "@xpu/ops/ops/snake";
 * const alpha = new Float32Array([1, 2]), beta = new Float32Array([1, 0]);
 * validateSnakeBeta({ x: new Float32Array(6), alpha, beta, N: 1, C: 2, L: 3 }); // passes: beta = 0 is allowed
 * ```
 */
export function validateSnakeBeta(args: SnakeBetaArgs): void {
  requireArgs("snake", "args", args, "{ x, alpha, beta, N, C, L }", ["x", "alpha", "beta", "N", "C", "L"]);
  checkSnakeArrays(args);
  requireArray("snake", "beta", args.beta, "Float32Array", [args.C, "C"]);
}

function apply(args: SnakeArgs, divisor: Float32Array): Float32Array {
  const { x, alpha, N, C, L } = args;
  const out = new Float32Array(N * C * L);
  for (let n = 0; n < N; n++) {
    for (let c = 0; c < C; c++) {
      const a = alpha[c];
      const reciprocal = 1 / (divisor[c] + SNAKE_EPS);
      for (let l = 0; l < L; l++) {
        const i = (n * C + c) * L + l;
        out[i] = x[i] + Math.sin(a * x[i]) ** 2 * reciprocal;
      }
    }
  }
  return out;
}

/**
 * Snake1d: `x + sin(alpha[c] x)^2 / (alpha[c] + 1e-9)` over `x` `[N, C, L]`.
 *
 * @param args input, per-channel alpha and the shape
 * @returns a new Float32Array of length N * C * L
 *
 * @example
 * ```ts
 * import { snake } from "@xpu/ops/ops/snake";
 * // sin(1 * pi/2)^2 / 1 = 1, so pi/2 maps to pi/2 + 1.
 * snake({ x: new Float32Array([Math.PI / 2]), alpha: new Float32Array([1]), N: 1, C: 1, L: 1 });
 * ```
 */
export function snake(args: SnakeArgs): Float32Array {
  validateSnake(args);
  return apply(args, args.alpha);
}

/**
 * SnakeBeta: `x + sin(alpha[c] x)^2 / (beta[c] + 1e-9)` over `x` `[N, C, L]`.
 *
 * @param args input, per-channel alpha and beta and the shape
 * @returns a new Float32Array of length N * C * L
 *
 * @example
 * ```ts
 * import { snakeBeta } from "@xpu/ops/ops/snake";
 * // sin(1 * pi/2)^2 / 2 = 0.5.
 * const one = new Float32Array([1]);
 * snakeBeta({ x: new Float32Array([Math.PI / 2]), alpha: one, beta: new Float32Array([2]), N: 1, C: 1, L: 1 });
 * ```
 */
export function snakeBeta(args: SnakeBetaArgs): Float32Array {
  validateSnakeBeta(args);
  return apply(args, args.beta);
}
