/**
 * dequant_transpose: an int8 weight `[N, K]` (ops/matvec's q8 format, one scale per row) to the f32
 * matrix `[K, N]`, `out[k, n] = code[n, k] * scales[n]` — in torch, `(codes * scales[:, None]).T`
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
 * The kernel needs no workgroup memory: each workgroup covers a 128 x 128 tile, and each invocation
 * a block of 4 weight rows by 16 codes, loaded as four vec4u (one per row), decoded four rows at a
 * time and stored as 16 vec4f, one per output row; a warp's stores cover 256 consecutive bytes of
 * an output row. On the H200 that is 72.6-74.0% of the bandwidth roofline at the 14336 x 4096
 * shapes, against 42.7% for element-by-element 32 x 32 tiles
 * (`harness/baselines/nvidia-h200-design.md`, dequant_transpose). The vec4 path needs N % 4 == 0
 * and ceil(K / 4) % 4 == 0; other shapes, and tiles cut by the matrix's edge, move one code at a
 * time. Grids of more than 65,535 tiles fold into a second dimension.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { type DequantTransposeVariant, KERNELS } from "./kernels.gen.ts";
import {
  type DequantTransposeArgs,
  type DequantTransposeShape,
  validateDequantTranspose,
  validateDequantTransposeShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type DequantTransposeVariant, KERNELS };

/** Edge of the tile one workgroup covers, in weight rows and in codes. */
const TILE = 128;

/**
 * Plans `dequantTranspose` on the GPU for a weight `[N, K]`.
 *
 * @param gpu the device
 * @param shape `N` (rows of the weight) and `K` (its columns)
 * @param options kernel override
 * @returns the plan; bindings `weight`, `scales` (inputs) and `out` (output), one workgroup per 128 x 128 tile
 * @throws Error naming the argument, as {@link validateDequantTransposeShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice, packQ8 } from "@xpu/ops";
 * import { dequantTransposePlan } from "@xpu/ops/ops/dequant_transpose";
 * const gpu = await acquireDevice();
 * const weight = gpu.upload(packQ8(new Int32Array([1, 2, 3, -1, 0, 4]), 2, 3)); // [N = 2, K = 3]
 * const scales = gpu.upload(new Float32Array([0.5, 2]));
 * const out = gpu.alloc("f32", 6);
 * await gpu.submit([dequantTransposePlan(gpu, { N: 2, K: 3 }), [weight, scales, out]]);
 * const w = await gpu.read(out); // [K = 3, N = 2]: [0.5, -2, 1, 0, 1.5, 8]
 * gpu.destroy();
 * ```
 */
export function dequantTransposePlan(
  gpu: ResidentDevice,
  shape: DequantTransposeShape,
  options?: KernelOptions<DequantTransposeVariant>,
): KernelPlan {
  checkOptions("dequantTranspose", options);
  validateDequantTransposeShape(shape);
  const { N, K } = shape;
  const words = N * Math.ceil(K / 4);
  return {
    op: "dequantTranspose",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "weight", dtype: "u32", length: words, role: "input" },
      { name: "scales", dtype: "f32", length: N, role: "input" },
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
 * @throws Error naming the argument, as {@link validateDequantTranspose}
 *
 * @example
 * ```ts
 * import { acquireDevice, dequantTransposeGpu, packQ8 } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const weight = packQ8(new Int32Array([1, 2, 3, -1, 0, 4]), 2, 3);
 * const w = await dequantTransposeGpu(gpu, { weight, scales: new Float32Array([0.5, 2]), N: 2, K: 3 });
 * // [0.5, -2, 1, 0, 1.5, 8]
 * gpu.destroy();
 * ```
 */
export async function dequantTransposeGpu(
  gpu: ResidentDevice,
  args: DequantTransposeArgs,
  options?: KernelOptions<DequantTransposeVariant>,
): Promise<Float32Array> {
  checkOptions("dequantTranspose", options);
  validateDequantTranspose(args);
  const [out] = await gpu.run(dequantTransposePlan(gpu, args, options), [args.weight, args.scales]);
  return out as Float32Array;
}
