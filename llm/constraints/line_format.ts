/**
 * LineFormatConstraint: a state machine for one fixed line shape — literal text, a choice from an
 * enum, more literal text, free text (forbidden characters, a maximum length), then EOS. Enough
 * for a schema like `policy: <allow|deny|review>\ntopic: <short text>`, where a grammar engine
 * would be more machinery than the shape needs.
 *
 * Literals and enum choices are tokenized once, at construction, with the codec's `encode`, and
 * generation must follow those exact tokens (a token trie per segment) — the "tokenize each
 * candidate, match forward" approach. So the enum's tokenizations must be prefix-free: if one
 * choice's tokens were a prefix of another's, reaching the end of the shorter would not say which
 * choice was made. Such a spec throws at construction. The codec's `encode` must produce tokens
 * as they appear mid-text: a SentencePiece model with add_dummy_prefix puts a U+2581 in front of
 * each literal, so pass a codec whose encode does not. A literal or choice whose tokens' bytes do
 * not spell it exactly (that prefix, or an unknown token) throws at construction.
 *
 * Free text must be the last segment (leaving it would need a delimiter the spec has no place
 * for). Its forbidden characters must be ASCII, and its maximum length counts UTF-8 bytes: both
 * are then decided per token from the token's bytes alone — an ASCII byte never occurs inside a
 * multi-byte character, so a byte-level token holding half a character can be judged exactly,
 * with no state beyond the bytes used so far. Tokens with no bytes (control tokens) are not free
 * text. EOS may end the free text at any length, including zero.
 *
 * Beyond `nextAllowed`, each state compiles once to a token mask (`mask(prefix)`: a Uint32Array
 * of vocabSize bits, bit i of word i >> 5 set when id i is allowed), cached per state, so a GPU
 * generation loop can upload a state's mask once and apply it without reading logits back.
 *
 * @module
 */
import type { Constraint, TokenCodec } from "./constraint.ts";

/** One part of the line. */
export type LineSegment =
  | { readonly kind: "literal"; readonly text: string }
  | { readonly kind: "enum"; readonly choices: readonly string[] }
  | { readonly kind: "freeText"; readonly forbiddenChars: readonly string[]; readonly maxLength: number };

/** The line's shape and the token that ends it. */
export interface LineFormatSpec {
  /** The parts of the line, in order; a freeText may only be last. */
  readonly segments: readonly LineSegment[];
  /** The token that ends the line. */
  readonly eosTokenId: number;
}

interface TrieNode {
  readonly id: number;
  readonly children: Map<number, TrieNode>;
  terminal: boolean;
}

type State =
  | { readonly kind: "trie"; readonly segment: number; readonly node: TrieNode }
  | { readonly kind: "free"; readonly used: number }
  | { readonly kind: "eos" }
  | { readonly kind: "done" }
  | { readonly kind: "illegal" };

/**
 * The constraint.
 *
 * @example
 * ```ts
 * import { LineFormatConstraint, sampleNext } from "@xpu/ops/llm";
 * // a codec with one token per ASCII character, id = char code, and EOS = 0
 * const codec = {
 *   vocabSize: 128,
 *   encode: (text: string) => [...text].map((c) => c.charCodeAt(0)),
 *   tokenBytes: (id: number) => (id === 0 ? new Uint8Array(0) : new Uint8Array([id])),
 * };
 * const constraint = new LineFormatConstraint(codec, {
 *   segments: [
 *     { kind: "literal", text: "policy: " },
 *     { kind: "enum", choices: ["allow", "deny"] },
 *   ],
 *   eosTokenId: 0,
 * });
 * const out: number[] = [];
 * for (;;) {
 *   const id = sampleNext(new Float32Array(128), out, { mode: "greedy" }, constraint);
 *   if (id === 0) break;
 *   out.push(id);
 * }
 * String.fromCharCode(...out); // "policy: allow"
 * ```
 */
export class LineFormatConstraint implements Constraint {
  readonly #codec: TokenCodec;
  readonly #eos: number;
  readonly #tries: (TrieNode | null)[] = [];
  #free: { forbidden: Set<number>; maxLength: number } | null = null;
  readonly #masks = new Map<string, Uint32Array>();
  readonly #sets = new Map<string, ReadonlySet<number>>();
  #nodes = 0;

  /**
   * Tokenizes every literal and choice once and checks the spec.
   *
   * @param codec The tokenizer, seen through encode / tokenBytes / vocabSize.
   * @param spec Segments in order, and the EOS id.
   */
  constructor(codec: TokenCodec, spec: LineFormatSpec) {
    const who = "LineFormatConstraint";
    if (
      codec === null || typeof codec !== "object" || !Number.isInteger(codec.vocabSize) ||
      typeof codec.encode !== "function" || typeof codec.tokenBytes !== "function"
    ) {
      throw new Error(
        `${who}: codec must be a TokenCodec ({ vocabSize, encode, tokenBytes }: a tokenizer), got ${String(codec)}`,
      );
    }
    this.#codec = codec;
    if (spec === null || typeof spec !== "object" || !Array.isArray(spec.segments)) {
      throw new Error(
        `${who}: spec must be { segments: [...], eosTokenId }, got ${
          spec === null || typeof spec !== "object" ? String(spec) : "segments " + String(spec.segments)
        }`,
      );
    }
    const { segments, eosTokenId } = spec;
    if (!Number.isInteger(eosTokenId) || eosTokenId < 0 || eosTokenId >= codec.vocabSize) {
      throw new Error(`${who}: eosTokenId must be an integer in [0, ${codec.vocabSize}), got ${eosTokenId}`);
    }
    this.#eos = eosTokenId;
    if (segments.length === 0) throw new Error(`${who}: segments must not be empty`);
    segments.forEach((segment, index) => {
      const kind = (segment as { kind?: unknown } | null)?.kind;
      if (kind !== "literal" && kind !== "enum" && kind !== "freeText") {
        throw new Error(`${who}: segments[${index}].kind must be "literal", "enum" or "freeText", got ${String(kind)}`);
      }
      if (kind === "literal" && typeof (segment as { text?: unknown }).text !== "string") {
        throw new Error(`${who}: segments[${index}].text must be a string`);
      }
      if (kind === "enum" && !Array.isArray((segment as { choices?: unknown }).choices)) {
        throw new Error(`${who}: segments[${index}].choices must be an array of strings`);
      }
      if (kind === "freeText" && !Array.isArray((segment as { forbiddenChars?: unknown }).forbiddenChars)) {
        throw new Error(`${who}: segments[${index}].forbiddenChars must be an array of characters`);
      }
      if (segment.kind === "freeText") {
        if (index !== segments.length - 1) {
          throw new Error(`${who}: freeText must be the last segment, found at ${index} of ${segments.length}`);
        }
        const { forbiddenChars, maxLength } = segment;
        if (!Number.isInteger(maxLength) || maxLength < 1) {
          throw new Error(`${who}: freeText maxLength must be an integer >= 1 (UTF-8 bytes), got ${maxLength}`);
        }
        const forbidden = new Set<number>();
        for (const c of forbiddenChars) {
          if (c.length !== 1 || c.charCodeAt(0) > 0x7f) {
            throw new Error(`${who}: forbiddenChars must be single ASCII characters, got ${JSON.stringify(c)}`);
          }
          forbidden.add(c.charCodeAt(0));
        }
        this.#free = { forbidden, maxLength };
        this.#tries.push(null);
        return;
      }
      const texts: readonly string[] = segment.kind === "literal" ? [segment.text] : segment.choices;
      if (texts.length === 0) throw new Error(`${who}: enum at segment ${index} has no choices`);
      const encoded = texts.map((text) => {
        const ids = codec.encode(text);
        if (ids.length === 0) {
          throw new Error(`${who}: ${JSON.stringify(text)} (segment ${index}) encodes to no tokens`);
        }
        const bytes = ids.flatMap((id) => [...codec.tokenBytes(id)]);
        const expected = new TextEncoder().encode(text);
        if (bytes.length !== expected.length || bytes.some((b, k) => b !== expected[k])) {
          throw new Error(
            `${who}: ${JSON.stringify(text)} (segment ${index}) encodes to [${ids}], whose bytes do not spell it ` +
              `(an unknown token, or a prefix the codec adds); generation could not produce it`,
          );
        }
        return ids;
      });
      encoded.forEach((a, i) =>
        encoded.forEach((b, j) => {
          if (i !== j && a.length <= b.length && a.every((id, k) => id === b[k])) {
            throw new Error(
              `${who}: enum choices must be token-prefix-free, but ${JSON.stringify(texts[i])} encodes to [${a}], ` +
                `a prefix of ${JSON.stringify(texts[j])}'s [${b}]`,
            );
          }
        })
      );
      const root = this.#node();
      for (const ids of encoded) {
        let node = root;
        for (const id of ids) {
          let child = node.children.get(id);
          if (!child) node.children.set(id, child = this.#node());
          node = child;
        }
        node.terminal = true;
      }
      this.#tries.push(root);
    });
  }

  #node(): TrieNode {
    return { id: this.#nodes++, children: new Map(), terminal: false };
  }

  #enter(segment: number): State {
    if (segment >= this.#tries.length) return { kind: "eos" };
    const root = this.#tries[segment];
    return root === null ? { kind: "free", used: 0 } : { kind: "trie", segment, node: root };
  }

  #step(state: State, token: number): State {
    switch (state.kind) {
      case "trie": {
        const child = state.node.children.get(token);
        if (!child) return { kind: "illegal" };
        return child.terminal ? this.#enter(state.segment + 1) : { kind: "trie", segment: state.segment, node: child };
      }
      case "free": {
        if (token === this.#eos) return { kind: "done" };
        const length = this.#freeTextBytes(token, this.#free!.maxLength - state.used);
        return length > 0 ? { kind: "free", used: state.used + length } : { kind: "illegal" };
      }
      case "eos":
        return token === this.#eos ? { kind: "done" } : { kind: "illegal" };
      default:
        return { kind: "illegal" };
    }
  }

  /** Byte length of `token` if it may extend free text with `room` bytes left, else 0. */
  #freeTextBytes(token: number, room: number): number {
    if (!Number.isInteger(token) || token < 0 || token >= this.#codec.vocabSize || token === this.#eos) return 0;
    const bytes = this.#codec.tokenBytes(token);
    if (bytes.length === 0 || bytes.length > room) return 0;
    for (const b of bytes) if (this.#free!.forbidden.has(b)) return 0;
    return bytes.length;
  }

  #state(prefix: readonly number[]): State {
    if (!Array.isArray(prefix)) {
      throw new Error(`LineFormatConstraint: prefixTokens must be an array of token ids, got ${String(prefix)}`);
    }
    for (const id of prefix) {
      if (!Number.isInteger(id) || id < 0 || id >= this.#codec.vocabSize) {
        throw new Error(
          `LineFormatConstraint: prefixTokens must hold token ids, integers in [0, ${this.#codec.vocabSize}), got ${id}`,
        );
      }
    }
    let state = this.#enter(0);
    for (const token of prefix) state = this.#step(state, token);
    return state;
  }

  static #key(state: State): string {
    if (state.kind === "trie") return `trie:${state.node.id}`;
    if (state.kind === "free") return `free:${state.used}`;
    return state.kind === "eos" ? "eos" : "none";
  }

  /**
   * The allowed next tokens.
   *
   * @param prefixTokens Tokens generated so far.
   * @returns The allowed next ids; empty after EOS or after a prefix the format does not allow.
   */
  nextAllowed(prefixTokens: readonly number[]): ReadonlySet<number> {
    const state = this.#state(prefixTokens);
    const key = LineFormatConstraint.#key(state);
    let set = this.#sets.get(key);
    if (!set) {
      const allowed = new Set<number>();
      if (state.kind === "trie") { for (const id of state.node.children.keys()) allowed.add(id); }
      else if (state.kind === "eos") allowed.add(this.#eos);
      else if (state.kind === "free") {
        allowed.add(this.#eos);
        const room = this.#free!.maxLength - state.used;
        for (let id = 0; id < this.#codec.vocabSize; id++) if (this.#freeTextBytes(id, room) > 0) allowed.add(id);
      }
      set = allowed;
      this.#sets.set(key, set);
    }
    return set;
  }

  /**
   * The allowed set as a bitset, computed once per state and cached.
   *
   * @param prefixTokens Tokens generated so far.
   * @returns ceil(vocabSize / 32) words; bit (id & 31) of word (id >> 5) is set when id is allowed.
   */
  mask(prefixTokens: readonly number[]): Uint32Array {
    const key = LineFormatConstraint.#key(this.#state(prefixTokens));
    let mask = this.#masks.get(key);
    if (!mask) {
      mask = new Uint32Array(Math.ceil(this.#codec.vocabSize / 32));
      for (const id of this.nextAllowed(prefixTokens)) mask[id >> 5] |= 1 << (id & 31);
      this.#masks.set(key, mask);
    }
    return mask;
  }
}
