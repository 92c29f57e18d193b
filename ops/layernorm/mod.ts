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
 * - No weight and no bias is torch's `elementwise_affine=False` (Anima's and Z-Image's adaLN
 *   LayerNorms, eps 1e-6): ones and zeros, empty bindings.
 * - `modulation` (entry point `modulated`: adaLN over a batch of items, Anima's
 *   `LN(x) * (1 + scale) + shift`, Z-Image's final `LN(x) * (1 + scale)`) multiplies by
 *   `1 + scale[b]`, not by `scale[b]`, and adds `shift[b]` when one is bound, after weight and bias,
 *   with b = ⌊row / rowsPerItem⌋ (the item's rows are contiguous, `[items, rowsPerItem, cols]`), not
 *   row % items.
 *
 * Refused, with an error naming the argument: rows or cols that is not an integer >= 1, `x` that is not
 * a Float32Array of length rows * cols, a weight or bias that is not a Float32Array of length cols, an
 * eps that is negative or not finite, a `modulation.rowsPerItem` that is not an integer >= 1 dividing
 * rows, and a `modulation.scale` or `modulation.shift` that is not a Float32Array of
 * (rows / rowsPerItem) * cols. A binding past the device's `maxStorageBufferBindingSize` is refused, not
 * split: the limits guard throws a `LimitError` naming it (`x` or `out`, usually) before anything is
 * uploaded (`layernormGpu`) or encoded (a plan submitted on resident tensors); rows are independent, so
 * a caller holding a larger activation in several buffers runs one plan per buffer.
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
 * `modulated` is the same kernel (its functions are shared, `wgsl/include/layernorm_body.wgsl`) with
 * two more bindings, `scale` and `shift`, read as each value is stored (one vec4 each when
 * cols % 4 == 0, per component otherwise). It has not been timed on a GPU yet.
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
import { checkOptions } from "../validate.ts";
import { KERNELS, type LayernormVariant } from "./kernels.gen.ts";
import { type LayernormArgs, type LayernormShape, validateLayernorm, validateLayernormShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type LayernormVariant };

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

/** `modulated`'s uniform: the kernel's, then the modulation's rows per item and whether a shift is bound. */
const MODULATED_PARAMS: readonly ParamField[] = [
  ...PARAMS,
  { name: "rows_per_item", type: "u32" },
  { name: "has_shift", type: "u32" },
];

/** vec4s each invocation holds of its row (`PER` in the WGSL). */
const PER = 8;

/**
 * Plans `layernorm` on the GPU.
 *
 * @param gpu the device
 * @param shape `rows`, `cols`, whether there is a weight and a bias, `eps`, and
 *   `modulation: { rowsPerItem, shift? }` for the adaLN form
 * @param options kernel override (a variant of `kernel`, or of `modulated` with a modulation)
 * @returns the plan; 256 / threads rows per workgroup. Bindings: `x`, `weight`, `bias` (inputs; empty
 *   when absent) and `out`; with a modulation (entry point `modulated`) `x`, `weight`, `bias`,
 *   `scale` `[items, cols]`, `shift` `[items, cols]` (inputs; `shift` empty unless `shift: true`) and
 *   `out`, items = rows / rowsPerItem
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
 *
 * @example adaLN without affine (Anima): two items of one row each, LN(x) * (1 + scale) + shift
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { layernormPlan } from "@xpu/ops/ops/layernorm";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 3, 0, 4])); // [items 2 x 1 row, cols 2]
 * const none = gpu.alloc("f32", 0);
 * const scale = gpu.upload(new Float32Array([0, 0, 1, 1]));
 * const shift = gpu.upload(new Float32Array([0, 0, 5, 5]));
 * const out = gpu.alloc("f32", 4);
 * const plan = layernormPlan(gpu, { rows: 2, cols: 2, eps: 0, modulation: { rowsPerItem: 1, shift: true } });
 * await gpu.submit([plan, [x, none, none, scale, shift, out]]); // x, weight, bias, scale, shift, out
 * const y = await gpu.read(out); // [-1, 1, 3, 7]
 * gpu.destroy();
 * ```
 */
export function layernormPlan(
  gpu: ResidentDevice,
  shape: LayernormShape,
  options?: KernelOptions<LayernormVariant>,
): KernelPlan {
  checkOptions("layernorm", options);
  const eps = validateLayernormShape(shape);
  const { rows, cols } = shape;
  const hasWeight = shape.hasWeight ?? false;
  const hasBias = shape.hasBias ?? false;
  const weight = hasWeight ? cols : 0;
  const bias = hasBias ? cols : 0;
  const { threads, resident, workgroups } = rowLayout(rows, cols, PER, gpu.limits.maxComputeWorkgroupsPerDimension);
  const values = {
    rows,
    d: cols,
    has_weight: Number(hasWeight),
    has_bias: Number(hasBias),
    eps,
    threads,
    resident: Number(resident),
  };
  const inputs = [
    { name: "x", dtype: "f32", length: rows * cols, role: "input" },
    { name: "weight", dtype: "f32", length: weight, role: "input" },
    { name: "bias", dtype: "f32", length: bias, role: "input" },
  ] as const;
  const out = { name: "out", dtype: "f32", length: rows * cols, role: "output" } as const;
  // Read x, weight and bias once, write out once. Per element: an add for the mean, a subtract,
  // a square and an add for the variance, a subtract and a multiply to normalise, then one more
  // for the weight and one for the bias.
  const bytes = 8 * rows * cols + 4 * (weight + bias);
  const flops = (6 + Number(hasWeight) + Number(hasBias)) * rows * cols;
  const { modulation } = shape;
  if (modulation === undefined) {
    return {
      op: "layernorm",
      kernel: gpu.resolve(KERNELS, "kernel", options),
      bindings: [...inputs, out],
      params: packParams(PARAMS, values, "layernorm"),
      workgroups,
      cost: { bytes, flops },
    };
  }
  const items = rows / modulation.rowsPerItem, shift = modulation.shift ?? false;
  return {
    op: "layernorm",
    kernel: gpu.resolve(KERNELS, "modulated", options),
    bindings: [
      ...inputs,
      { name: "scale", dtype: "f32", length: items * cols, role: "input" },
      { name: "shift", dtype: "f32", length: shift ? items * cols : 0, role: "input" },
      out,
    ],
    params: packParams(
      MODULATED_PARAMS,
      { ...values, rows_per_item: modulation.rowsPerItem, has_shift: Number(shift) },
      "layernorm",
    ),
    workgroups,
    // And scale and shift read once (items rows each), an add and a multiply per element (and an add
    // for the shift).
    cost: {
      bytes: bytes + 4 * items * cols * (shift ? 2 : 1),
      flops: flops + (shift ? 3 : 2) * rows * cols,
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
 * // The same row modulated: times 1 + 1, plus 0.5.
 * const modulation = { rowsPerItem: 1, scale: new Float32Array([1, 1]), shift: new Float32Array([0.5, 0.5]) };
 * const z = await layernormGpu(gpu, { x: new Float32Array([1, 3]), rows: 1, cols: 2, eps: 0, modulation }); // [-1.5, 2.5]
 * gpu.destroy();
 * ```
 */
export async function layernormGpu(
  gpu: ResidentDevice,
  args: LayernormArgs,
  options?: KernelOptions<LayernormVariant>,
): Promise<Float32Array> {
  checkOptions("layernorm", options);
  const eps = validateLayernorm(args);
  const { rows, cols, weight, bias, modulation } = args;
  const shape = { rows, cols, hasWeight: weight !== undefined, hasBias: bias !== undefined, eps };
  const none = new Float32Array(0);
  if (modulation === undefined) {
    const [out] = await gpu.run(layernormPlan(gpu, shape, options), [args.x, weight ?? none, bias ?? none]);
    return out as Float32Array;
  }
  const { rowsPerItem, scale, shift } = modulation;
  const plan = layernormPlan(gpu, { ...shape, modulation: { rowsPerItem, shift: shift !== undefined } }, options);
  const [out] = await gpu.run(plan, [args.x, weight ?? none, bias ?? none, scale, shift ?? none]);
  return out as Float32Array;
}
