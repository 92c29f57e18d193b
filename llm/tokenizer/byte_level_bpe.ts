/**
 * Hugging Face `tokenizer.json` byte-level BPE — the GPT-2 / Llama 3 / Qwen family — encoding
 * and decoding exactly as the `tokenizers` package (0.23.2, the fixtures' version) does.
 *
 * Pipeline, in upstream's order: split the text on added tokens (leftmost, longest first; each
 * becomes its own id, special or not); NFC-normalize each piece between them when the
 * tokenizer.json says so (Qwen's does); pre-tokenize the rest with the Split regex and/or
 * ByteLevel's GPT-2 regex ("isolated": matches and the gaps between them are pieces); map each
 * piece's UTF-8 bytes through GPT-2's byte-to-unicode table; run BPE on it (bpe_ranks.ts: lowest
 * merge rank first, ties to the leftmost pair, as upstream; with `ignore_merges`, a piece the
 * vocabulary holds whole is one id). Decode maps tokens back to bytes and replaces invalid UTF-8
 * as Rust's from_utf8_lossy does (one U+FFFD per maximal invalid subsequence, which is also
 * TextDecoder's rule). A JavaScript string's lone surrogates are first replaced by U+FFFD, as
 * TextEncoder does; Python's side of the fixtures is fed that same text. NFC is the runtime's
 * `String.prototype.normalize`, whose Unicode version may differ from upstream's
 * `unicode-normalization` crate for characters assigned after the older of the two.
 *
 * The regex is upstream's Oniguruma pattern run by JavaScript's engine with the `v` flag, with two
 * rewrites. `\s` / `\S` become `\p{White_Space}` / `\P{White_Space}`, because Oniguruma's `\s` is
 * the White_Space property (it includes U+0085, excludes U+FEFF) and JavaScript's is not (the
 * reverse). A case-insensitive group of ASCII letters and apostrophes, as in Llama 3's and Qwen's
 * `(?i:'s|'t|'re|...)`, is spelled out as character classes holding each letter's case-fold
 * equivalents (`s` also matches U+017F ſ, `k` U+212A K: the two non-ASCII characters Unicode
 * folds to ASCII letters), so the pattern needs no RegExp modifiers, which older browsers lack.
 * Everything else in the GPT-2, Llama 3 and Qwen patterns means the same in both engines, which
 * the fixtures check.
 *
 * Refused at load, by name: a normalizer other than NFC, a pre-tokenizer other than
 * Split/ByteLevel (alone or in a Sequence), a Split that is not "Isolated" or is inverted, a
 * decoder other than ByteLevel, a model other than BPE, BPE dropout / byte_fallback / unk_token /
 * subword prefixes, ByteLevel with add_prefix_space, and added tokens with lstrip, rstrip,
 * single_word or normalized set. The post-processor (which would add BOS) is ignored: encode adds
 * no special tokens, as `encode(text, add_special_tokens=False)`.
 *
 * @module
 */
import { BpeRanks } from "./bpe_ranks.ts";
import {
  checkIds,
  checkMaxLength,
  checkText,
  checkTokenId,
  type DecodeStream,
  type EncodeOptions,
  type Tokenizer,
} from "./tokenizer.ts";

const GPT2_PATTERN = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
const encoder = new TextEncoder();

/** GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the rest to U+0100 upward. */
function byteToUnicode(): string[] {
  const table = new Array<string>(256);
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    table[b] = String.fromCharCode(printable ? b : next++);
  }
  return table;
}
const BYTE_TO_CHAR = byteToUnicode();
const CHAR_TO_BYTE = new Map(BYTE_TO_CHAR.map((c, b) => [c, b]));

/** An ASCII letter and every character Unicode's simple case folding makes equal to it. */
function caseClass(letter: string): string {
  const lower = letter.toLowerCase();
  const extra = lower === "s" ? "\u017f" : lower === "k" ? "\u212a" : "";
  return `[${lower}${lower.toUpperCase()}${extra}]`;
}

/**
 * Oniguruma pattern to a JavaScript `v`-flag RegExp (see the module doc).
 *
 * @param pattern A tokenizer.json Split regex.
 * @returns The global RegExp that splits alike.
 */
export function toJsRegex(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    if (pattern.startsWith("(?i:", i)) {
      const end = pattern.indexOf(")", i);
      const body = pattern.slice(i + 4, end);
      if (end > 0 && /^[A-Za-z'|]*$/.test(body)) {
        out += `(?:${body.replace(/[A-Za-z]/g, caseClass)})`;
        i = end;
        continue;
      }
    }
    const c = pattern[i];
    if (c === "\\" && i + 1 < pattern.length) {
      const d = pattern[++i];
      out += d === "s" ? "\\p{White_Space}" : d === "S" ? "\\P{White_Space}" : "\\" + d;
    } else out += c;
  }
  return new RegExp(out, "gv");
}

interface AddedToken {
  id: number;
  content: string;
  special: boolean;
  lstrip?: boolean;
  rstrip?: boolean;
  single_word?: boolean;
  normalized?: boolean;
}

// deno-lint-ignore no-explicit-any
type Json = any;

/**
 * A byte-level BPE tokenizer from a `tokenizer.json`.
 *
 * @example
 * ```ts
 * import { ByteLevelBpeTokenizer } from "@xpu/ops/llm";
 * // A small GPT-2-style tokenizer.json of the repository's goldens; in practice, a model's.
 * const tokenizer = new ByteLevelBpeTokenizer(await Deno.readTextFile("llm/tokenizer/goldens/hf_gpt2_style.tokenizer.json"));
 * tokenizer.decode(tokenizer.encode("Hello 世界")); // "Hello 世界"
 * ```
 */
export class ByteLevelBpeTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosId: number | null;
  readonly unkId: null = null;
  readonly padId: number | null;
  readonly #vocab = new Map<string, number>();
  readonly #tokens: string[] = [];
  readonly #ranks: BpeRanks;
  readonly #byteIds = new Int32Array(256);
  readonly #ignoreMerges: boolean;
  readonly #nfc: boolean;
  readonly #patterns: RegExp[];
  readonly #added: AddedToken[];
  readonly #special = new Set<number>();
  /** The added tokens' contents as one alternation, longest first; null when there are none. */
  readonly #addedPattern: RegExp | null;
  readonly #addedIds = new Map<string, number>();
  readonly #tokenBytes: Uint8Array[] = [];
  readonly #cache = new Map<string, number[]>();
  #symbols = new Int32Array(256);

  /**
   * Loads a tokenizer.json, refusing what this reader does not implement (see the module doc).
   *
   * @param json The tokenizer.json text, or its parsed object.
   * @param specialIds Which added tokens are BOS, EOS and padding, by content (e.g. Llama 3's
   *   "<|begin_of_text|>"); tokenizer.json does not say, only the model's configs do.
   */
  constructor(json: string | Json, specialIds: { bos?: string; eos?: string; pad?: string } = {}) {
    const who = "ByteLevelBpeTokenizer";
    const config = typeof json === "string" ? parseJson(who, json) : json;
    if (config === null || typeof config !== "object" || Array.isArray(config)) {
      throw new Error(`${who}: json must be tokenizer.json's text or its parsed object, got ${String(config)}`);
    }
    const refuse = (what: string) => {
      throw new Error(`${who}: ${what} is not implemented`);
    };
    if (config.normalizer && config.normalizer.type !== "NFC") refuse(`normalizer "${config.normalizer.type}"`);
    this.#nfc = config.normalizer?.type === "NFC";
    const model = config.model;
    if (model?.type !== "BPE") refuse(`model "${model?.type}"`);
    if (model.dropout) refuse("BPE dropout");
    if (model.byte_fallback) refuse("BPE byte_fallback");
    if (model.unk_token) refuse("BPE unk_token");
    if (model.continuing_subword_prefix || model.end_of_word_suffix) refuse("a BPE subword prefix/suffix");
    if (config.decoder?.type !== "ByteLevel") refuse(`decoder "${config.decoder?.type}"`);
    this.#ignoreMerges = model.ignore_merges === true;
    const pre = config.pre_tokenizer;
    const steps: Json[] = pre?.type === "Sequence" ? pre.pretokenizers : pre ? [pre] : [];
    this.#patterns = [];
    for (const step of steps) {
      if (step.type === "Split") {
        if (step.behavior !== "Isolated" || step.invert) {
          refuse(`Split with behavior ${step.behavior}/invert ${step.invert}`);
        }
        if (typeof step.pattern?.Regex !== "string") refuse("Split with a string pattern");
        this.#patterns.push(toJsRegex(step.pattern.Regex));
      } else if (step.type === "ByteLevel") {
        if (step.add_prefix_space) refuse("ByteLevel add_prefix_space");
        if (step.use_regex) this.#patterns.push(toJsRegex(GPT2_PATTERN));
      } else refuse(`pre-tokenizer "${step.type}"`);
    }
    if (!steps.some((s) => s.type === "ByteLevel")) refuse("a pre-tokenizer without ByteLevel");
    for (const [token, id] of Object.entries(model.vocab as Record<string, number>)) {
      this.#vocab.set(token, id);
      this.#tokens[id] = token;
    }
    this.#added = (config.added_tokens ?? []) as AddedToken[];
    for (const t of this.#added) {
      if (t.lstrip || t.rstrip || t.single_word || t.normalized) {
        refuse(`added token "${t.content}" with lstrip/rstrip/single_word/normalized`);
      }
      if (t.content === "") refuse(`an empty added token (id ${t.id})`);
      this.#tokens[t.id] = t.content;
      if (t.special) this.#special.add(t.id);
    }
    this.vocabSize = this.#tokens.length;
    for (let id = 0; id < this.vocabSize; id++) {
      if (this.#tokens[id] === undefined) throw new Error(`${who}: id ${id} has no token`);
    }
    // Longest first: JavaScript takes the first alternative that matches at the leftmost position,
    // which then is the longest added token there (upstream's leftmost-longest).
    const longestFirst = [...this.#added].sort((a, b) => b.content.length - a.content.length);
    for (const t of longestFirst) this.#addedIds.set(t.content, t.id);
    const escape = (s: string) => s.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
    this.#addedPattern = longestFirst.length === 0
      ? null
      : new RegExp(longestFirst.map((t) => escape(t.content)).join("|"), "gu");
    const merges = (model.merges as (string | [string, string])[]).map((merge, rank): [number, number, number] => {
      const [a, b] = typeof merge === "string" ? merge.split(" ") : merge;
      const left = this.#vocab.get(a), right = this.#vocab.get(b), merged = this.#vocab.get(a + b);
      if (left === undefined || right === undefined || merged === undefined) {
        throw new Error(`${who}: merge ${rank} "${a} ${b}" names a token not in the vocabulary`);
      }
      return [left, right, merged];
    });
    this.#ranks = new BpeRanks(merges);
    BYTE_TO_CHAR.forEach((c, b) => this.#byteIds[b] = this.#vocab.get(c) ?? -1);
    const addedIds = new Set(this.#added.map((t) => t.id));
    for (let id = 0; id < this.vocabSize; id++) {
      const token = this.#tokens[id];
      this.#tokenBytes.push(addedIds.has(id) ? encoder.encode(token) : this.#bytesOf(token));
    }
    const find = (content: string | undefined) =>
      content === undefined ? null : this.#added.find((t) => t.content === content)?.id ?? null;
    this.bosId = find(specialIds.bos);
    this.eosId = find(specialIds.eos);
    this.padId = find(specialIds.pad);
  }

  #bytesOf(token: string): Uint8Array {
    const bytes: number[] = [];
    for (const c of token) {
      const b = CHAR_TO_BYTE.get(c);
      // Upstream's ByteLevel decoder: a token with a character outside the table keeps its UTF-8.
      if (b === undefined) return encoder.encode(token);
      bytes.push(b);
    }
    return new Uint8Array(bytes);
  }

  /**
   * Encodes text (no special tokens added).
   *
   * @param text Any string.
   * @param options maxLength truncates on the right, as transformers' `truncation=True,
   *   max_length=...`.
   * @returns The ids `tokenizer.encode(text, add_special_tokens=False).ids` returns.
   */
  encode(text: string, options?: EncodeOptions): number[] {
    checkText("ByteLevelBpeTokenizer.encode", text);
    const maxLength = checkMaxLength("ByteLevelBpeTokenizer.encode", options);
    const ids: number[] = [];
    const well = text.toWellFormed();
    const added = this.#addedPattern;
    if (added === null) this.#encodePlain(well, ids);
    else {
      let last = 0;
      added.lastIndex = 0;
      for (let m = added.exec(well); m !== null; m = added.exec(well)) {
        this.#encodePlain(well.slice(last, m.index), ids);
        ids.push(this.#addedIds.get(m[0])!);
        last = added.lastIndex;
      }
      this.#encodePlain(well.slice(last), ids);
    }
    if (ids.length > maxLength) ids.length = maxLength;
    return ids;
  }

  /** Normalizes text that holds no added token, then splits and encodes it into `ids`. */
  #encodePlain(text: string, ids: number[]): void {
    if (text === "") return;
    this.#split(this.#nfc ? text.normalize("NFC") : text, 0, ids);
  }

  /**
   * Splits `text` by pattern `level` (matches and the gaps between them are pieces), each piece
   * by the next pattern, and BPE-encodes the final pieces into `ids`.
   */
  #split(text: string, level: number, ids: number[]): void {
    if (level === this.#patterns.length) {
      let word = this.#cache.get(text);
      if (word === undefined) {
        word = this.#bpe(text);
        if (this.#cache.size >= 50_000) this.#cache.clear();
        this.#cache.set(text, word);
      }
      for (let i = 0; i < word.length; i++) ids.push(word[i]);
      return;
    }
    const pattern = this.#patterns[level];
    pattern.lastIndex = 0;
    let last = 0;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      const end = pattern.lastIndex;
      if (end === m.index) {
        // An empty match splits nothing; step over one code point, as matchAll does.
        pattern.lastIndex = end + (text.codePointAt(end)! > 0xffff ? 2 : 1);
        continue;
      }
      if (m.index > last) this.#split(text.slice(last, m.index), level + 1, ids);
      this.#split(m[0], level + 1, ids);
      last = end;
      pattern.lastIndex = end; // the recursion above may have used a pattern of a deeper level only
    }
    if (last < text.length) this.#split(last === 0 ? text : text.slice(last), level + 1, ids);
  }

  /** BPE of one pre-token (well-formed UTF-16) over its UTF-8 bytes. */
  #bpe(piece: string): number[] {
    if (this.#ignoreMerges) {
      let mapped = "";
      for (const b of encoder.encode(piece)) mapped += BYTE_TO_CHAR[b];
      const whole = this.#vocab.get(mapped);
      if (whole !== undefined) return [whole];
    }
    if (this.#symbols.length < 3 * piece.length) this.#symbols = new Int32Array(6 * piece.length);
    const symbols = this.#symbols;
    const byteIds = this.#byteIds;
    let n = 0;
    for (let i = 0; i < piece.length; i++) {
      let c = piece.charCodeAt(i);
      if (c < 0x80) symbols[n++] = byteIds[c];
      else if (c < 0x800) {
        symbols[n++] = byteIds[0xc0 | (c >> 6)];
        symbols[n++] = byteIds[0x80 | (c & 0x3f)];
      } else if (c >= 0xd800 && c < 0xdc00) {
        c = 0x10000 + ((c - 0xd800) << 10) + (piece.charCodeAt(++i) - 0xdc00);
        symbols[n++] = byteIds[0xf0 | (c >> 18)];
        symbols[n++] = byteIds[0x80 | ((c >> 12) & 0x3f)];
        symbols[n++] = byteIds[0x80 | ((c >> 6) & 0x3f)];
        symbols[n++] = byteIds[0x80 | (c & 0x3f)];
      } else {
        symbols[n++] = byteIds[0xe0 | (c >> 12)];
        symbols[n++] = byteIds[0x80 | ((c >> 6) & 0x3f)];
        symbols[n++] = byteIds[0x80 | (c & 0x3f)];
      }
    }
    for (let i = 0; i < n; i++) {
      if (symbols[i] < 0) {
        const missing = encoder.encode(piece).find((b) => byteIds[b] < 0)!;
        throw new Error(
          `ByteLevelBpeTokenizer: byte character "${BYTE_TO_CHAR[missing]}" is not in the vocabulary`,
        );
      }
    }
    return this.#ranks.merge(symbols, n);
  }

  /**
   * Decodes ids.
   *
   * @param ids Token ids.
   * @param options skipSpecialTokens drops special added tokens, as upstream's
   *   `skip_special_tokens=True`; the default keeps them (transformers' default).
   * @returns The text upstream's decode returns.
   */
  decode(ids: readonly number[], options: { skipSpecialTokens?: boolean } = {}): string {
    checkIds("ByteLevelBpeTokenizer.decode", ids);
    const stream = this.decodeStream(options);
    let text = "";
    for (const id of ids) text += stream.push(id);
    return text + stream.flush();
  }

  /**
   * Starts a streaming decode.
   *
   * @param options As for decode.
   * @returns A streaming decoder; its output, concatenated, is `decode(ids, options)`.
   */
  decodeStream(options: { skipSpecialTokens?: boolean } = {}): DecodeStream {
    const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });
    return {
      push: (id: number): string => {
        checkTokenId("ByteLevelBpeTokenizer.decode", id, this.vocabSize);
        if (options.skipSpecialTokens && this.#special.has(id)) return "";
        return utf8.decode(this.#tokenBytes[id], { stream: true });
      },
      flush: (): string => utf8.decode(),
    };
  }

  /**
   * The token of one id.
   *
   * @param id A token id.
   * @returns The token as tokenizer.json spells it (bytes in GPT-2's alphabet, "Ġ" for a space).
   */
  idToToken(id: number): string {
    checkTokenId("ByteLevelBpeTokenizer.idToToken", id, this.vocabSize);
    return this.#tokens[id];
  }

  /**
   * The bytes one id decodes to.
   *
   * @param id A token id.
   * @returns Its bytes.
   */
  tokenBytes(id: number): Uint8Array {
    checkTokenId("ByteLevelBpeTokenizer.tokenBytes", id, this.vocabSize);
    return this.#tokenBytes[id];
  }
}

/** Parses tokenizer.json's text, naming it when it is not JSON. */
function parseJson(who: string, text: string): Json {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new Error(`${who}: json is not tokenizer.json's text: ${(e as Error).message}`);
  }
}
