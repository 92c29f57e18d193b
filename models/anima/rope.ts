/**
 * Token positions for Anima's two rotary embeddings, both applied by ops/rope's `ropeAxes` with
 * `pairing: "half"` (rotate_half: channel c pairs with c + headDim/2), which computes the angles
 * itself: nothing is tabulated, and the DiT's `pos_embedder` buffers (`seq`, `dim_*_range`) are
 * derived, not read.
 *
 * - DiT (Cosmos-Predict2's `VideoRopePosition3DEmb`, self-attention only): three axes (t, h, w)
 *   over the patch grid, channels [t | h | w] in each half of the head (config's `ropeDims`), a base
 *   per axis (`ropeTheta`), positions the plain grid indices (fps modulation off).
 * - LLM adapter: one axis, θ 10000 over the whole head; in cross-attention the queries sit at the
 *   target (T5) positions 0 .. Lt − 1 and the keys at the source (Qwen3) positions 0 .. Ls − 1.
 *
 * @module
 */

/**
 * The (t, h, w) position of each DiT token, token-major in (t, h, w) order, repeated per batch item.
 *
 * @param frames latent frames T (1 for an image)
 * @param height patch rows
 * @param width patch columns
 * @param batch batch items (each gets the same positions)
 * @returns `[batch · T · H · W, 3]`
 *
 * @example
 * ```ts
 * import { ditPositions } from "@xpu/ops/models/anima";
 * ditPositions(1, 2, 2); // Int32Array [0, 0, 0,  0, 0, 1,  0, 1, 0,  0, 1, 1]
 * ```
 */
export function ditPositions(frames: number, height: number, width: number, batch = 1): Int32Array {
  const tokens = frames * height * width;
  const out = new Int32Array(batch * tokens * 3);
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < frames; t++) {
      for (let h = 0; h < height; h++) {
        for (let w = 0; w < width; w++) {
          const row = b * tokens + (t * height + h) * width + w;
          out.set([t, h, w], 3 * row);
        }
      }
    }
  }
  return out;
}

/**
 * Positions 0 .. n − 1 on one axis (the adapter's sequences).
 *
 * @param n the sequence length
 * @returns `[n, 1]`
 *
 * @example
 * ```ts
 * import { sequencePositions } from "@xpu/ops/models/anima";
 * sequencePositions(3); // Int32Array [0, 1, 2]
 * ```
 */
export function sequencePositions(n: number): Int32Array {
  return Int32Array.from({ length: n }, (_, i) => i);
}
