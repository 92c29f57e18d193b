/**
 * How row ops (softmax, rmsnorm, layernorm) spread rows over a 256-invocation workgroup.
 *
 * A row of `cols` f32 is read as vec4s; it touches `cols / 4` of them when every row starts on a
 * vec4 boundary, and at most one more otherwise. The row is spread over the fewest invocations (a
 * power of two, at most 256) that hold it in `perInvocation` vec4s each, so `256 / threads` rows
 * share a workgroup; a row too long for that is `resident: false` and the kernel streams it.
 *
 * @module
 */

import { foldWorkgroups } from "./limits.ts";

/** Invocations per workgroup of the row kernels (their `@workgroup_size`). */
export const ROW_WORKGROUP = 256;

/** A row layout: invocations per row, whether the row fits their registers, and the grid. */
export interface RowLayout {
  /** Invocations sharing one row (a power of two, at most {@link ROW_WORKGROUP}). */
  threads: number;
  /** Whether the row fits `threads * perInvocation` vec4s (else the kernel streams it). */
  resident: boolean;
  /** The workgroup grid for `rows` rows, folded past the per-dimension limit. */
  workgroups: [number, number, number];
}

/**
 * The layout of `rows` rows of `cols` elements.
 *
 * @param rows number of rows
 * @param cols elements per row
 * @param perInvocation vec4s one invocation holds of its row (`PER` in the kernel)
 * @param maxPerDimension the device's maxComputeWorkgroupsPerDimension
 * @returns invocations per row, residency and the workgroup grid
 */
export function rowLayout(rows: number, cols: number, perInvocation: number, maxPerDimension: number): RowLayout {
  const quads = cols % 4 === 0 ? cols / 4 : Math.floor((cols + 6) / 4);
  let threads = 1;
  while (threads < ROW_WORKGROUP && threads * perInvocation < quads) threads *= 2;
  return {
    threads,
    resident: quads <= perInvocation * threads,
    workgroups: foldWorkgroups(Math.ceil(rows / (ROW_WORKGROUP / threads)), maxPerDimension),
  };
}
