/**
 * Reference for nearest-neighbour 2D upsampling: what correct means, in plain TypeScript.
 *
 * `nearestUpsample2d({ x, N, C, H, W, outH, outW })` matches
 * `torch.nn.functional.interpolate(x, size=(outH, outW), mode="nearest")` for `x` of shape
 * `[N, C, H, W]`: output row `oy` copies source row `min(floor(oy * scale), H - 1)` with
 * `scale = f32(H / outH)` and the product rounded to f32, torch's own formula (OpenCV's
 * INTER_NEAREST), and likewise for columns. The f32 rounding decides real cases: at H = 14 -> 46,
 * row 23 copies source row 6, where exact arithmetic (23 * 14 / 46 = 7) says 7. This is the `size=`
 * path; `scale_factor=` rounds a float scale and maps rows differently, and `"nearest-exact"`
 * (half-pixel centres) is a different function; neither is implemented. `align_corners` is not a
 * parameter (torch raises for it in this mode). Downsampling (outH < H or outW < W) is refused.
 *
 * @module
 */

import { requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["x", "N", "C", "H", "W", "outH", "outW"];

/** Sizes of {@link nearestUpsample2d}. */
export interface NearestUpsample2dShape {
  /** Batch (>= 1). */
  N: number;
  /** Channels (>= 1). */
  C: number;
  /** Input height (>= 1). */
  H: number;
  /** Input width (>= 1). */
  W: number;
  /** Output height (>= H). */
  outH: number;
  /** Output width (>= W). */
  outW: number;
}

/** Arguments of {@link nearestUpsample2d}. */
export interface NearestUpsample2dArgs extends NearestUpsample2dShape {
  /** The input, `[N, C, H, W]` row-major. */
  x: Float32Array;
}

/**
 * Validates {@link nearestUpsample2d}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateNearestUpsample2dShape } from "@xpu/ops/ops/upsample";
 * validateNearestUpsample2dShape({ N: 1, C: 128, H: 256, W: 256, outH: 512, outW: 512 }); // passes
 * ```
 */
export function validateNearestUpsample2dShape(shape: NearestUpsample2dShape): void {
  requireArgs("nearestUpsample2d", "shape", shape, "{ N, C, H, W, outH, outW }", KEYS);
  for (const name of ["N", "C", "H", "W"] as const) requireInt("nearestUpsample2d", name, shape[name], 1, U32_MAX);
  requireInt("nearestUpsample2d", "outH", shape.outH, 1);
  requireInt("nearestUpsample2d", "outW", shape.outW, 1);
  if (shape.outH < shape.H || shape.outW < shape.W) {
    throw new Error(
      `nearestUpsample2d: outH >= H and outW >= W expected (upsampling only), got ${shape.H}x${shape.W} -> ${shape.outH}x${shape.outW}`,
    );
  }
  if (shape.outH >= 2 ** 24 || shape.outW >= 2 ** 24) {
    throw new Error(`nearestUpsample2d: outH and outW must be < 2^24 (exact in f32), got ${shape.outH}x${shape.outW}`);
  }
}

/**
 * Validates {@link nearestUpsample2d}'s arguments.
 *
 * @param args the input and its sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateNearestUpsample2d } from "@xpu/ops/ops/upsample";
 * validateNearestUpsample2d({ x: new Float32Array(4), N: 1, C: 1, H: 2, W: 2, outH: 4, outW: 4 }); // passes
 * ```
 */
export function validateNearestUpsample2d(args: NearestUpsample2dArgs): void {
  requireArgs("nearestUpsample2d", "args", args, "{ x, N, C, H, W, outH, outW }", KEYS);
  validateNearestUpsample2dShape(args);
  requireArray("nearestUpsample2d", "x", args.x, "Float32Array", [args.N * args.C * args.H * args.W, "N * C * H * W"]);
}

/**
 * The source index torch's nearest mode reads for destination index `dst`: `floor(dst * scale)`
 * with `scale = f32(inSize / outSize)` and the product rounded to f32, clamped to the last index.
 *
 * @param dst destination index
 * @param inSize input length
 * @param outSize output length
 * @returns the source index
 *
 * @example
 * ```ts
 * import { nearestSourceIndex } from "@xpu/ops/ops/upsample";
 * nearestSourceIndex(23, 14, 46); // 6: floor(23 * f32(14 / 46)), as torch's size= does (not nearest-exact's 7)
 * ```
 */
export function nearestSourceIndex(dst: number, inSize: number, outSize: number): number {
  const scale = Math.fround(inSize / outSize);
  return Math.min(Math.floor(Math.fround(dst * scale)), inSize - 1);
}

/**
 * Nearest-neighbour upsampling of `x` to `[N, C, outH, outW]`.
 *
 * @param args the input `[N, C, H, W]` and the output size
 * @returns a new Float32Array `[N, C, outH, outW]`
 *
 * @example
 * ```ts
 * import { nearestUpsample2d } from "@xpu/ops/ops/upsample";
 * const x = new Float32Array([1, 2, 3, 4]);
 * nearestUpsample2d({ x, N: 1, C: 1, H: 2, W: 2, outH: 2, outW: 4 }); // [1, 1, 2, 2, 3, 3, 4, 4]
 * ```
 */
export function nearestUpsample2d(args: NearestUpsample2dArgs): Float32Array {
  validateNearestUpsample2d(args);
  const { x, N, C, H, W, outH, outW } = args;
  const out = new Float32Array(N * C * outH * outW);
  const rows = Array.from({ length: outH }, (_, oy) => nearestSourceIndex(oy, H, outH));
  const cols = Array.from({ length: outW }, (_, ox) => nearestSourceIndex(ox, W, outW));
  for (let plane = 0; plane < N * C; plane++) {
    for (let oy = 0; oy < outH; oy++) {
      for (let ox = 0; ox < outW; ox++) {
        out[(plane * outH + oy) * outW + ox] = x[(plane * H + rows[oy]) * W + cols[ox]];
      }
    }
  }
  return out;
}
