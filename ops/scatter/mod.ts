/**
 * scatter: indexed accumulation (`scatter`, entry point `kernel`), as
 * `torch.zeros(N, D).scatter_add_(1, index, src)`; the goldens (`goldens/gen.py`) hold it to torch.
 *
 * What it refuses and why each convention was chosen (details in `reference.ts`):
 * - Colliding indices accumulate: the only rule whose answer does not depend on the order in which
 *   a GPU's writes land. `scatter_` ("last write wins") is not offered; torch itself documents it
 *   as non-deterministic on collision.
 * - `self` is implicitly zero; an index outside `[0, D)` is dropped (torch raises; a kernel
 *   cannot), `-1` included; `index` is `Int32Array` because WGSL has no 64-bit integer.
 *
 * WGSL has no f32 atomic add, so the kernel adds with a compare-exchange loop on the value's bits
 * (`atomic<u32>`), one invocation per source element. Slots with many colliding writes serialise
 * on that loop, and the sum's rounding depends on the order the writes land: the result is within
 * f32 summation error of the reference (which rounds an f64 sum once), not bit-equal to it or to
 * another run.
 *
 * The output binding is accumulated into, so the plan marks it `zeroed`: the device clears it in the
 * same command buffer before the pass, and a reused resident output starts from zero too.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type ScatterArgs, validateScatter } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/** Invocations per workgroup, as declared in `wgsl/kernel.wgsl`. */
const WORKGROUP_SIZE = 256;

/**
 * Plans `scatter` on the GPU for `[N, K]` sources into an `[N, D]` output.
 *
 * The cost is the least a call moves and does: `src` and `index` read once, the output written
 * once, and one add per source element.
 *
 * @param gpu the device
 * @param shape `N`, `K` of `src` and `index`, and `D`, the output's columns
 * @param options kernel override
 * @returns the plan; bindings `src`, `index` (inputs) and `out` (output, `[N, D]`, cleared to zero
 *   before the pass)
 */
export function scatterPlan(
  gpu: ResidentDevice,
  shape: { N: number; K: number; D: number },
  options: KernelOptions = {},
): KernelPlan {
  const { N, K, D } = shape;
  const total = N * K;
  return {
    op: "scatter",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "src", dtype: "f32", length: total, role: "input" },
      { name: "index", dtype: "i32", length: total, role: "input" },
      { name: "out", dtype: "f32", length: N * D, role: "output", zeroed: true },
    ],
    params: packParams(
      [{ name: "total", type: "u32" }, { name: "k", type: "u32" }, { name: "d", type: "u32" }],
      { total, k: K, d: D },
      "scatter",
    ),
    workgroups: foldWorkgroups(Math.ceil(total / WORKGROUP_SIZE), gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 8 * total + 4 * N * D, flops: total },
  };
}

/**
 * Scatter-adds `src` into a zero `[N, D]` output on the GPU.
 *
 * @param gpu the device
 * @param args as {@link scatter}
 * @param options kernel override
 * @returns the `[N, D]` sums, row-major
 */
export async function scatterGpu(
  gpu: ResidentDevice,
  args: ScatterArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateScatter(args);
  const plan = scatterPlan(gpu, { N: args.N, K: args.K, D: args.D }, options);
  const [out] = await gpu.run(plan, [args.src, args.index]);
  return out as Float32Array;
}
