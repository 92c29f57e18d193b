/**
 * Reference for mixture-of-experts routing: router, dispatch and gather, in plain TypeScript.
 *
 * An MoE layer is `router → dispatch → (each expert on its slots) → gather`:
 *
 * - {@link moeRouter}: logits `[T, E]` (tokens by experts, `x @ W_router^T`) to the k experts of
 *   each token and their gates: softmax over all E experts first, then the top k (Mixtral's
 *   `MixtralSparseMoeBlock`, Qwen-MoE, Switch), descending; equal logits go to the lower expert index
 *   (torch.topk leaves ties undefined). With `normTopkProb` the k gates are divided by their sum
 *   (Mixtral, Qwen3-MoE: `norm_topk_prob=True`); without, they stay softmax probabilities (Switch,
 *   where renormalising at k = 1 would make every gate 1). It has no default, because the two
 *   families disagree and a silent default would be wrong for one of them. A row with a NaN or
 *   +Infinity logit (or only -Infinity ones) has a NaN softmax, as in torch: every probability ties
 *   (torch.topk ranks NaN above all and leaves the order of ties undefined), so it takes experts 0 ..
 *   k - 1 by the tie rule, with NaN gates; -Infinity logits are probability 0.
 * - {@link moeDispatch}: each expert has `capacity` slots. Assignments claim slots in the order
 *   rank 0 of every token (by token index), then rank 1 of every token, and so on; an assignment
 *   past its expert's capacity is dropped. That is GShard's / Switch's / fairseq's top2gating
 *   (locations by cumulative sum, rank 1 offset by rank 0's count), not arrival order: a token's
 *   first choice never loses its slot to another token's second. The result is `slotToken`
 *   `[E, capacity]` (the token in each slot, -1 when empty: the row indices an index_select of x
 *   needs, e.g. ops/gather, which gathers zeros for -1) and `tokenSlot` `[T, k]` (the slot
 *   `e * capacity + c` each assignment got, -1 when dropped).
 * - {@link moeGather}: the experts' outputs `y` `[E * capacity, D]` back to tokens:
 *   `out[t] = Σ_r gates[t, r] · y[tokenSlot[t, r]]` over the assignments not dropped. The gate is
 *   applied here and only here (dispatch moves rows unscaled), so it is applied exactly once.
 *
 * f64 accumulation throughout; gates and outputs rounded to f32 once.
 *
 * @module
 */

import { I32_MAX, requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";

/** The keys moeRouter's shape or arguments may carry: sizes and arrays (a plan may be given the arguments). */
const ROUTER_KEYS: readonly string[] = ["logits", "T", "E", "k", "normTopkProb"];
/** The keys moeDispatch's shape or arguments may carry. */
const DISPATCH_KEYS: readonly string[] = ["experts", "T", "E", "k", "capacity"];
/** The keys moeGather's shape or arguments may carry. */
const GATHER_KEYS: readonly string[] = ["y", "tokenSlot", "gates", "T", "k", "slots", "D"];

/** Sizes of {@link moeRouter}. */
export interface MoeRouterShape {
  /** Tokens, >= 1. */
  T: number;
  /** Experts, >= 1. */
  E: number;
  /** Experts per token, in [1, E]. */
  k: number;
  /** Divide the k gates by their sum (Mixtral: true; Switch: false). Required. */
  normTopkProb: boolean;
}

/** Arguments of {@link moeRouter}. */
export interface MoeRouterArgs extends MoeRouterShape {
  /** Router logits `[T, E]`. */
  logits: Float32Array;
}

/** What {@link moeRouter} returns. */
export interface MoeRouting {
  /** Chosen experts `[T, k]`, by descending gate. */
  experts: Int32Array;
  /** Their gates `[T, k]`. */
  gates: Float32Array;
}

/**
 * Validates {@link moeRouter}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMoeRouterShape } from "@xpu/ops/ops/moe";
 * validateMoeRouterShape({ T: 16, E: 8, k: 2, normTopkProb: true }); // passes; normTopkProb has no default
 * ```
 */
export function validateMoeRouterShape(shape: MoeRouterShape): void {
  requireArgs("moeRouter", "shape", shape, "{ T, E, k, normTopkProb }", ROUTER_KEYS);
  requireInt("moeRouter", "T", shape.T, 1, U32_MAX);
  requireInt("moeRouter", "E", shape.E, 1, U32_MAX);
  requireInt("moeRouter", "k", shape.k, 1, shape.E);
  if (typeof shape.normTopkProb !== "boolean") {
    throw new Error(`moeRouter: normTopkProb must be true or false (no default), got ${String(shape.normTopkProb)}`);
  }
}

/**
 * Validates {@link moeRouter}'s arguments.
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMoeRouter } from "@xpu/ops/ops/moe";
 * validateMoeRouter({ logits: new Float32Array([0, 1, 1, -1]), T: 1, E: 4, k: 2, normTopkProb: false }); // passes
 * ```
 */
export function validateMoeRouter(args: MoeRouterArgs): void {
  requireArgs("moeRouter", "args", args, "{ logits, T, E, k, normTopkProb }", ROUTER_KEYS);
  validateMoeRouterShape(args);
  requireArray("moeRouter", "logits", args.logits, "Float32Array", [args.T * args.E, "T * E"]);
}

/**
 * The router: softmax over the experts, then the top k (see the module doc).
 *
 * @param args logits `[T, E]`, k and normTopkProb
 * @returns the experts and gates `[T, k]`
 *
 * @example
 * ```ts
 * import { moeRouter } from "@xpu/ops/ops/moe";
 * const r = moeRouter({ logits: new Float32Array([0, 1, 1, -1]), T: 1, E: 4, k: 2, normTopkProb: true });
 * r.experts; // [1, 2]: a tie, the lower index first
 * r.gates; // [0.5, 0.5]
 * ```
 */
export function moeRouter(args: MoeRouterArgs): MoeRouting {
  validateMoeRouter(args);
  const { logits, T, E, k, normTopkProb } = args;
  const experts = new Int32Array(T * k);
  const gates = new Float32Array(T * k);
  for (let t = 0; t < T; t++) {
    const row = Array.from(logits.subarray(t * E, (t + 1) * E));
    const top = Math.max(...row);
    const weights = row.map((l) => Math.exp(l - top));
    const sum = weights.reduce((a, b) => a + b, 0);
    // A stable sort by descending logit keeps equal logits in index order. A row whose softmax is NaN
    // (a NaN or +Infinity logit, or every logit -Infinity) has k equal (NaN) probabilities at the top,
    // so by the same rule it takes experts 0 .. k - 1, with NaN gates.
    const order = Number.isNaN(sum)
      ? row.map((_, e) => e).slice(0, k)
      : row.map((_, e) => e).sort((a, b) => row[b] - row[a]).slice(0, k);
    const chosen = order.reduce((acc, e) => acc + weights[e], 0);
    order.forEach((e, r) => {
      experts[t * k + r] = e;
      gates[t * k + r] = normTopkProb ? weights[e] / chosen : weights[e] / sum;
    });
  }
  return { experts, gates };
}

/** Sizes of {@link moeDispatch}. */
export interface MoeDispatchShape {
  /** Tokens, >= 1. */
  T: number;
  /** Experts, >= 1. */
  E: number;
  /** Experts per token, in [1, E]. */
  k: number;
  /** Slots per expert, >= 1 (GShard: ceil(T k / E) times a capacity factor). */
  capacity: number;
}

/** Arguments of {@link moeDispatch}. */
export interface MoeDispatchArgs extends MoeDispatchShape {
  /** Each token's experts by rank, `[T, k]`, each in [0, E) (moeRouter's `experts`). */
  experts: Int32Array;
}

/** What {@link moeDispatch} returns. */
export interface MoeDispatch {
  /** The token in each slot, `[E, capacity]`; -1 for an empty slot. */
  slotToken: Int32Array;
  /** The slot `e * capacity + c` of each assignment, `[T, k]`; -1 when dropped. */
  tokenSlot: Int32Array;
}

/**
 * Validates {@link moeDispatch}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMoeDispatchShape } from "@xpu/ops/ops/moe";
 * validateMoeDispatchShape({ T: 2, E: 2, k: 2, capacity: 1 }); // passes
 * ```
 */
export function validateMoeDispatchShape(shape: MoeDispatchShape): void {
  requireArgs("moeDispatch", "shape", shape, "{ T, E, k, capacity }", DISPATCH_KEYS);
  requireInt("moeDispatch", "T", shape.T, 1, I32_MAX);
  requireInt("moeDispatch", "E", shape.E, 1, I32_MAX);
  requireInt("moeDispatch", "k", shape.k, 1, shape.E);
  requireInt("moeDispatch", "capacity", shape.capacity, 1, I32_MAX);
  if (shape.E * shape.capacity > 2 ** 31 - 1) {
    throw new Error(`moeDispatch: E * capacity must be below 2^31, got ${shape.E * shape.capacity}`);
  }
}

/**
 * Validates {@link moeDispatch}'s arguments, including that every expert index is in [0, E).
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMoeDispatch } from "@xpu/ops/ops/moe";
 * validateMoeDispatch({ experts: new Int32Array([0, 1, 0, 1]), T: 2, E: 2, k: 2, capacity: 1 }); // passes
 * ```
 */
export function validateMoeDispatch(args: MoeDispatchArgs): void {
  requireArgs("moeDispatch", "args", args, "{ experts, T, E, k, capacity }", DISPATCH_KEYS);
  validateMoeDispatchShape(args);
  requireArray("moeDispatch", "experts", args.experts, "Int32Array", [args.T * args.k, "T * k"]);
  const bad = args.experts.findIndex((e) => e < 0 || e >= args.E);
  if (bad >= 0) {
    throw new Error(`moeDispatch: experts[${bad}] must be an expert in [0, ${args.E - 1}], got ${args.experts[bad]}`);
  }
}

/**
 * Dispatch: slots in (rank, token) order, overflow dropped (see the module doc).
 *
 * @param args the experts `[T, k]` and the capacity
 * @returns `slotToken` `[E, capacity]` and `tokenSlot` `[T, k]`
 *
 * @example
 * ```ts
 * import { moeDispatch } from "@xpu/ops/ops/moe";
 * // Two tokens both choose expert 0 first and 1 second; one slot each: token 0 gets expert 0's slot,
 * // token 1's first choice is dropped, and expert 1's slot goes to token 0's second choice.
 * moeDispatch({ experts: new Int32Array([0, 1, 0, 1]), T: 2, E: 2, k: 2, capacity: 1 });
 * // slotToken [0, 0], tokenSlot [0, 1, -1, -1]
 * ```
 */
export function moeDispatch(args: MoeDispatchArgs): MoeDispatch {
  validateMoeDispatch(args);
  const { experts, T, E, k, capacity } = args;
  const slotToken = new Int32Array(E * capacity).fill(-1);
  const tokenSlot = new Int32Array(T * k).fill(-1);
  const used = new Array<number>(E).fill(0);
  for (let r = 0; r < k; r++) {
    for (let t = 0; t < T; t++) {
      const e = experts[t * k + r];
      if (used[e] < capacity) {
        slotToken[e * capacity + used[e]] = t;
        tokenSlot[t * k + r] = e * capacity + used[e];
      }
      used[e]++;
    }
  }
  return { slotToken, tokenSlot };
}

/** Sizes of {@link moeGather}. */
export interface MoeGatherShape {
  /** Tokens, >= 1. */
  T: number;
  /** Assignments per token, >= 1. */
  k: number;
  /** Rows of y: E * capacity, >= 1. */
  slots: number;
  /** Row length of y and of the output, >= 1. */
  D: number;
}

/** Arguments of {@link moeGather}. */
export interface MoeGatherArgs extends MoeGatherShape {
  /** The experts' outputs by slot, `[slots, D]`. */
  y: Float32Array;
  /** Each assignment's slot, `[T, k]`, -1 when dropped (moeDispatch's `tokenSlot`). */
  tokenSlot: Int32Array;
  /** Each assignment's gate, `[T, k]` (moeRouter's `gates`). */
  gates: Float32Array;
}

/**
 * Validates {@link moeGather}'s sizes.
 *
 * @param shape the sizes
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMoeGatherShape } from "@xpu/ops/ops/moe";
 * validateMoeGatherShape({ T: 1, k: 2, slots: 2, D: 2 }); // passes
 * ```
 */
export function validateMoeGatherShape(shape: MoeGatherShape): void {
  requireArgs("moeGather", "shape", shape, "{ T, k, slots, D }", GATHER_KEYS);
  requireInt("moeGather", "T", shape.T, 1, U32_MAX);
  requireInt("moeGather", "k", shape.k, 1, U32_MAX);
  requireInt("moeGather", "slots", shape.slots, 1, I32_MAX);
  requireInt("moeGather", "D", shape.D, 1, U32_MAX);
}

/**
 * Validates {@link moeGather}'s arguments, including that every slot is -1 or in [0, slots).
 *
 * @param args the arguments
 * @throws Error naming the bad argument and what was expected
 *
 * @example
 * ```ts
 * import { validateMoeGather } from "@xpu/ops/ops/moe";
 * const y = new Float32Array([1, 2, 10, 20]); // two slots of D = 2
 * validateMoeGather({ y, tokenSlot: new Int32Array([1, 0]), gates: new Float32Array([0.5, 0.25]), T: 1, k: 2, slots: 2, D: 2 });
 * ```
 */
export function validateMoeGather(args: MoeGatherArgs): void {
  requireArgs("moeGather", "args", args, "{ y, tokenSlot, gates, T, k, slots, D }", GATHER_KEYS);
  validateMoeGatherShape(args);
  requireArray("moeGather", "y", args.y, "Float32Array", [args.slots * args.D, "slots * D"]);
  requireArray("moeGather", "tokenSlot", args.tokenSlot, "Int32Array", [args.T * args.k, "T * k"]);
  requireArray("moeGather", "gates", args.gates, "Float32Array", [args.T * args.k, "T * k"]);
  const bad = args.tokenSlot.findIndex((s) => s < -1 || s >= args.slots);
  if (bad >= 0) {
    throw new Error(
      `moeGather: tokenSlot[${bad}] must be -1 or a slot in [0, ${args.slots - 1}], got ${args.tokenSlot[bad]}`,
    );
  }
}

/**
 * Gather: each token's gated sum of its experts' outputs (see the module doc).
 *
 * @param args y `[slots, D]`, tokenSlot and gates `[T, k]`
 * @returns `[T, D]`
 *
 * @example
 * ```ts
 * import { moeGather } from "@xpu/ops/ops/moe";
 * const y = new Float32Array([1, 2, 10, 20]); // two slots of D = 2
 * moeGather({ y, tokenSlot: new Int32Array([1, 0]), gates: new Float32Array([0.5, 0.25]), T: 1, k: 2, slots: 2, D: 2 });
 * // [0.5 * 10 + 0.25 * 1, 0.5 * 20 + 0.25 * 2] = [5.25, 10.5]
 * ```
 */
export function moeGather(args: MoeGatherArgs): Float32Array {
  validateMoeGather(args);
  const { y, tokenSlot, gates, T, k, D } = args;
  const out = new Float32Array(T * D);
  for (let t = 0; t < T; t++) {
    for (let d = 0; d < D; d++) {
      let acc = 0;
      for (let r = 0; r < k; r++) {
        const slot = tokenSlot[t * k + r];
        if (slot >= 0) acc += gates[t * k + r] * y[slot * D + d];
      }
      out[t * D + d] = acc;
    }
  }
  return out;
}
