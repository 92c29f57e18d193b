/**
 * SentencePiece in TypeScript: reads a `.model` file and encodes and decodes exactly as the
 * `sentencepiece` package (0.2.2, the version the fixtures were made with) does, with no wasm and
 * no dependency.
 *
 * Implemented, each checked against the package on committed fixtures: unigram (Viterbi over the
 * piece lattice, f32 scores summed in f32 as upstream, user-defined symbols scored
 * `length * max_score - 0.1`) and BPE (highest-score pair first, ties to the leftmost); byte
 * fallback; user-defined symbols (never normalized, never split) and control symbols (never
 * produced by encode, invisible in decode); consecutive unknown characters merged into one
 * `<unk>`; the stored normalizer (see normalizer.ts: the model's own charsmap is executed, so
 * "nfkc", "nmt_nfkc" and "identity" all reproduce upstream) with add_dummy_prefix,
 * remove_extra_whitespaces and escape_whitespaces; decode's rules (leading U+2581 dropped from the
 * first piece, byte pieces reassembled with one U+FFFD per invalid byte, `<unk>` as " ⁇ ").
 *
 * T5 (the tokenizer of Anima's LLM adapter) is such a model: `spiece.model`, unigram over 32,000
 * pieces with the nmt_nfkc charsmap and no byte fallback. `encode(text, { addEos: true })` appends
 * its `</s>` (id 1) as transformers' T5 tokenizers do, and `maxLength` truncates on the right
 * keeping that EOS last, as `truncation=True, max_length=n` (t5.test.ts; the corpus test holds
 * both to sentencepiece and transformers). One difference from T5TokenizerFast is by design: this
 * is sentencepiece, so text that spells a control or added token (`</s>`, `<pad>`,
 * `<extra_id_0>`) is encoded as plain text, where T5's tokenizer.json matches it as that token.
 *
 * Refused at load, by name: model types "word" and "char"; `treat_whitespace_as_suffix`; a
 * denormalizer with a rule; a normalizer name other than "identity" with no compiled charsmap;
 * UNUSED pieces (upstream skips them in unigram and re-splits them in BPE; no fixture exercises
 * either, so neither is claimed).
 *
 * @module
 */
import { ByteTrie } from "./byte_trie.ts";
import { bpeSegments } from "./sentencepiece_bpe.ts";
import { ByteWriter, SentencePieceNormalizer, utf8CharLength } from "./normalizer.ts";
import { type PieceType, readSentencePieceModel, type SentencePieceModel } from "./sentencepiece_model.ts";
import {
  checkIds,
  checkMaxLength,
  checkText,
  checkTokenId,
  type DecodeStream,
  type EncodeOptions,
  type Tokenizer,
} from "./tokenizer.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const FLT_MAX = 3.4028234663852886e38;
const FLT_MIN = 1.1754943508222875e-38;
const UNK_PENALTY = 10;
const REPLACEMENT = new Uint8Array([0xef, 0xbf, 0xbd]);
/** Words whose BPE segments are kept (the cache is emptied when it fills). */
const WORD_CACHE_SIZE = 1 << 16;

/** Length of the valid UTF-8 character at `bytes[pos]` by sentencepiece's DecodeUTF8, or 0. */
function validCharLength(bytes: ArrayLike<number>, pos: number, end: number): number {
  const b0 = bytes[pos];
  const len = end - pos;
  if (b0 < 0x80) return 1;
  const trail = (i: number) => (bytes[pos + i] & 0xc0) === 0x80;
  const valid = (cp: number) => cp < 0xd800 || (cp >= 0xe000 && cp <= 0x10ffff);
  if (len >= 2 && (b0 & 0xe0) === 0xc0 && trail(1)) {
    const cp = ((b0 & 0x1f) << 6) | (bytes[pos + 1] & 0x3f);
    if (cp >= 0x80) return 2;
  } else if (len >= 3 && (b0 & 0xf0) === 0xe0 && trail(1) && trail(2)) {
    const cp = ((b0 & 0x0f) << 12) | ((bytes[pos + 1] & 0x3f) << 6) | (bytes[pos + 2] & 0x3f);
    if (cp >= 0x800 && valid(cp)) return 3;
  } else if (len >= 4 && (b0 & 0xf8) === 0xf0 && trail(1) && trail(2) && trail(3)) {
    const cp = ((b0 & 0x07) << 18) | ((bytes[pos + 1] & 0x3f) << 12) | ((bytes[pos + 2] & 0x3f) << 6) |
      (bytes[pos + 3] & 0x3f);
    if (cp >= 0x10000 && valid(cp)) return 4;
  }
  return 0;
}

/** How many bytes sentencepiece's DecodeUTF8 wants before it can judge the character at a lead byte. */
function declaredLength(lead: number): number {
  if ((lead & 0xe0) === 0xc0) return 2;
  if ((lead & 0xf0) === 0xe0) return 3;
  if ((lead & 0xf8) === 0xf0) return 4;
  return 1;
}

/**
 * A SentencePiece model, loaded from its `.model` bytes.
 *
 * @example
 * ```ts
 * import { SentencePieceTokenizer } from "@xpu/ops/llm";
 * // A small unigram model of the repository's goldens; in practice, a model's tokenizer.model.
 * const tokenizer = new SentencePieceTokenizer(await Deno.readFile("llm/tokenizer/goldens/sp_unigram_nfkc.model"));
 * const ids = tokenizer.encode("こんにちは, world");
 * tokenizer.decode(ids); // "こんにちは, world"
 * ```
 */
export class SentencePieceTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly bosId: number | null;
  readonly eosId: number | null;
  readonly unkId: number;
  readonly padId: number | null;
  /** The parsed model file. */
  readonly model: SentencePieceModel;
  readonly #normalizer: SentencePieceNormalizer;
  readonly #pieces: ByteTrie;
  readonly #reserved = new Map<string, number>();
  readonly #types: PieceType[];
  readonly #isUserDefined: Uint8Array;
  readonly #userDefinedPieces: ByteTrie | null;
  readonly #scores: Float32Array;
  /**
   * BPE runs word by word (a word: U+2581 and what follows it up to the next U+2581), with a cache
   * of each word's segments, when no piece has U+2581 past its first character: then no merge can
   * join two words, and words merge independently, so the result is the whole string's.
   */
  readonly #bpeByWord: boolean;
  readonly #wordCache = new Map<string, number[]>();
  readonly #byteIds: Int32Array;
  readonly #byteOfId: Int32Array;
  readonly #minScore: number;
  readonly #maxScore: number;
  readonly #tokenBytes: Uint8Array[];
  readonly #stripLeadingSpace: boolean;

  /**
   * Loads a model, refusing what this reader does not implement (see the module doc).
   *
   * @param model The `.model` file's bytes, or a model already parsed by readSentencePieceModel.
   */
  constructor(model: Uint8Array | SentencePieceModel) {
    const who = "SentencePieceTokenizer";
    const m = model instanceof Uint8Array ? parseModel(who, model) : model;
    if (m === null || typeof m !== "object" || typeof m.modelType !== "string" || !Array.isArray(m.pieces)) {
      const given = m === null || typeof m !== "object" ? String(m) : m.constructor?.name ?? "an object";
      throw new Error(
        `${who}: model must be a .model file's bytes (a Uint8Array) or a SentencePieceModel, got ${given}`,
      );
    }
    this.model = m;
    if (m.modelType !== "unigram" && m.modelType !== "bpe") {
      throw new Error(`${who}: model type "${m.modelType}" is not implemented (only "unigram" and "bpe")`);
    }
    if (m.treatWhitespaceAsSuffix) throw new Error(`${who}: treat_whitespace_as_suffix is not implemented`);
    if (m.denormalizer && m.denormalizer.precompiledCharsmap.length > 0) {
      throw new Error(`${who}: denormalizer "${m.denormalizer.name}" is not implemented`);
    }
    const spec = m.normalizer;
    if (spec.precompiledCharsmap.length === 0 && spec.name !== "identity" && spec.name !== "") {
      throw new Error(
        `${who}: normalizer "${spec.name}" has no precompiled charsmap in the model; only a stored charsmap or "identity" can be run`,
      );
    }
    const n = m.pieces.length;
    this.vocabSize = n;
    this.#pieces = new ByteTrie();
    this.#types = m.pieces.map((p) => p.type);
    this.#isUserDefined = new Uint8Array(m.pieces.map((p) => (p.type === "user_defined" ? 1 : 0)));
    this.#scores = new Float32Array(m.pieces.map((p) => p.score));
    this.#byteIds = new Int32Array(256).fill(-1);
    this.#byteOfId = new Int32Array(n).fill(-1);
    this.#tokenBytes = [];
    let unkId = -1;
    let minScore = FLT_MAX;
    let maxScore = FLT_MIN;
    const userDefined: string[] = [];
    const seen = new Set<string>();
    m.pieces.forEach(({ piece, type, score }, id) => {
      if (piece === "") throw new Error(`${who}: piece ${id} is empty`);
      if (seen.has(piece)) throw new Error(`${who}: piece "${piece}" is defined twice`);
      seen.add(piece);
      if (type === "unused") throw new Error(`${who}: UNUSED piece "${piece}" (id ${id}) is not implemented`);
      if (type === "normal" || type === "user_defined") this.#pieces.insert(encoder.encode(piece), id);
      else this.#reserved.set(piece, id);
      if (type === "normal") {
        minScore = Math.min(minScore, score);
        maxScore = Math.max(maxScore, score);
      }
      if (type === "user_defined") userDefined.push(piece);
      if (type === "unknown") {
        if (unkId >= 0) throw new Error(`${who}: two unknown pieces, ${unkId} and ${id}`);
        unkId = id;
      }
      if (type === "byte") {
        const match = /^<0x([0-9A-F]{2})>$/.exec(piece);
        if (!m.byteFallback) throw new Error(`${who}: byte piece "${piece}" in a model without byte_fallback`);
        if (!match) throw new Error(`${who}: byte piece "${piece}" is not of the form <0xHH>`);
        const byte = parseInt(match[1], 16);
        this.#byteIds[byte] = id;
        this.#byteOfId[id] = byte;
      }
      this.#tokenBytes.push(
        type === "byte"
          ? new Uint8Array([this.#byteOfId[id]])
          : type === "control"
          ? new Uint8Array(0)
          : type === "unknown"
          ? encoder.encode(m.unkSurface)
          : encoder.encode(piece.replaceAll("\u2581", " ")),
      );
    });
    if (unkId < 0) throw new Error(`${who}: the model has no unknown piece`);
    if (m.byteFallback && this.#byteIds.includes(-1)) {
      throw new Error(
        `${who}: byte_fallback is set but byte piece <0x${this.#byteIds.indexOf(-1).toString(16)}> is missing`,
      );
    }
    this.unkId = unkId;
    this.#minScore = minScore;
    this.#maxScore = maxScore;
    const control = (piece: string): number | null => {
      const id = this.#reserved.get(piece);
      return id !== undefined && this.#types[id] === "control" ? id : null;
    };
    this.bosId = control(m.bosPiece);
    this.eosId = control(m.eosPiece);
    this.padId = control(m.padPiece);
    this.#normalizer = new SentencePieceNormalizer(spec, userDefined);
    this.#userDefinedPieces = userDefined.length > 0 ? new ByteTrie() : null;
    userDefined.forEach((piece) => this.#userDefinedPieces!.insert(encoder.encode(piece), 0));
    this.#stripLeadingSpace = spec.addDummyPrefix || spec.removeExtraWhitespaces;
    this.#bpeByWord = m.modelType === "bpe" &&
      m.pieces.every((p) => (p.type !== "normal" && p.type !== "user_defined") || !p.piece.includes("\u2581", 1));
  }

  /**
   * Encodes text.
   *
   * @param text Any string (lone surrogates become U+FFFD, as TextEncoder does).
   * @param options addEos appends the model's EOS id, as T5's tokenizers do (`tokenizer(text)`
   *   in transformers; the id sentencepiece's `encode(text, add_eos=True)` appends); maxLength
   *   truncates on the right and, with addEos, keeps the EOS last, as transformers'
   *   `truncation=True, max_length=...`.
   * @returns The ids sentencepiece's `encode(text)` returns, then the EOS if asked for.
   * @example T5 (the tokenizer of Anima's LLM adapter): `</s>` (id 1) closes every text
   * ```ts
   * import { SentencePieceTokenizer } from "@xpu/ops/llm";
   * const t5 = new SentencePieceTokenizer(await Deno.readFile("llm/fixtures/t5-tokenizer/spiece.model"));
   * t5.encode("a cat", { addEos: true }); // [3, 9, 1712, 1]: "▁", "a", "▁cat", "</s>"
   * t5.encode("a cat", { addEos: true, maxLength: 2 }); // [3, 1]
   * ```
   */
  encode(text: string, options?: EncodeOptions & { addEos?: boolean }): number[] {
    checkText("SentencePieceTokenizer.encode", text);
    const maxLength = checkMaxLength("SentencePieceTokenizer.encode", options, ["addEos"]);
    const eos = options?.addEos ? this.eosId : null;
    if (options?.addEos && eos === null) {
      throw new Error(`SentencePieceTokenizer.encode: addEos, but the model has no EOS piece "${this.model.eosPiece}"`);
    }
    const ids = this.#encode(text);
    const room = eos === null ? maxLength : maxLength - 1;
    if (ids.length > room) ids.length = room;
    if (eos !== null) ids.push(eos);
    return ids;
  }

  #encode(text: string): number[] {
    const normalized = this.#normalizer.normalize(encoder.encode(text));
    const segments = this.model.modelType === "bpe" ? this.#bpe(normalized) : this.#viterbi(normalized);
    // segments: [id, start, end] triples; merge runs of unknowns, then apply byte fallback.
    const ids: number[] = [];
    const unk = this.unkId;
    for (let i = 0; i < segments.length; i += 3) {
      const id = segments[i];
      if (id !== unk) {
        ids.push(id);
        continue;
      }
      const start = segments[i + 1];
      let end = segments[i + 2];
      while (i + 3 < segments.length && segments[i + 3] === unk) {
        end = segments[i + 5];
        i += 3;
      }
      if (this.model.byteFallback) { for (let b = start; b < end; b++) ids.push(this.#byteIds[normalized[b]]); }
      else ids.push(unk);
    }
    return ids;
  }

  #viterbi(s: Uint8Array): number[] {
    const size = s.length;
    const bestScore = new Float32Array(size + 1);
    const startsAt = new Int32Array(size + 1).fill(-1);
    const bestId = new Int32Array(size + 1);
    const trie = this.#pieces;
    const userDefined = this.#isUserDefined;
    const scores = this.#scores;
    const unkScore = Math.fround(this.#minScore - UNK_PENALTY);
    const maxScore = Math.fround(this.#maxScore);
    let start = 0;
    while (start < size) {
      const tillHere = bestScore[start];
      const mblen = Math.min(utf8CharLength(s[start]) || 1, size - start);
      let hasSingleNode = false;
      let node = 0;
      for (let keyPos = start; keyPos < size;) {
        node = trie.child(node, s[keyPos++]);
        if (node < 0) break;
        const id = trie.value(node);
        if (id < 0) continue;
        const length = keyPos - start;
        // Upstream: a user-defined score is `length * max_score_ - 0.1`, a double, so the sum and
        // the comparison are in double there; a normal score is float and so is its sum.
        const candidate = userDefined[id] === 1
          ? Math.fround(length * maxScore) - 0.1 + tillHere
          : Math.fround(scores[id] + tillHere);
        if (startsAt[keyPos] === -1 || candidate > bestScore[keyPos]) {
          bestScore[keyPos] = candidate;
          startsAt[keyPos] = start;
          bestId[keyPos] = id;
        }
        if (length === mblen) hasSingleNode = true;
      }
      if (!hasSingleNode) {
        const end = start + mblen;
        const candidate = Math.fround(unkScore + tillHere);
        if (startsAt[end] === -1 || candidate > bestScore[end]) {
          bestScore[end] = candidate;
          startsAt[end] = start;
          bestId[end] = this.unkId;
        }
      }
      start += mblen;
    }
    const reversed: number[] = [];
    for (let end = size; end > 0; end = startsAt[end]) reversed.push(bestId[end], startsAt[end], end);
    const out: number[] = [];
    for (let i = reversed.length - 3; i >= 0; i -= 3) out.push(reversed[i], reversed[i + 1], reversed[i + 2]);
    return out;
  }

  #bpe(s: Uint8Array): number[] {
    let out: number[];
    if (this.#bpeByWord) {
      out = [];
      let start = 0;
      for (let i = 1; i <= s.length; i++) {
        // U+2581 is E2 96 81 in UTF-8; E2 is a lead byte, so this is a character boundary.
        if (i < s.length && !(s[i] === 0xe2 && s[i + 1] === 0x96 && s[i + 2] === 0x81)) continue;
        const segments = this.#bpeWord(s.subarray(start, i));
        for (let j = 0; j < segments.length; j += 3) {
          out.push(segments[j], segments[j + 1] + start, segments[j + 2] + start);
        }
        start = i;
      }
    } else {
      out = bpeSegments(s, this.#pieces, this.#userDefinedPieces, this.#scores);
    }
    for (let i = 0; i < out.length; i += 3) {
      if (out[i] < 0) out[i] = this.#reserved.get(decoder.decode(s.subarray(out[i + 1], out[i + 2]))) ?? this.unkId;
    }
    return out;
  }

  /** One word's BPE segments (offsets within the word), cached for words of up to 64 bytes. */
  #bpeWord(word: Uint8Array): number[] {
    if (word.length > 64) return bpeSegments(word, this.#pieces, this.#userDefinedPieces, this.#scores);
    const key = String.fromCharCode(...word);
    let segments = this.#wordCache.get(key);
    if (segments === undefined) {
      segments = bpeSegments(word, this.#pieces, this.#userDefinedPieces, this.#scores);
      if (this.#wordCache.size >= WORD_CACHE_SIZE) this.#wordCache.clear();
      this.#wordCache.set(key, segments);
    }
    return segments;
  }

  /**
   * Decodes ids.
   *
   * @param ids Token ids.
   * @returns The text sentencepiece's `decode(ids)` returns.
   */
  decode(ids: readonly number[]): string {
    checkIds("SentencePieceTokenizer.decode", ids);
    const stream = this.decodeStream();
    let text = "";
    for (const id of ids) text += stream.push(id);
    return text + stream.flush();
  }

  /**
   * Starts a streaming decode.
   *
   * @returns A streaming decoder whose output, concatenated, is `decode(ids)`.
   */
  decodeStream(): DecodeStream {
    const pending: number[] = [];
    let started = false; // has any text been produced
    // Upstream drops the leading U+2581 of the first piece; with remove_extra_whitespaces it keeps
    // dropping while nothing has been produced, without it only once.
    let isBosWs = true;
    let bosWsSeen = false;
    const emit = (final: boolean): string => {
      const out = new ByteWriter(pending.length + 3);
      let pos = 0;
      while (pos < pending.length) {
        const need = declaredLength(pending[pos]);
        if (!final && pending.length - pos < need) break;
        const length = validCharLength(pending, pos, pending.length);
        if (length > 0) {
          for (let i = 0; i < length; i++) out.push(pending[pos + i]);
          pos += length;
        } else {
          out.append(REPLACEMENT, 0, 3);
          pos += 1;
        }
      }
      pending.splice(0, pos);
      if (out.length > 0) started = true;
      return decoder.decode(out.bytes());
    };
    return {
      push: (id: number): string => {
        checkTokenId("SentencePieceTokenizer.decode", id, this.vocabSize);
        const byte = this.#byteOfId[id];
        if (byte >= 0) {
          pending.push(byte);
          return emit(false);
        }
        let text = emit(true);
        if (bosWsSeen || started) isBosWs = false;
        bosWsSeen = false;
        const type = this.#types[id];
        if (type === "control") return text;
        if (type === "unknown") text += this.model.unkSurface;
        else {
          let piece = this.model.pieces[id].piece;
          if (isBosWs && this.#stripLeadingSpace && piece.startsWith("\u2581")) {
            piece = piece.slice(1);
            bosWsSeen = !this.model.normalizer.removeExtraWhitespaces;
          }
          text += piece.replaceAll("\u2581", " ");
        }
        if (text !== "") started = true;
        return text;
      },
      flush: (): string => emit(true),
    };
  }

  /**
   * The piece of one id.
   *
   * @param id A token id.
   * @returns The piece as the model spells it (U+2581 for a space, "<0xE3>" for a byte).
   */
  idToToken(id: number): string {
    checkTokenId("SentencePieceTokenizer.idToToken", id, this.vocabSize);
    return this.model.pieces[id].piece;
  }

  /**
   * The bytes one id adds to decoded text away from the start.
   *
   * @param id A token id.
   * @returns Its bytes (U+2581 as a space; empty for control pieces).
   */
  tokenBytes(id: number): Uint8Array {
    checkTokenId("SentencePieceTokenizer.tokenBytes", id, this.vocabSize);
    return this.#tokenBytes[id];
  }
}

/** Reads a `.model` file, saying which argument is not one when its protobuf is broken. */
function parseModel(who: string, bytes: Uint8Array): SentencePieceModel {
  try {
    return readSentencePieceModel(bytes);
  } catch (e) {
    throw new Error(`${who}: model is not a SentencePiece .model file (${(e as Error).message})`);
  }
}
