/**
 * Reference for convolution: what correct means, in plain TypeScript.
 *
 * {@link conv1d}, {@link conv2d} and {@link conv3d} are `torch.nn.functional.conv1d` / `conv2d` /
 * `conv3d(x, weight, bias, stride, padding, dilation, groups)`:
 *
 * - A cross-correlation: `out[n, co, o] = bias[co] + sum over ci in co's group and kernel position k
 *   of x[n, ci, o * stride - padding + k * dilation] * weight[co, ci - group start, k]`, per axis;
 *   the kernel is not flipped, on any axis.
 * - Layouts are torch's: `x` `[N, Cin, L]`, `[N, Cin, H, W]` or `[N, Cin, D, H, W]`; `weight`
 *   `[Cout, Cin / groups, ...kernel]`; `bias` `[Cout]`, optional; `out` `[N, Cout, ...out]` with
 *   `out = floor((in + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1` per axis.
 * - The spatial arguments (`kernelSize`, `stride`, `padding`, `dilation`) take a number (the same on
 *   every axis) or a tuple in torch's order: `[H, W]` and `[D, H, W]`.
 * - `padding` is an integer count of zeros on both sides of an axis. torch's `'same'` / `'valid'`
 *   strings are refused: `'same'` with an even effective kernel pads asymmetrically, which one count
 *   per axis cannot say. There is no `padding_mode`: reflect or causal padding is ops/pad's job.
 * - `groups` splits the channels: output channel co sees input channels
 *   `floor(co / (Cout / groups)) * (Cin / groups)` onwards; Cin and Cout must both be multiples of
 *   groups (as torch). groups = Cin = Cout is a depthwise convolution.
 *
 * Sums are in f64 and each output is rounded to f32 once. NaN and ±Infinity propagate as torch's: the
 * padding is zeros multiplied by the weight like any input, so an infinite weight tap gives NaN (0 *
 * inf) at each output whose window reaches the padding, and a NaN tap makes its output channel NaN
 * throughout; a NaN or infinity in x reaches only the outputs whose window covers it.
 *
 * @module
 */

import { I32_MAX, requireArgs, requireArray, requireInt, shown, U32_MAX } from "../validate.ts";

/** The keys every convolution's shape or arguments may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const COMMON_KEYS: readonly string[] = [
  "x",
  "weight",
  "bias",
  "N",
  "Cin",
  "Cout",
  "kernelSize",
  "stride",
  "padding",
  "dilation",
  "groups",
];
/** conv1d's keys. */
const KEYS_1D: readonly string[] = [...COMMON_KEYS, "L"];
/** conv2d's keys. */
const KEYS_2D: readonly string[] = [...COMMON_KEYS, "H", "W"];
/** conv3d's keys. */
const KEYS_3D: readonly string[] = [...COMMON_KEYS, "D", "H", "W"];

/** A spatial argument: one number for every axis, or one per axis in torch's order. */
export type Spatial<T extends number[]> = number | T;

/** The channel and convolution arguments every rank shares. */
export interface ConvCommon<T extends number[]> {
  /** Batch (>= 1). */
  N: number;
  /** Input channels (>= 1), a multiple of groups. */
  Cin: number;
  /** Output channels (>= 1), a multiple of groups. */
  Cout: number;
  /** The kernel's spatial size; the weight is `[Cout, Cin / groups, ...kernelSize]`. */
  kernelSize: Spatial<T>;
  /** Step between output positions, >= 1 (default 1). */
  stride?: Spatial<T>;
  /** Zeros added on both sides of each axis, >= 0 (default 0). An integer count: no 'same'/'valid'. */
  padding?: Spatial<T>;
  /** Spacing between kernel taps, >= 1 (default 1). */
  dilation?: Spatial<T>;
  /** Channel groups, >= 1, dividing Cin and Cout (default 1). */
  groups?: number;
}

/** The sizes and arguments of {@link conv1d}: `x` is `[N, Cin, L]`. */
export interface Conv1dShape extends ConvCommon<[number]> {
  /** Input length (>= 1). */
  L: number;
}
/** The sizes and arguments of {@link conv2d}: `x` is `[N, Cin, H, W]`. */
export interface Conv2dShape extends ConvCommon<[number, number]> {
  /** Input height (>= 1). */
  H: number;
  /** Input width (>= 1). */
  W: number;
}
/** The sizes and arguments of {@link conv3d}: `x` is `[N, Cin, D, H, W]`. */
export interface Conv3dShape extends ConvCommon<[number, number, number]> {
  /** Input depth (>= 1). */
  D: number;
  /** Input height (>= 1). */
  H: number;
  /** Input width (>= 1). */
  W: number;
}

/** The arrays of a convolution. */
export interface ConvArrays {
  /** Input, `[N, Cin, ...spatial]` row-major. */
  x: Float32Array;
  /** Kernel, `[Cout, Cin / groups, ...kernelSize]` row-major. */
  weight: Float32Array;
  /** Optional per-output-channel bias, `[Cout]`. */
  bias?: Float32Array;
}
/** Arguments of {@link conv1d}. */
export interface Conv1dArgs extends Conv1dShape, ConvArrays {}
/** Arguments of {@link conv2d}. */
export interface Conv2dArgs extends Conv2dShape, ConvArrays {}
/** Arguments of {@link conv3d}. */
export interface Conv3dArgs extends Conv3dShape, ConvArrays {}

/**
 * A validated convolution of any rank, every spatial argument as one number per axis (outermost
 * first), with the output's spatial size.
 */
export interface ConvGeometry {
  /** `conv1d`, `conv2d` or `conv3d`, for messages. */
  op: string;
  /** Batch. */
  N: number;
  /** Input channels. */
  Cin: number;
  /** Output channels. */
  Cout: number;
  /** Channel groups. */
  groups: number;
  /** Input spatial size per axis. */
  input: number[];
  /** Kernel size per axis. */
  kernel: number[];
  /** Stride per axis. */
  stride: number[];
  /** Zeros on each side, per axis. */
  padding: number[];
  /** Tap spacing per axis. */
  dilation: number[];
  /** Output spatial size per axis. */
  output: number[];
}

/** The fields every rank shares, for the message of a missing argument. */
const COMMON_FIELDS = "kernelSize, stride?, padding?, dilation?, groups?";

const AXES: Record<number, string[]> = { 1: ["L"], 2: ["H", "W"], 3: ["D", "H", "W"] };

/** A spatial argument per axis; `fallback` is its default, none for a required one (kernelSize). */
function spatial(op: string, name: string, value: unknown, rank: number, min: number, fallback?: number): number[] {
  const given = value ?? fallback;
  const expected = `a number or an array of ${rank} numbers`;
  if (given === undefined) throw new Error(`${op}: ${name} is required: ${expected}, got undefined`);
  if (typeof given === "string") {
    throw new Error(`${op}: ${name} must be an integer count (or one per axis); "${given}" is not accepted`);
  }
  const values = typeof given === "number" ? Array(rank).fill(given) : given;
  if (!Array.isArray(values) || values.length !== rank) {
    throw new Error(`${op}: ${name} must be ${expected}, got ${shown(given)}`);
  }
  return values.map((v, i) => requireInt(op, rank === 1 ? name : `${name}[${i}]`, v, min, I32_MAX));
}

/**
 * Validates a convolution's sizes and arguments and derives its output size.
 *
 * @param op `conv1d`, `conv2d` or `conv3d`
 * @param shape the sizes and arguments
 * @param input the input's spatial size per axis, in torch's order
 * @returns the geometry, every spatial argument per axis
 * @throws Error naming the bad argument, what was expected and what was given
 *
 * @example
 * ```ts
 * import { convGeometry } from "@xpu/ops/ops/conv";
 * const g = convGeometry("conv2d", { N: 1, Cin: 3, Cout: 8, kernelSize: 3, stride: 2, padding: 1 }, [32, 32]);
 * g.output; // [16, 16]: floor((32 + 2 - 2 - 1) / 2) + 1 per axis
 * ```
 */
export function convGeometry(op: string, shape: ConvCommon<number[]>, input: number[]): ConvGeometry {
  const rank = input.length;
  const N = requireInt(op, "N", shape.N, 1, U32_MAX);
  const Cin = requireInt(op, "Cin", shape.Cin, 1, U32_MAX);
  const Cout = requireInt(op, "Cout", shape.Cout, 1, U32_MAX);
  const groups = requireInt(op, "groups", shape.groups ?? 1, 1, U32_MAX);
  input.forEach((size, i) => requireInt(op, AXES[rank][i], size, 1, U32_MAX));
  if (Cin % groups !== 0 || Cout % groups !== 0) {
    throw new Error(
      `${op}: Cin and Cout must be divisible by groups, got Cin = ${Cin}, Cout = ${Cout}, groups = ${groups}`,
    );
  }
  const kernel = spatial(op, "kernelSize", shape.kernelSize, rank, 1);
  const stride = spatial(op, "stride", shape.stride, rank, 1, 1);
  const padding = spatial(op, "padding", shape.padding, rank, 0, 0);
  const dilation = spatial(op, "dilation", shape.dilation, rank, 1, 1);
  const output = input.map((size, i) =>
    Math.floor((size + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1) / stride[i]) + 1
  );
  output.forEach((size, i) => {
    if (size < 1) {
      throw new Error(
        `${op}: kernelSize (${kernel[i]}, dilation ${dilation[i]}) is larger than the padded input along ${
          AXES[rank][i]
        } (${input[i]} + 2 * ${padding[i]}): the output would be empty`,
      );
    }
  });
  return { op, N, Cin, Cout, groups, input, kernel, stride, padding, dilation, output };
}

/**
 * Validates {@link conv1d}'s sizes and arguments.
 *
 * @param shape the sizes and arguments
 * @returns the geometry
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateConv1dShape } from "@xpu/ops/ops/conv";
 * validateConv1dShape({ N: 1, Cin: 4, Cout: 8, L: 100, kernelSize: 7, dilation: 2 }).output; // [88]
 * ```
 */
export function validateConv1dShape(shape: Conv1dShape): ConvGeometry {
  requireArgs("conv1d", "shape", shape, `{ N, Cin, Cout, L, ${COMMON_FIELDS} }`, KEYS_1D);
  return convGeometry("conv1d", shape as ConvCommon<number[]>, [shape.L]);
}
/**
 * Validates {@link conv2d}'s sizes and arguments.
 *
 * @param shape the sizes and arguments
 * @returns the geometry
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateConv2dShape } from "@xpu/ops/ops/conv";
 * validateConv2dShape({ N: 2, Cin: 4, Cout: 8, H: 10, W: 12, kernelSize: [3, 5] }).output; // [8, 8]
 * ```
 */
export function validateConv2dShape(shape: Conv2dShape): ConvGeometry {
  requireArgs("conv2d", "shape", shape, `{ N, Cin, Cout, H, W, ${COMMON_FIELDS} }`, KEYS_2D);
  return convGeometry("conv2d", shape as ConvCommon<number[]>, [shape.H, shape.W]);
}
/**
 * Validates {@link conv3d}'s sizes and arguments.
 *
 * @param shape the sizes and arguments
 * @returns the geometry
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateConv3dShape } from "@xpu/ops/ops/conv";
 * validateConv3dShape({ N: 1, Cin: 2, Cout: 2, D: 4, H: 8, W: 8, kernelSize: 3, padding: [1, 0, 0] }).output; // [4, 6, 6]
 * ```
 */
export function validateConv3dShape(shape: Conv3dShape): ConvGeometry {
  requireArgs("conv3d", "shape", shape, `{ N, Cin, Cout, D, H, W, ${COMMON_FIELDS} }`, KEYS_3D);
  return convGeometry("conv3d", shape as ConvCommon<number[]>, [shape.D, shape.H, shape.W]);
}

const product = (xs: number[]) => xs.reduce((p, v) => p * v, 1);

/**
 * Checks a convolution's arrays against its geometry.
 *
 * @param g the geometry
 * @param args the arrays
 * @throws Error naming the bad array, the expected length and the given one
 *
 * @example
 * ```ts
 * import { validateConv1dShape, validateConvArrays } from "@xpu/ops/ops/conv";
 * const g = validateConv1dShape({ N: 1, Cin: 1, Cout: 2, L: 5, kernelSize: 2 });
 * validateConvArrays(g, { x: new Float32Array(5), weight: new Float32Array(4) }); // passes: x [1, 1, 5], weight [2, 1, 2]
 * ```
 */
export function validateConvArrays(g: ConvGeometry, args: ConvArrays): void {
  const spatialIn = g.input.length === 1 ? "L" : g.input.length === 2 ? "H * W" : "D * H * W";
  requireArray(g.op, "x", args.x, "Float32Array", [g.N * g.Cin * product(g.input), `N * Cin * ${spatialIn}`]);
  const kernelText = g.kernel.length === 1
    ? "K"
    : g.kernel.map((_, i) => `k${"DHW".slice(3 - g.kernel.length)[i]}`).join(" * ");
  requireArray(g.op, "weight", args.weight, "Float32Array", [
    (g.Cout * g.Cin / g.groups) * product(g.kernel),
    `Cout * Cin / groups * ${kernelText}`,
  ]);
  if (args.bias !== undefined) requireArray(g.op, "bias", args.bias, "Float32Array", [g.Cout, "Cout"]);
}

/**
 * Validates {@link conv1d}'s arguments.
 *
 * @param args the arguments
 * @returns the geometry
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateConv1d } from "@xpu/ops/ops/conv";
 * validateConv1d({ x: new Float32Array(5), weight: new Float32Array(2), N: 1, Cin: 1, Cout: 1, L: 5, kernelSize: 2 }).output; // [4]
 * ```
 */
export function validateConv1d(args: Conv1dArgs): ConvGeometry {
  requireArgs("conv1d", "args", args, `{ x, weight, bias?, N, Cin, Cout, L, ${COMMON_FIELDS} }`, KEYS_1D);
  const g = validateConv1dShape(args);
  validateConvArrays(g, args);
  return g;
}
/**
 * Validates {@link conv2d}'s arguments.
 *
 * @param args the arguments
 * @returns the geometry
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateConv2d } from "@xpu/ops/ops/conv";
 * const x = new Float32Array(2 * 5 * 5), weight = new Float32Array(4 * 2 * 3 * 3);
 * validateConv2d({ x, weight, N: 1, Cin: 2, Cout: 4, H: 5, W: 5, kernelSize: 3, padding: 1 }).output; // [5, 5]
 * ```
 */
export function validateConv2d(args: Conv2dArgs): ConvGeometry {
  requireArgs("conv2d", "args", args, `{ x, weight, bias?, N, Cin, Cout, H, W, ${COMMON_FIELDS} }`, KEYS_2D);
  const g = validateConv2dShape(args);
  validateConvArrays(g, args);
  return g;
}
/**
 * Validates {@link conv3d}'s arguments.
 *
 * @param args the arguments
 * @returns the geometry
 * @throws Error naming the bad argument
 *
 * @example
 * ```ts
 * import { validateConv3d } from "@xpu/ops/ops/conv";
 * const x = new Float32Array(3 * 4 * 4), weight = new Float32Array(2 * 27);
 * validateConv3d({ x, weight, N: 1, Cin: 1, Cout: 2, D: 3, H: 4, W: 4, kernelSize: 3 }).output; // [1, 2, 2]
 * ```
 */
export function validateConv3d(args: Conv3dArgs): ConvGeometry {
  requireArgs("conv3d", "args", args, `{ x, weight, bias?, N, Cin, Cout, D, H, W, ${COMMON_FIELDS} }`, KEYS_3D);
  const g = validateConv3dShape(args);
  validateConvArrays(g, args);
  return g;
}

/** Every index tuple of a box of the given sizes, last axis fastest. */
function* positions(sizes: number[]): Generator<number[]> {
  const at = sizes.map(() => 0);
  if (sizes.some((s) => s === 0)) return;
  while (true) {
    yield [...at];
    let axis = sizes.length - 1;
    while (axis >= 0 && ++at[axis] === sizes[axis]) at[axis--] = 0;
    if (axis < 0) return;
  }
}

/** Row-major offset of an index tuple in a box of the given sizes. */
const offset = (index: number[], sizes: number[]) => index.reduce((o, v, i) => o * sizes[i] + v, 0);

/**
 * The convolution of any rank, by its definition (see the module doc).
 *
 * @param g the geometry
 * @param args the arrays
 * @returns `[N, Cout, ...output]`
 */
function convolve(g: ConvGeometry, { x, weight, bias }: ConvArrays): Float32Array {
  const inPerGroup = g.Cin / g.groups, outPerGroup = g.Cout / g.groups;
  const outSize = product(g.output), inSize = product(g.input), kernelSize = product(g.kernel);
  const out = new Float32Array(g.N * g.Cout * outSize);
  const taps = [...positions(g.kernel)];
  for (let n = 0; n < g.N; n++) {
    for (let co = 0; co < g.Cout; co++) {
      const firstIn = Math.floor(co / outPerGroup) * inPerGroup;
      for (const o of positions(g.output)) {
        let sum = bias ? bias[co] : 0;
        for (let c = 0; c < inPerGroup; c++) {
          for (const k of taps) {
            const at = o.map((oi, i) => oi * g.stride[i] - g.padding[i] + k[i] * g.dilation[i]);
            // The padding is zeros, multiplied like any input: 0 * inf is NaN there, as in torch.
            const padded = at.some((a, i) => a < 0 || a >= g.input[i]);
            const xv = padded ? 0 : x[(n * g.Cin + firstIn + c) * inSize + offset(at, g.input)];
            sum += xv * weight[(co * inPerGroup + c) * kernelSize + offset(k, g.kernel)];
          }
        }
        out[(n * g.Cout + co) * outSize + offset(o, g.output)] = sum;
      }
    }
  }
  return out;
}

/**
 * `torch.nn.functional.conv1d(x, weight, bias, stride, padding, dilation, groups)`.
 *
 * @param args input `[N, Cin, L]`, weight `[Cout, Cin / groups, K]`, optional bias and the arguments
 * @returns `[N, Cout, Lout]`
 *
 * @example
 * ```ts
 * import { conv1d } from "@xpu/ops/ops/conv";
 * // A two-tap difference kernel, not flipped: out[i] = x[i + 1] - x[i].
 * const x = new Float32Array([1, 4, 9, 16]);
 * conv1d({ x, weight: new Float32Array([-1, 1]), N: 1, Cin: 1, Cout: 1, L: 4, kernelSize: 2 }); // [3, 5, 7]
 * ```
 */
export function conv1d(args: Conv1dArgs): Float32Array {
  return convolve(validateConv1d(args), args);
}

/**
 * `torch.nn.functional.conv2d(x, weight, bias, stride, padding, dilation, groups)`.
 *
 * @param args input `[N, Cin, H, W]`, weight `[Cout, Cin / groups, kH, kW]`, optional bias and the arguments
 * @returns `[N, Cout, Hout, Wout]`
 *
 * @example
 * ```ts
 * import { conv2d } from "@xpu/ops/ops/conv";
 * const x = new Float32Array([1, 2, 3, 4, 5, 6, 7, 8, 9]);
 * // A 2 x 2 box sum over a 3 x 3 image, stride [1, 2]: [[12], [24]].
 * conv2d({ x, weight: new Float32Array([1, 1, 1, 1]), N: 1, Cin: 1, Cout: 1, H: 3, W: 3, kernelSize: 2, stride: [1, 2] });
 * ```
 */
export function conv2d(args: Conv2dArgs): Float32Array {
  return convolve(validateConv2d(args), args);
}

/**
 * `torch.nn.functional.conv3d(x, weight, bias, stride, padding, dilation, groups)`.
 *
 * @param args input `[N, Cin, D, H, W]`, weight `[Cout, Cin / groups, kD, kH, kW]`, optional bias and the arguments
 * @returns `[N, Cout, Dout, Hout, Wout]`
 *
 * @example
 * ```ts
 * import { conv3d } from "@xpu/ops/ops/conv";
 * // Two frames of 1 x 1; a temporal kernel of 2 taps: 3 * 1 + 5 * 2.
 * const x = new Float32Array([3, 5]);
 * conv3d({ x, weight: new Float32Array([1, 2]), N: 1, Cin: 1, Cout: 1, D: 2, H: 1, W: 1, kernelSize: [2, 1, 1] }); // [13]
 * ```
 */
export function conv3d(args: Conv3dArgs): Float32Array {
  return convolve(validateConv3d(args), args);
}
