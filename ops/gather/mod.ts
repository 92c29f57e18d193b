/**
 * gather: row selection (`gather`, entry point `kernel`), as `torch.index_select(table, 0,
 * indices)`, which the goldens (`goldens/gen.py`) hold it to; not `torch.gather`, which picks one
 * element per index instead of a row.
 *
 * What it refuses and why each convention was chosen (details in `reference.ts`):
 * - An index outside `[0, V)` gathers a row of zeros. torch raises; a kernel cannot, and a host
 *   check would need the indices on the host, which an engine feeding token ids from the GPU does
 *   not have. `-1` is such an index, not Python's "last row".
 * - Indices are `Int32Array`: WGSL has no 64-bit integer, so `V` is at most 2^31 - 1.
 * - An empty `indices` gives an empty result, as in torch; V and D must be at least 1.
 *
 * The kernel runs one invocation per output element, so consecutive invocations copy consecutive
 * columns of a row; a grid past 65,535 workgroups folds into y.
 *
 * On NVIDIA, `kernel.nvidia` is resolved instead, tuned for bandwidth: the output streams as vec4s
 * (with D a multiple of 4, each one aligned vec4 of a table row), four per invocation with every
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
import { type GatherArgs, validateGather } from "./reference.ts";

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
 * Plans `gather` on the GPU for a `[V, D]` table and `N` indices.
 *
 * The cost is what a call moves when its indices are distinct and in range: the indices, one
 * table row read per output row, and the output written; no arithmetic.
 *
 * @param gpu the device
 * @param shape `V`, `D` of the table and `N`, the number of indices
 * @param options kernel override
 * @returns the plan; bindings `table`, `indices` (inputs) and `out` (output, `[N, D]`)
 */
export function gatherPlan(
  gpu: ResidentDevice,
  shape: { V: number; D: number; N: number },
  options: KernelOptions = {},
): KernelPlan {
  const { V, D, N } = shape;
  const total = N * D;
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  return {
    op: "gather",
    kernel,
    bindings: [
      { name: "table", dtype: "f32", length: V * D, role: "input" },
      { name: "indices", dtype: "i32", length: N, role: "input" },
      { name: "out", dtype: "f32", length: total, role: "output" },
    ],
    params: packParams(
      [{ name: "total", type: "u32" }, { name: "d", type: "u32" }, { name: "v", type: "u32" }],
      { total, d: D, v: V },
      "gather",
    ),
    workgroups: workgroupsOf(kernel.variant, total, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 4 * N + 8 * total, flops: 0 },
  };
}

/**
 * Selects rows of `table` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link gather}
 * @param options kernel override
 * @returns the `[N, D]` result, row-major
 */
export async function gatherGpu(
  gpu: ResidentDevice,
  args: GatherArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateGather(args);
  const plan = gatherPlan(gpu, { V: args.V, D: args.D, N: args.indices.length }, options);
  const [out] = await gpu.run(plan, [args.table, args.indices]);
  return out as Float32Array;
}
