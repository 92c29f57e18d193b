/**
 * Qwen3's MLP as ops: `down(silu(gate(x)) · up(x))` (SwiGLU, no biases): two `linear.ts` products,
 * ops/activation's `silu` on the gate, ops/elementwise's `multiply` by the up projection, and the
 * down product. (When ops/activation has a fused `swiglu`, its two middle steps become one.)
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { activationPlan } from "../../ops/activation/mod.ts";
import { elementwisePlan } from "../../ops/elementwise/mod.ts";
import type { Qwen3Config } from "./config.ts";
import { linearStep } from "./linear.ts";
import type { Qwen3LayerWeights } from "./load.ts";
import type { Step, Workspace } from "./steps.ts";

/** The MLP's intermediates for M tokens, each `[M, intermediate]`. */
export interface MlpBuffers {
  readonly gate: GpuTensor;
  readonly up: GpuTensor;
  readonly act: GpuTensor;
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
  return {
    gate: work.alloc("f32", n, "mlp gate"),
    up: work.alloc("f32", n, "mlp up"),
    act: work.alloc("f32", n, "mlp silu(gate)"),
  };
}

/**
 * The MLP of M tokens: `out = down(silu(gate(xn)) · up(xn))`.
 *
 * @param gpu the device
 * @param config the model
 * @param layer the layer's weights
 * @param M tokens
 * @param xn the normed hidden state `[M, hidden]`
 * @param out the output `[M, hidden]`
 * @param buf the intermediates
 * @returns the steps
 */
export function mlpSteps(
  gpu: ResidentDevice,
  config: Qwen3Config,
  layer: Qwen3LayerWeights,
  M: number,
  xn: GpuTensor,
  out: GpuTensor,
  buf: MlpBuffers,
): Step[] {
  const n = M * config.intermediateSize;
  return [
    linearStep(gpu, layer.gate, M, xn, buf.gate),
    linearStep(gpu, layer.up, M, xn, buf.up),
    [activationPlan(gpu, { kind: "silu", n }), [buf.gate, buf.act]],
    [elementwisePlan(gpu, { op: "multiply", n }), [buf.act, buf.up, buf.gate]],
    linearStep(gpu, layer.down, M, buf.gate, out),
  ];
}
