/**
 * Which checkpoint tensor feeds which parameter of Qwen3, in one place.
 *
 * Two layouts are accepted, told apart by the embedding's name:
 * - `Qwen3ForCausalLM` (what `save_pretrained` writes for the causal LM, and the Anima and Z-Image
 *   text-encoder files): every tensor under `model.`, and `lm_head.weight` beside it when the head
 *   is not tied;
 * - `Qwen3Model` (the bare decoder): the same names without the prefix, and no head.
 *
 * Under the model prefix (transformers' `Qwen3Model` names, `[out, in]` as `nn.Linear` holds them):
 *
 * | tensor                                     | shape                         |
 * | ------------------------------------------ | ----------------------------- |
 * | `embed_tokens.weight`                      | `[vocab, hidden]`             |
 * | `layers.{i}.input_layernorm.weight`        | `[hidden]`                    |
 * | `layers.{i}.self_attn.q_proj.weight`       | `[heads · head_dim, hidden]`  |
 * | `layers.{i}.self_attn.k_proj.weight`       | `[kvHeads · head_dim, hidden]`|
 * | `layers.{i}.self_attn.v_proj.weight`       | `[kvHeads · head_dim, hidden]`|
 * | `layers.{i}.self_attn.o_proj.weight`       | `[hidden, heads · head_dim]`  |
 * | `layers.{i}.self_attn.q_norm.weight`       | `[head_dim]`                  |
 * | `layers.{i}.self_attn.k_norm.weight`       | `[head_dim]`                  |
 * | `layers.{i}.post_attention_layernorm.weight` | `[hidden]`                  |
 * | `layers.{i}.mlp.gate_proj.weight`          | `[intermediate, hidden]`      |
 * | `layers.{i}.mlp.up_proj.weight`            | `[intermediate, hidden]`      |
 * | `layers.{i}.mlp.down_proj.weight`          | `[hidden, intermediate]`      |
 * | `norm.weight`                              | `[hidden]`                    |
 *
 * The check is exact (`checkTensorLayout`): a missing, mis-shaped or unexpected tensor is named
 * before any data is read. Tolerated and never read: `*.rotary_emb.inv_freq` (a buffer older
 * checkpoints store; the frequencies come from `rope_theta`) and, with a tied head, a stored
 * `lm_head.weight` (transformers ties it to the embedding, whatever the file holds).
 *
 * @module
 */

import type { TensorStore } from "../../llm/safetensors.ts";
import { checkTensorLayout, type ExpectedTensor, scopedStore } from "../../llm/weights/checkpoint.ts";
import type { Qwen3Config } from "./config.ts";

/** The layout a checkpoint was found in. */
export type Qwen3Layout = "Qwen3ForCausalLM" | "Qwen3Model";

/** A checkpoint resolved to the port's names. */
export interface Qwen3Checkpoint {
  /** Which layout it is in. */
  readonly layout: Qwen3Layout;
  /** The model's tensors under their `Qwen3Model` names (`embed_tokens.weight`, `layers.0.…`, `norm.weight`). */
  readonly model: TensorStore;
  /** The untied head `[vocab, hidden]` in the store given, or null where the head is the embedding. */
  readonly lmHead: string | null;
  /** The store given (where `lmHead` is read). */
  readonly store: TensorStore;
}

/**
 * The names of one decoder layer's tensors under the model prefix.
 *
 * @param i the layer
 * @returns each tensor's `Qwen3Model` name
 *
 * @example
 * ```ts
 * import { layerTensorNames } from "@xpu/ops/models/qwen3";
 * layerTensorNames(3).qNorm; // "layers.3.self_attn.q_norm.weight"
 * ```
 */
export function layerTensorNames(i: number): {
  inputNorm: string;
  q: string;
  k: string;
  v: string;
  o: string;
  qNorm: string;
  kNorm: string;
  postNorm: string;
  gate: string;
  up: string;
  down: string;
} {
  const p = `layers.${i}.`;
  return {
    inputNorm: `${p}input_layernorm.weight`,
    q: `${p}self_attn.q_proj.weight`,
    k: `${p}self_attn.k_proj.weight`,
    v: `${p}self_attn.v_proj.weight`,
    o: `${p}self_attn.o_proj.weight`,
    qNorm: `${p}self_attn.q_norm.weight`,
    kNorm: `${p}self_attn.k_norm.weight`,
    postNorm: `${p}post_attention_layernorm.weight`,
    gate: `${p}mlp.gate_proj.weight`,
    up: `${p}mlp.up_proj.weight`,
    down: `${p}mlp.down_proj.weight`,
  };
}

/**
 * Every tensor of a Qwen3 decoder under its `Qwen3Model` name, with its shape (no head).
 *
 * @param config the model
 * @returns the expected tensors
 *
 * @example
 * ```ts
 * import { parseQwen3Config, qwen3Tensors } from "@xpu/ops/models/qwen3";
 * const config = parseQwen3Config({
 *   hidden_size: 40, intermediate_size: 96, num_hidden_layers: 2, num_attention_heads: 2,
 *   num_key_value_heads: 1, head_dim: 16, vocab_size: 128, tie_word_embeddings: true,
 * });
 * qwen3Tensors(config).find((t) => t.name === "layers.0.self_attn.q_proj.weight")?.shape; // [32, 40]
 * ```
 */
export function qwen3Tensors(config: Qwen3Config): ExpectedTensor[] {
  const { hiddenSize: h, headDim: d, intermediateSize: f } = config;
  const q = config.numAttentionHeads * d, kv = config.numKeyValueHeads * d;
  const tensors: ExpectedTensor[] = [{ name: "embed_tokens.weight", shape: [config.vocabSize, h] }];
  for (let i = 0; i < config.numHiddenLayers; i++) {
    const n = layerTensorNames(i);
    tensors.push(
      { name: n.inputNorm, shape: [h] },
      { name: n.q, shape: [q, h] },
      { name: n.k, shape: [kv, h] },
      { name: n.v, shape: [kv, h] },
      { name: n.o, shape: [h, q] },
      { name: n.qNorm, shape: [d] },
      { name: n.kNorm, shape: [d] },
      { name: n.postNorm, shape: [h] },
      { name: n.gate, shape: [f, h] },
      { name: n.up, shape: [f, h] },
      { name: n.down, shape: [h, f] },
    );
  }
  tensors.push({ name: "norm.weight", shape: [h] });
  return tensors;
}

/**
 * Finds a checkpoint's layout and checks that it holds exactly a Qwen3 of `config`, reading no data.
 *
 * @param store the checkpoint (or a `scopedStore` view of the text encoder's part of a bigger file)
 * @param config the model
 * @returns the resolved checkpoint
 * @throws Error naming the missing, mis-shaped or unexpected tensors, or a store holding neither
 *   `model.embed_tokens.weight` nor `embed_tokens.weight`
 *
 * @example
 * ```ts
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * import { openQwen3Checkpoint, parseQwen3Config } from "@xpu/ops/models/qwen3";
 * const dir = "models/qwen3/fixtures"; // Anima's tiny Qwen3
 * const store = await SafetensorsFile.open(bytesSource(await Deno.readFile(`${dir}/anima-tiny-qwen3.safetensors`)));
 * const config = parseQwen3Config(await Deno.readTextFile(`${dir}/anima-tiny-config.json`));
 * const checkpoint = openQwen3Checkpoint(store, config); // reads no data
 * checkpoint.layout; // "Qwen3ForCausalLM": the names are under model.
 * checkpoint.model.info("layers.0.self_attn.q_proj.weight").shape; // [32, 40]
 * ```
 */
export function openQwen3Checkpoint(store: TensorStore, config: Qwen3Config): Qwen3Checkpoint {
  if (store === null || typeof store !== "object" || !Array.isArray(store.tensors)) {
    throw new Error(
      `qwen3: store must be a TensorStore (SafetensorsFile.open, openCheckpointDir), got ${String(store)}`,
    );
  }
  if (config === null || typeof config !== "object" || !Number.isInteger(config.numHiddenLayers)) {
    throw new Error(`qwen3: config must be a Qwen3Config (parseQwen3Config), got ${String(config)}`);
  }
  const names = new Set(store.tensors.map((t) => t.name));
  let prefix: string;
  if (names.has("model.embed_tokens.weight")) prefix = "model.";
  else if (names.has("embed_tokens.weight")) prefix = "";
  else {
    throw new Error(
      "qwen3: the checkpoint holds neither model.embed_tokens.weight (Qwen3ForCausalLM) nor embed_tokens.weight " +
        "(Qwen3Model); for a file holding several components, pass a scopedStore view of the text encoder",
    );
  }
  const layout: Qwen3Layout = prefix === "" ? "Qwen3Model" : "Qwen3ForCausalLM";
  // A config of more layers than the file holds fails before its tensors are listed (a config of a
  // million layers would take long to list).
  let layers = 0;
  for (const name of names) {
    const m = /^layers\.(\d+)\./.exec(name.slice(prefix.length));
    if (name.startsWith(prefix) && m) layers = Math.max(layers, Number(m[1]) + 1);
  }
  if (config.numHiddenLayers > layers) {
    throw new Error(
      `qwen3 (${layout}): the config has ${config.numHiddenLayers} layers (num_hidden_layers), the checkpoint ${layers}`,
    );
  }
  const expected = qwen3Tensors(config).map((t) => ({ name: prefix + t.name, shape: t.shape }));
  const untied = layout === "Qwen3ForCausalLM" && !config.tieWordEmbeddings;
  if (untied) expected.push({ name: "lm_head.weight", shape: [config.vocabSize, config.hiddenSize] });
  checkTensorLayout(store, expected, `qwen3 (${layout})`, {
    ignore: (name) =>
      /(^|\.)rotary_emb\.inv_freq$/.test(name) || (config.tieWordEmbeddings && name === "lm_head.weight"),
  });
  return {
    layout,
    model: prefix === "" ? store : scopedStore(store, prefix),
    lmHead: untied ? "lm_head.weight" : null,
    store,
  };
}
