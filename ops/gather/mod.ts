/**
 * gather: row selection (`gather`, entry point `kernel`), as `torch.index_select(table, 0,
 * index)`, which the goldens (`goldens/gen.py`) hold it to; not `torch.gather`, which picks one
 * element per index instead of a row.
 *
 * What it refuses and why each convention was chosen (details in `reference.ts`):
 * - An index outside `[0, rows)` gathers a row of zeros. torch raises; a kernel cannot, and a host
 *   check would need the index on the host, which an engine feeding token ids from the GPU does
 *   not have. `-1` is such an index, not Python's "last row".
 * - Indices are `Int32Array`: WGSL has no 64-bit integer, so `rows` is at most 2^31 - 1.
 * - An empty `index` gives an empty result, as in torch; rows and cols must be at least 1.
 *
 * The kernel runs one invocation per output element, so consecutive invocations copy consecutive
 * columns of a row; a grid past 65,535 workgroups folds into y.
 *
 * On NVIDIA, `kernel.nvidia` is resolved instead, tuned for bandwidth: the output streams as vec4s
 * (with cols a multiple of 4, each one aligned vec4 of a table row), four per invocation with every
 * load issued before the first store, blocks dealt to at most 65,535 workgroups in a grid-stride
 * loop; one float per invocation keeps too few bytes in flight to stream at the H200's bandwidth.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type GatherArgs, type GatherShape, validateGather, validateGatherShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/** Invocations per workgroup, as declared in `wgsl/kernel.wgsl`. */
const WORKGROUP_SIZE = 256;
/** Output elements one workgroup of `kernel.nvidia` moves per block: 256 invocations x 4 vec4s. */
const BLOCK = 256 * 4 * 4;

/**
 * Workgroups of each variant: the portable kernel takes one element per invocation, the grid
 * folded past the per-dimension limit; `kernel.nvidia` strides over blocks of {@link BLOCK}.
 */
function workgroupsOf(variant: string, total: number, maxPerDimension: number): [number, number, number] {
  if (variant === "kernel") return foldWorkgroups(Math.ceil(total / WORKGROUP_SIZE), maxPerDimension);
  if (variant === "kernel.nvidia") return [Math.min(Math.ceil(total / BLOCK), maxPerDimension), 1, 1];
  throw new Error(`gather: no dispatch geometry for variant "${variant}"`);
}

/**
 * Plans `gather` on the GPU for a `[rows, cols]` table and `indexLength` indices.
 *
 * The cost is what a call moves when its indices are distinct and in range: the index, one
 * table row read per output row, and the output written; no arithmetic.
 *
 * @param gpu the device
 * @param shape `rows`, `cols` of the table and `indexLength`, the number of indices
 * @param options kernel override
 * @returns the plan; bindings `table`, `index` (inputs) and `out` (output, `[indexLength, cols]`)
 * @throws Error naming the argument, as {@link validateGatherShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gatherPlan } from "@xpu/ops/ops/gather";
 * const gpu = await acquireDevice();
 * const table = gpu.upload(new Float32Array([0, 1, 2, 3, 4, 5])); // [[0, 1], [2, 3], [4, 5]]
 * const index = gpu.upload(new Int32Array([2, 0]));
 * const out = gpu.alloc("f32", 4);
 * await gpu.submit([gatherPlan(gpu, { rows: 3, cols: 2, indexLength: 2 }), [table, index, out]]);
 * const rows = await gpu.read(out); // [4, 5, 0, 1]
 * gpu.destroy();
 * ```
 */
export function gatherPlan(
  gpu: ResidentDevice,
  shape: GatherShape,
  options: KernelOptions = {},
): KernelPlan {
  validateGatherShape(shape);
  const { rows, cols, indexLength } = shape;
  const total = indexLength * cols;
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  return {
    op: "gather",
    kernel,
    bindings: [
      { name: "table", dtype: "f32", length: rows * cols, role: "input" },
      { name: "index", dtype: "i32", length: indexLength, role: "input" },
      { name: "out", dtype: "f32", length: total, role: "output" },
    ],
    params: packParams(
      [{ name: "total", type: "u32" }, { name: "d", type: "u32" }, { name: "v", type: "u32" }],
      { total, d: cols, v: rows },
      "gather",
    ),
    workgroups: workgroupsOf(kernel.variant, total, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 4 * indexLength + 8 * total, flops: 0 },
  };
}

/**
 * Selects rows of `table` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link gather}
 * @param options kernel override
 * @returns the `[indexLength, cols]` result, row-major
 * @throws Error naming the argument, as {@link validateGather}
 *
 * @example
 * ```ts
 * import { acquireDevice, gatherGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const table = new Float32Array([0, 1, 2, 3, 4, 5]);
 * const out = await gatherGpu(gpu, { table, index: new Int32Array([1, -1]), rows: 3, cols: 2 }); // [2, 3, 0, 0]
 * gpu.destroy();
 * ```
 */
export async function gatherGpu(
  gpu: ResidentDevice,
  args: GatherArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateGather(args);
  const plan = gatherPlan(gpu, { rows: args.rows, cols: args.cols, indexLength: args.index.length }, options);
  const [out] = await gpu.run(plan, [args.table, args.index]);
  return out as Float32Array;
}
