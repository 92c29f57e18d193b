/**
 * elementwise: add and multiply over equal lengths (`elementwise`, entry point `kernel`), and with
 * the right-hand side broadcast along the last dimension (`elementwiseRows`, entry point `rows`).
 * Matches `torch.add` / `torch.mul`; see `reference.ts` for the conventions and what is refused.
 *
 * How the kernels run, and why: a streaming op is bound by memory, so each invocation moves
 * several vec4s of every array with all its loads issued before its first store (enough bytes in
 * flight to cover memory latency), and workgroups take blocks in a grid-stride loop over a grid
 * capped at maxComputeWorkgroupsPerDimension: 4 vec4s per invocation (4096-element blocks) for
 * `kernel`, 2 (2048-element blocks) for `rows` (measured below). The grid never folds into y: the
 * first kernel here, one scalar per invocation on a grid folded past 65,535 workgroups, reached
 * 66.7% of the H200's bandwidth roofline at 16 Mi elements and 21.7% at 64 Mi. The last `n % 4`
 * elements are written one component at a time, so nothing past the end is touched; the kernels
 * read the last partial vec4 whole, which relies on tensors being 16-byte padded, as
 * `ResidentDevice.alloc` makes them.
 *
 * `rows` with `cols % 4 == 0` finds each vec4's column of `b` by carrying it from vec4 to vec4 and
 * block to block (an add and a compare) rather than dividing, and chooses the operation once,
 * outside its loop. On the H200 it reaches 89.8% of the bandwidth roofline at 16384 x 4096 (the
 * measurements, and the designs it replaced: `harness/baselines/nvidia-h200-design.md`,
 * elementwise).
 *
 * @module
 */

import { streamWorkgroups } from "../../harness/grid.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { type ElementwiseVariant, KERNELS } from "./kernels.gen.ts";
import {
  type ElementwiseArgs,
  type ElementwiseOp,
  type ElementwiseRowsArgs,
  type ElementwiseRowsShape,
  type ElementwiseShape,
  validateElementwise,
  validateElementwiseRows,
  validateElementwiseRowsShape,
  validateElementwiseShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type ElementwiseVariant, KERNELS };

const OP_CODES: Record<ElementwiseOp, number> = { add: 0, multiply: 1 };

/** Elements one workgroup of `kernel` moves per block: 256 invocations × 4 vec4s (`WG * PER * 4` in the WGSL). */
const BLOCK_ELEMENTS = 256 * 4 * 4;

/** Elements one workgroup of `rows` moves per block: 256 invocations × 2 vec4s (`WG * PER * 4` in the WGSL). */
const ROWS_BLOCK_ELEMENTS = 256 * 2 * 4;

/**
 * Plans `elementwise` on the GPU for arrays of length `n`.
 *
 * @param gpu the device
 * @param shape the operation and the length
 * @param options kernel override
 * @returns the plan; bindings `a`, `b` (inputs) and `out` (output)
 * @throws Error naming the argument, as {@link validateElementwiseShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { elementwisePlan } from "@xpu/ops/ops/elementwise";
 * const gpu = await acquireDevice();
 * const a = gpu.upload(new Float32Array([1, 2, 3]));
 * const b = gpu.upload(new Float32Array([10, 20, 30]));
 * const out = gpu.alloc("f32", 3);
 * await gpu.submit([elementwisePlan(gpu, { op: "add", n: 3 }), [a, b, out]]);
 * const sum = await gpu.read(out); // [11, 22, 33]
 * gpu.destroy();
 * ```
 */
export function elementwisePlan(
  gpu: ResidentDevice,
  shape: ElementwiseShape,
  options?: KernelOptions<ElementwiseVariant>,
): KernelPlan {
  checkOptions("elementwise", options);
  validateElementwiseShape(shape);
  const { op, n } = shape;
  return {
    op: "elementwise",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "a", dtype: "f32", length: n, role: "input" },
      { name: "b", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(
      [{ name: "n", type: "u32" }, { name: "op", type: "u32" }],
      { n, op: OP_CODES[op] },
      "elementwise",
    ),
    workgroups: streamWorkgroups(n, BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 12 * n, flops: n },
  };
}

/**
 * `a (+|*) b` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link elementwise}
 * @param options kernel override
 * @returns the result
 * @throws Error naming the argument, as {@link validateElementwise}
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwiseGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const a = new Float32Array([1, 2]);
 * const product = await elementwiseGpu(gpu, { op: "multiply", a, b: new Float32Array([3, 4]) }); // [3, 8]
 * gpu.destroy();
 * ```
 */
export async function elementwiseGpu(
  gpu: ResidentDevice,
  args: ElementwiseArgs,
  options?: KernelOptions<ElementwiseVariant>,
): Promise<Float32Array> {
  checkOptions("elementwise", options);
  validateElementwise(args);
  const plan = elementwisePlan(gpu, { op: args.op, n: args.a.length }, options);
  const [out] = await gpu.run(plan, [args.a, args.b]);
  return out as Float32Array;
}

/**
 * Plans `elementwiseRows` on the GPU for `a` of shape `[rows, cols]`.
 *
 * @param gpu the device
 * @param shape the operation and `rows`, `cols`
 * @param options kernel override
 * @returns the plan; bindings `a`, `b` (inputs) and `out` (output)
 * @throws Error naming the argument, as {@link validateElementwiseRowsShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { elementwiseRowsPlan } from "@xpu/ops/ops/elementwise";
 * const gpu = await acquireDevice();
 * const a = gpu.upload(new Float32Array([1, 2, 3, 4, 5, 6]));
 * const bias = gpu.upload(new Float32Array([10, 20, 30]));
 * const out = gpu.alloc("f32", 6);
 * await gpu.submit([elementwiseRowsPlan(gpu, { op: "add", rows: 2, cols: 3 }), [a, bias, out]]);
 * const y = await gpu.read(out); // [11, 22, 33, 14, 25, 36]
 * gpu.destroy();
 * ```
 */
export function elementwiseRowsPlan(
  gpu: ResidentDevice,
  shape: ElementwiseRowsShape,
  options?: KernelOptions<ElementwiseVariant>,
): KernelPlan {
  checkOptions("elementwiseRows", options);
  validateElementwiseRowsShape(shape);
  const { op, rows, cols } = shape;
  const n = rows * cols;
  return {
    op: "elementwise",
    kernel: gpu.resolve(KERNELS, "rows", options),
    bindings: [
      { name: "a", dtype: "f32", length: n, role: "input" },
      { name: "b", dtype: "f32", length: cols, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(
      [{ name: "n", type: "u32" }, { name: "d", type: "u32" }, { name: "op", type: "u32" }],
      { n, d: cols, op: OP_CODES[op] },
      "elementwiseRows",
    ),
    workgroups: streamWorkgroups(n, ROWS_BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 8 * n + 4 * cols, flops: n },
  };
}

/**
 * `a[s, d] (+|*) b[d]` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link elementwiseRows}
 * @param options kernel override
 * @returns the result
 * @throws Error naming the argument, as {@link validateElementwiseRows}
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwiseRowsGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const a = new Float32Array([1, 2, 3, 4]);
 * const y = await elementwiseRowsGpu(gpu, { op: "multiply", a, b: new Float32Array([2, 3]), rows: 2, cols: 2 }); // [2, 6, 6, 12]
 * gpu.destroy();
 * ```
 */
export async function elementwiseRowsGpu(
  gpu: ResidentDevice,
  args: ElementwiseRowsArgs,
  options?: KernelOptions<ElementwiseVariant>,
): Promise<Float32Array> {
  checkOptions("elementwiseRows", options);
  validateElementwiseRows(args);
  const plan = elementwiseRowsPlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.a, args.b]);
  return out as Float32Array;
}
