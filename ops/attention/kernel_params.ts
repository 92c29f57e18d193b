/**
 * What the attention-family kernels (attention, flash_attention, gqa) share on the host side: the
 * mask's strides as the kernels read them, the mask binding (one element when there is no mask, since
 * a binding must exist), and the workgroup-storage check.
 *
 * @module
 */

import type { ResolvedAttentionShape } from "./reference.ts";

/** The mask fields of a kernel's params: whether there is a mask, and its strides over b, h, i. */
export interface MaskParams {
  masked: number;
  mask_b: number;
  mask_h: number;
  mask_i: number;
  [key: string]: number;
}

/**
 * The mask's strides over batch, query head and query row, 0 where it broadcasts (its stride over
 * keys is 1): element (b, h, i, j) is at `b * mask_b + h * mask_h + i * mask_i + j`.
 *
 * @param shape the resolved shape
 * @returns the params fields (all 0 without a mask)
 */
export function maskParams(shape: ResolvedAttentionShape): MaskParams {
  if (!shape.maskShape) return { masked: 0, mask_b: 0, mask_h: 0, mask_i: 0 };
  const [mB, mH, mL, S] = shape.maskShape;
  return {
    masked: 1,
    mask_b: mB === 1 ? 0 : mH * mL * S,
    mask_h: mH === 1 ? 0 : mL * S,
    mask_i: mL === 1 ? 0 : S,
  };
}

/**
 * Elements of the mask binding: the mask's, or 1 (a placeholder the kernel never reads) without one.
 *
 * @param shape the resolved shape
 * @returns the binding's length
 */
export function maskLength(shape: ResolvedAttentionShape): number {
  if (!shape.maskShape) return 1;
  const [mB, mH, mL, S] = shape.maskShape;
  return mB * mH * mL * S;
}
