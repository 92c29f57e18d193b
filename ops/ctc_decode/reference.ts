/**
 * Reference for greedy CTC decoding: what correct means, in plain TypeScript.
 *
 * `ctcDecode({ logits, B, T, C, blank, inputLengths })` takes batch-major logits `[B, T, C]` (or
 * log-probabilities: only their order matters) and, for each sequence b of `inputLengths[b]` frames
 * (default T):
 *
 * 1. the best class of each frame: `argmax` over C, the lowest index among equal maxima (torch.argmax
 *    returns the first);
 * 2. collapses runs of the same class to one (`torch.unique_consecutive`), then
 * 3. drops the blank class (default 0, as `torch.nn.CTCLoss`).
 *
 * The order matters: "a blank a" decodes to "a a" (the blank separates two a's), while dropping
 * blanks first would give "a". The result is `tokens` `[B, T]` Int32, each row's labels first and
 * padded with -1, and `lengths` `[B]`, the number of labels of each row (written by the kernel, so a
 * caller that keeps them on the GPU reads nothing back). NaN and ±Infinity are ranked as
 * torch.argmax ranks them: a NaN is above every number (the first NaN of a frame is its class, even
 * beside +Infinity), +Infinity above every finite logit, -Infinity below; the kernel tells NaN from its
 * bits, since WGSL does not promise NaN comparisons.
 *
 * @module
 */

import { I32_MAX, requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys a shape or arguments object may carry: sizes, scalars and arrays (a plan may be given the arguments). */
const KEYS: readonly string[] = ["logits", "inputLengths", "B", "T", "C", "blank"];

/** Sizes of {@link ctcDecode}. */
export interface CtcDecodeShape {
  /** Sequences, >= 1. */
  B: number;
  /** Frames per sequence, >= 1. */
  T: number;
  /** Classes including the blank, >= 1. */
  C: number;
  /** The blank class, in [0, C). Default 0. */
  blank?: number;
}

/** Arguments of {@link ctcDecode}. */
export interface CtcDecodeArgs extends CtcDecodeShape {
  /** Scores `[B, T, C]` row-major (logits or log-probabilities). */
  logits: Float32Array;
  /** Frames of each sequence `[B]`, each in [0, T]; default T for all. */
  inputLengths?: Int32Array;
}

/** The decoded labels. */
export interface CtcDecodeResult {
  /** `[B, T]`: each row's labels, then -1. */
  tokens: Int32Array;
  /** `[B]`: labels in each row. */
  lengths: Int32Array;
}

/**
 * Validates {@link ctcDecode}'s sizes.
 *
 * @param shape the sizes
 * @returns the blank class
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateCtcDecodeShape } from "@xpu/ops/ops/ctc_decode";
 * validateCtcDecodeShape({ B: 2, T: 50, C: 32 }); // { blank: 0 }: the default blank filled in
 * ```
 */
export function validateCtcDecodeShape(shape: CtcDecodeShape): { blank: number } {
  requireArgs("ctcDecode", "shape", shape, "{ B, T, C, blank? }", KEYS);
  requireInt("ctcDecode", "B", shape.B, 1, U32_MAX);
  requireInt("ctcDecode", "T", shape.T, 1, I32_MAX);
  requireInt("ctcDecode", "C", shape.C, 1, U32_MAX);
  return { blank: requireInt("ctcDecode", "blank", shape.blank ?? 0, 0, shape.C - 1) };
}

/**
 * Validates {@link ctcDecode}'s arguments.
 *
 * @param args the arguments
 * @returns as {@link validateCtcDecodeShape}
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateCtcDecode } from "@xpu/ops/ops/ctc_decode";
 * validateCtcDecode({ logits: new Float32Array(5 * 3), B: 1, T: 5, C: 3, blank: 2 }); // { blank: 2 }
 * ```
 */
export function validateCtcDecode(args: CtcDecodeArgs): { blank: number } {
  requireArgs("ctcDecode", "args", args, "{ logits, inputLengths?, B, T, C, blank? }", KEYS);
  const resolved = validateCtcDecodeShape(args);
  requireArray("ctcDecode", "logits", args.logits, "Float32Array", [args.B * args.T * args.C, "B * T * C"]);
  if (args.inputLengths !== undefined) {
    requireArray("ctcDecode", "inputLengths", args.inputLengths, "Int32Array", [args.B, "B"]);
    args.inputLengths.forEach((n, b) => requireInt("ctcDecode", `inputLengths[${b}]`, n, 0, args.T));
  }
  return resolved;
}

/**
 * Greedy CTC decoding (see the module doc).
 *
 * @param args logits `[B, T, C]`, sizes, blank and optional input lengths
 * @returns the labels `[B, T]` padded with -1, and the count of each row
 *
 * @example
 * ```ts
 * import { ctcDecode } from "@xpu/ops/ops/ctc_decode";
 * // Frames argmax to a, a, blank, a, b (C = 3: blank 0, a 1, b 2):
 * const logits = new Float32Array([0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1]);
 * ctcDecode({ logits, B: 1, T: 5, C: 3 }); // tokens [1, 1, 2, -1, -1], lengths [3]
 * ```
 */
export function ctcDecode(args: CtcDecodeArgs): CtcDecodeResult {
  const { blank } = validateCtcDecode(args);
  const { logits, B, T, C, inputLengths } = args;
  const tokens = new Int32Array(B * T).fill(-1);
  const lengths = new Int32Array(B);
  for (let b = 0; b < B; b++) {
    const best: number[] = [];
    for (let t = 0; t < (inputLengths ? inputLengths[b] : T); t++) {
      let arg = 0;
      const row = (b * T + t) * C;
      for (let c = 1; c < C && !Number.isNaN(logits[row + arg]); c++) {
        // torch.argmax: the first NaN is the maximum; otherwise the first of the largest.
        if (Number.isNaN(logits[row + c]) || logits[row + c] > logits[row + arg]) arg = c;
      }
      best.push(arg);
    }
    const collapsed = best.filter((label, t) => t === 0 || label !== best[t - 1]);
    const labels = collapsed.filter((label) => label !== blank);
    tokens.set(labels, b * T);
    lengths[b] = labels.length;
  }
  return { tokens, lengths };
}
