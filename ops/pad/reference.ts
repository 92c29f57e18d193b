/**
 * Reference for pad: what correct means, in plain TypeScript.
 *
 * `pad({ x, outer, size, inner, before, after, mode, value })` pads one axis of a tensor viewed as
 * `[outer, size, inner]` (row-major) to `[outer, before + size + after, inner]`, as
 * `torch.nn.functional.pad` pads that axis:
 * - `"constant"` writes `value` (default 0) in the padding.
 * - `"reflect"` mirrors about the edge element without repeating it (`[a, b, c]` padded by 2 before
 *   gives `[c, b, a, b, c]`), so each pad must be less than `size`, as torch requires.
 * - `"replicate"` repeats the edge element (`[a, a, a, b, c]`), so `size` must be at least 1.
 *
 * `before` and `after` are separate (a causal temporal pad is frames before the data and none
 * after). A tensor padded on several axes takes one call per axis; torch's single multi-axis call
 * gives the same result (tested against torch), because reflect and replicate on one axis read only
 * along that axis. Negative pads (torch's cropping) and `"circular"` are refused.
 *
 * @module
 */

import { requireArgs, requireArray, requireF32, requireInt, requireOneOf, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["x", "outer", "size", "inner", "before", "after", "mode", "value"];

/** How the padding is filled. */
export type PadMode = "constant" | "reflect" | "replicate";

/** The modes, in the order the kernel numbers them. */
export const PAD_MODES: readonly PadMode[] = ["constant", "reflect", "replicate"];

/** Sizes and scalars of {@link pad}. */
export interface PadShape {
  /** Product of the axes before the padded one (>= 1). */
  outer: number;
  /** Length of the padded axis (>= 0; >= 1 for replicate, > before and > after for reflect). */
  size: number;
  /** Product of the axes after the padded one (>= 1). */
  inner: number;
  /** Elements added before the start of the axis (>= 0). */
  before: number;
  /** Elements added after its end (>= 0). */
  after: number;
  /** Fill mode, default `"constant"`. */
  mode?: PadMode;
  /** The fill of `"constant"`, a finite f32; default 0. */
  value?: number;
}

/** Arguments of {@link pad}. */
export interface PadArgs extends PadShape {
  /** The tensor, `[outer, size, inner]` row-major. */
  x: Float32Array;
}

/**
 * Validates {@link pad}'s sizes and scalars.
 *
 * @param shape the sizes, pads, mode and value
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validatePadShape } from "@xpu/ops/ops/pad";
 * validatePadShape({ outer: 4, size: 3, inner: 1, before: 2, after: 1, mode: "reflect" }); // passes
 * try {
 *   validatePadShape({ outer: 4, size: 3, inner: 1, before: 3, after: 0, mode: "reflect" });
 * } catch (e) {
 *   (e as Error).message; // reflect needs before and after below size (torch's rule)
 * }
 * ```
 */
export function validatePadShape(shape: PadShape): void {
  requireArgs("pad", "shape", shape, "{ outer, size, inner, before, after, mode?, value? }", KEYS);
  requireInt("pad", "outer", shape.outer, 1, U32_MAX);
  requireInt("pad", "inner", shape.inner, 1, U32_MAX);
  requireInt("pad", "size", shape.size, 0, U32_MAX);
  requireInt("pad", "before", shape.before, 0, U32_MAX);
  requireInt("pad", "after", shape.after, 0, U32_MAX);
  const mode = requireOneOf("pad", "mode", shape.mode ?? "constant", PAD_MODES);
  requireF32("pad", "value", shape.value ?? 0);
  if (mode === "reflect" && (shape.before >= shape.size || shape.after >= shape.size)) {
    throw new Error(
      `pad: reflect needs before and after < size (the edge is not repeated), got before ${shape.before}, after ${shape.after}, size ${shape.size}`,
    );
  }
  if (mode === "replicate" && shape.size === 0) throw new Error("pad: replicate needs size >= 1, got 0");
  if (mode !== "constant" && shape.value !== undefined && shape.value !== 0) {
    throw new Error(`pad: value applies only to mode "constant", got value ${shape.value} with mode "${mode}"`);
  }
}

/**
 * Validates {@link pad}'s arguments.
 *
 * @param args the tensor, its sizes and the padding
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validatePad } from "@xpu/ops/ops/pad";
 * validatePad({ x: new Float32Array([1, 2, 3]), outer: 1, size: 3, inner: 1, before: 1, after: 1 }); // passes
 * ```
 */
export function validatePad(args: PadArgs): void {
  requireArgs("pad", "args", args, "{ x, outer, size, inner, before, after, mode?, value? }", KEYS);
  validatePadShape(args);
  requireArray("pad", "x", args.x, "Float32Array", [args.outer * args.size * args.inner, "outer * size * inner"]);
}

/**
 * Pads one axis of `x`.
 *
 * @param args the tensor `[outer, size, inner]`, the pads before and after, the mode and value
 * @returns a new Float32Array `[outer, before + size + after, inner]`
 *
 * @example
 * ```ts
 * import { pad } from "@xpu/ops/ops/pad";
 * const x = new Float32Array([1, 2, 3]);
 * pad({ x, outer: 1, size: 3, inner: 1, before: 2, after: 1, mode: "reflect" }); // [3, 2, 1, 2, 3, 2]
 * ```
 */
export function pad(args: PadArgs): Float32Array {
  validatePad(args);
  const { x, outer, size, inner, before, after } = args;
  const mode = args.mode ?? "constant";
  const padded = before + size + after;
  const out = new Float32Array(outer * padded * inner);
  for (let o = 0; o < outer; o++) {
    for (let p = 0; p < padded; p++) {
      // Position p of the output is position s of the input, or none (constant padding).
      let s: number | null = p - before;
      if (s < 0 || s >= size) {
        if (mode === "constant") s = null;
        else if (mode === "replicate") s = s < 0 ? 0 : size - 1;
        else s = s < 0 ? -s : 2 * (size - 1) - s;
      }
      for (let i = 0; i < inner; i++) {
        out[(o * padded + p) * inner + i] = s === null ? (args.value ?? 0) : x[(o * size + s) * inner + i];
      }
    }
  }
  return out;
}
