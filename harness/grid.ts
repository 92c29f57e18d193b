/**
 * Workgroup grids shared by several ops.
 *
 * Streaming kernels (elementwise, axpy, activation) loop over fixed-size blocks in a grid-stride
 * loop: {@link streamWorkgroups} asks for one workgroup per block, capped at the per-dimension limit,
 * so the grid never folds into y (a folded grid measured 2.3x slower for an add of 2^26 elements on
 * an H200; see harness/baselines/nvidia-h200.md).
 *
 * Row ops (softmax, rmsnorm, layernorm) spread rows over a 256-invocation workgroup
 * ({@link rowLayout}). A row of `cols` f32 is read as vec4s; it touches `cols / 4` of them when every row starts on a
 * vec4 boundary, and at most one more otherwise. The row is spread over the fewest invocations (a
 * power of two, at most 256) that hold it in `perInvocation` vec4s each, so `256 / threads` rows
 * share a workgroup; a row too long for that is `resident: false` and the kernel streams it.
 *
 * @module
 */

import { foldWorkgroups, requireSize } from "./limits.ts";

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
 * @throws Error when a size is NaN, fractional or negative (or `perInvocation` is 0)
 *
 * @example
 * ```ts
 * import { rowLayout } from "@xpu/ops/harness";
 * // 1000 rows of 1024 f32 (256 vec4s), 4 vec4s per invocation: 64 invocations a row, 4 rows a workgroup.
 * rowLayout(1000, 1024, 4, 65535); // { threads: 64, resident: true, workgroups: [250, 1, 1] }
 * ```
 */
export function rowLayout(rows: number, cols: number, perInvocation: number, maxPerDimension: number): RowLayout {
  requireSize("rowLayout", "rows", rows, 0);
  requireSize("rowLayout", "cols", cols, 0);
  requireSize("rowLayout", "perInvocation", perInvocation, 1);
  const quads = cols % 4 === 0 ? cols / 4 : Math.floor((cols + 6) / 4);
  let threads = 1;
  while (threads < ROW_WORKGROUP && threads * perInvocation < quads) threads *= 2;
  return {
    threads,
    resident: quads <= perInvocation * threads,
    workgroups: foldWorkgroups(Math.ceil(rows / (ROW_WORKGROUP / threads)), maxPerDimension, "rowLayout"),
  };
}

/**
 * Workgroups for a grid-stride kernel over `elements`: one per block of `blockElements`, capped at
 * the per-dimension limit (the kernel's loop covers the rest). Zero for no elements.
 *
 * @param elements elements to cover
 * @param blockElements elements one workgroup moves per block
 * @param maxPerDimension the device's maxComputeWorkgroupsPerDimension
 * @returns the workgroup count in x
 * @throws Error naming the size when one is NaN, fractional or negative (or a divisor or limit 0)
 *
 * @example
 * ```ts
 * import { streamWorkgroups } from "@xpu/ops/harness";
 * streamWorkgroups(1 << 20, 1024, 65535); // 1024
 * streamWorkgroups(1 << 30, 1024, 65535); // 65535: the kernel's grid-stride loop covers the rest
 * ```
 */
export function streamWorkgroups(elements: number, blockElements: number, maxPerDimension: number): number {
  requireSize("streamWorkgroups", "elements", elements, 0);
  requireSize("streamWorkgroups", "blockElements", blockElements, 1);
  requireSize("streamWorkgroups", "maxPerDimension", maxPerDimension, 1);
  return Math.min(Math.ceil(elements / blockElements), maxPerDimension);
}
