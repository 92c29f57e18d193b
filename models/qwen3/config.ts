/**
 * Qwen3Config: the shape of a Qwen3 checkpoint, read from a Hugging Face `config.json` (what
 * `transformers.Qwen3Config` writes: 4.x's `rope_theta` + `rope_scaling`, or 5.x's `rope_parameters`).
 * Field names are HF's in camelCase, one key of the file each.
 *
 * What this port computes is Qwen3's: RMSNorm with eps `rms_norm_eps`, per-head q_norm/k_norm,
 * rotate-half RoPE with base `rope_theta` and no scaling, GQA, SwiGLU, no biases. So a key that would
 * change that is refused by name, never ignored: `model_type` other than `qwen3`, `hidden_act` other
 * than `silu`, `attention_bias` true, `use_sliding_window` true, `layer_types` other than full
 * attention, a `rope_type` other than default, a `quantization_config`, and any key not listed here.
 * Keys that do not change what the model computes (`architectures`, `dtype`, `initializer_range`,
 * `attention_dropout`, `sliding_window` and `max_window_layers` while sliding windows are off,
 * `use_cache`, token ids, `transformers_version`, ...) are accepted and dropped.
 *
 * @module
 */

import {
  BOOKKEEPING_CONFIG_KEYS,
  type ConfigFields,
  configFields,
  DECODER_CONFIG_KEYS,
} from "../../llm/config_fields.ts";

/** The shape of a Qwen3 model. */
export interface Qwen3Config {
  /** `num_hidden_layers`. */
  numHiddenLayers: number;
  /** `hidden_size`. */
  hiddenSize: number;
  /** `num_attention_heads` (query heads). */
  numAttentionHeads: number;
  /** `num_key_value_heads` (equal to the query heads when absent). */
  numKeyValueHeads: number;
  /** `head_dim` (required): independent of hidden / heads (Qwen3-4B: 128 with hidden 2560 and 32 heads). */
  headDim: number;
  /** `intermediate_size` (the SwiGLU width). */
  intermediateSize: number;
  /** `vocab_size`. */
  vocabSize: number;
  /** `rope_theta` (Qwen3: 1e6). */
  ropeTheta: number;
  /** `rms_norm_eps`: every RMSNorm's, q_norm and k_norm included. */
  rmsNormEps: number;
  /** `tie_word_embeddings` (required): the head is the embedding table. */
  tieWordEmbeddings: boolean;
  /** `bos_token_id`, or null. */
  bosTokenId: number | null;
  /** `eos_token_id`, always a list (HF allows a number or a list). */
  eosTokenIds: number[];
  /** `max_position_embeddings`. */
  maxPositionEmbeddings: number;
}

const IGNORED = new Set([...BOOKKEEPING_CONFIG_KEYS, "sliding_window", "max_window_layers"]);

const IMPLEMENTED = new Set([
  ...DECODER_CONFIG_KEYS,
  "use_sliding_window",
  "layer_types",
]);

const FIELDS = configFields("qwen3 config");
// Typed as never-returning where it is declared, so a call narrows the value it refused.
const refuse: ConfigFields["refuse"] = FIELDS.refuse;
const { int, positive, tokenId } = FIELDS;

/** The RoPE base from `rope_parameters` (5.x) or `rope_theta` + `rope_scaling` (4.x), refusing any scaling. */
function ropeTheta(c: Record<string, unknown>): number {
  const params = c.rope_parameters ?? null;
  const scaling = c.rope_scaling ?? null;
  for (const [key, value] of [["rope_parameters", params], ["rope_scaling", scaling]] as const) {
    if (value === null) continue;
    if (typeof value !== "object" || Array.isArray(value)) refuse(key, `must be an object or null`);
    const s = value as Record<string, unknown>;
    const type = s.rope_type ?? s.type ?? "default";
    if (type !== "default") refuse(`${key}.rope_type`, `${JSON.stringify(type)} is not implemented (default only)`);
    for (const k of Object.keys(s)) {
      if (!["rope_type", "type", "rope_theta"].includes(k)) refuse(`${key}.${k}`, "is not implemented");
    }
  }
  const fromParams = (params as Record<string, unknown> | null)?.rope_theta;
  if (fromParams !== undefined && c.rope_theta !== undefined && fromParams !== c.rope_theta) {
    refuse("rope_theta", `${c.rope_theta} disagrees with rope_parameters.rope_theta ${fromParams}`);
  }
  return positive(fromParams ?? c.rope_theta, "rope_theta", 10000);
}

/**
 * Parses a Hugging Face Qwen3 `config.json`.
 *
 * @param json the file's text, or its parsed object
 * @returns the config
 * @throws Error naming a missing or invalid field, or one this port does not implement
 *
 * @example
 * ```ts
 * import { parseQwen3Config } from "@xpu/ops/models/qwen3";
 * const config = parseQwen3Config({
 *   model_type: "qwen3", hidden_size: 2560, intermediate_size: 9728, num_hidden_layers: 36,
 *   num_attention_heads: 32, num_key_value_heads: 8, head_dim: 128, vocab_size: 151936,
 *   rope_theta: 1000000, rms_norm_eps: 1e-6, tie_word_embeddings: true, max_position_embeddings: 40960,
 * });
 * config.headDim; // 128: q_proj maps 2560 to 32 * 128 = 4096
 * ```
 */
export function parseQwen3Config(json: string | Record<string, unknown>): Qwen3Config {
  let c: Record<string, unknown>;
  if (typeof json === "string") {
    try {
      c = JSON.parse(json);
    } catch (e) {
      throw new Error(`qwen3 config: the text is not JSON (${(e as Error).message})`);
    }
  } else c = json;
  if (c === null || typeof c !== "object" || Array.isArray(c)) throw new Error("qwen3 config: must be a JSON object");
  for (const key of Object.keys(c)) {
    if (!IGNORED.has(key) && !IMPLEMENTED.has(key)) refuse(key, "is not implemented");
  }
  if (c.model_type !== undefined && c.model_type !== "qwen3") {
    refuse("model_type", `must be "qwen3", got ${JSON.stringify(c.model_type)}`);
  }
  if (c.hidden_act !== undefined && c.hidden_act !== "silu") {
    refuse("hidden_act", `must be "silu", got ${JSON.stringify(c.hidden_act)}`);
  }
  if (c.attention_bias !== undefined && c.attention_bias !== false) {
    refuse("attention_bias", `must be false (biased projections are not implemented)`);
  }
  if (c.use_sliding_window !== undefined && c.use_sliding_window !== false) {
    refuse("use_sliding_window", `must be false (sliding-window attention is not implemented)`);
  }
  const numHiddenLayers = int(c.num_hidden_layers, "num_hidden_layers");
  if (c.layer_types !== undefined && c.layer_types !== null) {
    const types = c.layer_types;
    if (!Array.isArray(types) || types.length !== numHiddenLayers || types.some((t) => t !== "full_attention")) {
      refuse("layer_types", `must list "full_attention" for each of the ${numHiddenLayers} layers`);
    }
  }
  const hiddenSize = int(c.hidden_size, "hidden_size");
  const numAttentionHeads = int(c.num_attention_heads, "num_attention_heads");
  const numKeyValueHeads = int(c.num_key_value_heads, "num_key_value_heads", numAttentionHeads);
  if (numAttentionHeads % numKeyValueHeads !== 0) {
    refuse("num_key_value_heads", `(${numKeyValueHeads}) must divide num_attention_heads (${numAttentionHeads})`);
  }
  // Required, not derived: Qwen3's head_dim is independent of hidden_size / num_attention_heads.
  const headDim = int(c.head_dim, "head_dim");
  if (headDim % 4 !== 0) {
    refuse("head_dim", `must be a multiple of 4 (the attention kernels read vec4s), got ${headDim}`);
  }
  // Required: whether the head is the embedding decides which tensors the checkpoint must hold.
  if (typeof c.tie_word_embeddings !== "boolean") {
    refuse("tie_word_embeddings", `must be given as a boolean, got ${JSON.stringify(c.tie_word_embeddings)}`);
  }
  const eos = c.eos_token_id;
  return {
    numHiddenLayers,
    hiddenSize,
    numAttentionHeads,
    numKeyValueHeads,
    headDim,
    intermediateSize: int(c.intermediate_size, "intermediate_size"),
    vocabSize: int(c.vocab_size, "vocab_size"),
    ropeTheta: ropeTheta(c),
    rmsNormEps: positive(c.rms_norm_eps, "rms_norm_eps", 1e-6),
    tieWordEmbeddings: c.tie_word_embeddings,
    bosTokenId: c.bos_token_id === undefined || c.bos_token_id === null
      ? null
      : tokenId(c.bos_token_id, "bos_token_id"),
    eosTokenIds: eos === undefined || eos === null
      ? []
      : Array.isArray(eos)
      ? eos.map((v, i) => tokenId(v, `eos_token_id[${i}]`))
      : [tokenId(eos, "eos_token_id")],
    maxPositionEmbeddings: int(c.max_position_embeddings, "max_position_embeddings", 32768),
  };
}
