/**
 * A trie over bytes, for the vocabulary look-ups of the SentencePiece and BPE encoders: walk it
 * one byte at a time from a node, and read the id stored where a whole piece ends. Children live
 * in one Map keyed by `node * 256 + byte` (a small integer, so V8 keeps the keys unboxed), with the
 * root's 256 children in a plain array because every walk starts there.
 *
 * @module
 */

/** Byte trie mapping byte strings to non-negative ids. */
export class ByteTrie {
  readonly #root = new Int32Array(256).fill(-1);
  readonly #children = new Map<number, number>();
  readonly #values: number[] = [-1];

  /**
   * Stores `value` at the end of `bytes` (a later insert of the same bytes wins).
   *
   * @param bytes The key; must not be empty.
   * @param value The id to store, >= 0.
   */
  insert(bytes: Uint8Array, value: number): void {
    if (bytes.length === 0) throw new Error("ByteTrie.insert: empty key");
    let node = 0;
    for (const b of bytes) {
      let next = this.child(node, b);
      if (next < 0) {
        next = this.#values.length;
        this.#values.push(-1);
        if (node === 0) this.#root[b] = next;
        else this.#children.set(node * 256 + b, next);
      }
      node = next;
    }
    this.#values[node] = value;
  }

  /**
   * @param node A node (0 is the root).
   * @param byte The next byte.
   * @returns The child node, or -1 when no key continues that way.
   */
  child(node: number, byte: number): number {
    if (node === 0) return this.#root[byte];
    return this.#children.get(node * 256 + byte) ?? -1;
  }

  /**
   * @param node A node.
   * @returns The id stored at the node, or -1 when no key ends there.
   */
  value(node: number): number {
    return this.#values[node];
  }

  /**
   * Walks `bytes[start, end)` from `node`.
   *
   * @returns The node reached, or -1 when the walk leaves the trie.
   */
  walk(node: number, bytes: Uint8Array, start: number, end: number): number {
    for (let i = start; i < end && node >= 0; i++) node = this.child(node, bytes[i]);
    return node;
  }
}
