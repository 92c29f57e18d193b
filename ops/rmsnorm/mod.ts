/**
 * rmsnorm: RMS normalisation of the last axis of `x` `[rows, cols]` with an optional per-group weight
 * `[G, cols]` (entry point `kernel`). Matches `torch.nn.functional.rms_norm(x, (cols,), eps=eps) * weight`.
 *
 * Conventions, each pinned by a test that the alternative fails:
 * - The mean square is over cols alone, also when the weight has G > 1 rows (QK-norm, one gamma per
 *   head): `torch.nn.RMSNorm((H, Dh))` reduces over both axes and is a different function.
 * - Row n takes weight row `n % G`, which is what torch's broadcast of a `[G, cols]` weight against
 *   `[..., G, cols]` gives; the grouped axis therefore has to be the one just left of cols. rows need not be
 *   a multiple of G. G = 1 is one shared gamma; no weight means ones.
 * - eps defaults to 1e-6, not torch's default of the float32 machine epsilon (1.19e-7); it must be
 *   finite and >= 0. An all-zero row gives zeros (eps > 0 guards the division).
 *
 * Refused, with an error naming the argument: rows or cols that is not an integer >= 1, `x` that is not
 * a Float32Array of length rows * cols, a weight whose length is not a positive multiple of cols, and an eps
 * that is negative or not finite.
 *
 * The kernel reads and writes vec4s and spreads a row over `threads` invocations (a power of two,
 * 256 / threads rows per workgroup), each taking up to 8 vec4s of it, so a row of up to 8,192
 * elements (8,186 when cols % 4 != 0) is read once into registers, its sum of squares reduced through
 * workgroup memory, and the row scaled and written from there: one read and one write of each
 * element, the least the op can move. Short rows share a workgroup so that each workgroup still has
 * about 32 KiB in flight. Longer rows take a whole workgroup and are read a second time to write
 * them, last chunk first so that part of it comes from L2 (3 of 2 ideal passes). More than 65,535
 * workgroups fold into a second grid dimension.
 *
 * When cols % 4 == 0 every row starts on a vec4 boundary, in line with the weight's vec4s, and the
 * kernel issues its 8 loads of x unconditionally (the index clamped to the row's last vec4, the
 * duplicate dropped by one compare per vec4), masks nothing per element, loads the 8 weight vec4s
 * together after the reduction, and writes each vec4 with one store. Otherwise the components
 * outside a row are masked, loads past the row's end are skipped, the weight is read per component
 * and a partial vec4 is written one component at a time. Both paths reduce through workgroup memory
 * in two steps written out in full (16 partials, then the row's groups; two barriers).
 *
 * The weight is loaded after the reduction (faster at every shape whose rows are held in
 * registers), and `threads` stays a uniform (a constant needs a pipeline per row width); the H200
 * measurements are in `harness/baselines/nvidia-h200-design.md` (rmsnorm).
 *
 * Why the kernel holds its 8 vec4s as eight named values written out by hand, never as a local
 * array indexed in a loop: Deno's WGSL compiler (naga) bounds-checks every index into a
 * function-scope array, and the driver may then keep the array in per-invocation local memory
 * (spilled to VRAM through L1/L2); an earlier array-based version of this kernel was several times
 * slower on the H200. Partial vec4s are likewise read and written through their named components
 * (.x .. .w), not a loop over a component index.
 *
 * @module
 */

import { rowLayout } from "../../harness/grid.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type RmsnormArgs, type RmsnormShape, validateRmsnorm, validateRmsnormShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/** The kernel's uniform, in WGSL declaration order; groups = 0 means no weight. */
const PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32" },
  { name: "d", type: "u32" },
  { name: "groups", type: "u32" },
  { name: "eps", type: "f32" },
  { name: "threads", type: "u32" },
  { name: "resident", type: "u32" },
];

/** vec4s each invocation holds of its row (`PER` in the WGSL). */
const PER = 8;

/**
 * Plans `rmsnorm` on the GPU.
 *
 * @param gpu the device
 * @param shape `rows`, `cols`, the weight's row count `groups` (absent when there is no weight) and `eps`
 * @param options kernel override
 * @returns the plan; bindings `x`, `weight` (inputs; `weight` is empty when absent) and `out`;
 *   256 / threads rows per workgroup
 * @throws Error naming the argument, as {@link validateRmsnormShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { rmsnormPlan } from "@xpu/ops/ops/rmsnorm";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([3, 4, 1, 1]));
 * const weight = gpu.upload(new Float32Array([2, 2]));
 * const out = gpu.alloc("f32", 4);
 * await gpu.submit([rmsnormPlan(gpu, { rows: 2, cols: 2, groups: 1, eps: 0 }), [x, weight, out]]);
 * const y = await gpu.read(out); // ~[1.697, 2.263, 2, 2]
 * gpu.destroy();
 * ```
 */
export function rmsnormPlan(
  gpu: ResidentDevice,
  shape: RmsnormShape,
  options: KernelOptions = {},
): KernelPlan {
  const { groups, eps } = validateRmsnormShape(shape);
  const { rows, cols } = shape;
  const { threads, resident, workgroups } = rowLayout(rows, cols, PER, gpu.limits.maxComputeWorkgroupsPerDimension);
  return {
    op: "rmsnorm",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: rows * cols, role: "input" },
      { name: "weight", dtype: "f32", length: groups * cols, role: "input" },
      { name: "out", dtype: "f32", length: rows * cols, role: "output" },
    ],
    params: packParams(PARAMS, { rows, d: cols, groups, eps, threads, resident: Number(resident) }, "rmsnorm"),
    workgroups,
    // Read x and the weight once, write out once; per element a square, an add and two multiplies
    // (three with a weight).
    cost: { bytes: 8 * rows * cols + 4 * groups * cols, flops: (groups > 0 ? 5 : 4) * rows * cols },
  };
}

/**
 * RMS normalisation of each row of `x` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link rmsnorm}
 * @param options kernel override
 * @returns the result, length rows * cols
 * @throws Error naming the argument, as {@link validateRmsnorm}
 *
 * @example
 * ```ts
 * import { acquireDevice, rmsnormGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const y = await rmsnormGpu(gpu, { x: new Float32Array([2, -2, 2, -2]), rows: 1, cols: 4, eps: 0 }); // [1, -1, 1, -1]
 * gpu.destroy();
 * ```
 */
export async function rmsnormGpu(
  gpu: ResidentDevice,
  args: RmsnormArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  const { groups, eps } = validateRmsnorm(args);
  const plan = rmsnormPlan(gpu, { rows: args.rows, cols: args.cols, groups, eps }, options);
  const [out] = await gpu.run(plan, [args.x, args.weight ?? new Float32Array(0)]);
  return out as Float32Array;
}
