/**
 * The fused epilogue's part of matmul's plans, shared by mod.ts (the products on f32 activations)
 * and dp4a.ts (on int8 ones): from a plan's shape, whether it takes the fused kernel, the bindings
 * after the operands (`bias` and `gate` for a fused plan, each of length 0 where its step is off,
 * then `c`, read and written when the epilogue accumulates), the params (the sizes, and the
 * epilogue's flags for a fused kernel: wgsl/include/params.wgsl and params_fused.wgsl) and what they
 * add to the plan's cost; and the host arrays a one-shot call feeds those bindings. mod.ts says why
 * the bindings are fixed and the steps are flags.
 *
 * @module
 */

import type { BindingSpec, HostArray } from "../../harness/device.ts";
import { packParams } from "../../harness/params.ts";
import {
  epilogueOf,
  hasEpilogue,
  type MatmulActivation,
  type MatmulEpilogue,
  type MatmulEpilogueArgs,
  type MatmulShape,
} from "./reference.ts";

/** The params of matmul's plain kernels (wgsl/include/params.wgsl). */
const PARAMS = [{ name: "m", type: "u32" }, { name: "n", type: "u32" }, { name: "k", type: "u32" }] as const;
/** The fused kernels' params (wgsl/include/params_fused.wgsl): the sizes and the epilogue's flags. */
const PARAMS_FUSED = [
  ...PARAMS,
  { name: "bias", type: "u32" },
  { name: "activation", type: "u32" },
  { name: "gate_rows", type: "u32" },
  { name: "accumulate", type: "u32" },
] as const;
/** The fused kernels' code for each activation (0: none). */
const ACTIVATION_CODES: Readonly<Record<MatmulActivation, number>> = { gelu: 1, gelu_tanh: 2, silu: 3 };

/** What a plan's epilogue, or its absence, adds to the plan after its operands. */
export interface GemmEpilogue {
  /** Whether any step is on, and so whether the plan takes the product's fused kernel. */
  fused: boolean;
  /** The bindings after the operands: `bias` and `gate` where fused, then `c`. */
  bindings: BindingSpec[];
  /** The packed params: the sizes, and where fused the epilogue's flags. */
  params: ArrayBuffer;
  /**
   * Their part of the cost: bias and gate read once, c written once (and read once when accumulated
   * into); one operation per output for each of the bias, the gate and the accumulation (an
   * activation's cost depends on how it is evaluated, so it is not counted).
   */
  cost: { bytes: number; flops: number };
}

/**
 * The epilogue's part of a product's plan (its shape already validated).
 *
 * @param op the product, for the params' messages
 * @param shape the sizes and the epilogue's steps
 * @returns whether the plan is fused, its bindings after the operands, its params and their cost
 */
export function gemmEpilogue(op: string, shape: MatmulShape & MatmulEpilogue): GemmEpilogue {
  const { M, N, K, bias = false, activation, gateRows, accumulate = false } = shape;
  const fused = hasEpilogue(shape);
  const gateLength = gateRows === undefined ? 0 : (M / gateRows) * N;
  const epilogue: BindingSpec[] = fused
    ? [
      { name: "bias", dtype: "f32", length: bias ? N : 0, role: "input" },
      { name: "gate", dtype: "f32", length: gateLength, role: "input" },
    ]
    : [];
  const sizes = { m: M, n: N, k: K };
  const params = fused
    ? packParams(PARAMS_FUSED, {
      ...sizes,
      bias: Number(bias),
      activation: activation === undefined ? 0 : ACTIVATION_CODES[activation],
      gate_rows: gateRows ?? 0,
      accumulate: Number(accumulate),
    }, op)
    : packParams(PARAMS, sizes, op);
  const steps = Number(bias) + Number(gateRows !== undefined) + Number(accumulate);
  return {
    fused,
    bindings: [...epilogue, { name: "c", dtype: "f32", length: M * N, role: accumulate ? "inout" : "output" }],
    params,
    cost: {
      bytes: 4 * ((bias ? N : 0) + gateLength + (accumulate ? 2 : 1) * M * N),
      flops: steps * M * N,
    },
  };
}

/**
 * The host arrays a one-shot call feeds its plan after the operands: the epilogue's bias and gate
 * (empty where absent) for a fused plan, then the prior c when it accumulates.
 *
 * @param args the call's epilogue arguments
 * @returns the arrays, none without an epilogue
 */
export function epilogueInputs(args: MatmulEpilogueArgs): HostArray[] {
  if (!hasEpilogue(epilogueOf(args))) return [];
  const empty = new Float32Array(0);
  return [args.bias ?? empty, args.gate ?? empty, ...(args.accumulate && args.c ? [args.c] : [])];
}

/**
 * The shape of a one-shot call's plan: its sizes and its epilogue's steps.
 *
 * @param args the call's sizes and epilogue arguments
 * @returns the plan's shape
 */
export const planShape = (args: MatmulShape & MatmulEpilogueArgs): MatmulShape & MatmulEpilogue => ({
  M: args.M,
  N: args.N,
  K: args.K,
  ...epilogueOf(args),
});
