/**
 * Linear layers (`F.linear(x, weight, bias)`, weight `[N, K]` as checkpoints store it) on the GPU, in
 * the two shapes the model has:
 *
 * - token-parallel (`M` rows of x): ops/matmul's `a [M, K] @ b [K, N]` in f32, so an f32 weight is
 *   stored transposed, `[K, N]`, when it is uploaded; `matmulQ8` / `matmulQ4G128` read a quantized
 *   weight in its own orientation `[N, K]`;
 * - one vector (the timestep embedding and the modulation it feeds): ops/matvec's `W [N, K] · x`
 *   (`matvec`, `matvecQ8`, `matvecQ4G128`), the checkpoint's own orientation.
 *
 * q8 and q4g128 are llm's formats (int8 codes with one scale per row; int4 codes with one scale per row
 * and 128 columns), quantized on the GPU as the weight is uploaded (`quantizeRowsGpu`).
 *
 * A bias is a second dispatch (elementwise `rows` add). Nothing else in the model knows which op runs
 * a product, so a fused Linear kernel replaces these two functions and nothing else.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { quantizeRowsGpu } from "../../llm/weights/load.ts";
import { elementwisePlan, elementwiseRowsPlan } from "../../ops/elementwise/mod.ts";
import { matmulPlan, matmulQ4G128Plan, matmulQ8Plan } from "../../ops/matmul/mod.ts";
import { matvecPlan, matvecQ4G128Plan, matvecQ8Plan } from "../../ops/matvec/mod.ts";
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
  /** `rows` (M rows of x) or `vector` (one vector). */
  readonly layout: "rows" | "vector";
  /** The weight's format. */
  readonly format: LinearFormat;
  /** f32: `[K, N]` for `rows`, `[N, K]` for `vector`; q8 / q4g128: the packed codes of `[N, K]`. */
  readonly weight: GpuTensor;
  /** The quantized formats' scales (one per row, or per row and group of 128 columns). */
  readonly scales?: GpuTensor;
  /** The bias `[N]`, if any. */
  readonly bias?: GpuTensor;
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
 * @param layout `rows` (token-parallel) or `vector` (one input vector)
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
  layout: "rows" | "vector",
  bias?: Float32Array,
  label = "linear",
  format: LinearFormat = "f32",
): Promise<Linear> {
  if (weight.length !== N * K) throw new Error(`${label}: weight has ${weight.length} values, expected ${N} x ${K}`);
  if (bias && bias.length !== N) throw new Error(`${label}: bias has ${bias.length} values, expected ${N}`);
  if (!LINEAR_FORMATS.includes(format)) {
    throw new Error(`${label}: format must be one of ${LINEAR_FORMATS.join(", ")}, got ${String(format)}`);
  }
  const biasTensor = bias ? gpu.upload(bias, `${label}.bias`) : undefined;
  if (format !== "f32") {
    const q4 = format === "q4g128";
    const codes = gpu.alloc("u32", N * Math.ceil(K / (q4 ? 8 : 4)), `${label}.weight (${format})`);
    const scales = gpu.alloc("f32", N * (q4 ? Math.ceil(K / 128) : 1), `${label}.scales`);
    await quantizeRowsGpu(gpu, format, weight, N, K, codes.buffer, scales.buffer);
    return { N, K, layout, format, weight: codes, scales, bias: biasTensor };
  }
  let stored = weight;
  if (layout === "rows") {
    stored = new Float32Array(N * K);
    for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) stored[k * N + n] = weight[n * K + k];
  }
  return { N, K, layout, format, weight: gpu.upload(stored, `${label}.weight`), bias: biasTensor };
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

/**
 * Appends `out[M, N] = x[M, K] · weightᵀ + bias` to `steps`.
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param layer the layer (`vector` layers take M = 1 only)
 * @param M rows of x
 * @param x `[M, K]`
 * @param out `[M, N]`
 * @param scratch `[M, N]`, needed with a bias (the product before the bias is added)
 * @throws Error when a bias has no scratch, or a vector layer gets M > 1
 */
export function linear(
  steps: Steps,
  gpu: ResidentDevice,
  layer: Linear,
  M: number,
  x: GpuTensor,
  out: GpuTensor,
  scratch?: GpuTensor,
): void {
  const { N, K, format } = layer;
  if (layer.layout === "vector" && M !== 1) throw new Error(`linear: a vector layer takes M = 1, got ${M}`);
  if (layer.bias && !scratch) throw new Error("linear: a layer with a bias needs a scratch tensor");
  const product = layer.bias ? scratch! : out;
  if (format === "f32") {
    if (layer.layout === "rows") steps.run(matmulPlan(gpu, { M, N, K }), [x, layer.weight, product]);
    else steps.run(matvecPlan(gpu, { N, K }), [layer.weight, x, product]);
  } else if (layer.layout === "rows") {
    const plan = format === "q8" ? matmulQ8Plan(gpu, { M, N, K }) : matmulQ4G128Plan(gpu, { M, N, K });
    steps.run(plan, [x, layer.weight, layer.scales!, product]);
  } else {
    const plan = format === "q8" ? matvecQ8Plan(gpu, { N, K }) : matvecQ4G128Plan(gpu, { N, K });
    steps.run(plan, [layer.weight, layer.scales!, x, product]);
  }
  if (layer.bias) {
    if (M === 1) steps.run(elementwisePlan(gpu, { op: "add", n: N }), [product, layer.bias, out]);
    else steps.run(elementwiseRowsPlan(gpu, { op: "add", rows: M, cols: N }), [product, layer.bias, out]);
  }
}
