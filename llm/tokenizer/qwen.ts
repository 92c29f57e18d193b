/**
 * Qwen's tokenizer (transformers' `Qwen2Tokenizer`, shared by Qwen2, Qwen2.5 and Qwen3: the text
 * encoder of Z-Image and Anima is Qwen3) from the files a checkpoint ships, and the chat prompt
 * Z-Image wraps a caption in.
 *
 * A Qwen checkpoint has either a `tokenizer.json` or the three files `vocab.json`, `merges.txt`
 * and `tokenizer_config.json`; the pre-tokenizer and normalizer are then not in any file but in
 * transformers' `Qwen2Tokenizer` class, and {@link qwenTokenizerJson} writes the tokenizer.json
 * that class builds: NFC, a Split with Qwen's regex, ByteLevel without a prefix space, BPE
 * without unk or dropout, a ByteLevel decoder, the config's `added_tokens_decoder` as added
 * tokens. For Qwen3's files it equals, field for field, the tokenizer.json transformers 5.17 and
 * tokenizers 0.23.2 saved from them (the oracle pack's tokenizer.derived.json, 11 MB, compared
 * once and not committed), except that its post-processor, a template adding nothing, is null
 * here. Either way the result is a {@link ByteLevelBpeTokenizer}, held to tokenizers' ids by the
 * tests: the 15 oracle prompts, hand-derived cases and, once gen.py has written its file on the
 * GPU machine, a corpus of over 2,000 strings (corpus.test.ts).
 *
 * Speed (`deno run -R llm/tokenizer/bench_encode.ts`: goldens/corpus.txt, 322 KB of English
 * prose, code and Japanese, in 176 chunks of 40 lines, one encode call each, one thread; Deno
 * 2.9.6 on this repository's 2-core AMD EPYC machine, shared with other work at load averages of
 * 7 to 12): 13.6-17.7 MB/s by the process's CPU time, best of 5 passes; 4.2-6.6 MB/s by the wall
 * clock, which there also counts the other processes' turns. The first pass of a fresh process is
 * 1.1-2.7 MB/s by the wall clock: it pays V8's compilation of the regex and the encoder, and BPE
 * for every word not yet in the cache (about 1.5 µs for a word of 7.5 bytes once compiled).
 *
 * Conventions, as `Qwen2Tokenizer` (pinned by tests): no BOS and no EOS are added, so `""`
 * encodes to no ids; every added token, special or not (`<|im_start|>`, `<|endoftext|>`,
 * `<think>`), is matched wherever its text appears; decode keeps special tokens unless asked to
 * skip them, and does no clean-up of spaces. Refused: a `tokenizer_class` other than
 * Qwen2Tokenizer(Fast), `add_prefix_space`, `split_special_tokens` and
 * `clean_up_tokenization_spaces` set.
 *
 * @module
 */
import { ByteLevelBpeTokenizer } from "./byte_level_bpe.ts";

/** A file's contents: text, UTF-8 bytes, or (for JSON files) the parsed value. */
export type TokenizerFileContents = string | Uint8Array | object;

/** The tokenizer files of a Qwen checkpoint: its tokenizer.json, or vocab + merges. */
export type QwenTokenizerFiles =
  | {
    /** `tokenizer.json`. */
    tokenizerJson: TokenizerFileContents;
    /** `tokenizer_config.json`, which names EOS and padding; without it both are null. */
    tokenizerConfig?: TokenizerFileContents;
  }
  | {
    /** `vocab.json`: token to id. */
    vocab: TokenizerFileContents;
    /** `merges.txt`: one merge per line, rank order, after a `#version` line. */
    merges: string | Uint8Array;
    /** `tokenizer_config.json`: the added tokens, EOS and padding. */
    tokenizerConfig: TokenizerFileContents;
  };

/** Qwen2Tokenizer's pre-tokenizer regex (Oniguruma syntax, as tokenizer.json stores it). */
export const QWEN_PRETOKENIZE_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function asText(who: string, name: string, contents: unknown): string {
  if (typeof contents === "string") return contents;
  if (contents instanceof Uint8Array) return utf8.decode(contents);
  throw new Error(
    `${who}: ${name} must be a string or Uint8Array, got ${contents === null ? "null" : typeof contents}`,
  );
}

// deno-lint-ignore no-explicit-any
function asJson(who: string, name: string, contents: unknown): any {
  if (contents !== null && typeof contents === "object" && !(contents instanceof Uint8Array)) return contents;
  const text = asText(who, name, contents);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${who}: ${name} is not JSON (${(e as Error).message})`);
  }
}

/** A tokenizer.json as {@link qwenTokenizerJson} writes it (the fields upstream's serialisation has). */
export interface QwenTokenizerJson {
  /** "1.0". */
  version: string;
  /** null: encode truncates only when asked (`maxLength`). */
  truncation: null;
  /** null. */
  padding: null;
  /** tokenizer_config.json's `added_tokens_decoder`, each with its id. */
  added_tokens: ({ id: number } & Record<string, unknown>)[];
  /** `{ type: "NFC" }`. */
  normalizer: { type: string };
  /** A Split with {@link QWEN_PRETOKENIZE_REGEX}, then ByteLevel without a prefix space or regex. */
  pre_tokenizer: { type: string; pretokenizers: Record<string, unknown>[] };
  /** null: nothing is added around the ids. */
  post_processor: null;
  /** ByteLevel. */
  decoder: Record<string, unknown>;
  /** BPE over the vocabulary and merges, rank order. */
  model: { type: string; vocab: Record<string, number>; merges: [string, string][] } & Record<string, unknown>;
}

interface QwenConfig {
  eos: string | undefined;
  pad: string | undefined;
  // deno-lint-ignore no-explicit-any
  json: any;
}

function readConfig(who: string, contents: TokenizerFileContents): QwenConfig {
  const json = asJson(who, "tokenizerConfig", contents);
  const cls = json.tokenizer_class;
  if (cls !== "Qwen2Tokenizer" && cls !== "Qwen2TokenizerFast") {
    throw new Error(`${who}: tokenizer_class "${cls}" is not Qwen2Tokenizer or Qwen2TokenizerFast`);
  }
  for (const key of ["add_prefix_space", "split_special_tokens", "clean_up_tokenization_spaces"]) {
    if (json[key] === true) throw new Error(`${who}: ${key} = true is not implemented`);
  }
  // A special token is a string, or an AddedToken written out as an object with its content.
  const name = (token: unknown) =>
    typeof token === "string" ? token : (token as { content?: string } | null)?.content ?? undefined;
  return { eos: name(json.eos_token), pad: name(json.pad_token), json };
}

/**
 * The tokenizer.json transformers' `Qwen2Tokenizer` builds from `vocab.json`, `merges.txt` and
 * `tokenizer_config.json`.
 *
 * @param files The three files (text, bytes or, for the JSON ones, parsed).
 * @returns The tokenizer.json object, for {@link ByteLevelBpeTokenizer} (or to save as JSON).
 * @example
 * ```ts
 * import { qwenTokenizerJson } from "@xpu/ops/llm";
 * const json = qwenTokenizerJson({
 *   vocab: { "a": 0, "b": 1, "ab": 2 },
 *   merges: "#version: 0.2\na b\n",
 *   tokenizerConfig: { tokenizer_class: "Qwen2Tokenizer", added_tokens_decoder: {} },
 * });
 * json.model.merges; // [["a", "b"]]
 * json.normalizer; // { type: "NFC" }
 * ```
 */
export function qwenTokenizerJson(
  files: { vocab: TokenizerFileContents; merges: string | Uint8Array; tokenizerConfig: TokenizerFileContents },
): QwenTokenizerJson {
  const who = "qwenTokenizerJson";
  const vocab = asJson(who, "vocab", files.vocab);
  if (vocab === null || typeof vocab !== "object" || Array.isArray(vocab)) {
    throw new Error(`${who}: vocab must map tokens to ids`);
  }
  const merges: [string, string][] = [];
  asText(who, "merges", files.merges).split("\n").forEach((raw, i) => {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if ((i === 0 && line.startsWith("#version")) || line === "") return;
    const parts = line.split(" ");
    if (parts.length !== 2) throw new Error(`${who}: merges line ${i + 1} is not two tokens: "${line}"`);
    merges.push(parts as [string, string]);
  });
  const { json: config } = readConfig(who, files.tokenizerConfig);
  const addedTokens = Object.entries(config.added_tokens_decoder ?? {}).map(([id, token]) => ({
    id: Number(id),
    ...(token as object),
  }));
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: { type: "NFC" },
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: QWEN_PRETOKENIZE_REGEX }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: null,
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: "",
      end_of_word_suffix: "",
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
}

/**
 * Loads Qwen's tokenizer from its files (no file access: pass their contents, so it runs in a
 * browser as in Deno).
 *
 * @param files `{ tokenizerJson, tokenizerConfig? }` or `{ vocab, merges, tokenizerConfig }`.
 * @returns The tokenizer; `eosId` and `padId` as tokenizer_config.json names them.
 * @example Qwen3's files, as the repository's fixture stores them (gzipped)
 * ```ts
 * import { loadQwenTokenizer, qwenChatPrompt } from "@xpu/ops/llm";
 * const dir = "llm/fixtures/qwen3-tokenizer/";
 * const gunzip = async (path: string) =>
 *   await new Response((await Deno.open(path)).readable.pipeThrough(new DecompressionStream("gzip"))).text();
 * const qwen = loadQwenTokenizer({
 *   vocab: await gunzip(dir + "vocab.json.gz"),
 *   merges: await gunzip(dir + "merges.txt.gz"),
 *   tokenizerConfig: await gunzip(dir + "tokenizer_config.json.gz"),
 * });
 * qwen.encode("a cat"); // [64, 8251]
 * qwen.encode(qwenChatPrompt("a cat"), { maxLength: 512 }).length; // 10: the template's 8 and the caption's 2
 * ```
 */
export function loadQwenTokenizer(files: QwenTokenizerFiles): ByteLevelBpeTokenizer {
  const who = "loadQwenTokenizer";
  if (files === null || typeof files !== "object") throw new Error(`${who}: files must be an object`);
  if ("tokenizerJson" in files) {
    const json = asJson(who, "tokenizerJson", files.tokenizerJson);
    const config = files.tokenizerConfig === undefined ? null : readConfig(who, files.tokenizerConfig);
    return new ByteLevelBpeTokenizer(json, { eos: config?.eos, pad: config?.pad });
  }
  if (!("vocab" in files) || !("merges" in files) || !("tokenizerConfig" in files)) {
    throw new Error(`${who}: files must hold tokenizerJson, or vocab, merges and tokenizerConfig`);
  }
  const config = readConfig(who, files.tokenizerConfig);
  return new ByteLevelBpeTokenizer(qwenTokenizerJson(files), { eos: config.eos, pad: config.pad });
}

/**
 * Wraps a prompt in Qwen3's chat template as one user turn followed by the assistant's turn
 * opening: what `tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
 * tokenize=False, add_generation_prompt=True, enable_thinking=...)` returns for Qwen3's template.
 * Z-Image encodes its caption this way (enable_thinking true), then tokenizes with
 * `max_length=512, truncation=True`: pass `{ maxLength: 512 }` to encode; a long prompt then loses
 * the template's tail, as there.
 *
 * @param prompt The user's text, inserted as is (it may itself hold special-token text).
 * @param options enableThinking: false appends the empty think block Qwen3's template adds for
 *   `enable_thinking=False`; default true (no think block).
 * @returns `<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n`.
 * @example
 * ```ts
 * import { qwenChatPrompt } from "@xpu/ops/llm";
 * qwenChatPrompt("a cat"); // "<|im_start|>user\na cat<|im_end|>\n<|im_start|>assistant\n"
 * ```
 */
export function qwenChatPrompt(prompt: string, options: { enableThinking?: boolean } = {}): string {
  if (typeof prompt !== "string") throw new Error(`qwenChatPrompt: prompt must be a string, got ${typeof prompt}`);
  if (options === null || typeof options !== "object") {
    throw new Error(`qwenChatPrompt: options must be an object { enableThinking? }, got ${String(options)}`);
  }
  for (const [key, value] of Object.entries(options)) {
    if (key !== "enableThinking" && value !== undefined) {
      throw new Error(`qwenChatPrompt: unknown option "${key}" (expected enableThinking)`);
    }
  }
  if (options.enableThinking !== undefined && typeof options.enableThinking !== "boolean") {
    throw new Error(`qwenChatPrompt: enableThinking must be a boolean, got ${JSON.stringify(options.enableThinking)}`);
  }
  const open = `<|im_start|>user\n${prompt}<|im_end|>\n<|im_start|>assistant\n`;
  return options.enableThinking === false ? open + "<think>\n\n</think>\n\n" : open;
}
