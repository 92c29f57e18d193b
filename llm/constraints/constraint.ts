/**
 * What narrows the next token: a Constraint looks at the tokens generated so far and returns the
 * ids that may come next.
 *
 * @module
 */

/** A rule on the next token. */
export interface Constraint {
  /**
   * The ids that may come next.
   *
   * @param prefixTokens The tokens generated so far (not the prompt).
   * @returns null when any token may follow; otherwise the allowed ids — an empty set means no
   *   continuation is legal, which the sampler treats as an error rather than guessing.
   */
  nextAllowed(prefixTokens: readonly number[]): ReadonlySet<number> | null;
}

/**
 * What a constraint needs from a tokenizer, so it depends on none in particular. Every
 * {@link Tokenizer} of llm/tokenizer satisfies it.
 */
export interface TokenCodec {
  /** Number of token ids. */
  readonly vocabSize: number;
  /** Encodes text as it would appear as a continuation (see LineFormatConstraint on prefixes). */
  encode(text: string): number[];
  /** The bytes a token adds to the text; empty for control tokens. */
  tokenBytes(id: number): Uint8Array;
}
