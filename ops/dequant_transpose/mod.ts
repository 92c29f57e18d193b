/**
 * dequant_transpose: an int8 weight `[N, K]` (ops/matvec's q8 format, one scale per row) to the f32
 * matrix `[K, N]`, `out[k, n] = code[n, k] * scale[n]` — in torch, `(codes * scale[:, None]).T`
 * (entry point `kernel`).
 *
 * Why it exists: a prefill path that wants a plain f32 GEMM operand can dequantize a projection
 * once and hand it to `matmul` as `b`, so that `matmul({ a, b: dequantTranspose(w), M, N, K })` is
 * `F.linear(a, dequant(w))`. The output is `[K, N]` rather than `[N, K]` because that is the
 * orientation `matmul` (`torch.mm`) reads its right-hand side in. `matmulQ8` reads the packed
 * weight directly and needs neither this op nor the f32 copy, which is four times the weight's size:
 * for a large-vocabulary output projection that copy can exceed a device's binding limit, and is
 * then refused by name rather than truncated.
 *
 * Refused, with an error naming the argument: N or K not an integer >= 1, and arrays of the wrong
 * type or length; and, before anything is uploaded, a weight or output larger than the device's
 * maxStorageBufferBindingSize, with an error naming it and the limit.
 *
 * The kernel turns 32 x 32 tiles through workgroup memory so that reads of the weight and writes
 * of the output both stay consecutive; grids of more than 65,535 tiles fold into a second
 * dimension.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type DequantTransposeArgs, validateDequantTranspose } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

const TILE = 32;

/**
 * Plans `dequantTranspose` on the GPU for a weight `[N, K]`.
 *
 * @param gpu the device
 * @param shape `N` (rows of the weight) and `K` (its columns)
 * @param options kernel override
 * @returns the plan; bindings `weight`, `scale` (inputs) and `out` (output), one workgroup per 32 x 32 tile
 */
export function dequantTransposePlan(
  gpu: ResidentDevice,
  shape: { N: number; K: number },
  options: KernelOptions = {},
): KernelPlan {
  const { N, K } = shape;
  const words = N * Math.ceil(K / 4);
  return {
    op: "dequantTranspose",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "weight", dtype: "u32", length: words, role: "input" },
      { name: "scale", dtype: "f32", length: N, role: "input" },
      { name: "out", dtype: "f32", length: K * N, role: "output" },
    ],
    params: packParams([{ name: "n", type: "u32" }, { name: "k", type: "u32" }], { n: N, k: K }, "dequantTranspose"),
    workgroups: foldWorkgroups(
      Math.ceil(N / TILE) * Math.ceil(K / TILE),
      gpu.limits.maxComputeWorkgroupsPerDimension,
    ),
    // The weight as stored and the scales read once, the f32 matrix written once; a multiply per element.
    cost: { bytes: 4 * (words + N + K * N), flops: K * N },
  };
}

/**
 * The int8 weight dequantized and transposed, on the GPU.
 *
 * @param gpu the device
 * @param args as {@link dequantTranspose}
 * @param options kernel override
 * @returns the result, `[K, N]`
 */
export async function dequantTransposeGpu(
  gpu: ResidentDevice,
  args: DequantTransposeArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  validateDequantTranspose(args);
  const [out] = await gpu.run(dequantTransposePlan(gpu, args, options), [args.weight, args.scale]);
  return out as Float32Array;
}
