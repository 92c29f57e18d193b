/**
 * Loading a Llama checkpoint's weights tensor by tensor, in one of the formats of `format.ts`,
 * from either kind of file:
 * - a Hugging Face checkpoint (F32, F16 or BF16 tensors; one file or sharded): each tensor is read,
 *   decoded and passed through `transformTensor`, the converter's own transform (or, for a format in
 *   `deferQuantization`, its f32 form, for a caller that quantizes on the GPU);
 * - a converted checkpoint (our `__metadata__`: format, version, permutation): each stored tensor
 *   is read as is, after its name, dtype and shape are checked against what the format says.
 *
 * Either way every tensor the config needs is checked to be present with the right shape (and no
 * tensor is left over) before the first byte of data is read, and only one tensor's data is held
 * at a time. Progress is reported as bytes of tensor data read out of the total.
 *
 * Quantise-on-load on the GPU: {@link quantizeRowsGpu} quantizes a deferred matrix's f32 rows into
 * its q8 or q4g128 stored form with ops/quantize's `packed` or `packed_q4` entry point. Those decide
 * each code exactly as the converter's host quantizers (`transformTensor`, through ops/quantize's
 * `quantize` and ops/matvec's `quantizeQ4G128`), so the bytes are the converter's; `load.test.ts`
 * holds them to it bit for bit, also under a small binding limit. The f32 rows go up in pieces that
 * each fit one binding, each written at its row offset of the destination, so a matrix whose f32
 * form is over the limit while its packed form is not (an f32 row is 4 times a q8 row, 8 times a q4
 * one) needs one binding's worth of staging at a time.
 *
 * @module
 */

import { type GpuTensor, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import { quantizePackedPlan, quantizePackedQ4Plan } from "../../ops/quantize/mod.ts";
import { validateQuantize } from "../../ops/quantize/reference.ts";
import type { LlamaConfig } from "../config.ts";
import { SafetensorsError, type TensorInfo, type TensorStore } from "../safetensors.ts";
import type { TensorData } from "../safetensors_write.ts";
import {
  FORMAT_VERSION,
  llamaWeightSpecs,
  outputSpecs,
  requireWeightFormat,
  ROPE_PERMUTATION,
  transformTensor,
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

/** Options of {@link loadWeights}. */
export interface LoadOptions {
  /** The format wanted: required to match a converted checkpoint's; for an HF one, defaults to f32. */
  format?: WeightFormat;
  /** Progress callback. */
  onProgress?: LoadProgress;
  /**
   * Formats whose quantization the caller does itself: loading an HF checkpoint into one of them
   * yields its matrices as f32 (Q/K rows permuted, every value checked finite, as the quantizer
   * would), with `format: "f32"`, for the caller to quantize on the GPU ({@link quantizeRowsGpu}
   * writes the bytes the converter would). `LlamaEngine` defers q8 and q4g128.
   */
  deferQuantization?: readonly WeightFormat[];
}

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

function checkInfo(info: TensorInfo, want: { dtype: readonly string[]; shape: readonly number[] }, what: string) {
  if (!want.dtype.includes(info.dtype) || JSON.stringify(info.shape) !== JSON.stringify(want.shape)) {
    throw new SafetensorsError(
      "TensorInvalidInfo",
      what,
      `tensor ${info.name} is ${info.dtype} ${JSON.stringify(info.shape)}, expected ${want.dtype.join(" or ")} ${
        JSON.stringify(want.shape)
      }`,
    );
  }
}

/**
 * Checks a store against a config before reading data: every tensor present with the right dtype
 * and shape, nothing left over (HF's derived `rotary_emb.inv_freq` buffers excepted).
 *
 * @param store the checkpoint
 * @param config the model
 * @param format the format wanted (ignored for an HF checkpoint's check, which is of its inputs)
 * @returns the specs in load order, whether the store is converted, and the bytes to read
 * @throws SafetensorsError TensorNotFound for a missing tensor, TensorInvalidInfo for a wrong one
 *
 * @example
 * ```ts
 * import { parseLlamaConfig, planLoad } from "@xpu/ops/llm";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const dir = "llm/fixtures/tiny-gqa/bf16";
 * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
 * const { store, close } = await openCheckpointDir(dir);
 * const plan = planLoad(store, config, "q8"); // checks every tensor's dtype and shape, reads no data
 * plan.converted; // false: a Hugging Face checkpoint, quantised as it loads
 * close();
 * ```
 */
export function planLoad(
  store: TensorStore,
  config: LlamaConfig,
  format?: WeightFormat,
): { specs: WeightSpec[]; converted: boolean; format: WeightFormat; bytesTotal: number } {
  if (format !== undefined) requireWeightFormat("weights", format);
  const stored = convertedFormat(store.metadata);
  if (stored !== null && format !== undefined && format !== stored) {
    throw new Error(`weights: the checkpoint is converted to ${stored}; it cannot be loaded as ${format}`);
  }
  const chosen = stored ?? format ?? "f32";
  // A config that asks for more layers than the file has fails here, before its specs are listed
  // (a million-layer config would take minutes to list).
  let layers = 0;
  for (const t of store.tensors) {
    const m = /^model\.layers\.(\d+)\./.exec(t.name);
    if (m) layers = Math.max(layers, Number(m[1]) + 1);
  }
  if (config.numHiddenLayers > layers) {
    throw new SafetensorsError(
      "TensorNotFound",
      "checkpoint",
      `the config has ${config.numHiddenLayers} layers (num_hidden_layers), the checkpoint ${layers}`,
    );
  }
  const specs = llamaWeightSpecs(config);
  const wanted = new Map<string, { dtype: readonly string[]; shape: readonly number[] }>();
  for (const spec of specs) {
    if (stored) {
      for (const out of outputSpecs(spec, stored)) wanted.set(out.name, { dtype: [out.dtype], shape: out.shape });
    } else wanted.set(spec.name, { dtype: ["F32", "F16", "BF16"], shape: spec.shape });
  }
  const present = new Map(store.tensors.map((t) => [t.name, t]));
  let bytesTotal = 0;
  for (const [name, want] of wanted) {
    const info = present.get(name);
    if (!info) throw new SafetensorsError("TensorNotFound", "checkpoint", `tensor ${name} is missing`);
    checkInfo(info, want, "checkpoint");
    bytesTotal += info.end - info.begin;
  }
  for (const name of present.keys()) {
    if (wanted.has(name) || /\.rotary_emb\.inv_freq$/.test(name)) continue;
    const why = name === "lm_head.weight" ? " (tie_word_embeddings is true: the head is the embedding)" : "";
    throw new SafetensorsError("InvalidHeaderDeserialization", "checkpoint", `unexpected tensor ${name}${why}`);
  }
  return { specs, converted: stored !== null, format: chosen, bytesTotal };
}

/**
 * Loads a checkpoint's weights one tensor at a time, in the config's order.
 *
 * @param store the checkpoint (HF or converted)
 * @param config the model
 * @param options the format wanted and a progress callback
 * @returns an async iterator of tensors; only the current one is held
 * @throws Error (before any data is read) for a missing, misshapen or unexpected tensor
 *
 * @example
 * ```ts
 * import { loadWeights, parseLlamaConfig } from "@xpu/ops/llm";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const { store } = await openCheckpointDir("llm/fixtures/tiny-gqa/bf16");
 * const config = parseLlamaConfig(await Deno.readTextFile("llm/fixtures/tiny-gqa/bf16/config.json"));
 * for await (const { spec, parts } of loadWeights(store, config, { format: "q8" })) {
 *   console.log(spec.name, parts.map((p) => p.name)); // the packed weight and its scales, or a norm
 * }
 * ```
 */
export async function* loadWeights(
  store: TensorStore,
  config: LlamaConfig,
  options?: LoadOptions,
): AsyncGenerator<LoadedWeight> {
  options ??= {};
  const plan = planLoad(store, config, options.format);
  let bytesDone = 0;
  for (const spec of plan.specs) {
    let parts: TensorData[];
    if (plan.converted) {
      parts = [];
      for (const out of outputSpecs(spec, plan.format)) {
        const data = await store.read(out.name);
        bytesDone += data.byteLength;
        parts.push({ ...out, data });
      }
    } else {
      const info = store.info(spec.name);
      const values = await store.readFloat32(spec.name);
      bytesDone += info.end - info.begin;
      if (spec.role !== "norm" && options.deferQuantization?.includes(plan.format)) {
        parts = transformTensor(spec, values, config, "f32");
        // Refused as the quantizer would refuse it, with transformTensor's message.
        const [rows, cols] = spec.shape;
        try {
          const { buffer, byteOffset } = parts[0].data; // transformTensor's own f32 bytes, aligned
          validateQuantize({ x: new Float32Array(buffer, byteOffset, rows * cols), rows, cols });
        } catch (e) {
          throw new Error(`weights: ${spec.name} cannot be stored as ${plan.format}: ${(e as Error).message}`);
        }
        options.onProgress?.(bytesDone, plan.bytesTotal);
        yield { spec, format: "f32", parts };
        continue;
      }
      parts = transformTensor(spec, values, config, plan.format);
    }
    options.onProgress?.(bytesDone, plan.bytesTotal);
    yield { spec, format: plan.format, parts };
  }
}

/**
 * Quantizes f32 rows on the GPU into a quantized matrix's buffers.
 *
 * @param gpu the device (its limits bound each piece)
 * @param format q8 (packQ8 words `[rows, ceil(K / 4)]`, a scale per row) or q4g128 (packQ4 words
 *   `[rows, ceil(K / 8)]`, a scale per 128 columns of a row: `[rows, ceil(K / 128)]`)
 * @param values `[rows, K]` f32, finite (as `loadWeights` checks a deferred matrix)
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
  const limit = Math.min(gpu.limits.maxStorageBufferBindingSize, gpu.limits.maxBufferSize);
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
