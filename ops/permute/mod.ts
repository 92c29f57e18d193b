/**
 * permute: a tensor of rank 1 to 6 with its axes reordered (`permute`, entry point `kernel`),
 * matching `x.permute(*dims).contiguous()`; see `reference.ts` for the conventions (output axis
 * `a` is input axis `dims[a]`, negative entries count from the end, rank above 6 is refused).
 *
 * The kernel is one invocation per output element, gathering: it splits its output index into
 * coordinates and reads x at the sum of coordinate * stride, with the output shape and the source
 * strides in the params uniform. Its writes are consecutive and its reads follow the permutation;
 * for the two-axis case, `transpose` moves the data through workgroup tiles so that reads are
 * consecutive as well.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { MAX_PERMUTE_RANK, type PermuteArgs, permuteDims, type PermuteShape, validatePermute } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

const WORKGROUP_SIZE = 256;
const AXES = Array.from({ length: MAX_PERMUTE_RANK }, (_, a) => a);
const PARAMS: ParamField[] = [
  { name: "n", type: "u32" },
  ...AXES.map((a): ParamField => ({ name: `size${a}`, type: "u32" })),
  ...AXES.map((a): ParamField => ({ name: `stride${a}`, type: "u32" })),
];

/**
 * Plans `permute` on the GPU.
 *
 * @param gpu the device
 * @param permutation the shape of `x` and the axis order (validated here)
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output)
 * @throws Error naming a bad shape or axis order
 */
export function permutePlan(gpu: ResidentDevice, permutation: PermuteShape, options: KernelOptions = {}): KernelPlan {
  const dims = permuteDims(permutation);
  const { shape } = permutation;
  const n = shape.reduce((p, d) => p * d, 1);
  const inputStrides = shape.map((_, axis) => shape.slice(axis + 1).reduce((p, d) => p * d, 1));
  // Six axes, the output's own at the end; the leading ones have size 1 and stride 0.
  const padding = MAX_PERMUTE_RANK - dims.length;
  const values: Record<string, number> = { n };
  for (const a of AXES) {
    const from = a < padding ? undefined : dims[a - padding];
    values[`size${a}`] = from === undefined ? 1 : shape[from];
    values[`stride${a}`] = from === undefined ? 0 : inputStrides[from];
  }
  return {
    op: "permute",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(PARAMS, values, "permute"),
    workgroups: foldWorkgroups(Math.ceil(n / WORKGROUP_SIZE), gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 8 * n, flops: 0 },
  };
}

/**
 * Puts the axes of `x` in the order `dims` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link permute}
 * @param options kernel override
 * @returns the result, row-major in the shape `dims.map((d) => shape[d])`
 */
export async function permuteGpu(
  gpu: ResidentDevice,
  args: PermuteArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validatePermute(args);
  const plan = permutePlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x]);
  return out as Float32Array;
}
