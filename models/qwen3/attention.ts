/**
 * Qwen3's self-attention as ops: projections, per-head q_norm/k_norm, rotate-half RoPE, then GQA.
 *
 * - q, k, v: `linear.ts` products of the normed hidden state, `[M, heads, head_dim]` and
 *   `[M, kvHeads, head_dim]` (head_dim independent of the hidden size).
 * - q_norm / k_norm: ops/rmsnorm over the last axis, one row per (token, head), the `[head_dim]`
 *   weight shared by every head (transformers' `Qwen3RMSNorm(head_dim)` on `[..., heads, head_dim]`).
 * - RoPE: ops/rope's `ropeAxes` with one axis of head_dim channels and pairing `"half"`, which is
 *   HF's `rotate_half` (channel i with i + head_dim/2), base `rope_theta`, after the norms as in
 *   transformers; positions are an i32 tensor the program's caller fills.
 * - attention of a sequence (`sequenceAttentionSteps`): ops/permute to the `[heads, M, head_dim]`
 *   layout ops/gqa reads, gqa's prefill path (flash_attention's kernel, query head j reading KV head
 *   `j / (heads / kvHeads)`, causal from position 0), and a permute back to `[M, heads · head_dim]`
 *   for o_proj. (When flash_attention reads the `[M, heads, head_dim]` layout itself, the permutes go.)
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { gqaPlan } from "../../ops/gqa/mod.ts";
import { permutePlan } from "../../ops/permute/mod.ts";
import { rmsnormPlan } from "../../ops/rmsnorm/mod.ts";
import { ropeAxesPlan, validateRopeAxesShape } from "../../ops/rope/mod.ts";
import type { Qwen3Config } from "./config.ts";
import { linearStep } from "./linear.ts";
import type { Qwen3LayerWeights } from "./load.ts";
import type { Step, Workspace } from "./steps.ts";

/** RoPE's per-pair tables for ropeAxes (one axis, rotate_half): constant for a model. */
export interface RopeTables {
  /** Each channel pair's axis (all 0), `[head_dim / 2]` u32. */
  readonly pairAxis: GpuTensor;
  /** Each pair's inverse frequency `f32(θ^(-2i/head_dim))`, `[head_dim / 2]`. */
  readonly invFreq: GpuTensor;
}

/**
 * Uploads the RoPE tables of a model.
 *
 * @param work where they are allocated
 * @param config the model
 * @returns the tables
 */
export function ropeTables(work: Workspace, config: Qwen3Config): RopeTables {
  const pairs = validateRopeAxesShape(ropeShape(config, 1, 1));
  return {
    pairAxis: work.upload(pairs.axis, "rope pair axes"),
    invFreq: work.upload(pairs.invFreq, "rope inverse frequencies"),
  };
}

function ropeShape(config: Qwen3Config, tokens: number, heads: number) {
  const D = config.headDim;
  return { tokens, heads, headDim: D, axesDims: [D], theta: config.ropeTheta, pairing: "half" as const };
}

/** The projections and their normed, rotated forms for M tokens. */
export interface QkvBuffers {
  /** q `[M, heads · head_dim]`: the projection, then (after the steps) its normed and rotated form. */
  readonly q: GpuTensor;
  /** k `[M, kvHeads · head_dim]`, as q. */
  readonly k: GpuTensor;
  /** v `[M, kvHeads · head_dim]`. */
  readonly v: GpuTensor;
  /** Scratch: q after q_norm, before RoPE. */
  readonly qn: GpuTensor;
  /** Scratch: k after k_norm, before RoPE. */
  readonly kn: GpuTensor;
}

/**
 * Allocates the q/k/v buffers for M tokens.
 *
 * @param work where they are allocated
 * @param config the model
 * @param M tokens
 * @returns the buffers
 */
export function qkvBuffers(work: Workspace, config: Qwen3Config, M: number): QkvBuffers {
  const q = M * config.numAttentionHeads * config.headDim, kv = M * config.numKeyValueHeads * config.headDim;
  return {
    q: work.alloc("f32", q, "q"),
    k: work.alloc("f32", kv, "k"),
    v: work.alloc("f32", kv, "v"),
    qn: work.alloc("f32", q, "q normed"),
    kn: work.alloc("f32", kv, "k normed"),
  };
}

/**
 * q, k, v of M tokens from the normed hidden state `xn` `[M, hidden]`: after these steps `buf.q` and
 * `buf.k` hold the normed, rotated q and k, `buf.v` the values.
 *
 * @param gpu the device
 * @param config the model
 * @param layer the layer's weights
 * @param M tokens
 * @param xn the normed hidden state
 * @param positions each token's position, i32 `[M]`
 * @param rope the model's RoPE tables
 * @param buf the buffers
 * @returns the steps
 */
export function qkvSteps(
  gpu: ResidentDevice,
  config: Qwen3Config,
  layer: Qwen3LayerWeights,
  M: number,
  xn: GpuTensor,
  positions: GpuTensor,
  rope: RopeTables,
  buf: QkvBuffers,
): Step[] {
  const { numAttentionHeads: H, numKeyValueHeads: kvH, headDim: D, rmsNormEps: eps } = config;
  const headNorm = (heads: number) => rmsnormPlan(gpu, { rows: M * heads, cols: D, groups: 1, eps });
  return [
    linearStep(gpu, layer.q, M, xn, buf.q),
    linearStep(gpu, layer.k, M, xn, buf.k),
    linearStep(gpu, layer.v, M, xn, buf.v),
    [headNorm(H), [buf.q, layer.qNorm, buf.qn]],
    [headNorm(kvH), [buf.k, layer.kNorm, buf.kn]],
    [ropeAxesPlan(gpu, ropeShape(config, M, H)), [buf.qn, positions, rope.pairAxis, rope.invFreq, buf.q]],
    [ropeAxesPlan(gpu, ropeShape(config, M, kvH)), [buf.kn, positions, rope.pairAxis, rope.invFreq, buf.k]],
  ];
}

/** The head-major buffers of a sequence's attention. */
export interface SequenceAttentionBuffers {
  /** q as `[heads, M, head_dim]`. */
  readonly qh: GpuTensor;
  /** k as `[kvHeads, M, head_dim]`. */
  readonly kh: GpuTensor;
  /** v as `[kvHeads, M, head_dim]`. */
  readonly vh: GpuTensor;
  /** The attention output `[heads, M, head_dim]`. */
  readonly oh: GpuTensor;
  /** gqa's mask binding, unused (one placeholder element). */
  readonly noMask: GpuTensor;
}

/**
 * Allocates the head-major buffers for M tokens.
 *
 * @param work where they are allocated
 * @param config the model
 * @param M tokens
 * @returns the buffers
 */
export function sequenceAttentionBuffers(work: Workspace, config: Qwen3Config, M: number): SequenceAttentionBuffers {
  const q = M * config.numAttentionHeads * config.headDim, kv = M * config.numKeyValueHeads * config.headDim;
  return {
    qh: work.alloc("f32", q, "q by head"),
    kh: work.alloc("f32", kv, "k by head"),
    vh: work.alloc("f32", kv, "v by head"),
    oh: work.alloc("f32", q, "attention by head"),
    noMask: work.alloc("f32", 1, "no mask"),
  };
}

/**
 * Causal attention of M tokens among themselves (positions 0..M-1): `o` `[M, heads · head_dim]` from
 * the rotated q, k and v of {@link qkvSteps}.
 *
 * @param gpu the device
 * @param config the model
 * @param M tokens
 * @param qkv q, k, v (token-major)
 * @param o the output
 * @param buf the head-major buffers
 * @param keep steps given the head-major keys and values `[kvHeads, M, head_dim]`, run once they
 *   are made (a prefill writes them into its KV cache)
 * @returns the steps
 */
export function sequenceAttentionSteps(
  gpu: ResidentDevice,
  config: Qwen3Config,
  M: number,
  qkv: QkvBuffers,
  o: GpuTensor,
  buf: SequenceAttentionBuffers,
  keep?: (kh: GpuTensor, vh: GpuTensor) => Step[],
): Step[] {
  const { numAttentionHeads: H, numKeyValueHeads: kvH, headDim: D } = config;
  const toHeads = (heads: number) => permutePlan(gpu, { shape: [M, heads, D], dims: [1, 0, 2] });
  const attention = gqaPlan(gpu, { B: 1, H, kvHeads: kvH, L: M, S: M, D, causal: true }, { path: "prefill" });
  return [
    [toHeads(H), [qkv.q, buf.qh]],
    [toHeads(kvH), [qkv.k, buf.kh]],
    [toHeads(kvH), [qkv.v, buf.vh]],
    ...(keep?.(buf.kh, buf.vh) ?? []),
    [attention.steps[0], [buf.qh, buf.kh, buf.vh, buf.noMask, buf.oh]],
    [permutePlan(gpu, { shape: [H, M, D], dims: [1, 0, 2] }), [buf.oh, o]],
  ];
}
