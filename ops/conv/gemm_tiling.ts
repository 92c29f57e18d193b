/**
 * The tile an implicit-GEMM convolution runs with, shared by conv and conv_transpose, whose kernels
 * are built from the same 8-deep GEMM blocks (`harness/wgsl/gemm8_*`): entry point `kernel` holds
 * 128 output channels x 128 columns per workgroup, `tile64` 64 x 256. `tile64` measured faster at
 * every H200 bench shape of both ops, so it is the choice unless a call has few columns (at most
 * 128) and many output channels per group (more than 64), where the wider tile would leave most of
 * its columns idle: that exception is reasoned, not measured.
 *
 * @module
 */

import type { ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import type { Resolution } from "../../harness/resolve.ts";
import type { KernelSources } from "../../harness/variants.ts";

/** Output channels x columns per workgroup of each entry point (TILE_M x TILE_N in the WGSL). */
const TILES = { kernel: [128, 128], tile64: [64, 256] } as const;
const ENTRIES = ["kernel", "tile64"] as const;

/** The resolved kernel and how many tiles cover one group's output. */
export interface GemmTiling {
  /** The kernel resolved among `kernel` and `tile64` (an override may name either). */
  kernel: Resolution;
  /** Tiles along the output channels of a group. */
  tilesM: number;
  /** Tiles along the columns. */
  tilesN: number;
}

/**
 * Chooses and resolves the tile for a convolution's GEMM.
 *
 * @param gpu the device
 * @param sources the op's kernel sources
 * @param op the op, for an override's error message
 * @param coutPerGroup output channels per group (the GEMM's M)
 * @param cols output columns (the GEMM's N)
 * @param options kernel override
 * @returns the kernel and the tile counts
 */
export function gemmTiling(
  gpu: ResidentDevice,
  sources: KernelSources,
  op: string,
  coutPerGroup: number,
  cols: number,
  options: KernelOptions | undefined,
): GemmTiling {
  const chosen = cols <= 128 && coutPerGroup > 64 ? "kernel" : "tile64";
  const kernel = gpu.resolveAmong(sources, op, ENTRIES, chosen, options);
  const [tileM, tileN] = TILES[kernel.variant.split(".")[0] as keyof typeof TILES];
  return { kernel, tilesM: Math.ceil(coutPerGroup / tileM), tilesN: Math.ceil(cols / tileN) };
}
