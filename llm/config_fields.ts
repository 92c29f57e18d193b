/**
 * The field readers and the common known keys the text models' `config.json` parsers share (models/llama/config.ts for Llama,
 * models/qwen3/config.ts for Qwen3): each reads one key and refuses a bad value with an Error that
 * names the config and the key, never a silent default for a value that is present but wrong.
 *
 * @module
 */

/** The readers of one config's fields; every Error they throw starts with the config's name. */
export interface ConfigFields {
  /** Throws `<config>: <field> <detail>`. */
  refuse(field: string, detail: string): never;
  /** An integer >= 1; `fallback` when the value is absent (undefined or null). */
  int(value: unknown, field: string, fallback?: number): number;
  /** A finite number > 0; `fallback` when the value is absent (undefined or null). */
  positive(value: unknown, field: string, fallback?: number): number;
  /** A token id: an integer >= 0. */
  tokenId(value: unknown, field: string): number;
}

/**
 * The field readers for one config format.
 *
 * @param config the name every message starts with ("llama config", "qwen3 config")
 * @returns `refuse`, `int`, `positive` and `tokenId`, each throwing `<config>: <field> ...` on a bad value
 *
 * @example
 * ```ts
 * import { configFields } from "./config_fields.ts";
 * const { int, positive } = configFields("llama config");
 * int(undefined, "max_position_embeddings", 2048); // 2048
 * positive(1e-5, "rms_norm_eps"); // 1e-5
 * try {
 *   int(0, "hidden_size");
 * } catch (e) {
 *   (e as Error).message; // "llama config: hidden_size must be an integer >= 1, got 0"
 * }
 * ```
 */
export function configFields(config: string): ConfigFields {
  function refuse(field: string, detail: string): never {
    throw new Error(`${config}: ${field} ${detail}`);
  }
  return {
    refuse,
    int(value, field, fallback) {
      const v = value ?? fallback;
      if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 1) {
        refuse(field, `must be an integer >= 1, got ${JSON.stringify(value)}`);
      }
      return v;
    },
    positive(value, field, fallback) {
      const v = value ?? fallback;
      if (typeof v !== "number" || !Number.isFinite(v) || v <= 0) {
        refuse(field, `must be a finite number > 0, got ${JSON.stringify(value)}`);
      }
      return v;
    },
    tokenId(value, field) {
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
        refuse(field, `must be a token id (an integer >= 0), got ${JSON.stringify(value)}`);
      }
      return value;
    },
  };
}

/**
 * The keys of a Hugging Face text config that no model here reads: bookkeeping of the file and of
 * training. A model's own list of ignored keys adds what it leaves aside on top of these.
 */
export const BOOKKEEPING_CONFIG_KEYS: readonly string[] = [
  "_name_or_path",
  "architectures",
  "attention_dropout",
  "dtype",
  "torch_dtype",
  "initializer_range",
  "use_cache",
  "pad_token_id",
  "transformers_version",
  "output_attentions",
  "output_hidden_states",
  "return_dict",
];

/**
 * The keys every decoder-only text model here reads (or checks and refuses by value): sizes, RoPE,
 * norms, tied embeddings, token ids. A model's own list adds the keys only it reads.
 */
export const DECODER_CONFIG_KEYS: readonly string[] = [
  "model_type",
  "hidden_act",
  "attention_bias",
  "num_hidden_layers",
  "hidden_size",
  "num_attention_heads",
  "num_key_value_heads",
  "head_dim",
  "intermediate_size",
  "vocab_size",
  "rope_theta",
  "rope_scaling",
  "rope_parameters",
  "rms_norm_eps",
  "tie_word_embeddings",
  "bos_token_id",
  "eos_token_id",
  "max_position_embeddings",
];
