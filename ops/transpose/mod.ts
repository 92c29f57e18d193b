/**
 * transpose: a `[rows, cols]` matrix to `[cols, rows]` (`transpose`, entry point `kernel`),
 * matching `x.t().contiguous()`; see `reference.ts` for the conventions.
 *
 * The kernel moves the matrix through workgroup memory one 32x32 tile at a time, so that reads
 * run along the rows of `x` and writes along the rows of the result; a plain one-thread-per-element
 * copy makes one of the two stride by a whole row. Tile rows are padded to 33 floats so that
 * reading a tile column hits 32 different banks. Shapes that are not multiples of 32 leave edge
 * tiles partly filled and bound-checked.
 *
 * There is no limit of its own on the shape: the tiles are numbered in one sequence and a grid of
 * more than 65,535 of them (a 1 x 2,097,153 row, say) is folded into two dimensions rather than
 * refused. What remains is the device's maxStorageBufferBindingSize, checked before dispatch.
 *
 * On NVIDIA, `kernel.nvidia` is resolved instead: 64x64 tiles through workgroup memory with every
 * access 16 bytes wide. 256 invocations each load four vec4s along rows of `x`, read back one 4x4
 * block as four vec4s, transpose it in registers and store four vec4s along rows of the result; the
 * tile is kept as vec4s, swizzled so that neither side conflicts on banks, and tiles are dealt to
 * at most 65,535 workgroups in a grid-stride loop (the grid never folds). On the H200 it moves
 * 8192x8192 at 85.9% of the bandwidth roofline, beside 86.5% for a plain copy (the measurements:
 * `harness/baselines/nvidia-h200-design.md`, transpose). Shapes whose rows or cols are not
 * multiples of 4, and tiles cut by the matrix's edge, move the same way one element at a time.
 *
 * Placing a block of columns into a wider matrix (`placeColumns`, `out[:, col0:col0 + cols] = x`, or
 * `= x.t()`): entry point `place` copies one element per invocation, 64 columns by one row a
 * workgroup; `place_transposed` turns 16 x 16 tiles through workgroup memory. They are what an engine
 * needs to assemble the output of a weight held as row blocks (each block's product placed into its
 * columns) and of a product computed transposed; both were tuned as the Llama engine's prefill steps,
 * not as bandwidth kernels, and have not been timed apart on a GPU. Rows are the grid's y dimension
 * (`place`) or cut into 16-row tiles along x (`place_transposed`): past 65,535 workgroups in a
 * dimension the harness refuses the dispatch (a LimitError naming the limit), it does not fold.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type TransposeVariant } from "./kernels.gen.ts";
import {
  type PlaceColumnsArgs,
  type PlaceColumnsShape,
  type TransposeArgs,
  type TransposeShape,
  validatePlaceColumns,
  validatePlaceColumnsShape,
  validateTranspose,
  validateTransposeShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type TransposeVariant };

/**
 * Workgroups of each variant: the portable kernel takes one 32x32 tile per workgroup, the grid
 * folded past the per-dimension limit; `kernel.nvidia` strides over 64x64 tiles.
 */
function workgroupsOf(
  variant: string,
  rows: number,
  cols: number,
  maxPerDimension: number,
): [number, number, number] {
  const tiles = (edge: number) => Math.ceil(rows / edge) * Math.ceil(cols / edge);
  if (variant === "kernel") return foldWorkgroups(tiles(32), maxPerDimension);
  if (variant === "kernel.nvidia") return [Math.min(tiles(64), maxPerDimension), 1, 1];
  throw new Error(`transpose: no dispatch geometry for variant "${variant}"`);
}

/**
 * Plans `transpose` on the GPU for a `[rows, cols]` matrix.
 *
 * @param gpu the device
 * @param shape `rows` and `cols` of `x`
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output)
 * @throws Error naming the argument, as {@link validateTransposeShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { transposePlan } from "@xpu/ops/ops/transpose";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2, 3, 4, 5, 6])); // [[1, 2, 3], [4, 5, 6]]
 * const out = gpu.alloc("f32", 6);
 * await gpu.submit([transposePlan(gpu, { rows: 2, cols: 3 }), [x, out]]);
 * const t = await gpu.read(out); // [1, 4, 2, 5, 3, 6]
 * gpu.destroy();
 * ```
 */
export function transposePlan(
  gpu: ResidentDevice,
  shape: TransposeShape,
  options?: KernelOptions<TransposeVariant>,
): KernelPlan {
  requireDevice("transpose", gpu);
  checkOptions("transpose", options);
  validateTransposeShape(shape);
  const { rows, cols } = shape;
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  return {
    op: "transpose",
    kernel,
    bindings: [
      { name: "x", dtype: "f32", length: rows * cols, role: "input" },
      { name: "out", dtype: "f32", length: rows * cols, role: "output" },
    ],
    params: packParams([{ name: "rows", type: "u32" }, { name: "cols", type: "u32" }], { rows, cols }, "transpose"),
    workgroups: workgroupsOf(kernel.variant, rows, cols, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 8 * rows * cols, flops: 0 },
  };
}

/**
 * Transposes a `[rows, cols]` matrix on the GPU.
 *
 * @param gpu the device
 * @param args as {@link transpose}
 * @param options kernel override
 * @returns the `[cols, rows]` result
 * @throws Error naming the argument, as {@link validateTranspose}
 *
 * @example
 * ```ts
 * import { acquireDevice, transposeGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const t = await transposeGpu(gpu, { x: new Float32Array([1, 2, 3, 4]), rows: 2, cols: 2 }); // [1, 3, 2, 4]
 * gpu.destroy();
 * ```
 */
export async function transposeGpu(
  gpu: ResidentDevice,
  args: TransposeArgs,
  options?: KernelOptions<TransposeVariant>,
): Promise<Float32Array> {
  requireDevice("transpose", gpu);
  checkOptions("transpose", options);
  validateTranspose(args);
  const plan = transposePlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x]);
  return out as Float32Array;
}

/**
 * Plans `placeColumns` on the GPU: a block of columns into a wider matrix, in place.
 *
 * @param gpu the device
 * @param shape `rows`, `cols`, `outCols`, `col0` and `transposed`
 * @param options kernel override (a variant of `place`, or of `place_transposed` when transposed)
 * @returns the plan; bindings `x` (input, the block) and `out` (`[rows, outCols]`, its other columns kept)
 * @throws Error naming the argument, as {@link validatePlaceColumnsShape}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { placeColumnsPlan } from "@xpu/ops/ops/transpose";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2])); // [2, 1]
 * const out = gpu.alloc("f32", 6); // [2, 3]
 * await gpu.submit([placeColumnsPlan(gpu, { rows: 2, cols: 1, outCols: 3, col0: 2 }), [x, out]]);
 * console.log(await gpu.read(out)); // Float32Array [0, 0, 1, 0, 0, 2]
 * gpu.destroy();
 * ```
 */
export function placeColumnsPlan(
  gpu: ResidentDevice,
  shape: PlaceColumnsShape,
  options?: KernelOptions<TransposeVariant>,
): KernelPlan {
  requireDevice("placeColumns", gpu);
  checkOptions("placeColumns", options);
  validatePlaceColumnsShape(shape);
  const { rows, cols, outCols, col0 } = shape;
  const transposed = shape.transposed ?? false;
  const fields = ["m", "block_n", "n", "n0"].map((name) => ({ name, type: "u32" as const }));
  return {
    op: "transpose",
    kernel: gpu.resolve(KERNELS, transposed ? "place_transposed" : "place", options),
    bindings: [
      { name: "x", dtype: "f32", length: rows * cols, role: "input" },
      { name: "out", dtype: "f32", length: rows * outCols, role: "inout" },
    ],
    params: packParams(fields, { m: rows, block_n: cols, n: outCols, n0: col0 }, "placeColumns"),
    workgroups: transposed ? [Math.ceil(rows / 16), Math.ceil(cols / 16), 1] : [Math.ceil(cols / 64), rows, 1],
    cost: { bytes: 8 * rows * cols, flops: 0 },
  };
}

/**
 * Places a block of columns into a wider matrix on the GPU.
 *
 * @param gpu the device
 * @param args as {@link placeColumns}
 * @param options kernel override
 * @returns `out` with the block's columns placed
 * @throws Error naming the argument, as {@link validatePlaceColumns}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { placeColumnsGpu } from "@xpu/ops/ops/transpose";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 2]); // transposed: [1, 2] is cols 1 x rows 2
 * await placeColumnsGpu(gpu, { x, out: new Float32Array(6), rows: 2, cols: 1, outCols: 3, col0: 0, transposed: true });
 * // [1, 0, 0, 2, 0, 0]
 * gpu.destroy();
 * ```
 */
export async function placeColumnsGpu(
  gpu: ResidentDevice,
  args: PlaceColumnsArgs,
  options?: KernelOptions<TransposeVariant>,
): Promise<Float32Array> {
  requireDevice("placeColumns", gpu);
  checkOptions("placeColumns", options);
  validatePlaceColumns(args);
  const [out] = await gpu.run(placeColumnsPlan(gpu, args, options), [args.x, args.out]);
  return out as Float32Array;
}
