/**
 * The DiT's token streams: their padded lengths and RoPE positions (upstream's `patchify_and_embed`).
 *
 * - Each stream is padded to a multiple of 32 tokens; the padding rows become the learned pad tokens
 *   and are **not** masked: they are keys and queries like any other.
 * - Caption token i (padding included) is at `(i + 1, 0, 0)`.
 * - Image token (h, w), in patch units, row-major, is at `(capPadded + 1, h, w)`: the frame axis
 *   starts after the **padded** caption; image padding tokens are at `(0, 0, 0)` (no rotation).
 * - The unified sequence is the image tokens, then the caption's.
 *
 * @module
 */

import { SEQ_MULTI_OF } from "../config.ts";

/**
 * A stream's length padded to a multiple of 32.
 *
 * @param n tokens, an integer >= 1
 * @returns the padded length
 *
 * @example
 * ```ts
 * import { paddedLength } from "@xpu/ops/models/zimage";
 * [paddedLength(7), paddedLength(32), paddedLength(33)]; // [32, 32, 64]
 * ```
 */
export function paddedLength(n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new Error(`paddedLength: n must be an integer >= 1, got ${n}`);
  return Math.ceil(n / SEQ_MULTI_OF) * SEQ_MULTI_OF;
}

/**
 * RoPE positions of the caption stream, `[capPadded, 3]`.
 *
 * @param capPadded the caption's padded length
 * @returns Int32 positions (frame, row, column) per token
 *
 * @example
 * ```ts
 * import { captionPositions } from "@xpu/ops/models/zimage";
 * [...captionPositions(32).slice(0, 6)]; // [1, 0, 0, 2, 0, 0]
 * ```
 */
export function captionPositions(capPadded: number): Int32Array {
  const out = new Int32Array(capPadded * 3);
  for (let i = 0; i < capPadded; i++) out[3 * i] = i + 1;
  return out;
}

/**
 * RoPE positions of the image stream, `[imagePadded, 3]`: a `rows x cols` grid of patches after a
 * caption of `capPadded` tokens, then zeros for the padding.
 *
 * @param rows patch rows (latent height / 2)
 * @param cols patch columns (latent width / 2)
 * @param capPadded the caption's padded length
 * @returns Int32 positions (frame, row, column) per token
 *
 * @example
 * ```ts
 * import { imagePositions } from "@xpu/ops/models/zimage";
 * [...imagePositions(2, 2, 32).slice(0, 6)]; // [33, 0, 0, 33, 0, 1]
 * ```
 */
export function imagePositions(rows: number, cols: number, capPadded: number): Int32Array {
  const n = rows * cols;
  const out = new Int32Array(paddedLength(n) * 3);
  for (let h = 0; h < rows; h++) {
    for (let w = 0; w < cols; w++) out.set([capPadded + 1, h, w], 3 * (h * cols + w));
  }
  return out;
}
