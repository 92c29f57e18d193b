/**
 * Qwen3's MLP as ops: `down(silu(gate(x)) · up(x))` (SwiGLU, no biases), added into the residual
 * stream. For several rows (prefill, the encoder) it is three products with fused epilogues (ops/matmul):
 * the gate product's SiLU, the up product times that, and the down product added into the stream. For
 * one row (a decode step, GEMVs without epilogues) it is the two `linear.ts` products, ops/activation's
 * `silu` on the gate, ops/elementwise's `multiply` by the up projection, the down product and
 * ops/axpy's add into the stream.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { activationPlan } from "../../ops/activation/mod.ts";
import { axpyInplacePlan } from "../../ops/axpy/mod.ts";
import { elementwisePlan } from "../../ops/elementwise/mod.ts";
import type { Qwen3Config } from "./config.ts";
import { linearStep } from "./linear.ts";
import type { Qwen3LayerWeights } from "./load.ts";
import type { Step, Workspace } from "./steps.ts";

/** The MLP's intermediates for M tokens. */
export interface MlpBuffers {
  /** The gate product `[M, intermediate]`; with several rows, SiLU(gate) · up, the down product's input. */
  readonly gate: GpuTensor;
  /** SiLU of the gate product `[M, intermediate]`. */
  readonly act: GpuTensor;
  /** One row: the up product `[1, intermediate]`. */
  readonly up?: GpuTensor;
}

/**
 * Allocates the MLP's intermediates for M tokens.
 *
 * @param work where they are allocated
 * @param config the model
 * @param M tokens
 * @returns the buffers
 */
export function mlpBuffers(work: Workspace, config: Qwen3Config, M: number): MlpBuffers {
  const n = M * config.intermediateSize;
  const gate = work.alloc("f32", n, "mlp gate");
  const act = work.alloc("f32", n, "mlp silu(gate)");
  return M > 1 ? { gate, act } : { gate, act, up: work.alloc("f32", n, "mlp up") };
}

/**
 * The MLP of M tokens added into the residual stream: `x += down(silu(gate(xn)) · up(xn))`.
 *
 * @param gpu the device
 * @param config the model
 * @param layer the layer's weights
 * @param M tokens
 * @param xn the normed hidden state `[M, hidden]`
 * @param x the residual stream `[M, hidden]`, updated in place
 * @param delta one row: the layer's `[1, hidden]` (layer.ts `LayerBuffers`), the down product before it is
 *   added into the stream
 * @param buf the intermediates
 * @returns the steps
 */
export function mlpSteps(
  gpu: ResidentDevice,
  config: Qwen3Config,
  layer: Qwen3LayerWeights,
  M: number,
  xn: GpuTensor,
  x: GpuTensor,
  buf: MlpBuffers,
  delta?: GpuTensor,
): Step[] {
  const n = M * config.intermediateSize;
  if (M > 1) {
    return [
      linearStep(gpu, layer.gate, M, xn, buf.act, { activation: "silu" }),
      linearStep(gpu, layer.up, M, xn, buf.gate, { gate: buf.act }),
      linearStep(gpu, layer.down, M, buf.gate, x, { accumulate: true }),
    ];
  }
  return [
    linearStep(gpu, layer.gate, M, xn, buf.gate),
    linearStep(gpu, layer.up, M, xn, buf.up!),
    [activationPlan(gpu, { kind: "silu", n }), [buf.gate, buf.act]],
    [elementwisePlan(gpu, { op: "multiply", n }), [buf.act, buf.up!, buf.gate]],
    linearStep(gpu, layer.down, M, buf.gate, delta!),
    [axpyInplacePlan(gpu, { alpha: 1, n: M * config.hiddenSize }), [delta!, x]],
  ];
}
