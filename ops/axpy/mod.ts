/**
 * axpy: `out[i] = y[i] + alpha * x[i]` with a scalar `alpha`, as `torch.add(y, x, alpha=alpha)` (BLAS's
 * saxpy). It exists because elementwise is same-shape only: `latent += dt * velocity` would
 * otherwise cost a buffer of copies of `dt` and a multiply, then an add.
 *
 * Two entry points: `kernel` (`axpyGpu`) writes a third buffer; `inplace` (`axpyInplaceGpu`)
 * updates `y` through a single read_write binding. Binding one buffer as both `y` and `out` of
 * `kernel` is not a shortcut to in-place: WebGPU rejects a buffer bound read-only and writable in
 * one dispatch (the device here raises that as an error; unchecked, it reads back zeros).
 *
 * Conventions, and why:
 * - Rounded once, like a fused multiply-add and like torch.add's vectorised CPU loop. At
 *   `alpha = f32(0.1)`, `x = 3`, `y = -f32(0.3)` the answer is -2^-27; multiply-then-add cancels to 0.
 *   WGSL does not promise that `fma()` rounds once (llvmpipe rounds twice), so the kernels check a
 *   known answer and, where `fma()` is not fused, compute the once-rounded result in integer
 *   arithmetic instead; see `wgsl/include/exact_fma.wgsl`. Subnormal results are exact on that path; where
 *   `fma()` is fused they are whatever the device's fma gives (some flush them to zero).
 * - `alpha` is rounded to f32 before use, as torch casts it to the tensors' dtype.
 * - Nothing is broadcast: `x` and `y` have equal lengths.
 *
 * The kernels stream vec4s as elementwise's do (four per invocation, loads before stores,
 * 4096-element blocks in a grid-stride loop over a grid that never folds; tensors 16-byte padded,
 * as `ResidentDevice.alloc` makes them). The fma probe is uniform, so a dispatch takes one path
 * throughout: the vec4 `fma()` loop where it is fused (the H200), the integer fallback elsewhere.
 *
 * @module
 */

import { streamWorkgroups } from "../../harness/grid.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { type AxpyVariant, KERNELS } from "./kernels.gen.ts";
import { type AxpyArgs, type AxpyShape, validateAxpy, validateAxpyShape } from "./reference.ts";

export * from "./reference.ts";
export { type AxpyVariant, KERNELS };

const PARAMS: readonly ParamField[] = [
  { name: "n", type: "u32" },
  { name: "a", type: "f32" },
  { name: "probe_a", type: "f32" },
  { name: "probe_x", type: "f32" },
  { name: "probe_y", type: "f32" },
];

/** The known answer that tells a fused fma() from one that rounds twice (see the module doc). */
const FMA_PROBE = { probe_a: Math.fround(0.1), probe_x: 3, probe_y: -Math.fround(0.3) };

/** Elements one workgroup moves per block: 256 invocations × 4 vec4s (`WG * PER * 4` in the WGSL). */
const BLOCK_ELEMENTS = 256 * 4 * 4;

function params(n: number, alpha: number): ArrayBuffer {
  return packParams(PARAMS, { n, a: alpha, ...FMA_PROBE }, "axpy");
}

/**
 * Plans `axpy` on the GPU for arrays of length `n`.
 *
 * @param gpu the device
 * @param shape the scalar `alpha` and the length `n`
 * @param options kernel override
 * @returns the plan; bindings `x`, `y` (inputs) and `out` (output)
 * @throws Error naming the argument, as {@link validateAxpyShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { axpyPlan } from "@xpu/ops/ops/axpy";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2]));
 * const y = gpu.upload(new Float32Array([10, 20]));
 * const out = gpu.alloc("f32", 2);
 * await gpu.submit([axpyPlan(gpu, { alpha: 3, n: 2 }), [x, y, out]]);
 * const z = await gpu.read(out); // [13, 26]
 * gpu.destroy();
 * ```
 */
export function axpyPlan(
  gpu: ResidentDevice,
  shape: AxpyShape,
  options?: KernelOptions<AxpyVariant>,
): KernelPlan {
  checkOptions("axpy", options);
  validateAxpyShape(shape);
  const { alpha, n } = shape;
  return {
    op: "axpy",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "y", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: params(n, alpha),
    workgroups: streamWorkgroups(n, BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 12 * n, flops: 2 * n },
  };
}

/**
 * Plans `axpy` in place on the GPU for arrays of length `n`: `y` is read and written through one
 * binding.
 *
 * @param gpu the device
 * @param shape the scalar `alpha` and the length `n`
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `y` (inout)
 * @throws Error naming the argument, as {@link validateAxpyShape}
 *
 * @example Resident tensors: y updated in place, step after step
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { axpyInplacePlan } from "@xpu/ops/ops/axpy";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2]));
 * const y = gpu.upload(new Float32Array([10, 20]));
 * const step = axpyInplacePlan(gpu, { alpha: 0.5, n: 2 });
 * await gpu.submit([step, [x, y]], [step, [x, y]]);
 * const z = await gpu.read(y); // [11, 22]
 * gpu.destroy();
 * ```
 */
export function axpyInplacePlan(
  gpu: ResidentDevice,
  shape: AxpyShape,
  options?: KernelOptions<AxpyVariant>,
): KernelPlan {
  checkOptions("axpy", options);
  validateAxpyShape(shape);
  const { alpha, n } = shape;
  return {
    op: "axpy",
    kernel: gpu.resolve(KERNELS, "inplace", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "y", dtype: "f32", length: n, role: "inout" },
    ],
    params: params(n, alpha),
    workgroups: streamWorkgroups(n, BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 12 * n, flops: 2 * n },
  };
}

/**
 * `y + alpha * x` on the GPU, into a new buffer.
 *
 * @param gpu the device
 * @param args as {@link axpy}
 * @param options kernel override
 * @returns the result
 * @throws Error naming the argument, as {@link validateAxpy}
 *
 * @example
 * ```ts
 * import { acquireDevice, axpyGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const z = await axpyGpu(gpu, { alpha: 2, x: new Float32Array([1, 2]), y: new Float32Array([10, 20]) }); // [12, 24]
 * gpu.destroy();
 * ```
 */
export async function axpyGpu(
  gpu: ResidentDevice,
  args: AxpyArgs,
  options?: KernelOptions<AxpyVariant>,
): Promise<Float32Array> {
  checkOptions("axpy", options);
  validateAxpy(args);
  const plan = axpyPlan(gpu, { alpha: args.alpha, n: args.x.length }, options);
  const [out] = await gpu.run(plan, [args.x, args.y]);
  return out as Float32Array;
}

/**
 * `y += alpha * x` on the GPU, through the `inplace` entry point. The host array `args.y` is uploaded
 * and left unchanged; the updated `y` is read back and returned. To keep `y` on the device, submit
 * {@link axpyInplacePlan} with resident tensors instead.
 *
 * @param gpu the device
 * @param args as {@link axpy}
 * @param options kernel override
 * @returns the new `y`
 * @throws Error naming the argument, as {@link validateAxpy}
 *
 * @example
 * ```ts
 * import { acquireDevice, axpyInplaceGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const z = await axpyInplaceGpu(gpu, { alpha: -1, x: new Float32Array([1]), y: new Float32Array([5]) }); // [4]
 * gpu.destroy();
 * ```
 */
export async function axpyInplaceGpu(
  gpu: ResidentDevice,
  args: AxpyArgs,
  options?: KernelOptions<AxpyVariant>,
): Promise<Float32Array> {
  checkOptions("axpy", options);
  validateAxpy(args);
  const plan = axpyInplacePlan(gpu, { alpha: args.alpha, n: args.x.length }, options);
  const [y] = await gpu.run(plan, [args.x, args.y]);
  return y as Float32Array;
}
