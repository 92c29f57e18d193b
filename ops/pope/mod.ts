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
 * On the H200 (Deno 2.9.6 over Vulkan, GPU timestamps, median of 10; fractions of the same run's
 * read probe; harness/baselines/nvidia-h200-log/27-bandops-bench.json, 2026-12-02, probe 4,593
 * GB/s) 0.0418 ms for 4096 x 4096 (35.0%), 0.0159 ms for 2048 x 768 and 0.0377 ms for one row at
 * order 8,191. At 4096 x 4096 the table is 64 MiB written, and a plain vec4 write of 64 MiB reached
 * only 67.7% of the probe (0.0219 ms; harness/baselines/nvidia-h200-log/27-bandops-explore.json),
 * so the 85% target is out of reach for any kernel at that size. Where this kernel's time goes
 * (27-bandops-round2.json, 4096 x 4096, 0.0421 ms): the same arithmetic without the stores 0.0259
 * ms; without the scan over chunks (step 2) 0.0379 ms, without the transfer pass (step 1) 0.0348
 * ms. The recurrence's arithmetic takes longer than the writes and overlaps them little (each
 * workgroup computes, then writes). In 27-bandops-explore.json the previous version of this kernel
 * (integer conversions and an order check in every step) took 0.0424, 0.0166 and 0.0414 ms against
 * 0.0418, 0.0158 and 0.0374 for this one, and 2 column vec4s by 128 chunks (twice the workgroups, a
 * scan twice as long) 0.0774, 0.0170 and 0.0459 ms. Earlier (23-opsperf.json) a layout of 8 columns
 * by 128 chunks with the step coefficients read from a host table took 0.0867, 0.0184 and 0.0709
 * ms, and this layout with that table 0.0431, 0.0204 and 0.0466 ms: the division per step costs
 * nothing measurable.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type PopeVariant } from "./kernels.gen.ts";
import { type PopeArgs, popeArguments, type PopeShape, validatePope, validatePopeShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type PopeVariant };

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
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { popeArguments, popePlan } from "@xpu/ops/ops/pope";
 * const gpu = await acquireDevice();
 * const args = gpu.upload(popeArguments(8)), out = gpu.alloc("f32", 4 * 8);
 * await gpu.submit([popePlan(gpu, { S: 4, D: 8, posOffset: 1 }), [args, out]]);
 * const table = await gpu.read(out); // what pope({ S: 4, D: 8, posOffset: 1 }) gives
 * gpu.destroy();
 * ```
 */
export function popePlan(gpu: ResidentDevice, shape: PopeShape, options?: KernelOptions<PopeVariant>): KernelPlan {
  checkOptions("pope", options);
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
export async function popeGpu(
  gpu: ResidentDevice,
  args: PopeArgs,
  options?: KernelOptions<PopeVariant>,
): Promise<Float32Array> {
  checkOptions("pope", options);
  validatePope(args);
  const [out] = await gpu.run(popePlan(gpu, args, options), [popeArguments(args.D)]);
  return out as Float32Array;
}
