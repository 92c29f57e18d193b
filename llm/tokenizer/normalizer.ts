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

  /**
   * Normalizes UTF-8 text.
   *
   * @param input Valid UTF-8 (what TextEncoder produces).
   * @returns The normalized bytes, with spaces escaped to U+2581 if the spec says so.
   */
  normalize(input: Uint8Array): Uint8Array {
    const spec = this.#spec;
    const n = input.length;
    const out = new ByteWriter(n + (n >> 1) + 8);
    // One step: the segment to emit is src[segStart, segEnd); the input advances by `consumed`.
    let src: Uint8Array = input;
    let segStart = 0;
    let segEnd = 0;
    let consumed = 0;
    const step = (pos: number): void => {
      const user = this.#userDefinedMatch(input, pos);
      if (user > 0) {
        src = input, segStart = pos, segEnd = pos + user, consumed = user;
        return;
      }
      const matched = this.#charsmapMatch(input, pos);
      if (matched > 0) {
        src = this.#replacements;
        segStart = this.#matchValue;
        segEnd = segStart;
        while (segEnd < src.length && src[segEnd] !== 0) segEnd++;
        consumed = matched;
        return;
      }
      const length = Math.min(utf8CharLength(input[pos]) || 1, n - pos);
      src = input, segStart = pos, segEnd = pos + length, consumed = length;
    };
    let pos = 0;
    if (spec.removeExtraWhitespaces) {
      while (pos < n) {
        step(pos);
        if (!(segEnd - segStart === 1 && src[segStart] === 0x20)) break;
        pos += consumed;
      }
    }
    if (pos >= n) return new Uint8Array(0);
    const space = spec.escapeWhitespaces ? SPACE_SYMBOL : new Uint8Array([0x20]);
    if (spec.addDummyPrefix) out.append(space, 0, space.length);
    let isPrevSpace = spec.removeExtraWhitespaces;
    while (pos < n) {
      step(pos);
      let start = segStart;
      if (isPrevSpace) { while (start < segEnd && src[start] === 0x20) start++; }
      if (start < segEnd) {
        for (let i = start; i < segEnd; i++) {
          const b = src[i];
          if (b === 0x20 && spec.escapeWhitespaces) out.append(SPACE_SYMBOL, 0, 3);
          else out.push(b);
        }
        isPrevSpace = src[segEnd - 1] === 0x20;
      }
      pos += consumed;
      if (!spec.removeExtraWhitespaces) isPrevSpace = false;
    }
    if (spec.removeExtraWhitespaces) {
      while (out.endsWith(space)) out.length -= space.length;
    }
    return out.bytes();
  }
}
