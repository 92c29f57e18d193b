/**
 * Linear layers (`F.linear(x, weight, bias)`, weight `[N, K]` as checkpoints store it) on the GPU, in
 * the two shapes the model has:
 *
 * - token-parallel (`M` rows of x): ops/matmul's `a [M, K] @ b [K, N]`, so the weight is stored
 *   transposed, `[K, N]`, when it is uploaded;
 * - one vector (the timestep embedding and the modulation it feeds): ops/matvec's `W [N, K] · x`, the
 *   checkpoint's own orientation.
 *
 * A bias is a second dispatch (elementwise `rows` add). Nothing else in the model knows which op runs
 * a product, so a fused Linear kernel replaces these two functions and nothing else.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { elementwisePlan, elementwiseRowsPlan } from "../../ops/elementwise/mod.ts";
import { matmulPlan } from "../../ops/matmul/mod.ts";
import { matvecPlan } from "../../ops/matvec/mod.ts";
import type { Steps } from "./program.ts";

/** A Linear layer resident on the GPU. */
export interface Linear {
  /** Output features. */
  readonly N: number;
  /** Input features. */
  readonly K: number;
  /** `rows`: the weight is `[K, N]` (for M rows of x); `vector`: `[N, K]` (for one vector). */
  readonly layout: "rows" | "vector";
  /** The weight. */
  readonly weight: GpuTensor;
  /** The bias `[N]`, if any. */
  readonly bias?: GpuTensor;
}

/**
 * Uploads a Linear layer.
 *
 * @param gpu the device
 * @param weight `[N, K]` row-major, as stored
 * @param N output features
 * @param K input features
 * @param layout `rows` (token-parallel) or `vector` (one input vector)
 * @param bias `[N]`, optional
 * @param label for messages
 * @returns the layer
 * @throws Error when the arrays do not have N · K and N elements
 */
export function uploadLinear(
  gpu: ResidentDevice,
  weight: Float32Array,
  N: number,
  K: number,
  layout: "rows" | "vector",
  bias?: Float32Array,
  label = "linear",
): Linear {
  if (weight.length !== N * K) throw new Error(`${label}: weight has ${weight.length} values, expected ${N} x ${K}`);
  if (bias && bias.length !== N) throw new Error(`${label}: bias has ${bias.length} values, expected ${N}`);
  let stored = weight;
  if (layout === "rows") {
    stored = new Float32Array(N * K);
    for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) stored[k * N + n] = weight[n * K + k];
  }
  return {
    N,
    K,
    layout,
    weight: gpu.upload(stored, `${label}.weight`),
    bias: bias ? gpu.upload(bias, `${label}.bias`) : undefined,
  };
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
  const { N, K } = layer;
  if (layer.layout === "vector" && M !== 1) throw new Error(`linear: a vector layer takes M = 1, got ${M}`);
  if (layer.bias && !scratch) throw new Error("linear: a layer with a bias needs a scratch tensor");
  const product = layer.bias ? scratch! : out;
  if (layer.layout === "rows") steps.run(matmulPlan(gpu, { M, N, K }), [x, layer.weight, product]);
  else steps.run(matvecPlan(gpu, { N, K }), [layer.weight, x, product]);
  if (layer.bias) {
    if (M === 1) steps.run(elementwisePlan(gpu, { op: "add", n: N }), [product, layer.bias, out]);
    else steps.run(elementwiseRowsPlan(gpu, { op: "add", rows: M, cols: N }), [product, layer.bias, out]);
  }
}
