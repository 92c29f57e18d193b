/**
 * alibi: the ALiBi attention bias (arXiv:2108.12409), entry point `kernel`: `[1, H, L, S]`
 * with `out[0, h, i, j] = m_h * (j - (i + queryOffset))`, the slopes by the paper's `get_slopes`
 * (including the non-monotonic tail for head counts that are not a power of two). The output is
 * attention's additive float mask for `maskShape` `[1, H, L, S]`, so ALiBi and a causal or padding
 * mask compose by adding the two; the tests hold the sum, fed to softmax attention, to torch's
 * `scaled_dot_product_attention` with the same bias. See `reference.ts` for the conventions (the
 * relative form m (j - i), not BLOOM's m j) and what is refused (sizes that are not integers >= 1,
 * L, S or |queryOffset| past 2^24, where the distance would stop being exact in f32).
 *
 * The kernel only writes: one vec4 per invocation, the slopes (computed on the host in f64 and
 * rounded to f32) read from a table of `heads` floats that stays in cache. With S % 4 == 0 a vec4
 * lies in one row and its four distances are consecutive integers; otherwise each element finds its
 * own row and a partial last vec4 is written component by component.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6 over Vulkan, GPU timestamps, median of 10 after
 * warm-up, against the 4,517 GB/s bandwidth probe of the same run): 32 x 2048 x 4096 (1 GiB
 * written) in 0.248 ms = 4,331 GB/s, 95.9%; 12 x 2048 x 2048 87.4%; a decode row of 8,192 keys for
 * 32 heads (1 MiB) 4.1%, a size no stream fills.
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { type AlibiVariant, KERNELS } from "./kernels.gen.ts";
import { type AlibiArgs, type AlibiShape, alibiSlopes, validateAlibi, validateAlibiShape } from "./reference.ts";

export * from "./reference.ts";
export { type AlibiVariant, KERNELS };

/**
 * Plans `alibi` on the GPU.
 *
 * @param gpu the device
 * @param shape H, L, S and the query offset
 * @param options kernel override
 * @returns the plan; bindings `slopes` `[H]` (input) and `out` `[H, L, S]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { alibiPlan, alibiSlopes } from "@xpu/ops/ops/alibi";
 * const gpu = await acquireDevice();
 * const slopes = gpu.upload(Float32Array.from(alibiSlopes(8))), bias = gpu.alloc("f32", 8 * 16 * 16);
 * await gpu.submit([alibiPlan(gpu, { H: 8, L: 16, S: 16 }), [slopes, bias]]);
 * await gpu.read(bias); // what alibi({ H: 8, L: 16, S: 16 }) gives
 * gpu.destroy();
 * ```
 */
export function alibiPlan(gpu: ResidentDevice, shape: AlibiShape, options?: KernelOptions<AlibiVariant>): KernelPlan {
  checkOptions("alibi", options);
  const { queryOffset } = validateAlibiShape(shape);
  const { H, L, S } = shape;
  const total = H * L * S;
  return {
    op: "alibi",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "slopes", dtype: "f32", length: H, role: "input" },
      { name: "out", dtype: "f32", length: total, role: "output" },
    ],
    params: packParams(
      [
        { name: "s", type: "u32" },
        { name: "rowsPerHead", type: "u32" },
        { name: "queryOffset", type: "i32" },
        { name: "total", type: "u32" },
      ],
      { s: S, rowsPerHead: L, queryOffset, total },
      "alibi",
    ),
    workgroups: foldWorkgroups(Math.ceil(total / 4 / 256), gpu.limits.maxComputeWorkgroupsPerDimension),
    // The bias is written once; one product per element.
    cost: { bytes: 4 * total + 4 * H, flops: total },
  };
}

/**
 * The ALiBi bias on the GPU.
 *
 * @param gpu the device
 * @param args as {@link alibi}
 * @param options kernel override
 * @returns the bias `[1, H, L, S]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { alibiGpu } from "@xpu/ops/ops/alibi";
 * const gpu = await acquireDevice();
 * // One decode step: the 1 query is position 99 of 100 keys.
 * const bias = await alibiGpu(gpu, { H: 12, L: 1, S: 100, queryOffset: 99 });
 * gpu.destroy();
 * ```
 */
export async function alibiGpu(
  gpu: ResidentDevice,
  args: AlibiArgs,
  options?: KernelOptions<AlibiVariant>,
): Promise<Float32Array> {
  checkOptions("alibi", options);
  validateAlibi(args);
  const plan = alibiPlan(gpu, args, options);
  const [out] = await gpu.run(plan, [Float32Array.from(alibiSlopes(args.H))]);
  return out as Float32Array;
}
