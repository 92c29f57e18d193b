/**
 * One Qwen3 decoder layer as ops, pre-norm with two residual adds:
 *
 * ```
 * x += o_proj(attention(rope(norm_qk(qkv(rms_norm(x) * input_layernorm)))))
 * x += mlp(rms_norm(x) * post_attention_layernorm)
 * ```
 *
 * The norms are ops/rmsnorm. Over several rows (prefill, the encoder) each residual add is the last
 * product's fused epilogue (ops/matmul's `accumulate`: `x += y` as the product is stored, no pass of
 * its own); over one row (a decode step's GEMVs) it is ops/axpy's in-place entry point with alpha 1
 * (`x + 1 · y`, rounded once: the same f32 as `x + y`). The attention itself is the caller's (a
 * sequence's causal attention, or one token's against a KV cache), given q, k, v after RoPE.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { axpyInplacePlan } from "../../ops/axpy/mod.ts";
import { rmsnormPlan } from "../../ops/rmsnorm/mod.ts";
import { type QkvBuffers, qkvBuffers, qkvSteps, type RopeTables } from "./attention.ts";
import type { Qwen3Config } from "./config.ts";
import { linearStep } from "./linear.ts";
import type { Qwen3LayerWeights } from "./load.ts";
import { type MlpBuffers, mlpBuffers, mlpSteps } from "./mlp.ts";
import type { Step, Workspace } from "./steps.ts";

/** The activations of a layer over M tokens (shared by every layer of a program: they run in turn). */
export interface LayerBuffers {
  /** Tokens. */
  readonly M: number;
  /** The residual stream `[M, hidden]`: the layer's input, updated in place to its output. */
  readonly x: GpuTensor;
  /** A normed copy of x `[M, hidden]`. */
  readonly xn: GpuTensor;
  /** q, k, v. */
  readonly qkv: QkvBuffers;
  /** The attention's output `[M, heads · head_dim]`, o_proj's input. */
  readonly o: GpuTensor;
  /** One row: o_proj's and the MLP's output `[1, hidden]`, before each is added to x (several rows add in the products). */
  readonly delta?: GpuTensor;
  /** The MLP's intermediates. */
  readonly mlp: MlpBuffers;
}

/**
 * Allocates a layer's activations for M tokens.
 *
 * @param work where they are allocated
 * @param config the model
 * @param M tokens
 * @returns the buffers
 */
export function layerBuffers(work: Workspace, config: Qwen3Config, M: number): LayerBuffers {
  const h = M * config.hiddenSize;
  return {
    M,
    x: work.alloc("f32", h, "hidden state"),
    xn: work.alloc("f32", h, "hidden state normed"),
    qkv: qkvBuffers(work, config, M),
    o: work.alloc("f32", M * config.numAttentionHeads * config.headDim, "attention output"),
    ...(M > 1 ? {} : { delta: work.alloc("f32", h, "residual branch") }),
    mlp: mlpBuffers(work, config, M),
  };
}

/** The attention of a layer: from q, k, v after RoPE (token-major) to `o` `[M, heads · head_dim]`. */
export type AttentionSteps = (layerIndex: number, qkv: QkvBuffers, o: GpuTensor) => Step[];

/**
 * One decoder layer over `buf.x`, in place.
 *
 * @param gpu the device
 * @param config the model
 * @param layer the weights
 * @param index the layer's index (passed to `attention`, e.g. to pick its KV cache)
 * @param buf the activations
 * @param positions each token's position, i32 `[M]`
 * @param rope the model's RoPE tables
 * @param attention the attention core
 * @returns the steps
 */
export function layerSteps(
  gpu: ResidentDevice,
  config: Qwen3Config,
  layer: Qwen3LayerWeights,
  index: number,
  buf: LayerBuffers,
  positions: GpuTensor,
  rope: RopeTables,
  attention: AttentionSteps,
): Step[] {
  const { M, x, xn } = buf;
  const norm = rmsnormPlan(gpu, { rows: M, cols: config.hiddenSize, groups: 1, eps: config.rmsNormEps });
  // x += o_proj(o): in the product's epilogue for several rows, a GEMV and an add for one.
  const outProjection: Step[] = M > 1 ? [linearStep(gpu, layer.o, M, buf.o, x, { accumulate: true })] : [
    linearStep(gpu, layer.o, M, buf.o, buf.delta!),
    [axpyInplacePlan(gpu, { alpha: 1, n: M * config.hiddenSize }), [buf.delta!, x]],
  ];
  return [
    [norm, [x, layer.inputNorm, xn]],
    ...qkvSteps(gpu, config, layer, M, xn, positions, rope, buf.qkv),
    ...attention(index, buf.qkv, buf.o),
    ...outProjection,
    [norm, [x, layer.postNorm, xn]],
    ...mlpSteps(gpu, config, layer, M, xn, x, buf.mlp, buf.delta),
  ];
}
