/**
 * Linear layers (`F.linear(x, weight, bias)`, the weight `[N, K]` as checkpoints store it) on the GPU,
 * as every model folder loads and multiplies them: one type, one upload, one dispatch.
 *
 * A weight is held in one of llm's formats:
 *
 * - `f32`: the values as they are, multiplied by ops/matmul's `matmulLinear` (`x @ weight^T`, M rows)
 *   or ops/matvec's `matvec` (one row, nothing fused).
 * - `q8`: per-row absmax int8 codes, four a word (ops/matvec's `packQ8`) with one f32 scale per row,
 *   multiplied by `matmulQ8` or `matvecQ8`.
 * - `q4g128`: int4 codes, eight a word (`packQ4`), with one f32 scale per row and 128 columns,
 *   multiplied by `matmulQ4G128` or `matvecQ4G128`.
 *
 * The quantized formats are made on the GPU as the weight is uploaded (llm/weights' `quantizeRowsGpu`,
 * the converter's bytes). The bias, an activation, a gate `[M / gateRows, N]` and accumulation into
 * the output are fused into the product's epilogue (ops/matmul's `MatmulEpilogue`, in that order), so
 * a SwiGLU, a gated residual add or a bias needs no elementwise pass of its own.
 *
 * A q8 or q4g128 layer can also take its input as int8 rows ({@link Int8Rows}: each row quantized to
 * int8 codes with one f32 scale, ops/quantize's `quantizePackedPlan`, {@link quantizeRowsDispatch}),
 * multiplied by ops/matmul's integer-dot-product GEMMs (`matmulQ8Dp4a`, `matmulQ4G128Dp4a`) with the
 * same epilogue: the sums are exact in i32, and the cost is the activations' rounding to 255 levels
 * per row.
 *
 * Refused at upload, by the layer's label: arrays of the wrong length, an unknown format, a stored
 * weight over the device's binding limit (a Linear weight is one binding; row blocks are the
 * embedding's business), and (q8, q4g128) a value that is not finite, which an int8 or int4 code
 * cannot hold. That last check reads the weight once on the CPU (about 0.7 ns a value).
 *
 * @module
 */

import type { GpuTensor, KernelPlan, ResidentDevice } from "../harness/device.ts";
import { bindingBytes } from "../harness/limits.ts";
import { quantizeRowsGpu } from "../llm/weights/load.ts";
import {
  type MatmulActivation,
  type MatmulEpilogue,
  matmulLinearPlan,
  matmulQ4G128Dp4aPlan,
  matmulQ4G128Plan,
  matmulQ8Dp4aPlan,
  matmulQ8Plan,
} from "../ops/matmul/mod.ts";
import { quantizePackedPlan } from "../ops/quantize/mod.ts";
import { hasDp4a } from "../harness/roofline.ts";
import { matvecPlan, matvecQ4G128Plan, matvecQ8Plan } from "../ops/matvec/mod.ts";
import { validateQuantize } from "../ops/quantize/reference.ts";
import { freeOnFailure } from "./loading.ts";

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
  /** What it is (the checkpoint's name), for messages. */
  readonly label: string;
}

/**
 * Bytes a Linear weight `[N, K]` takes on the GPU in a format: codes and scales, the bias apart.
 *
 * @param N output features
 * @param K input features
 * @param format the format
 * @returns bytes
 */
export function linearBytes(N: number, K: number, format: LinearFormat): number {
  const { weight, scales } = storedLengths(N, K, format);
  return 4 * (weight + scales);
}

/** Elements of a weight `[N, K]` as a format stores it: f32 values or u32 code words, and f32 scales. */
function storedLengths(N: number, K: number, format: LinearFormat): { weight: number; scales: number } {
  if (format === "f32") return { weight: N * K, scales: 0 };
  if (format === "q8") return { weight: N * Math.ceil(K / 4), scales: N };
  return { weight: N * Math.ceil(K / 8), scales: N * Math.ceil(K / 128) };
}

/** What {@link uploadLinear} takes besides the weight. */
export interface UploadLinearOptions {
  /** The bias `[N]`, if the layer has one. */
  bias?: Float32Array;
  /** What it is (the checkpoint's name), for messages and buffer labels (default "linear"). */
  label?: string;
  /** The weight's format on the GPU (default f32). */
  format?: LinearFormat;
}

/**
 * Uploads a Linear layer, quantizing its weight on the GPU for q8 and q4g128.
 *
 * @param gpu the device
 * @param weight `[N, K]` row-major, as stored
 * @param N output features
 * @param K input features
 * @param options bias, label, format
 * @returns the layer; nothing stays on the device if it throws
 * @throws Error naming the layer when the arrays do not have N · K and N elements, the format is
 *   unknown, the stored weight is over the binding limit, or (quantized) a value is not finite
 */
export async function uploadLinear(
  gpu: ResidentDevice,
  weight: Float32Array,
  N: number,
  K: number,
  options: UploadLinearOptions = {},
): Promise<Linear> {
  const { bias, label = "linear", format = "f32" } = options;
  if (weight.length !== N * K) {
    throw new Error(`${label}: weight has ${weight.length} values, expected ${N} x ${K} = ${N * K}`);
  }
  if (bias && bias.length !== N) throw new Error(`${label}: bias has ${bias.length} values, expected ${N}`);
  if (!LINEAR_FORMATS.includes(format)) {
    throw new Error(`${label}: format must be one of ${LINEAR_FORMATS.join(", ")}, got ${String(format)}`);
  }
  const lengths = storedLengths(N, K, format);
  const limit = bindingBytes(gpu.limits);
  if (4 * lengths.weight > limit) {
    throw new Error(
      `${label}: the weight [${N}, ${K}] is ${
        4 * lengths.weight
      } bytes in ${format}, over this device's binding limit of ` +
        `${limit} (maxStorageBufferBindingSize / maxBufferSize)`,
    );
  }
  if (format !== "f32") {
    try {
      validateQuantize({ x: weight, rows: N, cols: K });
    } catch (e) {
      throw new Error(`${label} cannot be stored as ${format}: ${(e as Error).message}`);
    }
  }
  // A quantization that fails frees the bias, codes and scales made before it.
  return await freeOnFailure(async (keep) => {
    const biasTensor = bias ? keep(gpu.upload(bias, `${label}.bias`)) : undefined;
    if (format === "f32") return { N, K, format, weight: gpu.upload(weight, label), bias: biasTensor, label };
    const codes = keep(gpu.alloc("u32", lengths.weight, `${label} (${format})`));
    const scales = keep(gpu.alloc("f32", lengths.scales, `${label}.scales`));
    await quantizeRowsGpu(gpu, format, weight, N, K, codes.buffer, scales.buffer);
    return { N, K, format, weight: codes, scales, bias: biasTensor, label };
  });
}

/**
 * The tensors of a layer, to free or count them.
 *
 * @param layer the layer
 * @returns its weight, scales and bias
 */
export function linearTensors(layer: Linear): GpuTensor[] {
  return [layer.weight, ...(layer.scales ? [layer.scales] : []), ...(layer.bias ? [layer.bias] : [])];
}

/**
 * Bytes of a layer's tensors on the device (weight or codes, scales, bias).
 *
 * @param layer the layer
 * @returns bytes
 */
export function layerBytes(layer: Linear): number {
  return linearTensors(layer).reduce((s, t) => s + 4 * t.length, 0);
}

/**
 * Frees a layer's tensors.
 *
 * @param layer the layer
 */
export function destroyLinear(layer: Linear): void {
  for (const t of linearTensors(layer)) t.buffer.destroy();
}

/** Steps a product applies after it (ops/matmul's epilogue), in this order. */
export interface LinearEpilogue {
  /** Added to every row instead of the layer's own bias (e.g. a step's adaLN chunk), `[N]`. */
  bias?: GpuTensor;
  /** `F.gelu`, `F.gelu(approximate="tanh")` or `F.silu` of each output, after the bias. */
  activation?: MatmulActivation;
  /** Multiply row m by `gate[floor(m / gateRows), n]`: `[M / gateRows, N]`. */
  gate?: GpuTensor;
  /** Rows per gate row (default 1). */
  gateRows?: number;
  /** Add to `out`'s content (`out += ...`) instead of writing it. */
  accumulate?: boolean;
}

/**
 * What a model's weight products multiply: `"f32"` the activations as they are, `"int8"` each input
 * quantized per row to int8 and multiplied by integer dot products (q8 and q4g128 weights only).
 */
export type Activations = "f32" | "int8";

/** The activations, in order. */
export const ACTIVATIONS: readonly Activations[] = ["f32", "int8"];

/**
 * Checks a model's activations option against its weights' format and the adapter.
 *
 * @param value the option (undefined: f32)
 * @param format the weights' format
 * @param where who asks, for messages
 * @param option the option's name, for messages
 * @returns the activations
 * @throws Error naming the option when it is unknown, or int8 with f32 weights or on an adapter whose
 *   WGSL lacks `packed_4x8_integer_dot_product`
 */
export function checkActivations(
  value: unknown,
  format: string,
  where: string,
  option = "activations",
): Activations {
  const a = value ?? "f32";
  if (!ACTIVATIONS.includes(a as Activations)) {
    throw new Error(`${where}: ${option} must be "f32" or "int8", got ${JSON.stringify(a)}`);
  }
  if (a === "int8" && format === "f32") {
    throw new Error(`${where}: ${option} "int8" needs quantised weights (format q8 or q4g128), got format f32`);
  }
  if (a === "int8" && !hasDp4a()) {
    throw new Error(
      `${where}: ${option} "int8" needs WGSL's packed_4x8_integer_dot_product language feature ` +
        `(dot4I8Packed), which this adapter lacks; use "f32"`,
    );
  }
  return a as Activations;
}

/**
 * Room for layer inputs quantized per row to int8: codes for up to `rows` rows of up to `maxK`
 * columns, and a scale per row. One scratch serves inputs of several widths in turn.
 */
export interface Int8Scratch {
  /** The codes, `[rows, ceil(maxK / 4)]` u32 at most. */
  readonly codes: GpuTensor;
  /** The scales, `[rows]`. */
  readonly scales: GpuTensor;
  /** Rows it holds. */
  readonly rows: number;
  /** The widest input it holds. */
  readonly maxK: number;
}

/**
 * A layer's input quantized per row to int8 in a scratch (ops/quantize's `packed` kernel, by
 * {@link quantizeRowsDispatch}): `M` rows of `K` columns, codes four to a u32 (`[M, ceil(K / 4)]`) and
 * one f32 scale per row (a row's absmax / 127).
 */
export interface Int8Rows {
  /** The codes. */
  readonly codes: GpuTensor;
  /** The scales. */
  readonly scales: GpuTensor;
  /** Rows quantized. */
  readonly M: number;
  /** Columns of each row. */
  readonly K: number;
}

/**
 * Allocates an int8 scratch.
 *
 * @param gpu the device
 * @param rows rows
 * @param maxK the widest input's columns
 * @param label for buffer labels
 * @returns the scratch, zero-filled
 */
export function allocInt8Scratch(gpu: ResidentDevice, rows: number, maxK: number, label = "int8 rows"): Int8Scratch {
  const codes = gpu.alloc("u32", rows * Math.ceil(maxK / 4), `${label} codes`);
  return { codes, scales: gpu.alloc("f32", rows, `${label} scales`), rows, maxK };
}

/**
 * Frees an int8 scratch's tensors.
 *
 * @param scratch the scratch
 */
export function destroyInt8Scratch(scratch: Int8Scratch): void {
  scratch.codes.buffer.destroy();
  scratch.scales.buffer.destroy();
}

/** One dispatch: a plan, its tensors in the plan's binding order, and the layer's label. */
export interface LinearDispatch {
  /** The product's plan (matmul's or matvec's). */
  readonly plan: KernelPlan;
  /** Its tensors, in the plan's binding order. */
  readonly tensors: readonly GpuTensor[];
  /** The layer's label, for messages. */
  readonly label: string;
}

/**
 * The dispatch that quantizes `x[M, K]` per row into a scratch (ops/quantize's `packed` kernel), and
 * the int8 rows it leaves there for {@link linearDispatch}es of q8 or q4g128 layers of K inputs (valid
 * until the scratch is written again).
 *
 * @param gpu the device
 * @param M rows of x
 * @param K columns of x
 * @param x `[M, K]`
 * @param scratch where the codes and scales go
 * @param label what reads the rows, for messages
 * @returns the dispatch (plan, tensors, label) and the rows
 * @throws Error naming the scratch when M or K is over what it holds; as the op's plan does otherwise
 */
export function quantizeRowsDispatch(
  gpu: ResidentDevice,
  M: number,
  K: number,
  x: GpuTensor,
  scratch: Int8Scratch,
  label: string,
): { dispatch: LinearDispatch; rows: Int8Rows } {
  if (M > scratch.rows || K > scratch.maxK) {
    throw new Error(
      `int8 rows of ${label}: [${M}, ${K}] is over the scratch's ${scratch.rows} rows of ${scratch.maxK} columns`,
    );
  }
  const plan = quantizePackedPlan(gpu, { rows: M, cols: K });
  return {
    dispatch: { plan, tensors: [x, scratch.codes, scratch.scales], label: `int8 rows of ${label}` },
    rows: { codes: scratch.codes, scales: scratch.scales, M, K },
  };
}

/**
 * The dispatch `out[M, N] = epilogue(x[M, K] @ weight^T + bias)`: a GEMV for one row with nothing
 * to fuse, a GEMM (with its epilogue) otherwise; with `x` as {@link Int8Rows} (a q8 or q4g128 layer),
 * an integer-dot-product GEMM (ops/matmul's `matmulQ8Dp4a` or `matmulQ4G128Dp4a`) with the same
 * epilogue, whatever M.
 *
 * @param gpu the device
 * @param layer the layer
 * @param M rows of x
 * @param x `[M, K]` f32, or int8 rows ({@link quantizeRowsDispatch} filled them)
 * @param out `[M, N]` (read too with `accumulate`)
 * @param epilogue bias (replacing the layer's), activation, gate, accumulation
 * @returns the plan, its tensors and the layer's label
 * @throws Error as the op's plan does, naming the op and the bad size; naming the layer when int8
 *   rows meet an f32 weight
 */
export function linearDispatch(
  gpu: ResidentDevice,
  layer: Linear,
  M: number,
  x: GpuTensor | Int8Rows,
  out: GpuTensor,
  epilogue: LinearEpilogue = {},
): LinearDispatch {
  const { N, K, format } = layer;
  const bias = epilogue.bias ?? layer.bias;
  const quantized = format === "f32" ? [] : [layer.scales!];
  const fused = bias !== undefined || epilogue.activation !== undefined || epilogue.gate !== undefined ||
    epilogue.accumulate === true;
  if ("codes" in x) {
    if (format === "f32") {
      throw new Error(`${layer.label}: int8 rows need a q8 or q4g128 weight, got an f32 one`);
    }
    if (x.K !== K || x.M !== M) {
      throw new Error(`${layer.label}: int8 rows must be [${M}, ${K}], got [${x.M}, ${x.K}]`);
    }
    const plan = (format === "q8" ? matmulQ8Dp4aPlan : matmulQ4G128Dp4aPlan)(
      gpu,
      epilogueShape(M, N, K, bias, epilogue),
    );
    // A step that is off has a binding of length 0: the scales (f32) stand there, unread.
    const tail = fused ? [bias ?? x.scales, epilogue.gate ?? x.scales, out] : [out];
    return { plan, tensors: [x.codes, x.scales, layer.weight, layer.scales!, ...tail], label: layer.label };
  }
  if (M === 1 && !fused) {
    const plan = format === "f32"
      ? matvecPlan(gpu, { N, K })
      : format === "q8"
      ? matvecQ8Plan(gpu, { N, K })
      : matvecQ4G128Plan(gpu, { N, K });
    return { plan, tensors: [layer.weight, ...quantized, x, out], label: layer.label };
  }
  const shape = epilogueShape(M, N, K, bias, epilogue);
  const plan = format === "f32"
    ? matmulLinearPlan(gpu, shape)
    : format === "q8"
    ? matmulQ8Plan(gpu, shape)
    : matmulQ4G128Plan(gpu, shape);
  // A step that is off has a binding of length 0: any f32 tensor stands there, unread.
  const tail = fused ? [bias ?? x, epilogue.gate ?? x, out] : [out];
  return { plan, tensors: [x, layer.weight, ...quantized, ...tail], label: layer.label };
}

/** A GEMM's shape with the epilogue's flags (ops/matmul's `MatmulEpilogue`) that are on. */
function epilogueShape(
  M: number,
  N: number,
  K: number,
  bias: GpuTensor | undefined,
  epilogue: LinearEpilogue,
): { M: number; N: number; K: number } & MatmulEpilogue {
  const shape: { M: number; N: number; K: number } & MatmulEpilogue = { M, N, K };
  if (bias) shape.bias = true;
  if (epilogue.activation) shape.activation = epilogue.activation;
  if (epilogue.gate) shape.gateRows = epilogue.gateRows ?? 1;
  if (epilogue.accumulate) shape.accumulate = true;
  return shape;
}
