/**
 * activation: relu2, silu, elu, tanh, gelu and gelu_tanh, elementwise, as one op
 * (`activation`, entry point `kernel`); and the gated forms swiglu, `silu(gate) * up`, and geglu,
 * `gelu(gate) * up` (`gatedActivation`, entry point `gated`). Each matches its torch function (see
 * `reference.ts` for the tables, and for what is refused and why).
 *
 * Conventions, and why:
 * - `gelu` is the exact erf form, torch.nn.functional.gelu's own default (approximate="none");
 *   `gelu_tanh` is approximate="tanh". They differ by up to 4.73e-4 at x = 2.699, which is far
 *   outside either kernel's error, so neither stands in for the other.
 * - `elu`'s alpha is a scalar defaulting to 1.0, as torch.nn.ELU, rounded to f32 as torch rounds
 *   it to the tensor's dtype. Passing alpha to any other kind throws rather than being ignored.
 * - Nothing overflows for finite input: at x = ±1e4 silu, tanh and both gelus return their limits
 *   (the kernel only ever takes exp of a non-positive argument).
 * - NaN and ±Infinity give what torch's float32 CPU kernels give (pinned by the goldens; `reference.ts`
 *   has the table), except gelu(+Infinity), which is +Infinity (the limit) where torch's CPU kernel
 *   gives NaN: NaN is passed through from its bits, since WGSL lets a compiler assume no NaN reaches
 *   max() or clamp(), and each function's IEEE arithmetic gives the answer at ±Infinity (silu and
 *   the gelus are NaN at -Infinity, as in torch).
 * - WGSL has no erf and its tanh is only as accurate as exp(x) - exp(-x) near 0, so the kernel
 *   carries its own: erfc with relative error below 1.2e-7, and tanh and elu through an expm1 that
 *   does not cancel near 0.
 * - The kernel streams vec4s as elementwise's does (loads before stores, blocks in a grid-stride
 *   loop over a grid that never folds; tensors 16-byte padded, as `ResidentDevice.alloc` makes
 *   them), two vec4s per invocation, so 2048-element blocks. It switches on the kind once, outside
 *   the loop, into that kind's own copy of it, so no loop body holds a switch. Its functions are
 *   written on vec4s without branches, so even gelu's erfc costs far less than moving its 8 bytes
 *   per element on a GPU.
 *
 * On the H200 the kernel reached 86.6-89.8% of the bandwidth roofline at 2^26 elements for every
 * kind, before the NaN passthrough was added (not re-timed since); that and the alternatives it was
 * measured against (a switch per vec4, four or eight vec4s per invocation) are in
 * `harness/baselines/nvidia-h200-design.md` (activation).
 *
 * `gated` streams its two inputs the same way (two vec4s of each per invocation), applies the
 * activation to `gate` with the same functions as `kernel` (`wgsl/include/silu_gelu.wgsl`) and
 * multiplies by `up`: 12 bytes per element. Its convention pinned by the goldens: the activation is
 * of the gate, not of `up` (a feed-forward's `w1 x`, not `w3 x`); geglu is the erf gelu. Refused:
 * `gate` and `up` of different lengths, and any kind but the two. It has not been timed on a GPU yet.
 *
 * `gated_pairs` (`swigluPairs`) is swiglu over one matrix whose columns interleave the gate and up
 * projections (gate j at 2j, up j at 2j + 1, as a feed-forward with its two weights' rows interleaved
 * computes them), written into a column range of a wider output so that a feed-forward run in pieces
 * of its rows fills its output piece by piece: the Llama engine's prefill step, one invocation per
 * pair, not a bandwidth kernel (not timed apart on a GPU). Its silu is `g / (1 + exp(-g))`, which for
 * g below about -88 gives -0 where `kernel`'s gives a denormal: both times `up` round alike.
 *
 * Tensors past the device's `maxStorageBufferBindingSize` are refused, not split: the limits guard
 * throws a `LimitError` naming the binding before anything is uploaded (`activationGpu`,
 * `gatedActivationGpu`) or encoded (a plan on resident tensors). Elements are independent, so a
 * caller holding a larger tensor in several buffers runs one plan per buffer.
 *
 * @module
 */

import { streamWorkgroups } from "../../harness/grid.ts";
import { packParams } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { type ActivationVariant, KERNELS } from "./kernels.gen.ts";
import {
  type ActivationArgs,
  type ActivationKind,
  type ActivationShape,
  type GatedActivationArgs,
  type GatedActivationKind,
  type GatedActivationShape,
  type SwigluPairsArgs,
  type SwigluPairsShape,
  validateActivation,
  validateActivationShape,
  validateGatedActivation,
  validateGatedActivationShape,
  validateSwigluPairs,
  validateSwigluPairsShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type ActivationVariant, KERNELS };

const KIND_CODES: Record<ActivationKind, number> = { relu2: 0, silu: 1, elu: 2, tanh: 3, gelu: 4, gelu_tanh: 5 };

/**
 * Floating-point operations per element, counting exp as one: what the plan's cost reports.
 * relu2 multiplies; silu and gelu_tanh take a sigmoid (exp, add, divide) and multiply, gelu_tanh
 * first forming its cubic argument; elu and tanh take an expm1 (exp, subtract), then scale or
 * divide; gelu's erfc is a ten-term polynomial, an exp and a few more.
 */
const FLOPS_PER_ELEMENT: Record<ActivationKind, number> = {
  relu2: 1,
  silu: 4,
  elu: 3,
  tanh: 5,
  gelu: 30,
  gelu_tanh: 10,
};

/** Elements one workgroup moves per block: 256 invocations × 2 vec4s (`WG * PER * 4` in the WGSL). */
const BLOCK_ELEMENTS = 256 * 2 * 4;

/**
 * Plans `activation` on the GPU for `n` elements.
 *
 * @param gpu the device
 * @param shape the kind, the length `n`, and for `elu` alpha (default 1)
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output)
 * @throws Error naming the argument, as {@link validateActivationShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { activationPlan } from "@xpu/ops/ops/activation";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([-2, 3]));
 * const out = gpu.alloc("f32", 2);
 * await gpu.submit([activationPlan(gpu, { kind: "relu2", n: 2 }), [x, out]]);
 * const y = await gpu.read(out); // [0, 9]
 * gpu.destroy();
 * ```
 */
export function activationPlan(
  gpu: ResidentDevice,
  shape: ActivationShape,
  options?: KernelOptions<ActivationVariant>,
): KernelPlan {
  requireDevice("activation", gpu);
  checkOptions("activation", options);
  const alpha = validateActivationShape(shape);
  const { kind, n } = shape;
  return {
    op: "activation",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(
      [{ name: "n", type: "u32" }, { name: "kind", type: "u32" }, { name: "alpha", type: "f32" }],
      { n, kind: KIND_CODES[kind], alpha },
      "activation",
    ),
    workgroups: streamWorkgroups(n, BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 8 * n, flops: FLOPS_PER_ELEMENT[kind] * n },
  };
}

/**
 * Applies an activation function on the GPU.
 *
 * @param gpu the device
 * @param args as {@link activation}
 * @param options kernel override
 * @returns the result
 * @throws Error naming the argument, as {@link validateActivation}
 *
 * @example
 * ```ts
 * import { acquireDevice, activationGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const y = await activationGpu(gpu, { kind: "silu", x: new Float32Array([0, Infinity, NaN]) }); // [0, Infinity, NaN]
 * gpu.destroy();
 * ```
 */
export async function activationGpu(
  gpu: ResidentDevice,
  args: ActivationArgs,
  options?: KernelOptions<ActivationVariant>,
): Promise<Float32Array> {
  requireDevice("activation", gpu);
  checkOptions("activation", options);
  validateActivation(args);
  const plan = activationPlan(gpu, { kind: args.kind, n: args.x.length, alpha: args.alpha }, options);
  const [out] = await gpu.run(plan, [args.x]);
  return out as Float32Array;
}

const GATED_CODES: Record<GatedActivationKind, number> = { swiglu: 0, geglu: 1 };

/**
 * Plans a gated activation on the GPU for `n` elements of each input.
 *
 * @param gpu the device
 * @param shape the kind and the length `n`
 * @param options kernel override (a variant of `gated`)
 * @returns the plan; bindings `gate`, `up` (inputs) and `out` (output), each of n elements
 * @throws Error naming the argument, as {@link validateGatedActivationShape}
 *
 * @example Resident tensors: a feed-forward's gate and up projections in, the product out
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gatedActivationPlan } from "@xpu/ops/ops/activation";
 * const gpu = await acquireDevice();
 * const gate = gpu.upload(new Float32Array([0, 1]));
 * const up = gpu.upload(new Float32Array([5, 2]));
 * const out = gpu.alloc("f32", 2);
 * await gpu.submit([gatedActivationPlan(gpu, { kind: "swiglu", n: 2 }), [gate, up, out]]);
 * const y = await gpu.read(out); // [0, 1.462]
 * gpu.destroy();
 * ```
 */
export function gatedActivationPlan(
  gpu: ResidentDevice,
  shape: GatedActivationShape,
  options?: KernelOptions<ActivationVariant>,
): KernelPlan {
  requireDevice("gatedActivation", gpu);
  checkOptions("gatedActivation", options);
  validateGatedActivationShape(shape);
  const { kind, n } = shape;
  return {
    op: "activation",
    kernel: gpu.resolve(KERNELS, "gated", options),
    bindings: [
      { name: "gate", dtype: "f32", length: n, role: "input" },
      { name: "up", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams(
      [{ name: "n", type: "u32" }, { name: "kind", type: "u32" }],
      { n, kind: GATED_CODES[kind] },
      "activation",
    ),
    workgroups: streamWorkgroups(n, BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Two reads and a write per element; the activation's FLOPs (silu's, gelu's) and the product.
    cost: { bytes: 12 * n, flops: (FLOPS_PER_ELEMENT[kind === "swiglu" ? "silu" : "gelu"] + 1) * n },
  };
}

/**
 * Applies a gated activation on the GPU: `silu(gate) * up` or `gelu(gate) * up`.
 *
 * @param gpu the device
 * @param args as {@link gatedActivation}
 * @param options kernel override (a variant of `gated`)
 * @returns the result
 * @throws Error naming the argument, as {@link validateGatedActivation}
 *
 * @example
 * ```ts
 * import { acquireDevice, gatedActivationGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const gate = new Float32Array([-1, 0, 2]), up = new Float32Array([3, 3, 3]);
 * const y = await gatedActivationGpu(gpu, { kind: "geglu", gate, up }); // [-0.476, 0, 5.864]
 * gpu.destroy();
 * ```
 */
export async function gatedActivationGpu(
  gpu: ResidentDevice,
  args: GatedActivationArgs,
  options?: KernelOptions<ActivationVariant>,
): Promise<Float32Array> {
  requireDevice("gatedActivation", gpu);
  checkOptions("gatedActivation", options);
  validateGatedActivation(args);
  const plan = gatedActivationPlan(gpu, { kind: args.kind, n: args.gate.length }, options);
  const [out] = await gpu.run(plan, [args.gate, args.up]);
  return out as Float32Array;
}

/**
 * Plans {@link swigluPairs} on the GPU: SwiGLU of interleaved (gate, up) pairs into a column range of
 * `out`, in place.
 *
 * @param gpu the device
 * @param shape `rows`, `pairs`, `outCols` and `col0`
 * @param options kernel override (a variant of `gated_pairs`)
 * @returns the plan; bindings `x` (`[rows, 2 * pairs]`, input) and `out` (`[rows, outCols]`, its other
 *   columns kept)
 * @throws Error naming the argument, as {@link validateSwigluPairsShape}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { swigluPairsPlan } from "@xpu/ops/ops/activation";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([0, 5, 1, 2])); // (gate, up) pairs (0, 5) and (1, 2)
 * const out = gpu.alloc("f32", 3);
 * await gpu.submit([swigluPairsPlan(gpu, { rows: 1, pairs: 2, outCols: 3, col0: 1 }), [x, out]]);
 * console.log(await gpu.read(out)); // Float32Array [0, 0, 1.462...]
 * gpu.destroy();
 * ```
 */
export function swigluPairsPlan(
  gpu: ResidentDevice,
  shape: SwigluPairsShape,
  options?: KernelOptions<ActivationVariant>,
): KernelPlan {
  requireDevice("swigluPairs", gpu);
  checkOptions("swigluPairs", options);
  validateSwigluPairsShape(shape);
  const { rows, pairs, outCols, col0 } = shape;
  const fields = ["rows", "pairs", "ffn", "col0"].map((name) => ({ name, type: "u32" as const }));
  return {
    op: "activation",
    kernel: gpu.resolve(KERNELS, "gated_pairs", options),
    bindings: [
      { name: "x", dtype: "f32", length: 2 * rows * pairs, role: "input" },
      { name: "out", dtype: "f32", length: rows * outCols, role: "inout" },
    ],
    params: packParams(fields, { rows, pairs, ffn: outCols, col0 }, "swigluPairs"),
    workgroups: [Math.ceil(pairs / 256), rows, 1],
    // Two reads and a write per pair; silu's FLOPs and the product.
    cost: { bytes: 12 * rows * pairs, flops: (FLOPS_PER_ELEMENT.silu + 1) * rows * pairs },
  };
}

/**
 * SwiGLU of interleaved (gate, up) pairs into a column range, on the GPU.
 *
 * @param gpu the device
 * @param args as {@link swigluPairs}
 * @param options kernel override (a variant of `gated_pairs`)
 * @returns `out` with the results placed
 * @throws Error naming the argument, as {@link validateSwigluPairs}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { swigluPairsGpu } from "@xpu/ops/ops/activation";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 2]);
 * await swigluPairsGpu(gpu, { x, out: new Float32Array(1), rows: 1, pairs: 1, outCols: 1, col0: 0 }); // [1.462...]
 * gpu.destroy();
 * ```
 */
export async function swigluPairsGpu(
  gpu: ResidentDevice,
  args: SwigluPairsArgs,
  options?: KernelOptions<ActivationVariant>,
): Promise<Float32Array> {
  requireDevice("swigluPairs", gpu);
  checkOptions("swigluPairs", options);
  validateSwigluPairs(args);
  const [out] = await gpu.run(swigluPairsPlan(gpu, args, options), [args.x, args.out]);
  return out as Float32Array;
}
