/**
 * A Linear layer without bias (`F.linear(x, W)`, W `[N, K]` as the checkpoint holds it) on the GPU, in
 * one of the two formats the port loads, the weight held once in the checkpoint's `[N, K]` and read by
 * a GEMM for several rows (prefill, an encoder) and by a GEMV for one (a decode step):
 *
 * - `f32`: the values as they are, multiplied by ops/matmul's `matmulLinear` (`a @ weight^T`, M rows)
 *   or ops/matvec's `matvec` (one row).
 * - `q8`: per-row absmax int8 (ops/quantize's `quantize`, packed four codes a word as ops/matvec's
 *   `packQ8`), quantised on the GPU while loading by llm/weights' `quantizeRowsGpu` (ops/quantize's
 *   `packed` entry point: the converter's bytes), multiplied by ops/matmul's `matmulQ8` (M rows) or
 *   ops/matvec's `matvecQ8` (one row), which read the codes in-kernel.
 *
 * A weight is one binding: one whose stored form exceeds the device's binding limit is refused at
 * load, naming the tensor and the limit (no Qwen3 matrix but the embedding comes near: Qwen3-4B's
 * largest, gate/up, is 99.6 MB in f32; the embedding is held in row blocks by `embedding.ts`).
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { matmulLinearPlan, matmulQ8Plan } from "../../ops/matmul/mod.ts";
import { matvecPlan, matvecQ8Plan } from "../../ops/matvec/mod.ts";
import { validateQuantize } from "../../ops/quantize/reference.ts";
import { quantizeRowsGpu } from "../../llm/weights/load.ts";
import { bindingLimit, type Step } from "./steps.ts";

/** How a model's matrices are held: f32, or per-row int8 (q8). */
export type Qwen3Format = "f32" | "q8";

/** Every format the port loads. */
export const QWEN3_FORMATS: readonly Qwen3Format[] = ["f32", "q8"];

/** A resident Linear weight. */
export interface Linear {
  /** The checkpoint tensor it came from. */
  readonly name: string;
  /** Output features (rows of the checkpoint's weight). */
  readonly N: number;
  /** Input features. */
  readonly K: number;
  /** How it is stored. */
  readonly format: Qwen3Format;
  /** f32: the weight `[N, K]`; q8: packed codes `[N, ceil(K / 4)]` u32. */
  readonly weight: GpuTensor;
  /** q8: one scale per row, `[N]`. */
  readonly scales?: GpuTensor;
}

/** Bytes of a weight `[N, K]` as stored in `format` (the scales apart). */
function linearBytes(format: Qwen3Format, N: number, K: number): number {
  return format === "f32" ? 4 * N * K : 4 * N * Math.ceil(K / 4);
}

/**
 * Uploads a Linear weight as it is (f32) or quantised (q8, on the GPU).
 *
 * @param gpu the device
 * @param name the checkpoint tensor, for messages
 * @param values the weight `[N, K]` row-major, as the checkpoint holds it
 * @param N rows
 * @param K columns
 * @param format how to store it
 * @returns the resident weight (the caller destroys its tensors)
 * @throws Error naming the tensor when its stored form is over the binding limit, or (q8) a value is not finite
 */
export async function uploadLinear(
  gpu: ResidentDevice,
  name: string,
  values: Float32Array,
  N: number,
  K: number,
  format: Qwen3Format,
): Promise<Linear> {
  if (values.length !== N * K) {
    throw new Error(`qwen3: ${name} must have ${N * K} values ([${N}, ${K}]), got ${values.length}`);
  }
  const bytes = linearBytes(format, N, K);
  const limit = bindingLimit(gpu);
  if (bytes > limit) {
    throw new Error(
      `qwen3: ${name} [${N}, ${K}] is ${bytes} bytes in ${format}, over this device's binding limit of ${limit} ` +
        `(maxStorageBufferBindingSize / maxBufferSize); a weight in row blocks is not implemented for Linear layers`,
    );
  }
  if (format === "f32") return { name, N, K, format, weight: gpu.upload(values, name) };
  try {
    validateQuantize({ x: values, rows: N, cols: K });
  } catch (e) {
    throw new Error(`qwen3: ${name} cannot be stored as q8: ${(e as Error).message}`);
  }
  const weight = gpu.alloc("u32", N * Math.ceil(K / 4), name);
  const scales = gpu.alloc("f32", N, `${name}.scales`);
  await quantizeRowsGpu(gpu, "q8", values, N, K, weight.buffer, scales.buffer);
  return { name, N, K, format, weight, scales };
}

/**
 * The product `out = x @ W^T` for `M` rows of `x` `[M, K]` into `out` `[M, N]`: a GEMV for one row,
 * a GEMM for more.
 *
 * @param gpu the device
 * @param linear the weight
 * @param M rows of x
 * @param x the input
 * @param out the output
 * @returns the step
 */
export function linearStep(gpu: ResidentDevice, linear: Linear, M: number, x: GpuTensor, out: GpuTensor): Step {
  const { N, K } = linear;
  if (linear.format === "f32") {
    if (M === 1) return [matvecPlan(gpu, { N, K }), [linear.weight, x, out]];
    return [matmulLinearPlan(gpu, { M, N, K }), [x, linear.weight, out]];
  }
  if (M === 1) return [matvecQ8Plan(gpu, { N, K }), [linear.weight, linear.scales!, x, out]];
  return [matmulQ8Plan(gpu, { M, N, K }), [x, linear.weight, linear.scales!, out]];
}

/** A fused epilogue of a product of several rows (ops/matmul's `MatmulEpilogue`, in its order). */
export interface LinearEpilogue {
  /** `F.silu` of the product. */
  activation?: "silu";
  /** Times `gate` `[M, N]`, element by element (after the activation). */
  gate?: GpuTensor;
  /** Added into `out` (`out += ...`) instead of written. */
  accumulate?: boolean;
}

/**
 * The product of M >= 2 rows with a fused epilogue, one dispatch (ops/matmul's `*_fused` kernels):
 * `out = epilogue(x @ W^T)`, so a SwiGLU or a residual add needs no elementwise pass of its own.
 *
 * @param gpu the device
 * @param linear the weight
 * @param M rows of x, at least 2 (one row is a GEMV, which takes no epilogue)
 * @param x the input
 * @param out the output (read too with `accumulate`)
 * @param epilogue what to apply
 * @returns the step
 * @throws Error when M is below 2
 */
export function fusedLinearStep(
  gpu: ResidentDevice,
  linear: Linear,
  M: number,
  x: GpuTensor,
  out: GpuTensor,
  epilogue: LinearEpilogue,
): Step {
  if (M < 2) throw new Error(`qwen3: a fused epilogue needs M >= 2 rows (a GEMM), got ${M}`);
  const { N, K } = linear;
  const shape = {
    M,
    N,
    K,
    ...(epilogue.activation ? { activation: epilogue.activation } : {}),
    ...(epilogue.gate ? { gateRows: 1 } : {}),
    ...(epilogue.accumulate ? { accumulate: true } : {}),
  };
  // The bias (never used here) and a gate that is off bind x: any f32 tensor stands there, unread.
  const tail = [x, epilogue.gate ?? x, out];
  if (linear.format === "f32") return [matmulLinearPlan(gpu, shape), [x, linear.weight, ...tail]];
  return [matmulQ8Plan(gpu, shape), [x, linear.weight, linear.scales!, ...tail]];
}

/**
 * Frees a Linear weight's tensors.
 *
 * @param linear the weight
 */
export function destroyLinear(linear: Linear): void {
  linear.weight.buffer.destroy();
  linear.scales?.buffer.destroy();
}
