/**
 * The tile an implicit-GEMM convolution runs with, shared by conv and conv_transpose, whose kernels
 * are built from the same 8-deep GEMM blocks (`harness/wgsl/gemm8_*`): entry point `kernel` holds
 * 128 output channels x 128 columns per workgroup, `tile64` 64 x 256. `tile64` measured faster at
 * every H200 bench shape of both ops, so it is the choice unless a call has few columns (at most
 * 128) and many output channels per group (more than 64), where the wider tile would leave most of
 * its columns idle: that exception is reasoned, not measured.
 *
 * An op with a pipelined form of `tile64` (conv's `tile64_pipelined`: two stages of workgroup memory,
 * one barrier per block) passes it, and the rule then mirrors ops/matmul's (tiles.ts `tileEntry`):
 * where the adapter's target is `nvidia`, the device grants the kernel's workgroup memory (read from
 * its WGSL by `workgroupBytesOf`) and the grid has at least matmul's `PIPELINED_MIN_TILES` (80)
 * tiles, the pipelined form replaces `tile64`; elsewhere the choice is unchanged. A tile64 tile holds
 * as many outputs as matmul's 128 x 128 one, so the threshold is taken over as it is. A form passed
 * with `planned: false` (not yet timed) is left out of the rule. An override may name the pipelined form on any device; the plan refuses it before
 * dispatch where the workgroup memory is not granted.
 *
 * @module
 */

import type { ResidentDevice } from "../../harness/device.ts";
import { workgroupBytesOf } from "../../harness/limits.ts";
import type { KernelOptions } from "../../harness/options.ts";
import type { Resolution } from "../../harness/resolve.ts";
import type { KernelSources } from "../../harness/variants.ts";
import { PIPELINED_MIN_TILES, type PipelinedTile } from "../matmul/tiles.ts";

/** Output channels x columns per workgroup of each entry point (TILE_M x TILE_N in the WGSL). */
const TILES: Readonly<Record<string, readonly [number, number]>> = {
  kernel: [128, 128],
  tile64: [64, 256],
  tile64_pipelined: [64, 256],
};
const ENTRIES = ["kernel", "tile64"] as const;

/** The resolved kernel and how many tiles cover one group's output. */
export interface GemmTiling {
  /** The kernel resolved among `kernel`, `tile64` and the pipelined form (an override may name any). */
  kernel: Resolution;
  /** Tiles along the output channels of a group. */
  tilesM: number;
  /** Tiles along the columns. */
  tilesN: number;
}

/**
 * Chooses and resolves the tile for a convolution's GEMM.
 *
 * @param gpu the device (its adapter's target and maxComputeWorkgroupStorageSize, for a pipelined form)
 * @param sources the op's kernel sources
 * @param op the op, for an override's error message
 * @param coutPerGroup output channels per group (the GEMM's M)
 * @param cols output columns (the GEMM's N)
 * @param options kernel override
 * @param pipelined the op's pipelined form of `tile64` and its WGSL, where it has one
 * @param groups the groups, each its own grid of tiles (default 1): counted for the pipelined rule
 * @returns the kernel and the tile counts
 */
export function gemmTiling(
  gpu: ResidentDevice,
  sources: KernelSources,
  op: string,
  coutPerGroup: number,
  cols: number,
  options: KernelOptions | undefined,
  pipelined?: PipelinedTile,
  groups: number = 1,
): GemmTiling {
  const tiles = (entry: string) => {
    const [tileM, tileN] = TILES[entry];
    return [Math.ceil(coutPerGroup / tileM), Math.ceil(cols / tileN)] as const;
  };
  let chosen = cols <= 128 && coutPerGroup > 64 ? "kernel" : "tile64";
  if (
    chosen === "tile64" && pipelined !== undefined && pipelined.planned !== false && gpu.adapter.target === "nvidia"
  ) {
    const [tilesM, tilesN] = tiles(pipelined.entry);
    const granted = gpu.device.limits.maxComputeWorkgroupStorageSize >=
      workgroupBytesOf(pipelined.source, `${op}/${pipelined.entry}`);
    if (granted && groups * tilesM * tilesN >= PIPELINED_MIN_TILES) chosen = pipelined.entry;
  }
  const entries = pipelined === undefined ? ENTRIES : [...ENTRIES, pipelined.entry];
  const kernel = gpu.resolveAmong(sources, op, entries, chosen, options);
  const [tilesM, tilesN] = tiles(kernel.variant.split(".")[0]);
  return { kernel, tilesM, tilesN };
}
