/**
 * pope: the PoPE position table (arXiv:2405.04585, Eq. 14), entry point `kernel`:
 * `out[s, d] = P_(s + posOffset)(x_d)`, the Legendre polynomial whose order is the position,
 * evaluated at arguments sweeping `[-1, 1)` across the D columns (`x_d = f32(-1 + 2d/D)`, bound as
 * a table computed on the host). `posOffset` is required (see `reference.ts`: the paper does not say
 * whether positions start at order 0 or 1). The table is what an absolute position encoding adds to
 * the token embeddings, so D is the model width.
 *
 * Refused, with an error naming the argument: S or D that is not an integer >= 1, a missing or
 * negative posOffset, and orders past 2^24 (where the order stops being exact in f32).
 *
 * The kernel turns the sequential recurrence into a chunked scan so that the orders run in parallel:
 * each workgroup owns 16 columns and splits the orders 0 .. posOffset + S - 1 into 64 chunks; each
 * invocation multiplies its chunk's 2 x 2 step matrices, one invocation per column vec4 chains the
 * 64 transfers to find every chunk's starting pair, and each invocation then runs its chunk again,
 * writing the rows (vec4 stores when D % 4 == 0). Rows before posOffset are computed but not
 * written, so a decode step (S = 1) costs posOffset steps per column spread over 64 chunks.
 *
 * On the H200 (harness/baselines/nvidia-h200-log/23-opsperf.json: Deno 2.9.6 over Vulkan, GPU
 * timestamps, median of 10; read probe of that run 4,594 GB/s): 0.0421 ms for 4096 x 4096 (34.7% of
 * the bandwidth roofline), 0.0165 ms for 2048 x 768, and 0.0414 ms for one row at order 8,191, about
 * the same as the full table, so the time goes to the recurrence's latency, not to the writes. In the
 * same run a layout of 8 columns by 128 chunks that read the step coefficients from a host table
 * instead of dividing took 0.0867, 0.0184 and 0.0709 ms, and this layout with that table 0.0431,
 * 0.0204 and 0.0466 ms: the division per step costs nothing measurable, and halving each chain
 * while doubling the sequential scan over chunks (step 2) loses.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type PopeArgs, popeArguments, type PopeShape, validatePope, validatePopeShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/** Columns per workgroup (`COLS` vec4s in the WGSL) and chunks of orders (`CHUNKS`). */
const COLUMNS_PER_WORKGROUP = 16;
const CHUNKS = 64;

/**
 * Plans `pope` on the GPU.
 *
 * @param gpu the device
 * @param shape S, D and posOffset
 * @param options kernel override
 * @returns the plan; bindings `x` `[D]` (the arguments, {@link popeArguments}; input) and `out` `[S, D]`
 */
export function popePlan(gpu: ResidentDevice, shape: PopeShape, options: KernelOptions = {}): KernelPlan {
  validatePopeShape(shape);
  const { S, D, posOffset } = shape;
  return {
    op: "pope",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: D, role: "input" },
      { name: "out", dtype: "f32", length: S * D, role: "output" },
    ],
    params: packParams(
      [{ name: "s", type: "u32" }, { name: "d", type: "u32" }, { name: "posOffset", type: "u32" }, {
        name: "len",
        type: "u32",
      }],
      { s: S, d: D, posOffset, len: Math.ceil((posOffset + S) / CHUNKS) },
      "pope",
    ),
    workgroups: foldWorkgroups(Math.ceil(D / COLUMNS_PER_WORKGROUP), gpu.limits.maxComputeWorkgroupsPerDimension),
    // The table is written once; the recurrence costs 5 FLOPs per element of the written rows.
    cost: { bytes: 4 * S * D + 4 * D, flops: 5 * S * D },
  };
}

/**
 * The PoPE table on the GPU.
 *
 * @param gpu the device
 * @param args as {@link pope}
 * @param options kernel override
 * @returns the table `[S, D]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { popeGpu } from "@xpu/ops/ops/pope";
 * const gpu = await acquireDevice();
 * const table = await popeGpu(gpu, { S: 512, D: 768, posOffset: 0 });
 * gpu.destroy();
 * ```
 */
export async function popeGpu(gpu: ResidentDevice, args: PopeArgs, options: KernelOptions = {}): Promise<Float32Array> {
  validatePope(args);
  const [out] = await gpu.run(popePlan(gpu, args, options), [popeArguments(args.D)]);
  return out as Float32Array;
}
