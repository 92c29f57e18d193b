/**
 * Weight formats as data: how a checkpoint's tensor ({@link WeightSpec}: its HF name, role and shape;
 * a model lists its own, as models/llama's `llamaWeightSpecs` does) is stored in each format, and the
 * one per-tensor transform ({@link transformTensor}) that both the converter and quantise-on-load call,
 * so their bytes are identical by construction.
 *
 * Formats (the `format` key of a converted file's `__metadata__`):
 * - `f32`: every tensor as F32.
 * - `q8`: each matrix (embedding, q/k/v/o, gate/up/down, head) as ops/quantize's per-row int8
 *   (`quantize`) packed by ops/matvec's `packQ8`: `<stem>.weight` U32 `[N, ceil(K/4)]` and
 *   `<stem>.scales` F32 `[N]`.
 * - `q4g128`: each matrix as ops/matvec's `quantizeQ4G128` packed by `packQ4`: `<stem>.weight` U32
 *   `[N, ceil(K/8)]` and `<stem>.scales` F32 `[N, ceil(K/128)]`.
 * Norm weights stay F32 in every format. The embedding table is quantised per row like a
 * projection (a row is one token's vector), so a gather reads one row's codes and one scale.
 *
 * In every format the Q and K projections' rows are permuted by {@link permuteRopeChannels}: HF
 * Llama's rotate_half pairs channel i of a head with channel i + headDim/2, ops/rope pairs 2i with
 * 2i + 1. Relabelling the rows (new 2i = old i, new 2i + 1 = old i + headDim/2) makes the
 * adjacent-pair rotation compute exactly what rotate_half computes; q·k is unchanged because q and
 * k get the same relabelling, and V and O are untouched. Permuting rows commutes with per-row and
 * per-row-group quantisation, so it does not matter that it happens before quantising.
 *
 * Bytes are little-endian, as safetensors and the packed formats define them: the packed words and
 * f32 values are written through typed arrays, which are little-endian on every host WebGPU runs on.
 *
 * @module
 */

import { quantize } from "../../ops/quantize/reference.ts";
import { packQ4, packQ8, Q4_GROUP, quantizeQ4G128 } from "../../ops/matvec/reference.ts";
import { permuteRopeChannels } from "../../ops/rope/reference.ts";
import type { TensorData, TensorSpec } from "../safetensors_write.ts";

/** A weight format: how matrices are stored. */
export type WeightFormat = "f32" | "q8" | "q4g128";

/** Every weight format. */
export const WEIGHT_FORMATS: readonly WeightFormat[] = ["f32", "q8", "q4g128"];

/**
 * Requires one of {@link WEIGHT_FORMATS}: a format named anywhere a load, a conversion or an engine
 * takes one is checked here, before anything is read or allocated (an unknown one would otherwise be
 * stored as q4g128 and fail later, in a kernel).
 *
 * @param where who asks, for the message (e.g. `LlamaEngine.load`)
 * @param format the value given
 * @returns the format
 * @throws Error naming `format`, the formats there are and the value given
 *
 * @example
 * ```ts
 * import { requireWeightFormat } from "@xpu/ops/llm";
 * requireWeightFormat("load", "q8"); // "q8"
 * try {
 *   requireWeightFormat("load", "q3");
 * } catch (e) {
 *   (e as Error).message; // 'load: format must be one of "f32", "q8", "q4g128", got "q3"'
 * }
 * ```
 */
export function requireWeightFormat(where: string, format: unknown): WeightFormat {
  if (!(WEIGHT_FORMATS as readonly unknown[]).includes(format)) {
    const given = typeof format === "string" ? JSON.stringify(format) : String(format);
    throw new Error(`${where}: format must be one of ${WEIGHT_FORMATS.map((f) => `"${f}"`).join(", ")}, got ${given}`);
  }
  return format as WeightFormat;
}

/** The version of the converted layout this module writes and reads (`__metadata__.version`). */
export const FORMAT_VERSION = "1";

/** `__metadata__.permutation` of a converted file: Q/K rows relabelled rotate_half -> adjacent pairs. */
export const ROPE_PERMUTATION = "q_proj,k_proj:rotate_half_to_adjacent_pairs";

/** What a tensor is in the model; decides its transform. */
export type WeightRole = "embedding" | "q" | "k" | "v" | "o" | "gate" | "up" | "down" | "norm" | "head";

/** One tensor of a checkpoint, as the model's config says it must be. */
export interface WeightSpec {
  /** Its HF name, e.g. `model.layers.0.self_attn.q_proj.weight`. */
  name: string;
  /** What it is. */
  role: WeightRole;
  /** Its HF shape: `[N, K]` for a matrix (`F.linear`'s weight), `[hidden]` for a norm. */
  shape: number[];
}

/** What {@link transformTensor} reads of a model's config: the heads whose Q and K rows it permutes. */
export interface QkHeads {
  /** Query heads: the rows of a `q` tensor are `numAttentionHeads · headDim`. */
  numAttentionHeads: number;
  /** Key/value heads: the rows of a `k` tensor are `numKeyValueHeads · headDim`. */
  numKeyValueHeads: number;
  /** Channels of a head. */
  headDim: number;
}

/** Elements quantised at once by {@link transformTensor} (16 MiB of f32). */
const ROWS_BLOCK_ELEMENTS = 1 << 22;

function stem(name: string): string {
  return name.endsWith(".weight") ? name.slice(0, -".weight".length) : name;
}

/**
 * The tensors one HF tensor becomes in a format (names, dtypes, shapes; no data): what the
 * converter declares in its header before it reads anything.
 *
 * @param spec the HF tensor
 * @param format the weight format
 * @returns one entry (f32, norms) or the packed weight and its scales
 *
 * @example
 * ```ts
 * import { outputSpecs, type WeightSpec } from "@xpu/ops/llm";
 * const q: WeightSpec = { name: "model.layers.0.self_attn.q_proj.weight", role: "q", shape: [48, 48] };
 * outputSpecs(q, "q8");
 * // [{ name: "model.layers.0.self_attn.q_proj.weight", dtype: "U32", shape: [48, 12] },
 * //  { name: "model.layers.0.self_attn.q_proj.scales", dtype: "F32", shape: [48] }]
 * ```
 */
export function outputSpecs(spec: WeightSpec, format: WeightFormat): TensorSpec[] {
  requireWeightFormat("weights", format);
  if (spec.role === "norm" || format === "f32") return [{ name: spec.name, dtype: "F32", shape: spec.shape }];
  const [N, K] = spec.shape;
  if (format === "q8") {
    return [
      { name: spec.name, dtype: "U32", shape: [N, Math.ceil(K / 4)] },
      { name: `${stem(spec.name)}.scales`, dtype: "F32", shape: [N] },
    ];
  }
  return [
    { name: spec.name, dtype: "U32", shape: [N, Math.ceil(K / 8)] },
    { name: `${stem(spec.name)}.scales`, dtype: "F32", shape: [N, Math.ceil(K / Q4_GROUP)] },
  ];
}

function bytesOf(a: Float32Array | Uint32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/**
 * The per-tensor transform of both ways in (the converter and quantise-on-load): permute Q/K rows,
 * then store the tensor in the format. Its output is what a converted file holds, byte for byte.
 *
 * @param spec the HF tensor
 * @param values its values in HF layout (decoded from F32/F16/BF16), `shape`'s element count
 * @param config the model's heads and head size, for the permutation (a `LlamaConfig` is one)
 * @param format the weight format
 * @returns the tensors of {@link outputSpecs}, with their bytes
 * @throws Error naming the tensor when a value is not finite (it cannot be quantised) or the size is wrong
 *
 * @example
 * ```ts
 * import { transformTensor, type WeightSpec } from "@xpu/ops/llm";
 * const spec: WeightSpec = { name: "model.embed_tokens.weight", role: "embedding", shape: [128, 48] };
 * const heads = { numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 12 };
 * const parts = transformTensor(spec, new Float32Array(128 * 48).fill(0.5), heads, "q8");
 * parts.map((p) => p.name); // ["model.embed_tokens.weight", "model.embed_tokens.scales"]
 * ```
 */
export function transformTensor(
  spec: WeightSpec,
  values: Float32Array,
  config: QkHeads,
  format: WeightFormat,
): TensorData[] {
  const count = spec.shape.reduce((p, d) => p * d, 1);
  if (values.length !== count) {
    throw new Error(
      `weights: ${spec.name} must have ${count} values (${JSON.stringify(spec.shape)}), got ${values.length}`,
    );
  }
  const [N, K] = spec.shape;
  let w = values;
  if (spec.role === "q") w = permuteRopeChannels(w, config.numAttentionHeads, config.headDim, K);
  if (spec.role === "k") w = permuteRopeChannels(w, config.numKeyValueHeads, config.headDim, K);
  const [weightSpec, scalesSpec] = outputSpecs(spec, format);
  if (!scalesSpec) return [{ ...weightSpec, data: bytesOf(w === values ? values.slice() : w) }];
  // Quantised a block of rows at a time (both formats are per row, so blocks concatenate to the
  // whole tensor's result): the int32 codes of a 100k-row embedding would otherwise be 4x its size.
  const wordsPerRow = weightSpec.shape[1];
  const scalesPerRow = format === "q8" ? 1 : scalesSpec.shape[1];
  const packed = new Uint32Array(N * wordsPerRow);
  const scales = new Float32Array(N * scalesPerRow);
  const blockRows = Math.max(1, Math.floor(ROWS_BLOCK_ELEMENTS / K));
  let row = 0;
  try {
    for (; row < N; row += blockRows) {
      const rows = Math.min(blockRows, N - row);
      const x = w.subarray(row * K, (row + rows) * K);
      const q = format === "q8" ? quantize({ x, rows, cols: K }) : quantizeQ4G128({ x, rows, cols: K });
      packed.set(format === "q8" ? packQ8(q.codes, rows, K) : packQ4(q.codes, rows, K), row * wordsPerRow);
      scales.set(q.scales, row * scalesPerRow);
    }
    return [{ ...weightSpec, data: bytesOf(packed) }, { ...scalesSpec, data: bytesOf(scales) }];
  } catch (e) {
    const where = row === 0 ? "" : ` (indices count from row ${row}, the first of the block quantised)`;
    throw new Error(`weights: ${spec.name} cannot be stored as ${format}: ${(e as Error).message}${where}`);
  }
}
