/**
 * Reference for the transposed convolution: what correct means, in plain TypeScript.
 *
 * {@link convTranspose1d} is `torch.nn.functional.conv_transpose1d(x, weight, bias, stride, padding,
 * output_padding, groups, dilation)`, the adjoint of conv1d (what a DAC-style decoder upsamples
 * with):
 *
 * - Every input element scatters into the output: `x[n, ci, s] * weight[ci, co, k]` adds to
 *   `out[n, g * (Cout / groups) + co, s * stride - padding + k * dilation]`, for ci in group g and co
 *   in `[0, Cout / groups)`. The kernel is not flipped relative to this definition (the same
 *   convention as torch; a flipped kernel gives a different result, pinned by a test).
 * - `weight` is `[Cin, Cout / groups, K]`: input channels first, the transpose of conv1d's layout.
 * - `padding` crops `padding` positions from both ends of the full result instead of adding zeros;
 *   `outputPadding` (torch's `output_padding`) lengthens the trailing end only, those positions
 *   receiving nothing but the bias:
 *   `Lout = (L - 1) * stride - 2 * padding + dilation * (K - 1) + outputPadding + 1`.
 * - `outputPadding` must be smaller than stride or than dilation, as torch requires; Cin and Cout
 *   must be multiples of groups; Lout must be at least 1.
 *
 * Sums are in f64 and each output is rounded to f32 once.
 *
 * @module
 */

import { I32_MAX, requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = [
  "x",
  "weight",
  "bias",
  "N",
  "Cin",
  "Cout",
  "L",
  "kernelSize",
  "stride",
  "padding",
  "outputPadding",
  "dilation",
  "groups",
];

/** The sizes and arguments of {@link convTranspose1d}: `x` is `[N, Cin, L]`. */
export interface ConvTranspose1dShape {
  /** Batch (>= 1). */
  N: number;
  /** Input channels (>= 1), a multiple of groups. */
  Cin: number;
  /** Output channels (>= 1), a multiple of groups. */
  Cout: number;
  /** Input length (>= 1). */
  L: number;
  /** Kernel length K; the weight is `[Cin, Cout / groups, K]`. */
  kernelSize: number;
  /** Output step per input position, >= 1 (default 1). */
  stride?: number;
  /** Positions cropped from both ends, >= 0 (default 0). */
  padding?: number;
  /** Extra positions at the trailing end only, smaller than stride or dilation (default 0). */
  outputPadding?: number;
  /** Spacing between kernel taps, >= 1 (default 1). */
  dilation?: number;
  /** Channel groups, >= 1, dividing Cin and Cout (default 1). */
  groups?: number;
}

/** Arguments of {@link convTranspose1d}. */
export interface ConvTranspose1dArgs extends ConvTranspose1dShape {
  /** Input, `[N, Cin, L]` row-major. */
  x: Float32Array;
  /** Kernel, `[Cin, Cout / groups, K]` row-major. */
  weight: Float32Array;
  /** Optional per-output-channel bias, `[Cout]`. */
  bias?: Float32Array;
}

/** A validated transposed convolution, every argument explicit, with its output length. */
export interface ConvTranspose1dGeometry {
  /** Batch. */
  N: number;
  /** Input channels. */
  Cin: number;
  /** Output channels. */
  Cout: number;
  /** Input length. */
  L: number;
  /** Kernel taps. */
  K: number;
  /** Output step per input position. */
  stride: number;
  /** Positions cropped from both ends. */
  padding: number;
  /** Extra positions at the trailing end. */
  outputPadding: number;
  /** Tap spacing. */
  dilation: number;
  /** Channel groups. */
  groups: number;
  /** Output length. */
  Lout: number;
}

const OP = "convTranspose1d";
const SHAPE_FIELDS = "N, Cin, Cout, L, kernelSize, stride?, padding?, outputPadding?, dilation?, groups?";

/**
 * Validates {@link convTranspose1d}'s sizes and arguments and derives the output length.
 *
 * @param shape the sizes and arguments
 * @returns the geometry
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateConvTranspose1dShape } from "@xpu/ops/ops/conv_transpose";
 * // (L - 1) * stride - 2 * padding + dilation * (kernelSize - 1) + outputPadding + 1 outputs:
 * validateConvTranspose1dShape({ N: 1, Cin: 8, Cout: 4, L: 32, kernelSize: 16, stride: 8, padding: 4 }).Lout; // 256
 * ```
 */
export function validateConvTranspose1dShape(shape: ConvTranspose1dShape): ConvTranspose1dGeometry {
  requireArgs(OP, "shape", shape, `{ ${SHAPE_FIELDS} }`, KEYS);
  const N = requireInt(OP, "N", shape.N, 1, U32_MAX);
  const Cin = requireInt(OP, "Cin", shape.Cin, 1, U32_MAX);
  const Cout = requireInt(OP, "Cout", shape.Cout, 1, U32_MAX);
  const L = requireInt(OP, "L", shape.L, 1, U32_MAX);
  const K = requireInt(OP, "kernelSize", shape.kernelSize, 1, I32_MAX);
  const stride = requireInt(OP, "stride", shape.stride ?? 1, 1, I32_MAX);
  const padding = requireInt(OP, "padding", shape.padding ?? 0, 0, I32_MAX);
  const outputPadding = requireInt(OP, "outputPadding", shape.outputPadding ?? 0, 0, I32_MAX);
  const dilation = requireInt(OP, "dilation", shape.dilation ?? 1, 1, I32_MAX);
  const groups = requireInt(OP, "groups", shape.groups ?? 1, 1, U32_MAX);
  if (Cin % groups !== 0 || Cout % groups !== 0) {
    throw new Error(
      `${OP}: Cin and Cout must be divisible by groups, got Cin = ${Cin}, Cout = ${Cout}, groups = ${groups}`,
    );
  }
  if (outputPadding >= stride && outputPadding >= dilation) {
    throw new Error(
      `${OP}: outputPadding must be smaller than stride or dilation, got outputPadding = ${outputPadding}, stride = ${stride}, dilation = ${dilation}`,
    );
  }
  const Lout = (L - 1) * stride - 2 * padding + dilation * (K - 1) + outputPadding + 1;
  if (Lout < 1) throw new Error(`${OP}: padding ${padding} crops the whole output (its length would be ${Lout})`);
  return { N, Cin, Cout, L, K, stride, padding, outputPadding, dilation, groups, Lout };
}

/**
 * Validates {@link convTranspose1d}'s arguments.
 *
 * @param args the arguments
 * @returns the geometry
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { validateConvTranspose1d } from "@xpu/ops/ops/conv_transpose";
 * const x = new Float32Array([1, 10]);
 * validateConvTranspose1d({ x, weight: new Float32Array([1, 2, 3]), N: 1, Cin: 1, Cout: 1, L: 2, kernelSize: 3, stride: 2 }).Lout; // 5
 * ```
 */
export function validateConvTranspose1d(args: ConvTranspose1dArgs): ConvTranspose1dGeometry {
  requireArgs(OP, "args", args, `{ x, weight, bias?, ${SHAPE_FIELDS} }`, KEYS);
  const g = validateConvTranspose1dShape(args);
  requireArray(OP, "x", args.x, "Float32Array", [g.N * g.Cin * g.L, "N * Cin * L"]);
  requireArray(OP, "weight", args.weight, "Float32Array", [
    g.Cin * (g.Cout / g.groups) * g.K,
    "Cin * Cout / groups * K",
  ]);
  if (args.bias !== undefined) requireArray(OP, "bias", args.bias, "Float32Array", [g.Cout, "Cout"]);
  return g;
}

/**
 * `torch.nn.functional.conv_transpose1d(x, weight, bias, stride, padding, output_padding, groups, dilation)`.
 *
 * @param args input `[N, Cin, L]`, weight `[Cin, Cout / groups, K]`, optional bias and the arguments
 * @returns `[N, Cout, Lout]`
 *
 * @example
 * ```ts
 * import { convTranspose1d } from "@xpu/ops/ops/conv_transpose";
 * // Stride 2 upsampling with a [1, 2, 3] kernel: each input lays the kernel down at 2 s.
 * const x = new Float32Array([1, 10]);
 * convTranspose1d({ x, weight: new Float32Array([1, 2, 3]), N: 1, Cin: 1, Cout: 1, L: 2, kernelSize: 3, stride: 2 });
 * // [1, 2, 13, 20, 30]
 * ```
 */
export function convTranspose1d(args: ConvTranspose1dArgs): Float32Array {
  const g = validateConvTranspose1d(args);
  const { x, weight, bias } = args;
  const inPerGroup = g.Cin / g.groups, outPerGroup = g.Cout / g.groups;
  const sums = new Float64Array(g.N * g.Cout * g.Lout);
  for (let n = 0; n < g.N; n++) {
    for (let ci = 0; ci < g.Cin; ci++) {
      const group = Math.floor(ci / inPerGroup);
      for (let s = 0; s < g.L; s++) {
        const value = x[(n * g.Cin + ci) * g.L + s];
        for (let co = 0; co < outPerGroup; co++) {
          const row = (n * g.Cout + group * outPerGroup + co) * g.Lout;
          for (let k = 0; k < g.K; k++) {
            const t = s * g.stride - g.padding + k * g.dilation;
            if (t >= 0 && t < g.Lout) sums[row + t] += value * weight[(ci * outPerGroup + co) * g.K + k];
          }
        }
      }
    }
  }
  const out = new Float32Array(sums.length);
  for (let i = 0; i < sums.length; i++) out[i] = sums[i] + (bias ? bias[Math.floor(i / g.Lout) % g.Cout] : 0);
  return out;
}
