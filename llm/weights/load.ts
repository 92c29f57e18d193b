/**
 * The loading mechanics every quantised text model shares: what one loaded tensor is
 * ({@link LoadedWeight}: its stored form in one of `format.ts`'s formats), progress, a converted
 * checkpoint's `__metadata__` ({@link convertedFormat}, {@link convertedMetadata}), and quantise-on-load
 * on the GPU. A model's own loader (models/llama's `loadWeights`, qwen3's, Z-Image's and Anima's linear
 * layers) lists its tensors and calls these.
 *
 * Quantise-on-load on the GPU: {@link quantizeRowsGpu} quantizes a deferred matrix's f32 rows into
 * its q8 or q4g128 stored form with ops/quantize's `packed` or `packed_q4` entry point. Those decide
 * each code exactly as the converter's host quantizers (`transformTensor`, through ops/quantize's
 * `quantize` and ops/matvec's `quantizeQ4G128`), so the bytes are the converter's;
 * models/llama/weights.test.ts holds them to it bit for bit, also under a small binding limit. The f32
 * rows go up in pieces that each fit one binding, each written at its row offset of the destination, so
 * a matrix whose f32 form is over the limit while its packed form is not (an f32 row is 4 times a q8
 * row, 8 times a q4 one) needs one binding's worth of staging at a time.
 *
 * @module
 */

import { type GpuTensor, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import { bindingBytes } from "../../harness/limits.ts";
import { quantizePackedPlan, quantizePackedQ4Plan } from "../../ops/quantize/mod.ts";
import type { TensorData } from "../safetensors_write.ts";
import {
  FORMAT_VERSION,
  requireWeightFormat,
  ROPE_PERMUTATION,
  WEIGHT_FORMATS,
  type WeightFormat,
  type WeightSpec,
} from "./format.ts";

/** One model tensor, ready for the engine or the converter's output. */
export interface LoadedWeight {
  /** The HF tensor it came from. */
  spec: WeightSpec;
  /** The form of `parts`: the load's format, or f32 for a matrix whose quantization was deferred. */
  format: WeightFormat;
  /** Its stored form: the tensors of `outputSpecs(spec, format)`, with bytes. */
  parts: TensorData[];
}

/** Called after each tensor with bytes of tensor data read so far and in all. */
export type LoadProgress = (bytesDone: number, bytesTotal: number) => void;

/**
 * Reads the converted-checkpoint metadata of a store, or null for a plain HF checkpoint.
 *
 * @param metadata a file's `__metadata__`
 * @returns the format, or null when the file is not one of ours (an HF file: no permutation key and
 *   a format that is not ours, such as "pt")
 * @throws Error naming a version, format or permutation this module does not read
 *
 * @example
 * ```ts
 * import { convertedFormat, convertedMetadata } from "@xpu/ops/llm";
 * convertedFormat({ format: "pt" }); // null: a Hugging Face file
 * convertedFormat(convertedMetadata("q8")); // "q8"
 * ```
 */
export function convertedFormat(metadata: Record<string, string>): WeightFormat | null {
  if (metadata === null || typeof metadata !== "object") {
    throw new Error(
      `convertedFormat: metadata must be a checkpoint's __metadata__ (an object), got ${String(metadata)}`,
    );
  }
  // HF writes {"format": "pt"} (or "np", "tf", ...); ours is told apart by its format names and its
  // permutation key, which HF never writes.
  const ours = metadata.permutation !== undefined || (WEIGHT_FORMATS as readonly string[]).includes(metadata.format);
  if (!ours) return null;
  const where = "weights: converted checkpoint __metadata__";
  if (!(WEIGHT_FORMATS as readonly string[]).includes(metadata.format)) {
    throw new Error(`${where}.format must be one of ${WEIGHT_FORMATS.join(", ")}, got ${metadata.format}`);
  }
  if (metadata.version !== FORMAT_VERSION) {
    throw new Error(`${where}.version must be ${FORMAT_VERSION}, got ${metadata.version}`);
  }
  if (metadata.permutation !== ROPE_PERMUTATION) {
    throw new Error(`${where}.permutation must be ${ROPE_PERMUTATION}, got ${metadata.permutation}`);
  }
  return metadata.format as WeightFormat;
}

/**
 * The `__metadata__` a converted checkpoint carries.
 *
 * @param format its weight format
 * @returns format, version and the permutation applied
 *
 * @example
 * ```ts
 * import { convertedMetadata, encodeSafetensors } from "@xpu/ops/llm";
 * convertedMetadata("q4g128").format; // "q4g128"
 * // The converter writes it as the file's __metadata__:
 * const file = encodeSafetensors([], convertedMetadata("q4g128"));
 * ```
 */
export function convertedMetadata(format: WeightFormat): Record<string, string> {
  requireWeightFormat("convertedMetadata", format);
  return { format, version: FORMAT_VERSION, permutation: ROPE_PERMUTATION };
}

/**
 * Quantizes f32 rows on the GPU into a quantized matrix's buffers.
 *
 * @param gpu the device (its limits bound each piece)
 * @param format q8 (packQ8 words `[rows, ceil(K / 4)]`, a scale per row) or q4g128 (packQ4 words
 *   `[rows, ceil(K / 8)]`, a scale per 128 columns of a row: `[rows, ceil(K / 128)]`)
 * @param values `[rows, K]` f32, finite (as models/llama's `loadWeights` checks a deferred matrix)
 * @param rows rows of the matrix
 * @param K columns
 * @param weight the destination of the packed words, at least their size
 * @param scales the destination of the scales, at least their size
 * @throws Error when one f32 row is over the binding limit, or as the quantizer's plan (a bad size)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { quantizeRowsGpu } from "@xpu/ops/llm";
 * const gpu = await acquireDevice();
 * const weight = gpu.alloc("u32", 2 * 2); // 2 rows of 9 columns: 2 words each in q4g128
 * const scales = gpu.alloc("f32", 2);
 * const values = new Float32Array(18).map((_, i) => i - 9);
 * await quantizeRowsGpu(gpu, "q4g128", values, 2, 9, weight.buffer, scales.buffer);
 * gpu.destroy();
 * ```
 */
export async function quantizeRowsGpu(
  gpu: ResidentDevice,
  format: Exclude<WeightFormat, "f32">,
  values: Float32Array,
  rows: number,
  K: number,
  weight: GPUBuffer,
  scales: GPUBuffer,
): Promise<void> {
  requireDevice("quantizeRowsGpu", gpu);
  if (format !== "q8" && format !== "q4g128") {
    throw new Error(`quantizeRowsGpu: format must be q8 or q4g128, got ${String(format)}`);
  }
  for (const [name, value] of [["rows", rows], ["K", K]] as const) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new Error(`quantizeRowsGpu: ${name} must be a positive integer, got ${value}`);
    }
  }
  if (values.length !== rows * K) {
    throw new Error(`quantizeRowsGpu: values must have length rows * K = ${rows * K}, got ${values.length}`);
  }
  const limit = bindingBytes(gpu.limits);
  const piece = Math.floor(limit / (4 * K));
  if (piece < 1) {
    throw new Error(`quantizeRowsGpu: one f32 row of ${K} columns (${4 * K} bytes) is over the binding limit ${limit}`);
  }
  const q4 = format === "q4g128";
  const packed: GpuTensor = { buffer: weight, dtype: "u32", length: rows * Math.ceil(K / (q4 ? 8 : 4)) };
  const scaleTensor: GpuTensor = { buffer: scales, dtype: "f32", length: rows * (q4 ? Math.ceil(K / 128) : 1) };
  for (const [name, t] of [["weight", packed], ["scales", scaleTensor]] as const) {
    if (t.buffer.size < 4 * t.length) {
      throw new Error(`quantizeRowsGpu: ${name} must hold at least ${4 * t.length} bytes, got ${t.buffer.size}`);
    }
  }
  for (let row0 = 0; row0 < rows; row0 += piece) {
    const n = Math.min(piece, rows - row0);
    const shape = { rows: n, cols: K, rowOffset: row0 };
    const plan = q4 ? quantizePackedQ4Plan(gpu, shape) : quantizePackedPlan(gpu, shape);
    const x = gpu.upload(values.subarray(row0 * K, (row0 + n) * K), "rows to quantize");
    try {
      await gpu.submit([plan, [x, packed, scaleTensor]]);
    } finally {
      x.buffer.destroy();
    }
  }
}
