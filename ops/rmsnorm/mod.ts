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
 * - `modulation` (entry point `modulated`: adaLN over a batch of items, Z-Image's
 *   `RMSNorm(x) * (1 + scale)`) multiplies by `1 + scale[b]`, not by `scale[b]`, and adds `shift[b]`
 *   when one is bound, after the weight, with b = ⌊row / rowsPerItem⌋ (the item's rows are
 *   contiguous, `[items, rowsPerItem, cols]`), not row % items.
 *
 * Refused, with an error naming the argument: rows or cols that is not an integer >= 1, `x` that is not
 * a Float32Array of length rows * cols, a weight whose length is not a positive multiple of cols, an eps
 * that is negative or not finite, a `modulation.rowsPerItem` that is not an integer >= 1 dividing rows,
 * and a `modulation.scale` or `modulation.shift` that is not a Float32Array of (rows / rowsPerItem) * cols.
 * A binding past the device's `maxStorageBufferBindingSize` is refused, not split: the limits guard
 * throws a `LimitError` naming it (`x` or `out`, usually) before anything is uploaded (`rmsnormGpu`) or
 * encoded (a plan submitted on resident tensors); rows are independent, so a caller holding a larger
 * activation in several buffers runs one plan per buffer.
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
 * `modulated` is the same kernel (its functions are shared, `wgsl/include/rmsnorm_body.wgsl`) with
 * two more bindings, `scale` and `shift`, read as each value is stored (one vec4 each when
 * cols % 4 == 0, per component otherwise). It has not been timed on a GPU yet.
 *
 * `residual` (`rmsnormResidual`) is the residual add and the norm after it in one dispatch, as the
 * Llama engine's prefill runs them: `x[row0:] += delta` (when `add`), then the rows from row0
 * normalised into `out` from row 0 (so a chunk's last row alone can be normalised for the head). One
 * workgroup of 256 per row, each invocation holding ceil(cols / 256) elements in a local array (a
 * pipeline constant, so one pipeline per row width; rows up to 8,192), reduced by a tree of
 * halvings. It keeps the engine's kernel as it was measured in bench:llm (one array indexed in a
 * loop of constant length, which the driver unrolls); it has no bench row of its own before this one.
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
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type RmsnormVariant } from "./kernels.gen.ts";
import {
  type RmsnormArgs,
  type RmsnormResidualArgs,
  type RmsnormResidualShape,
  type RmsnormShape,
  validateRmsnorm,
  validateRmsnormResidual,
  validateRmsnormResidualShape,
  validateRmsnormShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type RmsnormVariant };

/** The kernel's uniform, in WGSL declaration order; groups = 0 means no weight. */
const PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32" },
  { name: "d", type: "u32" },
  { name: "groups", type: "u32" },
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
 * Plans `rmsnorm` on the GPU.
 *
 * @param gpu the device
 * @param shape `rows`, `cols`, the weight's row count `groups` (absent when there is no weight), `eps`,
 *   and `modulation: { rowsPerItem, shift? }` for the adaLN form
 * @param options kernel override (a variant of `kernel`, or of `modulated` with a modulation)
 * @returns the plan; 256 / threads rows per workgroup. Bindings: `x`, `weight` (inputs; `weight` is
 *   empty when absent) and `out`; with a modulation (entry point `modulated`) `x`, `weight`,
 *   `scale` `[items, cols]`, `shift` `[items, cols]` (inputs; `shift` empty unless `shift: true`) and
 *   `out`, items = rows / rowsPerItem
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
 *
 * @example adaLN: two items (CFG's passes) of 2 rows each, scaled by 1 + scale of their item
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { rmsnormPlan } from "@xpu/ops/ops/rmsnorm";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 1, 2, 2, 3, 3, 4, 4])); // [items 2 x 2 rows, cols 2]
 * const none = gpu.alloc("f32", 0);
 * const scale = gpu.upload(new Float32Array([0, 0, 1, -1])); // [items, cols]
 * const out = gpu.alloc("f32", 8);
 * const plan = rmsnormPlan(gpu, { rows: 4, cols: 2, eps: 0, modulation: { rowsPerItem: 2 } });
 * await gpu.submit([plan, [x, none, scale, none, out]]); // x, weight, scale, shift, out
 * const y = await gpu.read(out); // [1, 1, 1, 1, 2, 0, 2, 0]
 * gpu.destroy();
 * ```
 */
export function rmsnormPlan(
  gpu: ResidentDevice,
  shape: RmsnormShape,
  options?: KernelOptions<RmsnormVariant>,
): KernelPlan {
  requireDevice("rmsnorm", gpu);
  checkOptions("rmsnorm", options);
  const { groups, eps } = validateRmsnormShape(shape);
  const { rows, cols, modulation } = shape;
  const { threads, resident, workgroups } = rowLayout(rows, cols, PER, gpu.limits.maxComputeWorkgroupsPerDimension);
  const values = { rows, d: cols, groups, eps, threads, resident: Number(resident) };
  const x = { name: "x", dtype: "f32", length: rows * cols, role: "input" } as const;
  const weight = { name: "weight", dtype: "f32", length: groups * cols, role: "input" } as const;
  const out = { name: "out", dtype: "f32", length: rows * cols, role: "output" } as const;
  // Read x and the weight once, write out once; per element a square, an add and two multiplies
  // (three with a weight).
  const bytes = 8 * rows * cols + 4 * groups * cols, flops = (groups > 0 ? 5 : 4) * rows * cols;
  if (modulation === undefined) {
    return {
      op: "rmsnorm",
      kernel: gpu.resolve(KERNELS, "kernel", options),
      bindings: [x, weight, out],
      params: packParams(PARAMS, values, "rmsnorm"),
      workgroups,
      cost: { bytes, flops },
    };
  }
  const items = rows / modulation.rowsPerItem, shift = modulation.shift ?? false;
  return {
    op: "rmsnorm",
    kernel: gpu.resolve(KERNELS, "modulated", options),
    bindings: [
      x,
      weight,
      { name: "scale", dtype: "f32", length: items * cols, role: "input" },
      { name: "shift", dtype: "f32", length: shift ? items * cols : 0, role: "input" },
      out,
    ],
    params: packParams(
      MODULATED_PARAMS,
      { ...values, rows_per_item: modulation.rowsPerItem, has_shift: Number(shift) },
      "rmsnorm",
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
 * // The same row modulated: times 1 + 0.5, plus 1.
 * const modulation = { rowsPerItem: 1, scale: new Float32Array(4).fill(0.5), shift: new Float32Array(4).fill(1) };
 * const z = await rmsnormGpu(gpu, { x: new Float32Array([2, -2, 2, -2]), rows: 1, cols: 4, eps: 0, modulation }); // [2.5, -0.5, 2.5, -0.5]
 * gpu.destroy();
 * ```
 */
export async function rmsnormGpu(
  gpu: ResidentDevice,
  args: RmsnormArgs,
  options?: KernelOptions<RmsnormVariant>,
): Promise<Float32Array> {
  requireDevice("rmsnorm", gpu);
  checkOptions("rmsnorm", options);
  const { groups, eps } = validateRmsnorm(args);
  const { rows, cols, modulation } = args;
  const none = new Float32Array(0);
  if (modulation === undefined) {
    const [out] = await gpu.run(rmsnormPlan(gpu, { rows, cols, groups, eps }, options), [args.x, args.weight ?? none]);
    return out as Float32Array;
  }
  const { rowsPerItem, scale, shift } = modulation;
  const plan = rmsnormPlan(
    gpu,
    { rows, cols, groups, eps, modulation: { rowsPerItem, shift: shift !== undefined } },
    options,
  );
  const [out] = await gpu.run(plan, [args.x, args.weight ?? none, scale, shift ?? none]);
  return out as Float32Array;
}

/** `residual`'s uniform, in WGSL declaration order. */
const RESIDUAL_PARAMS: readonly ParamField[] = [
  { name: "hidden", type: "u32" },
  { name: "add", type: "u32" },
  { name: "eps", type: "f32" },
  { name: "row0", type: "u32" },
];

/**
 * Plans {@link rmsnormResidual} on the GPU.
 *
 * @param gpu the device
 * @param shape `rows`, `cols`, `row0`, `add` and `eps`
 * @param options kernel override (a variant of `residual`)
 * @returns the plan; bindings `x` (`[row0 + rows, cols]`, updated in place when `add`), `delta`
 *   (`[row0 + rows, cols]`, input, bound even when not read), `weight` (`[cols]`, input) and `out`
 *   (`[rows, cols]`, output); pipeline constant `PER` = ceil(cols / 256); one workgroup per row
 * @throws Error naming the argument, as {@link validateRmsnormResidualShape}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { rmsnormResidualPlan } from "@xpu/ops/ops/rmsnorm";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 1])), delta = gpu.upload(new Float32Array([1, -3]));
 * const weight = gpu.upload(new Float32Array([1, 1])), out = gpu.alloc("f32", 2);
 * await gpu.submit([rmsnormResidualPlan(gpu, { rows: 1, cols: 2, add: true, eps: 0 }), [x, delta, weight, out]]);
 * console.log(await gpu.read(out), await gpu.read(x)); // [1, -1] and [2, -2]
 * gpu.destroy();
 * ```
 */
export function rmsnormResidualPlan(
  gpu: ResidentDevice,
  shape: RmsnormResidualShape,
  options?: KernelOptions<RmsnormVariant>,
): KernelPlan {
  requireDevice("rmsnormResidual", gpu);
  checkOptions("rmsnormResidual", options);
  const { row0, eps } = validateRmsnormResidualShape(shape);
  const { rows, cols, add } = shape;
  const total = (row0 + rows) * cols;
  return {
    op: "rmsnorm",
    kernel: gpu.resolve(KERNELS, "residual", options),
    bindings: [
      { name: "x", dtype: "f32", length: total, role: "inout" },
      { name: "delta", dtype: "f32", length: total, role: "input" },
      { name: "weight", dtype: "f32", length: cols, role: "input" },
      { name: "out", dtype: "f32", length: rows * cols, role: "output" },
    ],
    params: packParams(RESIDUAL_PARAMS, { hidden: cols, add: Number(add), eps, row0 }, "rmsnormResidual"),
    constants: { PER: Math.ceil(cols / 256) },
    workgroups: rows,
    // x read (and delta read, x written back, when adding), out written; a square, an add, and the
    // scaling's two multiplies per element, one more add with the residual.
    cost: { bytes: 4 * rows * cols * (add ? 4 : 2) + 4 * cols, flops: (add ? 5 : 4) * rows * cols },
  };
}

/**
 * The residual add and the RMSNorm after it, on the GPU.
 *
 * @param gpu the device
 * @param args as {@link rmsnormResidual}
 * @param options kernel override (a variant of `residual`)
 * @returns `x` as updated and `out`
 * @throws Error naming the argument, as {@link validateRmsnormResidual}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { rmsnormResidualGpu } from "@xpu/ops/ops/rmsnorm";
 * const gpu = await acquireDevice();
 * const args = { x: new Float32Array([3, 4]), delta: new Float32Array(2), weight: new Float32Array([1, 1]), rows: 1, cols: 2, add: false, eps: 0 };
 * (await rmsnormResidualGpu(gpu, args)).out; // ~[0.849, 1.131]
 * gpu.destroy();
 * ```
 */
export async function rmsnormResidualGpu(
  gpu: ResidentDevice,
  args: RmsnormResidualArgs,
  options?: KernelOptions<RmsnormVariant>,
): Promise<{ x: Float32Array; out: Float32Array }> {
  requireDevice("rmsnormResidual", gpu);
  checkOptions("rmsnormResidual", options);
  validateRmsnormResidual(args);
  const [x, out] = await gpu.run(rmsnormResidualPlan(gpu, args, options), [args.x, args.delta, args.weight]);
  return { x: x as Float32Array, out: out as Float32Array };
}
