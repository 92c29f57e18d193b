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
 * `rows` with `D % 4 == 0` finds each vec4's column of `b` by carrying it from vec4 to vec4 and
 * block to block (an add and a compare) rather than dividing, and chooses the operation once,
 * outside its loop. Measured on the H200, 2026-11-30, GPU timestamps, warm clocks (Deno 2.9.6 over
 * Vulkan, median of 10), add, as a share of the 4,520 GB/s bandwidth roofline: 16384 x 4096 in
 * 0.1323 ms = 4,059 GB/s (89.8%), 1024 x 4096 in 0.0150 ms = 2,239 GB/s (49.5%); the kernel it
 * replaced (4 vec4s per invocation, a division per vec4, the operation chosen per vec4) reached
 * 87.8% and 45.1%, the same code as now at 4 vec4s per invocation 87.5% and 49.1%.
 *
 * @module
 */

import { streamWorkgroups } from "../../harness/grid.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import {
  type ElementwiseArgs,
  type ElementwiseOp,
  type ElementwiseRowsArgs,
  validateElementwise,
  validateElementwiseRows,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

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
 */
export function elementwisePlan(
  gpu: ResidentDevice,
  shape: { op: ElementwiseOp; n: number },
  options: KernelOptions = {},
): KernelPlan {
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
 */
export async function elementwiseGpu(
  gpu: ResidentDevice,
  args: ElementwiseArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateElementwise(args);
  const plan = elementwisePlan(gpu, { op: args.op, n: args.a.length }, options);
  const [out] = await gpu.run(plan, [args.a, args.b]);
  return out as Float32Array;
}

/**
 * Plans `elementwiseRows` on the GPU for `a` of shape `[S, D]`.
 *
 * @param gpu the device
 * @param shape the operation and `S`, `D`
 * @param options kernel override
 * @returns the plan; bindings `a`, `b` (inputs) and `out` (output)
 */
export function elementwiseRowsPlan(
  gpu: ResidentDevice,
  shape: { op: ElementwiseOp; S: number; D: number },
  options: KernelOptions = {},
): KernelPlan {
  const { op, S, D } = shape;
  const n = S * D;
  return {
    op: "elementwise",
    kernel: gpu.resolve(KERNELS, "rows", options),
    bindings: [
      { name: "a", dtype: "f32", length: n, role: "input" },
      { name: "b", dtype: "f32", length: D, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(
      [{ name: "n", type: "u32" }, { name: "d", type: "u32" }, { name: "op", type: "u32" }],
      { n, d: D, op: OP_CODES[op] },
      "elementwiseRows",
    ),
    workgroups: streamWorkgroups(n, ROWS_BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 8 * n + 4 * D, flops: n },
  };
}

/**
 * `a[s, d] (+|*) b[d]` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link elementwiseRows}
 * @param options kernel override
 * @returns the result
 */
export async function elementwiseRowsGpu(
  gpu: ResidentDevice,
  args: ElementwiseRowsArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateElementwiseRows(args);
  const plan = elementwiseRowsPlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.a, args.b]);
  return out as Float32Array;
}
