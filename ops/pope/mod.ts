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
 * each workgroup owns 8 columns and splits the orders 0 .. posOffset + S - 1 into 128 chunks; each
 * invocation multiplies its chunk's 2 x 2 step matrices, one invocation per column vec4 chains the
 * 128 transfers to find every chunk's starting pair, and each invocation then runs its chunk again,
 * writing the rows (vec4 stores when D % 4 == 0). The recurrence's coefficients come from a table
 * ({@link popeCoefficients}, 8 bytes per order) so that no step divides. Rows before posOffset are
 * computed but not written, so a decode step (S = 1) costs posOffset steps per column spread over
 * 128 chunks.
 *
 * On the H200 (the baseline, harness/baselines/nvidia-h200-log/21-bench.txt: Deno 2.9.6 over Vulkan,
 * GPU timestamps, median of 10): 0.0800 ms for 4096 x 4096 (18.3% of the bandwidth roofline), and
 * 0.0710 ms for one row at order 8,191, about the same, so the time goes to the recurrence's latency,
 * not to the writes. That is slower than the previous layout (16 columns by 64 chunks per workgroup,
 * a division per step), which its author timed at 0.0421 ms and 0.0415 ms (that run's output was not
 * kept): this layout (twice the invocations, half the chain per invocation, no division) was adopted
 * before it was timed.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { requireInt } from "../validate.ts";
import { type PopeArgs, popeArguments, type PopeShape, validatePope, validatePopeShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/** Columns per workgroup (`COLS` vec4s in the WGSL) and chunks of orders (`CHUNKS`). */
const COLUMNS_PER_WORKGROUP = 8;
const CHUNKS = 128;

/**
 * The coefficients of Bonnet's recurrence, `P_(n+1) = a_n x P_n - b_n P_(n-1)` with
 * `a_n = (2n + 1) / (n + 1)` and `b_n = n / (n + 1)`, as (a_n, b_n) pairs for n = 0 .. orders - 1,
 * computed in f64 and rounded to f32: the table the kernel reads instead of dividing.
 *
 * @param orders how many orders (posOffset + S)
 * @returns `[orders, 2]` row-major
 *
 * @example
 * ```ts
 * import { popeCoefficients } from "@xpu/ops/ops/pope";
 * popeCoefficients(2); // [1, 0, 1.5, 0.5]
 * ```
 */
export function popeCoefficients(orders: number): Float32Array {
  requireInt("pope", "orders", orders, 1);
  return Float32Array.from({ length: 2 * orders }, (_, i) => {
    const n = Math.floor(i / 2);
    return i % 2 === 0 ? (2 * n + 1) / (n + 1) : n / (n + 1);
  });
}

/**
 * Plans `pope` on the GPU.
 *
 * @param gpu the device
 * @param shape S, D and posOffset
 * @param options kernel override
 * @returns the plan; bindings `x` `[D]` (the arguments, {@link popeArguments}), `coef`
 *   `[posOffset + S, 2]` ({@link popeCoefficients}) (inputs) and `out` `[S, D]`
 */
export function popePlan(gpu: ResidentDevice, shape: PopeShape, options: KernelOptions = {}): KernelPlan {
  validatePopeShape(shape);
  const { S, D, posOffset } = shape;
  return {
    op: "pope",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: D, role: "input" },
      { name: "coef", dtype: "f32", length: 2 * (posOffset + S), role: "input" },
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
    // The table is written once (the arguments and coefficients are small next to it); the
    // recurrence costs 4 FLOPs per element of the written rows.
    cost: { bytes: 4 * S * D + 4 * D + 8 * (posOffset + S), flops: 4 * S * D },
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
  const coef = popeCoefficients(args.posOffset + args.S);
  const [out] = await gpu.run(popePlan(gpu, args, options), [popeArguments(args.D), coef]);
  return out as Float32Array;
}
