/**
 * Linear layers (`F.linear(x, weight, bias)`, weight `[N, K]` as checkpoints store it) on the GPU:
 * ops/matmul's `matmulLinear` (an f32 weight in its own orientation), `matmulQ8` or `matmulQ4G128`
 * (llm's q8 and q4g128 formats: int8 codes with one scale per row; int4 codes with one scale per row
 * and 128 columns, quantized on the GPU as the weight is uploaded, `quantizeRowsGpu`), with the bias
 * and any further step (an activation, a gate `[M / gateRows, N]`, accumulation into the output) fused
 * into the product's epilogue. A layer of one input vector (the timestep path) is the same product
 * with M = 1.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { quantizeRowsGpu } from "../../llm/weights/load.ts";
import { freeOnFailure } from "../loading.ts";
import {
  type MatmulActivation,
  type MatmulEpilogue,
  matmulLinearPlan,
  matmulQ4G128Plan,
  matmulQ8Plan,
} from "../../ops/matmul/mod.ts";
import type { Steps } from "./program.ts";

/** How a Linear weight is held on the GPU: f32, or int8 / int4 codes with f32 scales (llm's formats). */
export type LinearFormat = "f32" | "q8" | "q4g128";

/** The formats, in order. */
export const LINEAR_FORMATS: readonly LinearFormat[] = ["f32", "q8", "q4g128"];

/** A Linear layer resident on the GPU. */
export interface Linear {
  /** Output features. */
  readonly N: number;
  /** Input features. */
  readonly K: number;
  /** The weight's format. */
  readonly format: LinearFormat;
  /** f32: `[N, K]`; q8 / q4g128: its packed codes. */
  readonly weight: GpuTensor;
  /** The quantized formats' scales (one per row, or per row and group of 128 columns). */
  readonly scales?: GpuTensor;
  /** The bias `[N]`, if any. */
  readonly bias?: GpuTensor;
  /** Its name (the checkpoint's module name), for messages. */
  readonly label: string;
}

/**
 * Bytes a Linear weight `[N, K]` takes on the GPU in a format (codes and scales).
 *
 * @param N output features
 * @param K input features
 * @param format the format
 * @returns bytes
 */
export function linearBytes(N: number, K: number, format: LinearFormat): number {
  if (format === "f32") return 4 * N * K;
  if (format === "q8") return 4 * N * Math.ceil(K / 4) + 4 * N;
  return 4 * N * Math.ceil(K / 8) + 4 * N * Math.ceil(K / 128);
}

/**
 * Uploads a Linear layer, quantizing its weight on the GPU for q8 and q4g128.
 *
 * @param gpu the device
 * @param weight `[N, K]` row-major, as stored
 * @param N output features
 * @param K input features
 * @param bias `[N]`, optional
 * @param label for messages
 * @param format the weight's format on the GPU (default f32)
 * @returns the layer
 * @throws Error when the arrays do not have N · K and N elements, or the format is unknown
 */
export async function uploadLinear(
  gpu: ResidentDevice,
  weight: Float32Array,
  N: number,
  K: number,
  bias?: Float32Array,
  label = "linear",
  format: LinearFormat = "f32",
): Promise<Linear> {
  if (weight.length !== N * K) throw new Error(`${label}: weight has ${weight.length} values, expected ${N} x ${K}`);
  if (bias && bias.length !== N) throw new Error(`${label}: bias has ${bias.length} values, expected ${N}`);
  if (!LINEAR_FORMATS.includes(format)) {
    throw new Error(`${label}: format must be one of ${LINEAR_FORMATS.join(", ")}, got ${String(format)}`);
  }
  // A quantization that fails frees the bias, codes and scales made before it.
  return await freeOnFailure(async (keep) => {
    const biasTensor = bias ? keep(gpu.upload(bias, `${label}.bias`)) : undefined;
    if (format !== "f32") {
      const q4 = format === "q4g128";
      const codes = keep(gpu.alloc("u32", N * Math.ceil(K / (q4 ? 8 : 4)), `${label}.weight (${format})`));
      const scales = keep(gpu.alloc("f32", N * (q4 ? Math.ceil(K / 128) : 1), `${label}.scales`));
      await quantizeRowsGpu(gpu, format, weight, N, K, codes.buffer, scales.buffer);
      return { N, K, format, weight: codes, scales, bias: biasTensor, label };
    }
    return { N, K, format, weight: gpu.upload(weight, `${label}.weight`), bias: biasTensor, label };
  });
}

/**
 * The tensors of a layer, to free them.
 *
 * @param layer the layer
 * @returns its weight, scales and bias
 */
export function linearTensors(layer: Linear): GpuTensor[] {
  return [layer.weight, ...(layer.scales ? [layer.scales] : []), ...(layer.bias ? [layer.bias] : [])];
}

/** Steps a product applies after its bias (ops/matmul's epilogue), in this order. */
export interface LinearEpilogue {
  /** `F.gelu`, `F.gelu(approximate="tanh")` or `F.silu` of each output. */
  activation?: MatmulActivation;
  /** Multiply row m by `gate[floor(m / gateRows), n]`: `[M / gateRows, N]`. */
  gate?: GpuTensor;
  /** Rows per gate row (default 1). */
  gateRows?: number;
  /** Add to `out`'s content (`out += ...`). */
  accumulate?: boolean;
}

/**
 * Appends `out[M, N] = epilogue(x[M, K] · weightᵀ + bias)` to `steps`: one dispatch.
 *
 * @param steps where the dispatch goes
 * @param gpu the device
 * @param layer the layer
 * @param M rows of x
 * @param x `[M, K]`
 * @param out `[M, N]`
 * @param epilogue activation, gate, accumulation
 */
export function linear(
  steps: Steps,
  gpu: ResidentDevice,
  layer: Linear,
  M: number,
  x: GpuTensor,
  out: GpuTensor,
  epilogue: LinearEpilogue = {},
): void {
  const { N, K, format } = layer;
  const shape: { M: number; N: number; K: number } & MatmulEpilogue = { M, N, K };
  if (layer.bias) shape.bias = true;
  if (epilogue.activation) shape.activation = epilogue.activation;
  if (epilogue.gate) shape.gateRows = epilogue.gateRows ?? 1;
  if (epilogue.accumulate) shape.accumulate = true;
  const fused = layer.bias !== undefined || epilogue.activation !== undefined || epilogue.gate !== undefined ||
    epilogue.accumulate === true;
  const plan = format === "f32"
    ? matmulLinearPlan(gpu, shape)
    : format === "q8"
    ? matmulQ8Plan(gpu, shape)
    : matmulQ4G128Plan(gpu, shape);
  const operands = format === "f32" ? [x, layer.weight] : [x, layer.weight, layer.scales!];
  // A step that is off has a binding of length 0: any f32 tensor stands there, unread.
  const tail = fused ? [layer.bias ?? x, epilogue.gate ?? x, out] : [out];
  steps.run(plan, [...operands, ...tail], layer.label);
}
