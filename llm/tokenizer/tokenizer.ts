/**
 * The one interface every tokenizer here implements, so the sampler, the constraints and a
 * generation loop need not know which kind of vocabulary they drive.
 *
 * @module
 */

/** Text to token ids and back. */
export interface Tokenizer {
  /** Number of ids, added tokens included: every id is in [0, vocabSize). */
  readonly vocabSize: number;
  /** Beginning-of-sequence id, or null when the vocabulary has none. */
  readonly bosId: number | null;
  /** End-of-sequence id, or null. */
  readonly eosId: number | null;
  /** Unknown-token id, or null (byte-level BPE has no unknown token). */
  readonly unkId: number | null;
  /** Padding id, or null. */
  readonly padId: number | null;
  /**
   * Encodes text. Adds no BOS/EOS: a caller that wants them prepends/appends the ids.
   *
   * @param text Any string (lone surrogates become U+FFFD, as TextEncoder does).
   * @returns The token ids.
   */
  encode(text: string): number[];
  /**
   * Decodes ids to text, exactly as the reference library does.
   *
   * @param ids Token ids in [0, vocabSize).
   * @returns The text.
   */
  decode(ids: readonly number[]): string;
  /**
   * The vocabulary's own spelling of one id (a SentencePiece piece with its U+2581, a byte-level
   * token in GPT-2's byte alphabet).
   */
  idToToken(id: number): string;
  /**
   * The bytes one id contributes to decoded text when it is not the first token (so a
   * SentencePiece U+2581 is a space); empty for control tokens. For constraints and streaming.
   */
  tokenBytes(id: number): Uint8Array;
  /** A decoder fed one id at a time; see {@link DecodeStream}. */
  decodeStream(): DecodeStream;
}

/**
 * Incremental decoding: `push` returns the text that became final with this id, never half a
 * character — bytes of a character split across tokens wait until it is complete (or proven
 * invalid). The concatenation of every `push` and the final `flush` equals `decode(ids)`.
 */
export interface DecodeStream {
  /**
   * Feeds one id.
   *
   * @param id The next token id.
   * @returns Text made final by it (possibly "").
   */
  push(id: number): string;
  /**
   * Ends the stream.
   *
   * @returns Whatever was held back (an incomplete character decodes as U+FFFD, as decode does).
   */
  flush(): string;
}

/** Throws unless `id` is an integer in [0, vocabSize). */
export function checkTokenId(who: string, id: number, vocabSize: number): void {
  if (!Number.isInteger(id) || id < 0 || id >= vocabSize) {
    throw new Error(`${who}: token id must be an integer in [0, ${vocabSize}), got ${id}`);
  }
}

/** Options every `encode` here takes beside the text. */
export interface EncodeOptions {
  /**
   * Keep at most this many ids, dropping from the right, as transformers'
   * `tokenizer(text, truncation=True, max_length=maxLength)` does (its default truncation side).
   * Ids the call adds itself (an appended EOS) count and are kept: the text's ids give way.
   */
  maxLength?: number;
}

/** A value as a tokenizer's message shows it: `undefined`, `null`, "an array", "an object" or its type and value. */
function describe(value: unknown): string {
  return value === undefined || value === null
    ? String(value)
    : Array.isArray(value)
    ? "an array"
    : typeof value === "object"
    ? "an object"
    : `${typeof value} ${String(value)}`;
}

/** Throws unless `text` is a string, naming the argument and what was given. */
export function checkText(who: string, text: unknown): asserts text is string {
  if (typeof text !== "string") throw new Error(`${who}: text must be a string, got ${describe(text)}`);
}

/** Throws unless `ids` is an array (or typed array) of ids, naming the argument and what was given. */
export function checkIds(who: string, ids: unknown): asserts ids is readonly number[] {
  if (!Array.isArray(ids) && !(ArrayBuffer.isView(ids) && !(ids instanceof DataView))) {
    throw new Error(`${who}: ids must be an array of token ids, got ${describe(ids)}`);
  }
}

/**
 * Throws unless `options` is absent or an object of known keys (`maxLength` and `extra`; a misspelt one
 * would otherwise be ignored) and `options.maxLength` is absent or an integer >= 1; returns it (or Infinity).
 */
export function checkMaxLength(who: string, options: EncodeOptions | undefined, extra: readonly string[] = []): number {
  if (options !== undefined) {
    if (options === null || typeof options !== "object" || Array.isArray(options)) {
      throw new Error(`${who}: options must be an object { maxLength? }, got ${describe(options)}`);
    }
    const allowed = ["maxLength", ...extra];
    const unknown = Object.keys(options).filter((k) =>
      !allowed.includes(k) && (options as Record<string, unknown>)[k] !== undefined
    );
    if (unknown.length > 0) {
      throw new Error(
        `${who}: unknown option ${unknown.map((k) => JSON.stringify(k)).join(", ")} (expected ${allowed.join(", ")})`,
      );
    }
  }
  const maxLength = options?.maxLength;
  if (maxLength === undefined) return Infinity;
  if (!Number.isInteger(maxLength) || maxLength < 1) {
    throw new Error(`${who}: maxLength must be an integer >= 1, got ${maxLength}`);
  }
  return maxLength;
}
