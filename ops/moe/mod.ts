/**
 * moe: mixture-of-experts routing in three entry points: `router` ({@link moeRouterGpu}: softmax
 * over the experts, then the top k, ties to the lower expert index, `normTopkProb` required),
 * `dispatch` ({@link moeDispatchGpu}: slots per expert claimed in (rank, token) order, overflow
 * dropped, as GShard / Switch / fairseq's top2gating) and `gather` ({@link moeGatherGpu}: each
 * token's gated sum of its experts' outputs; the gate is applied there and only there). Between
 * dispatch and gather the caller runs the experts: `slotToken` `[E, capacity]` is exactly the
 * index list for ops/gather (`index_select`, -1 gathers zeros) to build each expert's input rows,
 * and each expert is then an ops/matmul on its `capacity` rows. The router matches Mixtral's
 * `MixtralSparseMoeBlock` routing (softmax, `torch.topk`, renormalised with `norm_topk_prob`); the
 * tests hold router → dispatch → gather → matmul → gather to a dense torch MoE layer. See
 * `reference.ts` for the conventions and the reasons. NaN and ±Infinity (nonfinite.test.ts): a row
 * with a NaN or +inf logit (or only -inf ones) has torch's NaN softmax, so every probability ties and
 * the row takes experts 0 .. k - 1 by the tie rule, with NaN gates (the kernel had compared NaN
 * logits and could write expert -1); the gather propagates NaN and ±inf from y and the gates.
 *
 * Refused, with an error naming the argument: sizes that are not integers >= 1, k > E, a missing
 * or non-boolean normTopkProb, an expert index outside [0, E) or a slot outside [-1, slots) (both
 * checked on the host before upload, since a kernel would otherwise write or read out of place),
 * arrays of the wrong type or length.
 *
 * Kernels: the router runs one invocation per token (k + 2 passes over its E logits, which stay in
 * cache); dispatch one workgroup per expert, scanning the T·k assignments 256 at a time in
 * workgroup memory (E workgroups, each reading every assignment: cheap next to the experts'
 * matmuls, but not a bandwidth stream); gather one invocation per vec4 of the output, reading the
 * k rows of y as vec4s.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6 over Vulkan, GPU timestamps, median of 10 after
 * warm-up, against the 4,517 GB/s bandwidth probe of the same run), at 4,096 tokens: gather
 * 78.9% (8 experts, top 2, D 4,096) and 84.3% (64 experts, top 8, D 2,048); the router 8.1 us and
 * 91.7 us (0.5% and 0.3%: one invocation per token, latency-bound); dispatch 41.8 us and 149 us
 * (0.1%: E workgroups, each scanning all T·k assignments in 256-wide steps, so it is bound by the
 * scan's barriers, not by memory). Router and dispatch were not optimised further.
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type MoeVariant } from "./kernels.gen.ts";
import {
  type MoeDispatch,
  type MoeDispatchArgs,
  type MoeDispatchShape,
  type MoeGatherArgs,
  type MoeGatherShape,
  type MoeRouterArgs,
  type MoeRouterShape,
  type MoeRouting,
  validateMoeDispatch,
  validateMoeDispatchShape,
  validateMoeGather,
  validateMoeGatherShape,
  validateMoeRouter,
  validateMoeRouterShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type MoeVariant };

const WG = 256;

/** Each kernel's uniform, in WGSL declaration order (all u32). */
const u32Fields = (...names: string[]): readonly ParamField[] => names.map((name) => ({ name, type: "u32" }));
const ROUTER_PARAMS = u32Fields("tokens", "experts", "k", "normTopkProb");
const DISPATCH_PARAMS = u32Fields("tokens", "experts", "k", "capacity");
const GATHER_PARAMS = [...u32Fields("tokens", "k", "d"), { name: "total", type: "u32", of: "T * D" } as const];

/**
 * Plans the router on the GPU.
 *
 * @param gpu the device
 * @param shape T, E, k and normTopkProb
 * @param options kernel override
 * @returns the plan; bindings `logits` `[T, E]` (input), `experts` `[T, k]` (i32) and `gates` `[T, k]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { moeRouterPlan } from "@xpu/ops/ops/moe";
 * const gpu = await acquireDevice();
 * const plan = moeRouterPlan(gpu, { T: 16, E: 8, k: 2, normTopkProb: true }); // logits in; experts and gates out
 * gpu.destroy();
 * ```
 */
export function moeRouterPlan(
  gpu: ResidentDevice,
  shape: MoeRouterShape,
  options?: KernelOptions<MoeVariant>,
): KernelPlan {
  requireDevice("moeRouter", gpu);
  checkOptions("moeRouter", options);
  validateMoeRouterShape(shape);
  const { T, E, k } = shape;
  return {
    op: "moeRouter",
    kernel: gpu.resolve(KERNELS, "router", options),
    bindings: [
      { name: "logits", dtype: "f32", length: T * E, role: "input" },
      { name: "experts", dtype: "i32", length: T * k, role: "output" },
      { name: "gates", dtype: "f32", length: T * k, role: "output" },
    ],
    params: packParams(
      ROUTER_PARAMS,
      { tokens: T, experts: E, k, normTopkProb: Number(shape.normTopkProb) },
      "moeRouter",
    ),
    workgroups: foldWorkgroups(Math.ceil(T / WG), gpu.limits.maxComputeWorkgroupsPerDimension),
    // The logits read once, the choices and gates written once; a subtract and exp (counted as 1)
    // and an add per logit for the softmax, a compare per logit per choice.
    cost: { bytes: 4 * T * E + 8 * T * k, flops: T * E * (3 + k) },
  };
}

/**
 * The router on the GPU.
 *
 * @param gpu the device
 * @param args as {@link moeRouter}
 * @param options kernel override
 * @returns the experts and gates `[T, k]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { moeRouterGpu } from "@xpu/ops/ops/moe";
 * const gpu = await acquireDevice();
 * const logits = new Float32Array(16 * 8).map(() => Math.random()); // 16 tokens, 8 experts
 * const { experts, gates } = await moeRouterGpu(gpu, { logits, T: 16, E: 8, k: 2, normTopkProb: true });
 * gpu.destroy();
 * ```
 */
export async function moeRouterGpu(
  gpu: ResidentDevice,
  args: MoeRouterArgs,
  options?: KernelOptions<MoeVariant>,
): Promise<MoeRouting> {
  requireDevice("moeRouter", gpu);
  checkOptions("moeRouter", options);
  validateMoeRouter(args);
  const [experts, gates] = await gpu.run(moeRouterPlan(gpu, args, options), [args.logits]);
  return { experts: experts as Int32Array, gates: gates as Float32Array };
}

/**
 * Plans dispatch on the GPU.
 *
 * @param gpu the device
 * @param shape T, E, k and the capacity
 * @param options kernel override
 * @returns the plan; bindings `experts` `[T, k]` (i32 input), `slotToken` `[E, capacity]` and
 *   `tokenSlot` `[T, k]` (i32 outputs); one workgroup per expert
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { moeDispatchPlan } from "@xpu/ops/ops/moe";
 * const gpu = await acquireDevice();
 * const plan = moeDispatchPlan(gpu, { T: 16, E: 8, k: 2, capacity: 4 }); // experts in; slotToken and tokenSlot out
 * gpu.destroy();
 * ```
 */
export function moeDispatchPlan(
  gpu: ResidentDevice,
  shape: MoeDispatchShape,
  options?: KernelOptions<MoeVariant>,
): KernelPlan {
  requireDevice("moeDispatch", gpu);
  checkOptions("moeDispatch", options);
  validateMoeDispatchShape(shape);
  const { T, E, k, capacity } = shape;
  return {
    op: "moeDispatch",
    kernel: gpu.resolve(KERNELS, "dispatch", options),
    bindings: [
      { name: "experts", dtype: "i32", length: T * k, role: "input" },
      { name: "slotToken", dtype: "i32", length: E * capacity, role: "output" },
      { name: "tokenSlot", dtype: "i32", length: T * k, role: "output" },
    ],
    params: packParams(
      DISPATCH_PARAMS,
      { tokens: T, experts: E, k, capacity },
      "moeDispatch",
    ),
    workgroups: foldWorkgroups(E, gpu.limits.maxComputeWorkgroupsPerDimension),
    // The least it must move: the choices read once, both tables written once. No floating point.
    cost: { bytes: 4 * (2 * T * k + E * capacity), flops: 0 },
  };
}

/**
 * Dispatch on the GPU.
 *
 * @param gpu the device
 * @param args as {@link moeDispatch}
 * @param options kernel override
 * @returns `slotToken` `[E, capacity]` and `tokenSlot` `[T, k]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { moeDispatchGpu } from "@xpu/ops/ops/moe";
 * const gpu = await acquireDevice();
 * // Two tokens choose expert 0 first and 1 second; one slot per expert: token 1's first choice is dropped.
 * const experts = new Int32Array([0, 1, 0, 1]);
 * const { slotToken, tokenSlot } = await moeDispatchGpu(gpu, { experts, T: 2, E: 2, k: 2, capacity: 1 });
 * // slotToken [0, 0], tokenSlot [0, 1, -1, -1]
 * gpu.destroy();
 * ```
 */
export async function moeDispatchGpu(
  gpu: ResidentDevice,
  args: MoeDispatchArgs,
  options?: KernelOptions<MoeVariant>,
): Promise<MoeDispatch> {
  requireDevice("moeDispatch", gpu);
  checkOptions("moeDispatch", options);
  validateMoeDispatch(args);
  const [slotToken, tokenSlot] = await gpu.run(moeDispatchPlan(gpu, args, options), [args.experts]);
  return { slotToken: slotToken as Int32Array, tokenSlot: tokenSlot as Int32Array };
}

/**
 * Plans gather on the GPU.
 *
 * @param gpu the device
 * @param shape T, k, slots (E * capacity) and D
 * @param options kernel override
 * @returns the plan; bindings `y` `[slots, D]`, `tokenSlot` `[T, k]` (i32), `gates` `[T, k]`
 *   (inputs) and `out` `[T, D]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { moeGatherPlan } from "@xpu/ops/ops/moe";
 * const gpu = await acquireDevice();
 * const plan = moeGatherPlan(gpu, { T: 16, k: 2, slots: 32, D: 64 }); // y, tokenSlot and gates in; out [T, D]
 * gpu.destroy();
 * ```
 */
export function moeGatherPlan(
  gpu: ResidentDevice,
  shape: MoeGatherShape,
  options?: KernelOptions<MoeVariant>,
): KernelPlan {
  requireDevice("moeGather", gpu);
  checkOptions("moeGather", options);
  validateMoeGatherShape(shape);
  const { T, k, slots, D } = shape;
  return {
    op: "moeGather",
    kernel: gpu.resolve(KERNELS, "gather", options),
    bindings: [
      { name: "y", dtype: "f32", length: slots * D, role: "input" },
      { name: "tokenSlot", dtype: "i32", length: T * k, role: "input" },
      { name: "gates", dtype: "f32", length: T * k, role: "input" },
      { name: "out", dtype: "f32", length: T * D, role: "output" },
    ],
    params: packParams(
      GATHER_PARAMS,
      { tokens: T, k, d: D, total: T * D },
      "moeGather",
    ),
    workgroups: foldWorkgroups(Math.ceil((T * D) / 4 / WG), gpu.limits.maxComputeWorkgroupsPerDimension),
    // At most k rows of y read per token (fewer when dropped; counted as all kept), the output
    // written once, the tables read; a multiply-add per row element.
    cost: { bytes: 4 * (T * k * D + T * D + 2 * T * k), flops: 2 * T * k * D },
  };
}

/**
 * Gather on the GPU.
 *
 * @param gpu the device
 * @param args as {@link moeGather}
 * @param options kernel override
 * @returns `[T, D]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { moeGatherGpu } from "@xpu/ops/ops/moe";
 * const gpu = await acquireDevice();
 * const y = new Float32Array([1, 2, 10, 20]); // two slots of D = 2
 * const tokenSlot = new Int32Array([1, 0]), gates = new Float32Array([0.5, 0.25]);
 * const out = await moeGatherGpu(gpu, { y, tokenSlot, gates, T: 1, k: 2, slots: 2, D: 2 }); // [5.25, 10.5]
 * gpu.destroy();
 * ```
 */
export async function moeGatherGpu(
  gpu: ResidentDevice,
  args: MoeGatherArgs,
  options?: KernelOptions<MoeVariant>,
): Promise<Float32Array> {
  requireDevice("moeGather", gpu);
  checkOptions("moeGather", options);
  validateMoeGather(args);
  const [out] = await gpu.run(moeGatherPlan(gpu, args, options), [args.y, args.tokenSlot, args.gates]);
  return out as Float32Array;
}
