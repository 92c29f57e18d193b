/**
 * SentencePiece's normalizer, as sentencepiece 0.2's `normalizer::Normalizer` runs it.
 *
 * The rule a model was trained with ("nfkc", "nmt_nfkc", "identity", a custom TSV...) is stored
 * in the model as a *precompiled charsmap*: a Darts-clone double-array trie over UTF-8 byte
 * strings whose values point into a table of NUL-terminated replacements. Normalizing is a
 * greedy left-to-right rewrite: at each position take the longest key the trie holds and emit its
 * replacement, else copy one character. This module executes that table rather than calling
 * `String.prototype.normalize("NFKC")`. On the fixtures' text, "nfkc"'s table and the runtime's
 * NFKC agree character for character, so recognising the name and calling normalize would pass
 * today; but the table is what upstream runs, its Unicode version is the trainer's rather than the
 * runtime's, and the same code then runs every other rule exactly — "nmt_nfkc" (tabs, newlines,
 * controls, zero-width and BOM characters to spaces, as the fixture pins), "nfkc_cf", a custom
 * TSV — where a name check would have to refuse them. So no rule is refused by name here; the
 * tokenizer refuses what it does not execute (a rule name with no stored table, a denormalizer,
 * whitespace-as-suffix).
 *
 * User-defined symbols bypass the table (sentencepiece's PrefixMatcher), as upstream.
 *
 * @module
 */
import { ByteTrie } from "./byte_trie.ts";
import type { NormalizerSpec } from "./sentencepiece_model.ts";

/** U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's visible space, in UTF-8. */
export const SPACE_SYMBOL: Uint8Array = new Uint8Array([0xe2, 0x96, 0x81]);
const encoder = new TextEncoder();

/** Byte length of the UTF-8 character starting with `lead`, or 0 if `lead` cannot start one. */
export function utf8CharLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead < 0xe0) return 2;
  if (lead >= 0xe0 && lead < 0xf0) return 3;
  if (lead >= 0xf0 && lead < 0xf5) return 4;
  return 0;
}

/** Grows as bytes are appended; `bytes()` returns a view of what was written. */
export class ByteWriter {
  #buf: Uint8Array;
  length = 0;
  constructor(capacity: number) {
    this.#buf = new Uint8Array(Math.max(16, capacity));
  }
  #reserve(extra: number): void {
    if (this.length + extra <= this.#buf.length) return;
    const next = new Uint8Array(Math.max(this.#buf.length * 2, this.length + extra));
    next.set(this.#buf.subarray(0, this.length));
    this.#buf = next;
  }
  push(byte: number): void {
    this.#reserve(1);
    this.#buf[this.length++] = byte;
  }
  append(src: Uint8Array, start: number, end: number): void {
    this.#reserve(end - start);
    this.#buf.set(src.subarray(start, end), this.length);
    this.length += end - start;
  }
  /** Appends src[start, end), each space (0x20) written as U+2581 when `escape` is set. */
  appendEscaped(src: Uint8Array, start: number, end: number, escape: boolean): void {
    this.#reserve(3 * (end - start));
    const buf = this.#buf;
    let length = this.length;
    for (let i = start; i < end; i++) {
      const b = src[i];
      if (b === 0x20 && escape) {
        buf[length] = 0xe2, buf[length + 1] = 0x96, buf[length + 2] = 0x81;
        length += 3;
      } else buf[length++] = b;
    }
    this.length = length;
  }
  endsWith(suffix: Uint8Array): boolean {
    if (this.length < suffix.length) return false;
    for (let i = 0; i < suffix.length; i++) if (this.#buf[this.length - suffix.length + i] !== suffix[i]) return false;
    return true;
  }
  bytes(): Uint8Array {
    return this.#buf.subarray(0, this.length);
  }
}

/** A compiled normalizer for one model. */
export class SentencePieceNormalizer {
  readonly #spec: NormalizerSpec;
  readonly #trie: Uint32Array | null;
  readonly #replacements: Uint8Array;
  readonly #userDefined: ByteTrie | null;

  /**
   * @param spec The model's NormalizerSpec; its charsmap is checked for structure here.
   * @param userDefinedSymbols Pieces of type USER_DEFINED, which pass through unnormalized.
   */
  constructor(spec: NormalizerSpec, userDefinedSymbols: readonly string[]) {
    this.#spec = spec;
    const blob = spec.precompiledCharsmap;
    if (blob.length === 0) {
      this.#trie = null;
      this.#replacements = new Uint8Array(0);
    } else {
      if (blob.length < 4) throw new Error(`SentencePiece normalizer "${spec.name}": charsmap of ${blob.length} bytes`);
      const trieBytes = new DataView(blob.buffer, blob.byteOffset).getUint32(0, true);
      if (trieBytes % 4 !== 0 || 4 + trieBytes > blob.length) {
        throw new Error(
          `SentencePiece normalizer "${spec.name}": charsmap trie of ${trieBytes} bytes does not fit its ${blob.length}-byte blob`,
        );
      }
      const units = new Uint32Array(trieBytes / 4);
      const view = new DataView(blob.buffer, blob.byteOffset + 4, trieBytes);
      for (let i = 0; i < units.length; i++) units[i] = view.getUint32(i * 4, true);
      this.#trie = units;
      this.#replacements = blob.slice(4 + trieBytes);
    }
    if (userDefinedSymbols.length === 0) this.#userDefined = null;
    else {
      const trie = new ByteTrie();
      for (const symbol of userDefinedSymbols) trie.insert(encoder.encode(symbol), 1);
      this.#userDefined = trie;
    }
    // A lead byte that starts no user-defined symbol and no charsmap key: its character is copied
    // without consulting either (the common case, ASCII under NFKC).
    for (let b = 0; b < 256; b++) {
      const user = this.#userDefined !== null && this.#userDefined.child(0, b) >= 0;
      this.#plainLead[b] = user || this.#charsmapStartsWith(b) ? 0 : 1;
    }
  }
  readonly #plainLead = new Uint8Array(256);

  #charsmapStartsWith(byte: number): boolean {
    const units = this.#trie;
    if (units === null) return false;
    const unit = units[((units[0] >>> 10) << ((units[0] & (1 << 9)) >>> 6)) ^ byte];
    return unit !== undefined && (unit & 0x800000ff) >>> 0 === byte;
  }

  /** Length of the longest user-defined symbol at `pos`, or 0. */
  #userDefinedMatch(input: Uint8Array, pos: number): number {
    const trie = this.#userDefined;
    if (trie === null) return 0;
    let node = 0;
    let longest = 0;
    for (let i = pos; i < input.length; i++) {
      node = trie.child(node, input[i]);
      if (node < 0) break;
      if (trie.value(node) >= 0) longest = i + 1 - pos;
    }
    return longest;
  }

  /**
   * The longest charsmap key at `pos` (Darts-clone commonPrefixSearch, longest result).
   * Returns the consumed length, and writes the replacement's offset to `#matchValue`.
   */
  #charsmapMatch(input: Uint8Array, pos: number): number {
    const units = this.#trie;
    if (units === null) return 0;
    let nodePos = 0;
    let unit = units[0];
    nodePos ^= (unit >>> 10) << ((unit & (1 << 9)) >>> 6);
    let longest = 0;
    for (let i = pos; i < input.length; i++) {
      const c = input[i];
      nodePos ^= c;
      unit = units[nodePos];
      if (unit === undefined || (unit & 0x800000ff) >>> 0 !== c) break;
      nodePos ^= (unit >>> 10) << ((unit & (1 << 9)) >>> 6);
      if ((unit >>> 8) & 1) {
        longest = i + 1 - pos;
        this.#matchValue = units[nodePos] & 0x7fffffff;
      }
    }
    return longest;
  }
  #matchValue = 0;
  readonly #segment = new Int32Array(3);

  /**
   * Normalizes UTF-8 text.
   *
   * @param input Valid UTF-8 (what TextEncoder produces).
   * @returns The normalized bytes, with spaces escaped to U+2581 if the spec says so.
   */
  normalize(input: Uint8Array): Uint8Array {
    const spec = this.#spec;
    const n = input.length;
    const out = new ByteWriter(3 * n + 8);
    const seg = this.#segment;
    let pos = 0;
    if (spec.removeExtraWhitespaces) {
      while (pos < n) {
        const src = this.#step(input, pos);
        if (!(seg[1] - seg[0] === 1 && src[seg[0]] === 0x20)) break;
        pos += seg[2];
      }
    }
    if (pos >= n) return new Uint8Array(0);
    const space = spec.escapeWhitespaces ? SPACE_SYMBOL : new Uint8Array([0x20]);
    if (spec.addDummyPrefix) out.append(space, 0, space.length);
    let isPrevSpace = spec.removeExtraWhitespaces;
    while (pos < n) {
      const src = this.#step(input, pos);
      let start = seg[0];
      const end = seg[1];
      if (isPrevSpace) { while (start < end && src[start] === 0x20) start++; }
      if (start < end) {
        out.appendEscaped(src, start, end, spec.escapeWhitespaces);
        isPrevSpace = src[end - 1] === 0x20;
      }
      pos += seg[2];
      if (!spec.removeExtraWhitespaces) isPrevSpace = false;
    }
    if (spec.removeExtraWhitespaces) {
      while (out.endsWith(space)) out.length -= space.length;
    }
    return out.bytes();
  }

  /**
   * One step of upstream's NormalizePrefix at `pos`: a user-defined symbol, else the longest
   * charsmap key, else one character. Writes [start, end, consumed] to #segment and returns the
   * array the segment lies in (the input, or the replacement table).
   */
  #step(input: Uint8Array, pos: number): Uint8Array {
    const seg = this.#segment;
    const n = input.length;
    if (this.#plainLead[input[pos]] === 0) {
      const user = this.#userDefinedMatch(input, pos);
      if (user > 0) {
        seg[0] = pos, seg[1] = pos + user, seg[2] = user;
        return input;
      }
      const matched = this.#charsmapMatch(input, pos);
      if (matched > 0) {
        const table = this.#replacements;
        let end = this.#matchValue;
        while (end < table.length && table[end] !== 0) end++;
        seg[0] = this.#matchValue, seg[1] = end, seg[2] = matched;
        return table;
      }
    }
    const length = Math.min(utf8CharLength(input[pos]) || 1, n - pos);
    seg[0] = pos, seg[1] = pos + length, seg[2] = length;
    return input;
  }
}
