/**
 * The tiles of matmul's kernels, shared by its plans (mod.ts, dp4a.ts): which of an op's tiles a
 * size and a device call for, and the grid of a kernel's tile, read from its WGSL (the source is the
 * one truth). mod.ts says why the rule is what it is.
 *
 * @module
 */

import type { ResidentDevice } from "../../harness/device.ts";
import { foldWorkgroups, workgroupBytesOf } from "../../harness/limits.ts";
import type { Resolution } from "../../harness/resolve.ts";
import type { MatmulShape } from "./reference.ts";

/** The least number of 128 x 128 tiles for which the plans choose the large tile. */
export const LARGE_TILE_MIN_TILES = 256;

/**
 * The same for the pipelined 128 x 128 tiles (NVIDIA's; measured for the f32 ones, and taken for the
 * dp4a ones too): on an H100 at 512 rows they beat the 64 x 64 tile from 80 tiles up (80: 25.1
 * against 22.7 TFLOP/s, 128: 39.5 against 29.0) and lost at 32 (10.2 against 13.4;
 * harness/baselines/nvidia-h100-log/04-matmul-rows.txt).
 */
export const PIPELINED_MIN_TILES = 80;

/** A kernel's tile, read from its WGSL constants. */
interface Tile {
  tileM: number;
  tileN: number;
}

function wgslConst(source: string, name: string): number | undefined {
  const m = new RegExp(String.raw`\bconst ${name} = (\d+)u;`).exec(source);
  return m ? Number(m[1]) : undefined;
}

/** The tile (`TILE_M` x `TILE_N`, or `TILE` square) a GEMM kernel declares. */
function tileOf(kernel: Resolution): Tile {
  const tile = wgslConst(kernel.source, "TILE");
  const tileM = wgslConst(kernel.source, "TILE_M") ?? tile;
  const tileN = wgslConst(kernel.source, "TILE_N") ?? tile;
  if (tileM === undefined || tileN === undefined) {
    throw new Error(`matmul/${kernel.variant}: the kernel must declare TILE_M and TILE_N (or TILE)`);
  }
  return { tileM, tileN };
}

/**
 * Whether a shape has enough 128 x 128 tiles to keep a large GPU busy with them.
 *
 * @param shape the product's sizes
 * @param minTiles the least number of tiles ({@link LARGE_TILE_MIN_TILES}, or
 *   {@link PIPELINED_MIN_TILES} for the pipelined tiles)
 * @returns true when M and N are at least 128 and there are `minTiles` such tiles
 */
export function largeTile({ M, N }: MatmulShape, minTiles: number = LARGE_TILE_MIN_TILES): boolean {
  return M >= 128 && N >= 128 && Math.ceil(M / 128) * Math.ceil(N / 128) >= minTiles;
}

/** A pipelined 128 x 128 entry point and its WGSL, which declares the workgroup memory it needs. */
export interface PipelinedTile {
  /** The entry point, e.g. `kernel_pipelined`. */
  entry: string;
  /** Its WGSL (KERNELS' text). */
  source: string;
  /**
   * Whether the plans take it by the rule (default true); false for a pipelined form not yet timed on
   * the hardware the rule names, which only an override takes.
   */
  planned?: boolean;
}

/**
 * The entry point a product's size calls for on a device: where the product has a pipelined 128 x
 * 128 tile, the adapter's target is `nvidia` and the device grants that kernel's workgroup memory,
 * the pipelined tile from {@link PIPELINED_MIN_TILES} tiles and the 64 x 64 one below (unless the
 * pipelined tile is not `planned`); otherwise the
 * single-stage 128 x 128 tile from {@link LARGE_TILE_MIN_TILES} tiles and the 64 x 64 one below.
 *
 * @param gpu the device (its adapter's target and maxComputeWorkgroupStorageSize)
 * @param where `op`, for the message of a pipelined kernel whose memory cannot be sized
 * @param shape the product's sizes
 * @param large the 128 x 128 entry point
 * @param small the 64 x 64 one (the 128 x 128 one again for a product with one tile)
 * @param pipelined the pipelined 128 x 128 entry point and its source, where the product has one
 * @returns the entry point
 */
export function tileEntry(
  gpu: ResidentDevice,
  where: string,
  shape: MatmulShape,
  large: string,
  small: string,
  pipelined?: PipelinedTile,
): string {
  const takesPipelined = pipelined !== undefined && pipelined.planned !== false && gpu.adapter.target === "nvidia" &&
    gpu.device.limits.maxComputeWorkgroupStorageSize >=
      workgroupBytesOf(pipelined.source, `${where}/${pipelined.entry}`);
  if (takesPipelined) return largeTile(shape, PIPELINED_MIN_TILES) ? pipelined.entry : small;
  return largeTile(shape) ? large : small;
}

/**
 * The workgroups of a GEMM kernel: one per tile of `c`, folded past the device's
 * maxComputeWorkgroupsPerDimension.
 *
 * @param gpu the device
 * @param shape the product's sizes
 * @param kernel the resolved kernel, whose source declares its tile
 * @returns the grid
 */
export function tileGrid(gpu: ResidentDevice, shape: MatmulShape, kernel: Resolution): [number, number, number] {
  const { tileM, tileN } = tileOf(kernel);
  const tiles = Math.ceil(shape.M / tileM) * Math.ceil(shape.N / tileN);
  return foldWorkgroups(tiles, gpu.limits.maxComputeWorkgroupsPerDimension);
}
