/**
 * layernorm: layer normalisation of the last axis of `x` `[rows, cols]` with an optional weight and bias
 * `[cols]` (entry point `kernel`). Matches `torch.nn.functional.layer_norm(x, (cols,), weight, bias, eps)`.
 *
 * Conventions, each pinned by a test that the alternative fails:
 * - The variance is biased (divided by cols), as torch's layer_norm; `torch.var`'s default divides
 *   by cols - 1, which at cols = 2 scales every output by 1/sqrt(2).
 * - eps is added inside the square root, `sqrt(var + eps)`, not to the standard deviation; for a
 *   row whose variance is small next to eps the two differ several-fold.
 * - eps defaults to 1e-5, torch's default; it must be finite and >= 0. A constant row gives zeros
 *   (then the bias): eps > 0 guards the division.
 *
 * Refused, with an error naming the argument: rows or cols that is not an integer >= 1, `x` that is not
 * a Float32Array of length rows * cols, a weight or bias that is not a Float32Array of length cols, and an
 * eps that is negative or not finite.
 *
 * The kernel reads and writes vec4s and spreads a row over `threads` invocations (a power of two,
 * 256 / threads rows per workgroup), each taking up to 8 vec4s of it, so a row of up to 8,192
 * elements (8,186 when cols % 4 != 0) is read once into registers and written from there: one read and
 * one write of each element, the least the op can move. Short rows share a workgroup so that each
 * workgroup still has about 32 KiB in flight; longer rows take a whole workgroup and are read a
 * second time to write them, last chunk first so that part of it comes from L2 (3 of 2 ideal
 * passes). More than 65,535 workgroups fold into a second grid dimension.
 *
 * Mean and variance stay stable without a second pass over memory: values are shifted by the row's
 * first element (a row of 1000 + small noise keeps the accuracy of a row near zero, where the
 * textbook E[x^2] - E[x]^2 in f32 would cancel to noise), each invocation takes the mean and the
 * squared deviations of its values in two passes over its registers, and the workgroup combines the
 * invocations' (count, mean, squared deviations) exactly, as Chan et al.'s parallel variance does.
 *
 * When cols % 4 == 0 every row starts on a vec4 boundary, in line with the vec4s of weight and bias,
 * and the kernel issues its 8 loads of x unconditionally (the index clamped to the row's last vec4,
 * the duplicate zeroed and left out of the counts by one compare per vec4), loads the weight and
 * bias vec4s with them, masks nothing per element, and writes each vec4 with one store. Otherwise
 * the components outside a row are masked, loads past the row's end are skipped, weight and bias are
 * read per component, and a partial vec4 is written one component at a time. Both paths reduce
 * through workgroup memory in two steps written out in full (16 partials, then the row's groups;
 * two barriers per reduction).
 *
 * Weight and bias are loaded alongside x, not after the reductions (that was slower at every
 * shape), and `threads` stays a uniform (a constant was faster but needs a pipeline per row width);
 * the H200 measurements are in `harness/baselines/nvidia-h200-design.md` (layernorm).
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
import { type LayernormArgs, type LayernormShape, validateLayernorm, validateLayernormShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/** The kernel's uniform, in WGSL declaration order. */
const PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32" },
  { name: "d", type: "u32" },
  { name: "has_weight", type: "u32" },
  { name: "has_bias", type: "u32" },
  { name: "eps", type: "f32" },
  { name: "threads", type: "u32" },
  { name: "resident", type: "u32" },
];

/** vec4s each invocation holds of its row (`PER` in the WGSL). */
const PER = 8;

/**
 * Plans `layernorm` on the GPU.
 *
 * @param gpu the device
 * @param shape `rows`, `cols`, whether there is a weight and a bias, and `eps`
 * @param options kernel override
 * @returns the plan; bindings `x`, `weight`, `bias` (inputs; empty when absent) and `out`; 256 / threads
 *   rows per workgroup
 * @throws Error naming the argument, as {@link validateLayernormShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { layernormPlan } from "@xpu/ops/ops/layernorm";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 3, 0, 4]));
 * const none = gpu.alloc("f32", 0);
 * const bias = gpu.upload(new Float32Array([10, 10]));
 * const out = gpu.alloc("f32", 4);
 * await gpu.submit([layernormPlan(gpu, { rows: 2, cols: 2, hasBias: true, eps: 0 }), [x, none, bias, out]]);
 * const y = await gpu.read(out); // [9, 11, 9, 11]
 * gpu.destroy();
 * ```
 */
export function layernormPlan(
  gpu: ResidentDevice,
  shape: LayernormShape,
  options: KernelOptions = {},
): KernelPlan {
  const eps = validateLayernormShape(shape);
  const { rows, cols } = shape;
  const hasWeight = shape.hasWeight ?? false;
  const hasBias = shape.hasBias ?? false;
  const weight = hasWeight ? cols : 0;
  const bias = hasBias ? cols : 0;
  const { threads, resident, workgroups } = rowLayout(rows, cols, PER, gpu.limits.maxComputeWorkgroupsPerDimension);
  return {
    op: "layernorm",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: rows * cols, role: "input" },
      { name: "weight", dtype: "f32", length: weight, role: "input" },
      { name: "bias", dtype: "f32", length: bias, role: "input" },
      { name: "out", dtype: "f32", length: rows * cols, role: "output" },
    ],
    params: packParams(
      PARAMS,
      {
        rows,
        d: cols,
        has_weight: Number(hasWeight),
        has_bias: Number(hasBias),
        eps,
        threads,
        resident: Number(resident),
      },
      "layernorm",
    ),
    workgroups,
    // Read x, weight and bias once, write out once. Per element: an add for the mean, a subtract,
    // a square and an add for the variance, a subtract and a multiply to normalise, then one more
    // for the weight and one for the bias.
    cost: {
      bytes: 8 * rows * cols + 4 * (weight + bias),
      flops: (6 + Number(hasWeight) + Number(hasBias)) * rows * cols,
    },
  };
}

/**
 * Layer normalisation of each row of `x` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link layernorm}
 * @param options kernel override
 * @returns the result, length rows * cols
 * @throws Error naming the argument, as {@link validateLayernorm}
 *
 * @example
 * ```ts
 * import { acquireDevice, layernormGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const y = await layernormGpu(gpu, { x: new Float32Array([1, 3]), rows: 1, cols: 2, eps: 0 }); // [-1, 1]
 * gpu.destroy();
 * ```
 */
export async function layernormGpu(
  gpu: ResidentDevice,
  args: LayernormArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  const eps = validateLayernorm(args);
  const { rows, cols, weight, bias } = args;
  const plan = layernormPlan(
    gpu,
    { rows, cols, hasWeight: weight !== undefined, hasBias: bias !== undefined, eps },
    options,
  );
  const none = new Float32Array(0);
  const [out] = await gpu.run(plan, [args.x, weight ?? none, bias ?? none]);
  return out as Float32Array;
}
