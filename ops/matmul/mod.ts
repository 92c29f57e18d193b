/**
 * matmul: dense and weight-quantized GEMM, the prefill-shaped half of inference (decode-shaped
 * products, one vector against a matrix, are ops/matvec: they reuse nothing and want no tiling).
 *
 * - `matmul` is `torch.mm(a, b)`: `a` `[M, K]` times `b` `[K, N]`, f32 row-major. Entry points
 *   `kernel` (128 x 128 tiles, 8 x 8 outputs per invocation) and `tile64` (64 x 64 tiles, 4 x 4
 *   per invocation); {@link matmulPlan} picks one by size.
 * - `matmulQ8` (entry point `q8row`) is `F.linear(a, dequant(weight))`: the weight is the operand in
 *   a Linear layer's orientation, `[N, K]`, one row per output feature, and the product is
 *   `a @ dequant(weight)^T`. It is held as int8 codes four to a u32 (least-significant byte first,
 *   two's complement), `[N, ceil(K/4)]`, with one f32 scale per row: ops/matvec's format, so a
 *   weight packed once with `packQ8` serves both decode (matvecQ8) and prefill (here).
 * - `matmulQ4G128` (entry point `q4g128`) is the same with ops/matvec's q4 format: eight
 *   two's-complement nibbles per u32, least significant first, `[N, ceil(K/8)]`, and one scale
 *   per group of 128 columns of a row, `[N, ceil(K/128)]` (`quantizeQ4G128` + `packQ4`).
 *
 * The quantized kernels decode the weight while staging it into workgroup memory, so there is no
 * separate dequantize pass and the f32 weight never exists in memory (ops/dequant_transpose makes
 * that f32 operand when a caller wants it). q8 sums `a` times the codes, which are exact in f32,
 * and applies each row's scale once per output; q4 stages code times its group's scale, because
 * the scale changes along the summed axis. No bias: a fused one cannot be checked against anything
 * until the plain product agrees with the reference, and `elementwiseRows` adds one.
 *
 * Refused, with an error naming the argument: M, N or K not an integer >= 1, and arrays of the wrong
 * type or length; and, before anything is uploaded, an operand larger than the device's
 * maxStorageBufferBindingSize, with an error naming the operand and the limit. Grids of more tiles
 * than maxComputeWorkgroupsPerDimension (65,535) fold into a second dimension.
 *
 * Tile choice: the 128 x 128 tile does four times the work per workgroup of the 64 x 64 one, so it
 * only pays when there are still enough tiles to occupy a large GPU. {@link matmulPlan} uses it
 * when M and N are both at least 128 and the grid has at least {@link LARGE_TILE_MIN_TILES} of
 * them; the threshold is a starting point, not yet a measurement. The quantized entry points use
 * the 64 x 64 tiling only: prefill has few rows (M is the prompt length), and a 128-row variant is
 * worth writing when a measurement asks for it.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import { parseVariantName } from "../../harness/variants.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import {
  type MatmulArgs,
  type MatmulQ4G128Args,
  type MatmulQ8Args,
  validateMatmul,
  validateMatmulQ4G128,
  validateMatmulQ8,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/** The shape of a product: `[M, K] x [K, N]` (or a `[N, K]` weight) gives `[M, N]`. */
export interface MatmulShape {
  /** Rows of `a` and of the result. */
  M: number;
  /** Columns of the result. */
  N: number;
  /** The axis summed over. */
  K: number;
}

/** The least number of 128 x 128 tiles for which {@link matmulPlan} chooses the large tile. */
export const LARGE_TILE_MIN_TILES = 256;

const PARAMS = [{ name: "m", type: "u32" }, { name: "n", type: "u32" }, { name: "k", type: "u32" }] as const;
const GEMM_ENTRIES = { kernel: 128, tile64: 64 } as const;
const QUANTIZED_TILE = 64;

function tileGrid(gpu: ResidentDevice, shape: MatmulShape, tile: number): [number, number, number] {
  const tiles = Math.ceil(shape.M / tile) * Math.ceil(shape.N / tile);
  return foldWorkgroups(tiles, gpu.limits.maxComputeWorkgroupsPerDimension);
}

/** The GEMM entry point an override names, or the one the size calls for. */
function gemmEntry(shape: MatmulShape, override?: string): keyof typeof GEMM_ENTRIES {
  if (override !== undefined) {
    const { entry } = parseVariantName(override);
    if (entry === "kernel" || entry === "tile64") return entry;
    throw new Error(`matmul: override "${override}" is not a variant of entry point "kernel" or "tile64"`);
  }
  const large = GEMM_ENTRIES.kernel;
  const largeTiles = Math.ceil(shape.M / large) * Math.ceil(shape.N / large);
  return shape.M >= large && shape.N >= large && largeTiles >= LARGE_TILE_MIN_TILES ? "kernel" : "tile64";
}

/**
 * Plans `matmul` on the GPU.
 *
 * @param gpu the device
 * @param shape `M`, `N`, `K`
 * @param options kernel override: a variant of `kernel` or of `tile64` (which also picks the tile)
 * @returns the plan; bindings `a`, `b` (inputs) and `c` (output), one workgroup per tile of `c`
 */
export function matmulPlan(gpu: ResidentDevice, shape: MatmulShape, options: KernelOptions = {}): KernelPlan {
  const { M, N, K } = shape;
  const entry = gemmEntry(shape, options.override);
  return {
    op: "matmul",
    kernel: gpu.resolve(KERNELS, entry, options),
    bindings: [
      { name: "a", dtype: "f32", length: M * K, role: "input" },
      { name: "b", dtype: "f32", length: K * N, role: "input" },
      { name: "c", dtype: "f32", length: M * N, role: "output" },
    ],
    params: packParams(PARAMS, { m: M, n: N, k: K }, "matmul"),
    workgroups: tileGrid(gpu, shape, GEMM_ENTRIES[entry]),
    // Each operand read once and the result written once; a multiply and an add per term.
    cost: { bytes: 4 * (M * K + K * N + M * N), flops: 2 * M * N * K },
  };
}

/**
 * `a @ b` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link matmul}
 * @param options kernel override
 * @returns the result, `[M, N]`
 */
export async function matmulGpu(
  gpu: ResidentDevice,
  args: MatmulArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateMatmul(args);
  const [c] = await gpu.run(matmulPlan(gpu, args, options), [args.a, args.b]);
  return c as Float32Array;
}

/** The two quantized formats: the op, its entry point, and the names and lengths of its weight bindings. */
interface QuantizedFormat {
  op: "matmulQ8" | "matmulQ4G128";
  entry: "q8row" | "q4g128";
  weightWords: number;
  scaleName: "scale" | "scales";
  scaleCount: number;
}

function quantizedPlan(
  gpu: ResidentDevice,
  shape: MatmulShape,
  format: QuantizedFormat,
  options: KernelOptions,
): KernelPlan {
  const { M, N, K } = shape;
  const { op, weightWords, scaleCount } = format;
  return {
    op,
    kernel: gpu.resolve(KERNELS, format.entry, options),
    bindings: [
      { name: "a", dtype: "f32", length: M * K, role: "input" },
      { name: "weight", dtype: "u32", length: weightWords, role: "input" },
      { name: format.scaleName, dtype: "f32", length: scaleCount, role: "input" },
      { name: "c", dtype: "f32", length: M * N, role: "output" },
    ],
    params: packParams(PARAMS, { m: M, n: N, k: K }, op),
    workgroups: tileGrid(gpu, shape, QUANTIZED_TILE),
    // a, the weight as stored and the scales read once, c written once; a multiply and an add per term.
    cost: { bytes: 4 * (M * K + weightWords + scaleCount + M * N), flops: 2 * M * N * K },
  };
}

/**
 * Plans `matmulQ8` on the GPU.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K`
 * @param options kernel override
 * @returns the plan; bindings `a`, `weight`, `scale` (inputs) and `c` (output)
 */
export function matmulQ8Plan(gpu: ResidentDevice, shape: MatmulShape, options: KernelOptions = {}): KernelPlan {
  const { N, K } = shape;
  const format: QuantizedFormat = {
    op: "matmulQ8",
    entry: "q8row",
    weightWords: N * Math.ceil(K / 4),
    scaleName: "scale",
    scaleCount: N,
  };
  return quantizedPlan(gpu, shape, format, options);
}

/**
 * `a @ dequant(weight)^T` with an int8 weight, on the GPU.
 *
 * @param gpu the device
 * @param args as {@link matmulQ8}
 * @param options kernel override
 * @returns the result, `[M, N]`
 */
export async function matmulQ8Gpu(
  gpu: ResidentDevice,
  args: MatmulQ8Args,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateMatmulQ8(args);
  const [c] = await gpu.run(matmulQ8Plan(gpu, args, options), [args.a, args.weight, args.scale]);
  return c as Float32Array;
}

/**
 * Plans `matmulQ4G128` on the GPU.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K`
 * @param options kernel override
 * @returns the plan; bindings `a`, `weight`, `scales` (inputs) and `c` (output)
 */
export function matmulQ4G128Plan(gpu: ResidentDevice, shape: MatmulShape, options: KernelOptions = {}): KernelPlan {
  const { N, K } = shape;
  const format: QuantizedFormat = {
    op: "matmulQ4G128",
    entry: "q4g128",
    weightWords: N * Math.ceil(K / 8),
    scaleName: "scales",
    scaleCount: N * Math.ceil(K / 128),
  };
  return quantizedPlan(gpu, shape, format, options);
}

/**
 * `a @ dequant(weight)^T` with an int4, group-128 weight, on the GPU.
 *
 * @param gpu the device
 * @param args as {@link matmulQ4G128}
 * @param options kernel override
 * @returns the result, `[M, N]`
 */
export async function matmulQ4G128Gpu(
  gpu: ResidentDevice,
  args: MatmulQ4G128Args,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateMatmulQ4G128(args);
  const [c] = await gpu.run(matmulQ4G128Plan(gpu, args, options), [args.a, args.weight, args.scales]);
  return c as Float32Array;
}
