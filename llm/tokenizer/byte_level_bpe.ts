/**
 * Hugging Face `tokenizer.json` byte-level BPE — the GPT-2 / Llama 3 / Qwen family — encoding
 * and decoding exactly as the `tokenizers` package (0.23.2, the fixtures' version) does.
 *
 * Pipeline, in upstream's order: split the text on added tokens (leftmost, longest first; each
 * becomes its own id); pre-tokenize the rest with the Split regex and/or ByteLevel's GPT-2 regex
 * ("isolated": matches and the gaps between them are pieces); map each piece's UTF-8 bytes through
 * GPT-2's byte-to-unicode table; run BPE on it (lowest merge rank first, ties to the leftmost pair,
 * as upstream's heap orders them; with `ignore_merges`, a piece the vocabulary holds whole is one
 * id). Decode maps tokens back to bytes and replaces invalid UTF-8 as Rust's from_utf8_lossy does
 * (one U+FFFD per maximal invalid subsequence, which is also TextDecoder's rule).
 *
 * The regex is upstream's Oniguruma pattern run by JavaScript's engine with the `v` flag, with one
 * rewrite: `\s` / `\S` become `\p{White_Space}` / `\P{White_Space}`, because Oniguruma's `\s` is
 * the White_Space property (it includes U+0085, excludes U+FEFF) and JavaScript's is not (the
 * reverse). The fixtures hold U+0085 and U+FEFF only where both readings split alike, so this
 * rewrite rests on Oniguruma's documentation, not on a fixture. Everything else in the GPT-2 and
 * Llama 3 patterns means the same in both engines, which the fixtures check.
 *
 * Refused at load, by name: a normalizer, a pre-tokenizer other than Split/ByteLevel (alone or in a
 * Sequence), a Split that is not "Isolated" or is inverted, a decoder other than ByteLevel, a model
 * other than BPE, BPE dropout / byte_fallback / unk_token / subword prefixes, ByteLevel with
 * add_prefix_space, and added tokens with lstrip, rstrip, single_word or normalized set. The
 * post-processor (which would add BOS) is ignored: encode adds no special tokens, as
 * `encode(text, add_special_tokens=False)`.
 *
 * @module
 */
import { checkTokenId, type DecodeStream, type Tokenizer } from "./tokenizer.ts";

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

/** Oniguruma pattern to a JavaScript `v`-flag RegExp (see the module doc). */
function toJsRegex(pattern: string): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
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
  readonly padId: number | null = null;
  readonly #vocab = new Map<string, number>();
  readonly #tokens: string[] = [];
  readonly #merges = new Map<number, number>(); // pairKey(a, b) -> rank * 2^21 + merged id
  readonly #ignoreMerges: boolean;
  readonly #patterns: RegExp[];
  readonly #added: AddedToken[];
  readonly #special = new Set<number>();
  readonly #addedLeads: Set<number>;
  readonly #tokenBytes: Uint8Array[] = [];
  readonly #cache = new Map<string, number[]>();

  /**
   * Loads a tokenizer.json, refusing what this reader does not implement (see the module doc).
   *
   * @param json The tokenizer.json text, or its parsed object.
   * @param specialIds Which added tokens are BOS and EOS, by content (e.g. Llama 3's
   *   "<|begin_of_text|>"); tokenizer.json does not say, only the model's config does.
   */
  constructor(json: string | Json, specialIds: { bos?: string; eos?: string } = {}) {
    const config = typeof json === "string" ? JSON.parse(json) : json;
    const who = "ByteLevelBpeTokenizer";
    const refuse = (what: string) => {
      throw new Error(`${who}: ${what} is not implemented`);
    };
    if (config.normalizer) refuse(`normalizer "${config.normalizer.type}"`);
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
      this.#tokens[t.id] = t.content;
      if (t.special) this.#special.add(t.id);
    }
    this.vocabSize = this.#tokens.length;
    for (let id = 0; id < this.vocabSize; id++) {
      if (this.#tokens[id] === undefined) throw new Error(`${who}: id ${id} has no token`);
    }
    // Longest first, so the scan below finds the longest token at each position.
    this.#added.sort((a, b) => b.content.length - a.content.length);
    this.#addedLeads = new Set(this.#added.map((t) => t.content.charCodeAt(0)));
    (model.merges as (string | [string, string])[]).forEach((merge, rank) => {
      const [a, b] = typeof merge === "string" ? merge.split(" ") : merge;
      const left = this.#vocab.get(a), right = this.#vocab.get(b), merged = this.#vocab.get(a + b);
      if (left === undefined || right === undefined || merged === undefined) {
        throw new Error(`${who}: merge ${rank} "${a} ${b}" names a token not in the vocabulary`);
      }
      this.#merges.set(left * 0x200000 + right, rank * 0x200000 + merged);
    });
    for (let id = 0; id < this.vocabSize; id++) {
      const token = this.#tokens[id];
      const added = this.#added.find((t) => t.id === id);
      this.#tokenBytes.push(added ? encoder.encode(token) : this.#bytesOf(token));
    }
    const find = (content: string | undefined) =>
      content === undefined ? null : this.#added.find((t) => t.content === content)?.id ?? null;
    this.bosId = find(specialIds.bos);
    this.eosId = find(specialIds.eos);
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
   * @returns The ids `tokenizer.encode(text, add_special_tokens=False).ids` returns.
   */
  encode(text: string): number[] {
    const ids: number[] = [];
    let plainStart = 0;
    const leads = this.#addedLeads;
    for (let pos = 0; pos < text.length;) {
      const token = leads.has(text.charCodeAt(pos))
        ? this.#added.find((t) => text.startsWith(t.content, pos))
        : undefined;
      if (!token) {
        pos++;
        continue;
      }
      this.#encodePlain(text.slice(plainStart, pos), ids);
      ids.push(token.id);
      pos += token.content.length;
      plainStart = pos;
    }
    this.#encodePlain(text.slice(plainStart), ids);
    return ids;
  }

  #encodePlain(text: string, ids: number[]): void {
    if (text === "") return;
    let pieces = [text];
    for (const pattern of this.#patterns) {
      const next: string[] = [];
      for (const piece of pieces) {
        let last = 0;
        for (const m of piece.matchAll(pattern)) {
          if (m.index > last) next.push(piece.slice(last, m.index));
          if (m[0].length > 0) next.push(m[0]);
          last = m.index + m[0].length;
        }
        if (last < piece.length) next.push(piece.slice(last));
      }
      pieces = next;
    }
    for (const piece of pieces) {
      let word = this.#cache.get(piece);
      if (!word) {
        word = this.#bpe(piece);
        if (this.#cache.size > 50_000) this.#cache.clear();
        this.#cache.set(piece, word);
      }
      for (const id of word) ids.push(id);
    }
  }

  #bpe(piece: string): number[] {
    let mapped = "";
    for (const b of encoder.encode(piece)) mapped += BYTE_TO_CHAR[b];
    if (this.#ignoreMerges) {
      const whole = this.#vocab.get(mapped);
      if (whole !== undefined) return [whole];
    }
    const symbols: number[] = [];
    for (const c of mapped) {
      const id = this.#vocab.get(c);
      if (id === undefined) throw new Error(`ByteLevelBpeTokenizer: byte character "${c}" is not in the vocabulary`);
      symbols.push(id);
    }
    // Merge the lowest-ranked adjacent pair, leftmost first, until none is in the merge table.
    // Upstream uses a heap; a scan per merge gives the same order and the words are short.
    for (;;) {
      let best = -1;
      let bestValue = Infinity;
      for (let i = 0; i + 1 < symbols.length; i++) {
        const value = this.#merges.get(symbols[i] * 0x200000 + symbols[i + 1]);
        if (value !== undefined && value < bestValue) {
          bestValue = value;
          best = i;
        }
      }
      if (best < 0) return symbols;
      symbols.splice(best, 2, bestValue % 0x200000);
    }
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
