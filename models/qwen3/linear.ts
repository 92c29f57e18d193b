/**
 * Qwen3's Linear layers: bias-free products of weights held once in the checkpoint's `[N, K]`
 * (models/linear.ts: its upload, its formats, its dispatch), as steps of a Qwen3 program. Several
 * rows (prefill, an encoder) are a GEMM, whose epilogue can fuse a SiLU, a gate or a residual add;
 * one row (a decode step) with nothing fused is a GEMV.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { type Linear, linearDispatch, type LinearEpilogue, type LinearFormat } from "../linear.ts";
import type { Step } from "./steps.ts";

/** How a model's matrices are held: f32, or per-row int8 (q8). */
export type Qwen3Format = Extract<LinearFormat, "f32" | "q8">;

/** Every format the port loads. */
export const QWEN3_FORMATS: readonly Qwen3Format[] = ["f32", "q8"];

/**
 * The product `out = epilogue(x @ W^T)` for `M` rows of `x` `[M, K]` into `out` `[M, N]`, one step.
 *
 * @param gpu the device
 * @param linear the weight
 * @param M rows of x
 * @param x the input
 * @param out the output (read too with `accumulate`)
 * @param epilogue what the product's epilogue applies (none by default)
 * @returns the step
 */
export function linearStep(
  gpu: ResidentDevice,
  linear: Linear,
  M: number,
  x: GpuTensor,
  out: GpuTensor,
  epilogue: LinearEpilogue = {},
): Step {
  const { plan, tensors } = linearDispatch(gpu, linear, M, x, out, epilogue);
  return [plan, tensors];
}
