/**
 * The engine's one door to the weight products of ops/: each format's GEMV (decode, ops/matvec)
 * and GEMM (prefill, ops/matmul), planned through the ops' `*Plan` functions and returned as a
 * kernel source, its bindings in binding order (named by what the engine binds there), its params
 * and its grid. If an op renames an argument, this file is what changes.
 *
 * f32 prefill goes through ops/matmul's f32 product, which takes its right operand as `[K, N]`
 * while the engine keeps one resident copy of a weight, in the Linear layer's `[N, K]` (which matvec
 * reads): so it computes the transposed product `C^T = W X^T`, the weight as the left operand and
 * the activations transposed (ops/transpose's `transposePlan` and `placeColumnsPlan`).
 *
 * @module
 */

import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import {
  matmulPlan,
  matmulQ4G128Dp4aPlan,
  matmulQ4G128Plan,
  matmulQ8Dp4aPlan,
  matmulQ8Plan,
  type MatmulVariant,
} from "../../ops/matmul/mod.ts";
import { matvecPlan, matvecQ4G128Plan, matvecQ8Plan } from "../../ops/matvec/mod.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";

/** What the engine binds at a slot of a weight product (`inputScales`: the int8 input's per-row scales). */
export type ProductSlot = "weight" | "scales" | "input" | "inputScales" | "output";

/** A weight product ready to bind: the op's kernel and how its bindings map to the engine's buffers. */
export interface ProductKernel {
  /** The op's plan (kernel, params, workgroups, cost). */
  plan: KernelPlan;
  /** The engine buffer each storage binding takes, in binding order. */
  slots: ProductSlot[];
}

const SLOT_OF_BINDING: Record<string, ProductSlot> = {
  weight: "weight",
  scale: "scales",
  scales: "scales",
  x: "input",
  a: "input",
  aScales: "inputScales",
  y: "output",
  c: "output",
};

function slotsOf(plan: KernelPlan): ProductSlot[] {
  return plan.bindings.map((b) => {
    const slot = SLOT_OF_BINDING[b.name];
    if (!slot) throw new Error(`llm engine: ${plan.op} has a binding ${b.name} the engine does not know`);
    return slot;
  });
}

/**
 * The decode-shaped product `y = W x` for a weight (or one row block of it) `[N, K]`.
 *
 * @param gpu the device (its limits are the plan's)
 * @param format the weight's format
 * @param N rows
 * @param K columns
 * @returns the kernel and its binding slots
 */
export function gemv(gpu: ResidentDevice, format: WeightFormat, N: number, K: number): ProductKernel {
  const shape = { N, K };
  const plan = format === "f32"
    ? matvecPlan(gpu, shape)
    : format === "q8"
    ? matvecQ8Plan(gpu, shape)
    : matvecQ4G128Plan(gpu, shape);
  return { plan, slots: slotsOf(plan) };
}

/**
 * The prefill-shaped product `c = a W^T` for a quantised weight `[N, K]` and `M` rows of `a`.
 *
 * @param gpu the device
 * @param format q8 or q4g128
 * @param M rows of `a`
 * @param N rows of the weight
 * @param K columns
 * @param variant the op's variant to run (ops/matmul's override), instead of the one its size picks
 * @returns the kernel and its binding slots
 */
export function gemmQuantized(
  gpu: ResidentDevice,
  format: "q8" | "q4g128",
  M: number,
  N: number,
  K: number,
  variant?: string,
): ProductKernel {
  // A variant name of a plan this function resolved (engine.ts); the plan checks it again.
  const options = variant === undefined ? {} : { override: variant as MatmulVariant };
  const plan = format === "q8" ? matmulQ8Plan(gpu, { M, N, K }, options) : matmulQ4G128Plan(gpu, { M, N, K }, options);
  return { plan, slots: slotsOf(plan) };
}

/**
 * The prefill-shaped product `c = a W^T` on int8 activations (ops/matmul's dp4a products): `a` is
 * the input quantised per row (ops/quantize's `quantizePackedPlan`), bound at `input` with its
 * scales at `inputScales`, the weight `[N, K]` q8 or q4g128.
 *
 * @param gpu the device (whose WGSL must have `packed_4x8_integer_dot_product`)
 * @param format q8 or q4g128
 * @param M rows of `a`
 * @param N rows of the weight
 * @param K columns
 * @param variant the op's variant to run (ops/matmul's override), instead of the one its size picks
 * @returns the kernel and its binding slots
 */
export function gemmDp4a(
  gpu: ResidentDevice,
  format: "q8" | "q4g128",
  M: number,
  N: number,
  K: number,
  variant?: string,
): ProductKernel {
  const options = variant === undefined ? {} : { override: variant as MatmulVariant };
  const plan = format === "q8"
    ? matmulQ8Dp4aPlan(gpu, { M, N, K }, options)
    : matmulQ4G128Dp4aPlan(gpu, { M, N, K }, options);
  return { plan, slots: slotsOf(plan) };
}

/**
 * The prefill product in f32 as ops/matmul computes it, transposed: `ct = W xt`, with the weight
 * (or a row block) `[N, K]` as the left operand and the activations transposed, `xt` `[K, M]`,
 * giving `ct` `[N, M]`.
 *
 * @param gpu the device
 * @param M rows of the activations (tokens)
 * @param N rows of the weight
 * @param K columns
 * @returns the kernel and its binding slots (`input` is `xt`, `output` is `ct`)
 */
export function gemmF32Transposed(gpu: ResidentDevice, M: number, N: number, K: number): ProductKernel {
  const plan = matmulPlan(gpu, { M: N, N: M, K });
  const slots: Record<string, ProductSlot> = { a: "weight", b: "input", c: "output" };
  return {
    plan,
    slots: plan.bindings.map((b) => {
      if (!slots[b.name]) throw new Error(`llm engine: matmul has a binding ${b.name} the engine does not know`);
      return slots[b.name];
    }),
  };
}
