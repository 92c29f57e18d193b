/**
 * snake: the Snake activations of audio decoders over `x` `[N, C, L]`, with learned per-channel
 * parameters. Entry points:
 *
 * - `kernel` ({@link snakeGpu}): `x + sin(alpha[c] x)^2 / (alpha[c] + 1e-9)`, DAC's `Snake1d`.
 * - `beta` ({@link snakeBetaGpu}): `x + sin(alpha[c] x)^2 / (beta[c] + 1e-9)`, BigVGAN's and
 *   MioCodec's `SnakeBeta`.
 *
 * Conventions, each pinned by a test against torch goldens that the alternative fails:
 * - the epsilon is upstream's 1e-9, inside the reciprocal (`1 / (beta + 1e-9)`, not
 *   `1 / beta + 1e-9` and not `1 / max(beta, eps)`), so a channel whose divisor is 0 stays finite;
 * - sin² is the square of the sine, not the sine of the square;
 * - the parameters are used as given: BigVGAN stores log(alpha) and log(beta) and exponentiates in
 *   its forward, DACVAE stores the values; the stored tensor does not say which, so `exp` is the
 *   caller's, once at load time (a kernel that exponentiated would be wrong for the other family);
 * - NaN and ±Infinity as torch (nonfinite.test.ts): NaN or ±inf in x gives NaN (the sine of an
 *   infinity is NaN), in alpha makes its channel NaN; NaN in beta makes its channel NaN and ±inf in
 *   beta leaves the channel's x as it is (1 / inf is 0).
 *
 * Refused, with an error naming the argument, before any GPU work: sizes that are not integers
 * >= 1 and arrays of the wrong type or length.
 *
 * The kernel streams `x` as vec4s in a grid-stride loop (two per invocation per block, both loads
 * first), reading each quad's parameters once when `L % 4 == 0` (the quad is in one channel) and
 * per component otherwise; the parameters are C floats, read from cache. Cost: one read and one
 * write of `x`, plus the parameters. On the H200 (Deno 2.9.6 over Vulkan, GPU timestamps, median of
 * 10; fractions of the same run's read probe;
 * harness/baselines/nvidia-h200-log/27-bandops-bench.json, 2026-12-02, probe 4,593 GB/s) 4 x 512 x
 * 32,768 (256 MiB each way) 0.1365 ms, 3,934 GB/s (85.7%) for `kernel` and 85.5% for `beta`; 1 x
 * 512 x 16,384 0.0232 ms (63.1%). A plain vec4 copy of the same 256 MiB each way reached 87.5% of
 * the probe (harness/baselines/nvidia-h200-log/27-bandops-explore.json), where this kernel read
 * 87.6% and the previous one (four vec4s per invocation) 86.3%; at 1 x 512 x 16,384 63.8% against
 * 60.6%, a transfer small enough that a plain copy of its size does not reach the probe either.
 *
 * @module
 */

import { streamWorkgroups } from "../../harness/grid.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type SnakeVariant } from "./kernels.gen.ts";
import {
  type SnakeArgs,
  type SnakeBetaArgs,
  type SnakeShape,
  validateSnake,
  validateSnakeBeta,
  validateSnakeShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type SnakeVariant };

const PARAMS: readonly ParamField[] = [
  { name: "n", type: "u32", of: "N * C * L" },
  { name: "c", type: "u32" },
  { name: "l", type: "u32" },
];

/** Elements one workgroup moves per block: 256 invocations x 2 vec4s (`WG * PER * 4` in the WGSL). */
const BLOCK_ELEMENTS = 256 * 2 * 4;
/** Per element: a multiply and the sine's argument, a square, a multiply, an add (the sine as one). */
const FLOPS_PER_ELEMENT = 5;

function plan(
  gpu: ResidentDevice,
  shape: SnakeShape,
  entry: "kernel" | "beta",
  options: KernelOptions<SnakeVariant> | undefined,
): KernelPlan {
  validateSnakeShape(shape);
  const { N, C, L } = shape;
  const n = N * C * L;
  const parameters = entry === "beta" ? ["alpha", "beta"] : ["alpha"];
  return {
    op: "snake",
    kernel: gpu.resolve(KERNELS, entry, options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      ...parameters.map((name) => ({ name, dtype: "f32" as const, length: C, role: "input" as const })),
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(PARAMS, { n, c: C, l: L }, "snake"),
    workgroups: streamWorkgroups(n, BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    // x read once and out written once, each parameter vector read once.
    cost: { bytes: 8 * n + 4 * C * parameters.length, flops: FLOPS_PER_ELEMENT * n },
  };
}

/**
 * Plans snake's `kernel` entry point (Snake1d) on the GPU.
 *
 * @param gpu the device
 * @param shape `N`, `C`, `L`
 * @param options kernel override
 * @returns the plan; bindings `x`, `alpha` (inputs) and `out`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { snakePlan } from "@xpu/ops/ops/snake";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([Math.PI / 2, 0])), alpha = gpu.upload(new Float32Array([1]));
 * const out = gpu.alloc("f32", 2);
 * await gpu.submit([snakePlan(gpu, { N: 1, C: 1, L: 2 }), [x, alpha, out]]);
 * await gpu.read(out); // [pi / 2 + 1, 0]
 * gpu.destroy();
 * ```
 */
export function snakePlan(gpu: ResidentDevice, shape: SnakeShape, options?: KernelOptions<SnakeVariant>): KernelPlan {
  requireDevice("snake", gpu);
  checkOptions("snake", options);
  return plan(gpu, shape, "kernel", options);
}

/**
 * Plans snake's `beta` entry point (SnakeBeta) on the GPU.
 *
 * @param gpu the device
 * @param shape `N`, `C`, `L`
 * @param options kernel override
 * @returns the plan; bindings `x`, `alpha`, `beta` (inputs) and `out`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { snakeBetaPlan } from "@xpu/ops/ops/snake";
 * const gpu = await acquireDevice();
 * const one = new Float32Array([1]);
 * const [x, alpha, beta] = [new Float32Array([Math.PI / 2]), one, new Float32Array([2])].map((a) => gpu.upload(a));
 * const out = gpu.alloc("f32", 1);
 * await gpu.submit([snakeBetaPlan(gpu, { N: 1, C: 1, L: 1 }), [x, alpha, beta, out]]);
 * await gpu.read(out); // [pi / 2 + 0.5]
 * gpu.destroy();
 * ```
 */
export function snakeBetaPlan(
  gpu: ResidentDevice,
  shape: SnakeShape,
  options?: KernelOptions<SnakeVariant>,
): KernelPlan {
  requireDevice("snake", gpu);
  checkOptions("snake", options);
  return plan(gpu, shape, "beta", options);
}

/**
 * Snake1d on the GPU: `x + sin(alpha[c] x)^2 / (alpha[c] + 1e-9)`.
 *
 * @param gpu the device
 * @param args as {@link snake}
 * @param options kernel override
 * @returns the result, `[N, C, L]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { snakeGpu } from "@xpu/ops/ops/snake";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([0, 1, 2, 3, 4, 5]);
 * const out = await snakeGpu(gpu, { x, alpha: new Float32Array([1, 0.5]), N: 1, C: 2, L: 3 });
 * gpu.destroy();
 * ```
 */
export async function snakeGpu(
  gpu: ResidentDevice,
  args: SnakeArgs,
  options?: KernelOptions<SnakeVariant>,
): Promise<Float32Array> {
  requireDevice("snake", gpu);
  checkOptions("snake", options);
  validateSnake(args);
  const [out] = await gpu.run(snakePlan(gpu, args, options), [args.x, args.alpha]);
  return out as Float32Array;
}

/**
 * SnakeBeta on the GPU: `x + sin(alpha[c] x)^2 / (beta[c] + 1e-9)`.
 *
 * @param gpu the device
 * @param args as {@link snakeBeta}
 * @param options kernel override
 * @returns the result, `[N, C, L]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { snakeBetaGpu } from "@xpu/ops/ops/snake";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([0, 1, 2, 3]);
 * const alpha = new Float32Array([1, 2]);
 * const out = await snakeBetaGpu(gpu, { x, alpha, beta: new Float32Array([0.5, 0]), N: 1, C: 2, L: 2 });
 * gpu.destroy();
 * ```
 */
export async function snakeBetaGpu(
  gpu: ResidentDevice,
  args: SnakeBetaArgs,
  options?: KernelOptions<SnakeVariant>,
): Promise<Float32Array> {
  requireDevice("snake", gpu);
  checkOptions("snake", options);
  validateSnakeBeta(args);
  const [out] = await gpu.run(snakeBetaPlan(gpu, args, options), [args.x, args.alpha, args.beta]);
  return out as Float32Array;
}
