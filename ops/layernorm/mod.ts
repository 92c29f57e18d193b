/**
 * layernorm: layer normalisation of the last axis of `x` `[N, D]` with an optional weight and bias
 * `[D]` (entry point `kernel`). Matches `torch.nn.functional.layer_norm(x, (D,), weight, bias, eps)`.
 *
 * Conventions, each pinned by a test that the alternative fails:
 * - The variance is biased (divided by D), as torch's layer_norm; `torch.var`'s default divides
 *   by D - 1, which at D = 2 scales every output by 1/sqrt(2).
 * - eps is added inside the square root, `sqrt(var + eps)`, not to the standard deviation; for a
 *   row whose variance is small next to eps the two differ several-fold.
 * - eps defaults to 1e-5, torch's default; it must be finite and >= 0. A constant row gives zeros
 *   (then the bias): eps > 0 guards the division.
 *
 * Refused, with an error naming the argument: N or D that is not an integer >= 1, `x` that is not
 * a Float32Array of length N * D, a weight or bias that is not a Float32Array of length D, and an
 * eps that is negative or not finite.
 *
 * The kernel runs one workgroup of 256 per row, loops over the row so rows of any length work, and
 * reads the row twice. Mean and variance come from per-invocation running statistics merged in
 * workgroup memory, on values shifted by the row's first element: a row of 1000 + small noise keeps
 * the accuracy of a row near zero, where the textbook E[x^2] - E[x]^2 in f32 would cancel to noise.
 * More than 65,535 rows fold into a second grid dimension.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { KERNELS } from "./kernels.gen.ts";
import { type LayernormArgs, validateLayernorm } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS };

/** The kernel's uniform, in WGSL declaration order. */
const PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32" },
  { name: "d", type: "u32" },
  { name: "has_weight", type: "u32" },
  { name: "has_bias", type: "u32" },
  { name: "eps", type: "f32" },
];

/**
 * Plans `layernorm` on the GPU.
 *
 * @param gpu the device
 * @param shape `N`, `D`, whether there is a weight and a bias, and `eps`
 * @param options kernel override
 * @returns the plan; bindings `x`, `weight`, `bias` (inputs; empty when absent) and `out`
 */
export function layernormPlan(
  gpu: ResidentDevice,
  shape: { N: number; D: number; weight: boolean; bias: boolean; eps: number },
  options: KernelOptions = {},
): KernelPlan {
  const { N, D, eps } = shape;
  const weight = shape.weight ? D : 0;
  const bias = shape.bias ? D : 0;
  return {
    op: "layernorm",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: N * D, role: "input" },
      { name: "weight", dtype: "f32", length: weight, role: "input" },
      { name: "bias", dtype: "f32", length: bias, role: "input" },
      { name: "out", dtype: "f32", length: N * D, role: "output" },
    ],
    params: packParams(
      PARAMS,
      { rows: N, d: D, has_weight: Number(shape.weight), has_bias: Number(shape.bias), eps },
      "layernorm",
    ),
    workgroups: foldWorkgroups(N, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Read x, weight and bias once, write out once. Per element: an add for the mean, a subtract,
    // a square and an add for the variance, a subtract and a multiply to normalise, then one more
    // for the weight and one for the bias.
    cost: {
      bytes: 8 * N * D + 4 * (weight + bias),
      flops: (6 + Number(shape.weight) + Number(shape.bias)) * N * D,
    },
  };
}

/**
 * Layer normalisation of each row of `x` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link layernorm}
 * @param options kernel override
 * @returns the result, length N * D
 */
export async function layernormGpu(
  gpu: ResidentDevice,
  args: LayernormArgs,
  options: KernelOptions = {},
): Promise<Float32Array> {
  const eps = validateLayernorm(args);
  const { N, D, weight, bias } = args;
  const plan = layernormPlan(gpu, { N, D, weight: weight !== undefined, bias: bias !== undefined, eps }, options);
  const none = new Float32Array(0);
  const [out] = await gpu.run(plan, [args.x, weight ?? none, bias ?? none]);
  return out as Float32Array;
}
