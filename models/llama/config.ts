/**
 * LlamaConfig: the shape of a Llama checkpoint, read from a Hugging Face `config.json` (the layout
 * `transformers.LlamaConfig` writes: 4.x's `rope_theta` + `rope_scaling`, or 5.x's
 * `rope_parameters`). Field names are HF's, in camelCase, so each maps to one key of the file.
 *
 * A field this engine does not implement is refused by name, never ignored: `attention_bias` or
 * `mlp_bias` true, `sliding_window` set, `hidden_act` other than `silu`, `model_type` other than
 * `llama`, `partial_rotary_factor` other than 1, a `quantization_config`, logit soft-capping,
 * `layer_types` other than full attention, a `rope_type` outside none/linear/dynamic/yarn/llama3,
 * and any key not listed here. Keys that do not change what the model computes (`architectures`
 * naming LlamaForCausalLM, `dtype`, `initializer_range`, `attention_dropout` (inference has no
 * dropout), `pretraining_tp` (HF's sliced matmul computes the same product), `use_cache`,
 * `pad_token_id`, `transformers_version`, ...) are accepted and dropped.
 *
 * @module
 */

import {
  BOOKKEEPING_CONFIG_KEYS,
  type ConfigFields,
  configFields,
  DECODER_CONFIG_KEYS,
} from "../../llm/config_fields.ts";

/** RoPE frequency scaling, as HF's `rope_type` and its fields (transformers' defaults filled in). */
export type RopeScaling =
  | { ropeType: "none" }
  | { ropeType: "linear"; factor: number }
  | { ropeType: "dynamic"; factor: number; originalMaxPositionEmbeddings: number }
  | {
    ropeType: "yarn";
    factor: number;
    originalMaxPositionEmbeddings: number;
    /** `attention_factor`; null: transformers derives it from `factor` (and `mscale`s). */
    attentionFactor: number | null;
    betaFast: number;
    betaSlow: number;
    mscale: number | null;
    mscaleAllDim: number | null;
    truncate: boolean;
  }
  | {
    ropeType: "llama3";
    factor: number;
    lowFreqFactor: number;
    highFreqFactor: number;
    originalMaxPositionEmbeddings: number;
  };

/** The shape of a Llama model. */
export interface LlamaConfig {
  /** `num_hidden_layers`. */
  numHiddenLayers: number;
  /** `hidden_size`. */
  hiddenSize: number;
  /** `num_attention_heads` (query heads). */
  numAttentionHeads: number;
  /** `num_key_value_heads` (GQA groups; equal to the query heads when absent). */
  numKeyValueHeads: number;
  /** `head_dim`; hidden_size / num_attention_heads when absent. */
  headDim: number;
  /** `intermediate_size` (the FFN width). */
  intermediateSize: number;
  /** `vocab_size`. */
  vocabSize: number;
  /** `rope_theta` (the RoPE base). */
  ropeTheta: number;
  /** `rope_scaling` / `rope_parameters`' scaling. */
  ropeScaling: RopeScaling;
  /** `rms_norm_eps`. */
  rmsNormEps: number;
  /** `tie_word_embeddings`: the output head is the embedding table. */
  tieWordEmbeddings: boolean;
  /** `bos_token_id`, or null. */
  bosTokenId: number | null;
  /** `eos_token_id`, always a list (HF allows a number or a list). */
  eosTokenIds: number[];
  /** `max_position_embeddings`. */
  maxPositionEmbeddings: number;
}

const IGNORED = new Set([...BOOKKEEPING_CONFIG_KEYS, "pretraining_tp"]);

const IMPLEMENTED = new Set([
  ...DECODER_CONFIG_KEYS,
  "mlp_bias",
  "sliding_window",
  "use_sliding_window",
  "partial_rotary_factor",
  "layer_types",
  "attn_logit_softcapping",
  "final_logit_softcapping",
]);

const FIELDS = configFields("llama config");
// Typed as never-returning where it is declared, so a call narrows the value it refused.
const refuse: ConfigFields["refuse"] = FIELDS.refuse;
const { int, positive, tokenId } = FIELDS;

const ROPE_FIELDS: Record<string, readonly string[]> = {
  default: [],
  linear: ["factor"],
  dynamic: ["factor", "original_max_position_embeddings"],
  yarn: [
    "factor",
    "original_max_position_embeddings",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "truncate",
  ],
  llama3: ["factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"],
};

function optionalNumber(s: Record<string, unknown>, key: string, where: string): number | null {
  return s[key] === undefined || s[key] === null ? null : positive(s[key], `${where}.${key}`);
}

function readRopeScaling(
  s: Record<string, unknown> | null,
  where: string,
  maxPositionEmbeddings: number,
): RopeScaling {
  if (s === null) return { ropeType: "none" };
  const type = s.rope_type ?? s.type ?? "default";
  if (typeof type !== "string" || !Object.hasOwn(ROPE_FIELDS, type)) {
    refuse(`${where}.rope_type`, `${JSON.stringify(type)} is not implemented (default, linear, dynamic, yarn, llama3)`);
  }
  for (const key of Object.keys(s)) {
    if (!["rope_type", "type", "rope_theta", ...ROPE_FIELDS[type]].includes(key)) {
      refuse(`${where}.${key}`, `is not implemented for rope_type ${type}`);
    }
  }
  const factor = () => positive(s.factor, `${where}.factor`);
  const originalMax = () =>
    int(s.original_max_position_embeddings, `${where}.original_max_position_embeddings`, maxPositionEmbeddings);
  switch (type) {
    case "default":
      return { ropeType: "none" };
    case "linear":
      return { ropeType: "linear", factor: factor() };
    case "dynamic":
      return { ropeType: "dynamic", factor: factor(), originalMaxPositionEmbeddings: originalMax() };
    case "yarn": {
      if (s.truncate !== undefined && typeof s.truncate !== "boolean") {
        refuse(`${where}.truncate`, `must be a boolean, got ${JSON.stringify(s.truncate)}`);
      }
      return {
        ropeType: "yarn",
        factor: factor(),
        originalMaxPositionEmbeddings: originalMax(),
        attentionFactor: optionalNumber(s, "attention_factor", where),
        betaFast: positive(s.beta_fast, `${where}.beta_fast`, 32),
        betaSlow: positive(s.beta_slow, `${where}.beta_slow`, 1),
        mscale: optionalNumber(s, "mscale", where),
        mscaleAllDim: optionalNumber(s, "mscale_all_dim", where),
        truncate: (s.truncate as boolean | undefined) ?? true,
      };
    }
    default: {
      // llama3, the one type left.
      if (s.original_max_position_embeddings === undefined) {
        refuse(`${where}.original_max_position_embeddings`, "is required for rope_type llama3");
      }
      return {
        ropeType: "llama3",
        factor: factor(),
        lowFreqFactor: positive(s.low_freq_factor, `${where}.low_freq_factor`),
        highFreqFactor: positive(s.high_freq_factor, `${where}.high_freq_factor`),
        originalMaxPositionEmbeddings: originalMax(),
      };
    }
  }
}

function refuseUnless(json: Record<string, unknown>, field: string, allowed: (v: unknown) => boolean, what: string) {
  if (field in json && !allowed(json[field])) {
    refuse(field, `= ${JSON.stringify(json[field])} is not implemented (only ${what})`);
  }
}

/**
 * Reads a Hugging Face Llama `config.json`.
 *
 * @param json the parsed file (or its text)
 * @returns the config, every field checked
 * @throws Error naming the field that is missing, malformed or not implemented
 *
 * @example
 * ```ts
 * import { parseLlamaConfig } from "@xpu/ops/models/llama";
 * const config = parseLlamaConfig({
 *   model_type: "llama", num_hidden_layers: 2, hidden_size: 64, num_attention_heads: 4,
 *   num_key_value_heads: 2, intermediate_size: 128, vocab_size: 256, rms_norm_eps: 1e-5,
 * });
 * config.headDim; // 16
 * ```
 */
export function parseLlamaConfig(json: unknown): LlamaConfig {
  if (typeof json === "string") {
    try {
      json = JSON.parse(json);
    } catch (e) {
      throw new Error(`llama config: config.json is not JSON (${(e as Error).message})`);
    }
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new Error("llama config: config.json must be a JSON object");
  }
  const c = json as Record<string, unknown>;
  for (const key of Object.keys(c)) {
    if (!IGNORED.has(key) && !IMPLEMENTED.has(key)) refuse(key, "is not implemented by this engine");
  }
  if (c.model_type === undefined) refuse("model_type", `is missing (expected "llama")`);
  refuseUnless(c, "model_type", (v) => v === "llama", `"llama"`);
  refuseUnless(
    c,
    "architectures",
    (v) => Array.isArray(v) && v.every((a) => a === "LlamaForCausalLM"),
    `["LlamaForCausalLM"]`,
  );
  refuseUnless(c, "hidden_act", (v) => v === "silu", `"silu"`);
  refuseUnless(c, "attention_bias", (v) => v === false, "false");
  refuseUnless(c, "mlp_bias", (v) => v === false, "false");
  refuseUnless(c, "sliding_window", (v) => v === null, "null");
  refuseUnless(c, "use_sliding_window", (v) => v === false, "false");
  refuseUnless(c, "partial_rotary_factor", (v) => v === 1, "1");
  refuseUnless(c, "attn_logit_softcapping", (v) => v === null, "null");
  refuseUnless(c, "final_logit_softcapping", (v) => v === null, "null");
  refuseUnless(
    c,
    "layer_types",
    (v) => Array.isArray(v) && v.every((t) => t === "full_attention"),
    `"full_attention" for every layer`,
  );

  const numHiddenLayers = int(c.num_hidden_layers, "num_hidden_layers");
  const hiddenSize = int(c.hidden_size, "hidden_size");
  const numAttentionHeads = int(c.num_attention_heads, "num_attention_heads");
  const numKeyValueHeads = int(c.num_key_value_heads, "num_key_value_heads", numAttentionHeads);
  if (numAttentionHeads % numKeyValueHeads !== 0) {
    refuse("num_key_value_heads", `(${numKeyValueHeads}) must divide num_attention_heads (${numAttentionHeads})`);
  }
  if (c.head_dim === undefined || c.head_dim === null) {
    if (hiddenSize % numAttentionHeads !== 0) {
      refuse("head_dim", `is absent and hidden_size ${hiddenSize} is not a multiple of ${numAttentionHeads} heads`);
    }
  }
  const headDim = int(c.head_dim, "head_dim", hiddenSize / numAttentionHeads);
  if (headDim % 2 !== 0) refuse("head_dim", `must be even for RoPE, got ${headDim}`);
  const maxPositionEmbeddings = int(c.max_position_embeddings, "max_position_embeddings", 2048);

  const params = c.rope_parameters as Record<string, unknown> | null | undefined;
  if (params !== undefined && params !== null && (typeof params !== "object" || Array.isArray(params))) {
    refuse("rope_parameters", `must be an object, got ${JSON.stringify(params)}`);
  }
  if (params && c.rope_scaling) refuse("rope_scaling", "and rope_parameters are both set; only one may be");
  const theta = params?.rope_theta ?? c.rope_theta;
  if (params?.rope_theta !== undefined && c.rope_theta !== undefined && params.rope_theta !== c.rope_theta) {
    refuse("rope_theta", `(${c.rope_theta}) disagrees with rope_parameters.rope_theta (${params.rope_theta})`);
  }
  const ropeTheta = positive(theta, "rope_theta", 10000);
  const scaling = params ?? (c.rope_scaling as Record<string, unknown> | null | undefined) ?? null;
  if (scaling !== null && (typeof scaling !== "object" || Array.isArray(scaling))) {
    refuse("rope_scaling", `must be an object or null, got ${JSON.stringify(scaling)}`);
  }
  const ropeScaling = readRopeScaling(scaling, params ? "rope_parameters" : "rope_scaling", maxPositionEmbeddings);

  const tie = c.tie_word_embeddings ?? false;
  if (typeof tie !== "boolean") refuse("tie_word_embeddings", `must be a boolean, got ${JSON.stringify(tie)}`);
  const eos = c.eos_token_id ?? null;
  const eosTokenIds = eos === null
    ? []
    : Array.isArray(eos)
    ? eos.map((e) => tokenId(e, "eos_token_id"))
    : [tokenId(eos, "eos_token_id")];
  const bos = c.bos_token_id ?? null;
  const vocabSize = int(c.vocab_size, "vocab_size");
  const bosTokenId = bos === null ? null : tokenId(bos, "bos_token_id");
  for (const [field, id] of [["bos_token_id", bosTokenId], ...eosTokenIds.map((e) => ["eos_token_id", e] as const)]) {
    if (id !== null && (id as number) >= vocabSize) {
      refuse(field as string, `(${id}) must be a token id below vocab_size (${vocabSize})`);
    }
  }

  return {
    numHiddenLayers,
    hiddenSize,
    numAttentionHeads,
    numKeyValueHeads,
    headDim,
    intermediateSize: int(c.intermediate_size, "intermediate_size"),
    vocabSize,
    ropeTheta,
    ropeScaling,
    rmsNormEps: positive(c.rms_norm_eps, "rms_norm_eps", 1e-6),
    tieWordEmbeddings: tie,
    bosTokenId,
    eosTokenIds,
    maxPositionEmbeddings,
  };
}

/**
 * The tiny shape the fixtures in `models/llama/fixtures/` are built with (`tiny-gqa`): 2 layers, hidden 48,
 * 4 query / 2 KV heads of 12 channels, FFN 144 (so q4g128's down projection has a full group and a
 * partial one), vocab 128.
 */
export const TINY_CONFIG: LlamaConfig = Object.freeze({
  numHiddenLayers: 2,
  hiddenSize: 48,
  numAttentionHeads: 4,
  numKeyValueHeads: 2,
  headDim: 12,
  intermediateSize: 144,
  vocabSize: 128,
  ropeTheta: 10000,
  ropeScaling: { ropeType: "none" } as RopeScaling,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: false,
  bosTokenId: 1,
  eosTokenIds: [2],
  maxPositionEmbeddings: 128,
});

/**
 * The Sarashina2.2-1B shape (sbintuitions/sarashina2.2-1b): 24 layers, hidden 1792, 16 query /
 * 8 KV heads of 112 channels, FFN 6272, vocab 102,400, RoPE base 500,000, untied head. The shape
 * is what the benchmark needs (with weights generated in TypeScript); rms_norm_eps, the token ids
 * and max_position_embeddings are Llama's usual values, not checked against that model's
 * config.json (none is reachable here).
 */
export const SARASHINA_2_2_1B_CONFIG: LlamaConfig = Object.freeze({
  numHiddenLayers: 24,
  hiddenSize: 1792,
  numAttentionHeads: 16,
  numKeyValueHeads: 8,
  headDim: 112,
  intermediateSize: 6272,
  vocabSize: 102400,
  ropeTheta: 500000,
  ropeScaling: { ropeType: "none" } as RopeScaling,
  rmsNormEps: 1e-5,
  tieWordEmbeddings: false,
  bosTokenId: 1,
  eosTokenIds: [2],
  maxPositionEmbeddings: 8192,
});
