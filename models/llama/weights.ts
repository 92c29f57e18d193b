/**
 * Which tensors a Llama checkpoint holds (transformers' `LlamaForCausalLM` names, `[out, in]` as
 * `nn.Linear` holds them), and loading them tensor by tensor in one of llm/weights' formats, from
 * either kind of file:
 * - a Hugging Face checkpoint (F32, F16 or BF16 tensors; one file or sharded): each tensor is read,
 *   decoded and passed through `transformTensor`, the converter's own transform (or, for a format in
 *   `deferQuantization`, its f32 form, for a caller that quantizes on the GPU with `quantizeRowsGpu`);
 * - a converted checkpoint (llm/weights' `__metadata__`: format, version, permutation): each stored
 *   tensor is read as is, after its name, dtype and shape are checked against what the format says.
 *
 * | tensor                                           | shape                        |
 * | ------------------------------------------------ | ---------------------------- |
 * | `model.embed_tokens.weight`                      | `[vocab, hidden]`            |
 * | `model.layers.{i}.self_attn.q_proj.weight`       | `[heads · headDim, hidden]`  |
 * | `model.layers.{i}.self_attn.k_proj.weight`       | `[kvHeads · headDim, hidden]`|
 * | `model.layers.{i}.self_attn.v_proj.weight`       | `[kvHeads · headDim, hidden]`|
 * | `model.layers.{i}.self_attn.o_proj.weight`       | `[hidden, heads · headDim]`  |
 * | `model.layers.{i}.mlp.gate_proj.weight`          | `[intermediate, hidden]`     |
 * | `model.layers.{i}.mlp.up_proj.weight`            | `[intermediate, hidden]`     |
 * | `model.layers.{i}.mlp.down_proj.weight`          | `[hidden, intermediate]`     |
 * | `model.layers.{i}.input_layernorm.weight`        | `[hidden]`                   |
 * | `model.layers.{i}.post_attention_layernorm.weight` | `[hidden]`                 |
 * | `model.norm.weight`                              | `[hidden]`                   |
 * | `lm_head.weight` (unless tied)                   | `[vocab, hidden]`            |
 *
 * Either way every tensor the config needs is checked to be present with the right shape (and no
 * tensor is left over; HF's derived `rotary_emb.inv_freq` buffers excepted) before the first byte of
 * data is read, and only one tensor's data is held at a time. Progress is reported as bytes of
 * tensor data read out of the total.
 *
 * @module
 */

import { SafetensorsError, type TensorInfo, type TensorStore } from "../../llm/safetensors.ts";
import type { TensorData } from "../../llm/safetensors_write.ts";
import {
  outputSpecs,
  requireWeightFormat,
  transformTensor,
  type WeightFormat,
  type WeightSpec,
} from "../../llm/weights/format.ts";
import { convertedFormat, type LoadedWeight, type LoadProgress } from "../../llm/weights/load.ts";
import { validateQuantize } from "../../ops/quantize/reference.ts";
import type { LlamaConfig } from "./config.ts";

/**
 * The tensors a checkpoint of this config holds, in the order the converter writes them:
 * the embedding, each layer's attention and MLP, the final norm, and the head unless tied.
 *
 * @param config the model's shape
 * @returns every tensor's name, role and HF shape
 *
 * @example
 * ```ts
 * import { llamaWeightSpecs, TINY_CONFIG } from "@xpu/ops/models/llama";
 * llamaWeightSpecs(TINY_CONFIG)[1]; // { name: "model.layers.0.self_attn.q_proj.weight", role: "q", shape: [48, 48] }
 * ```
 */
export function llamaWeightSpecs(config: LlamaConfig): WeightSpec[] {
  const { hiddenSize: hidden, headDim, intermediateSize: ffn, vocabSize: vocab } = config;
  const q = config.numAttentionHeads * headDim;
  const kv = config.numKeyValueHeads * headDim;
  const specs: WeightSpec[] = [{ name: "model.embed_tokens.weight", role: "embedding", shape: [vocab, hidden] }];
  for (let i = 0; i < config.numHiddenLayers; i++) {
    const p = `model.layers.${i}`;
    specs.push(
      { name: `${p}.self_attn.q_proj.weight`, role: "q", shape: [q, hidden] },
      { name: `${p}.self_attn.k_proj.weight`, role: "k", shape: [kv, hidden] },
      { name: `${p}.self_attn.v_proj.weight`, role: "v", shape: [kv, hidden] },
      { name: `${p}.self_attn.o_proj.weight`, role: "o", shape: [hidden, q] },
      { name: `${p}.mlp.gate_proj.weight`, role: "gate", shape: [ffn, hidden] },
      { name: `${p}.mlp.up_proj.weight`, role: "up", shape: [ffn, hidden] },
      { name: `${p}.mlp.down_proj.weight`, role: "down", shape: [hidden, ffn] },
      { name: `${p}.input_layernorm.weight`, role: "norm", shape: [hidden] },
      { name: `${p}.post_attention_layernorm.weight`, role: "norm", shape: [hidden] },
    );
  }
  specs.push({ name: "model.norm.weight", role: "norm", shape: [hidden] });
  if (!config.tieWordEmbeddings) specs.push({ name: "lm_head.weight", role: "head", shape: [vocab, hidden] });
  return specs;
}

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
 * import { parseLlamaConfig, planLoad } from "@xpu/ops/models/llama";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const dir = "models/llama/fixtures/tiny-gqa/bf16";
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
 * import { loadWeights, parseLlamaConfig } from "@xpu/ops/models/llama";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const { store } = await openCheckpointDir("models/llama/fixtures/tiny-gqa/bf16");
 * const config = parseLlamaConfig(await Deno.readTextFile("models/llama/fixtures/tiny-gqa/bf16/config.json"));
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
