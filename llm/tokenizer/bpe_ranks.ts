/**
 * BPE by merge ranks, in the order Hugging Face `tokenizers` (0.23, `models/bpe/word.rs`) applies
 * merges: repeatedly merge the adjacent pair with the lowest rank, the leftmost one among equal
 * ranks, until no adjacent pair is in the table. A binary heap of candidate pairs keyed by
 * (rank, position) gives that order in O(n log n), so a 30,000-byte word (a long run of CJK
 * letters is one pre-token) costs milliseconds, not the seconds a rescan per merge would.
 * A queued pair is stale once either side has merged with something else: it is dropped when
 * popped, since a side only ever grows to the right, so the pair at that position then has a
 * different rank (or none).
 *
 * The pair table is open addressing over one typed array holding each slot's left id, right id
 * and rank side by side, so a probe touches one cache line (a Map keyed by `left * 2^21 + right`
 * would hold heap numbers past 2^31 and was slower).
 *
 * @module
 */

const POS = 2 ** 32;

/** A merge table: each rank's pair of ids and the id their merge makes. */
export class BpeRanks {
  /** Number of merges (ranks 0 .. size - 1). */
  readonly size: number;
  readonly #merged: Int32Array;
  readonly #slots: Int32Array; // [left, right, rank] per slot; rank -1 when empty
  readonly #mask: number;
  // Scratch reused across calls (encode is synchronous, so never shared by two calls at once).
  #ids = new Int32Array(64);
  #prev = new Int32Array(64);
  #next = new Int32Array(64);
  #heap = new Float64Array(192);

  /**
   * @param merges `[left id, right id, merged id]` per rank, rank 0 first. A pair listed twice
   *   keeps its last rank, as upstream's table (built by inserting in order) does.
   */
  constructor(merges: readonly (readonly [number, number, number])[]) {
    const n = merges.length;
    this.size = n;
    this.#merged = new Int32Array(n);
    let capacity = 16;
    while (capacity < 1.5 * n) capacity *= 2;
    const slots = this.#slots = new Int32Array(3 * capacity).fill(-1);
    this.#mask = capacity - 1;
    merges.forEach(([left, right, merged], rank) => {
      this.#merged[rank] = merged;
      let slot = this.#hash(left, right);
      while (slots[3 * slot + 2] >= 0 && !(slots[3 * slot] === left && slots[3 * slot + 1] === right)) {
        slot = (slot + 1) & this.#mask;
      }
      slots[3 * slot] = left;
      slots[3 * slot + 1] = right;
      slots[3 * slot + 2] = rank;
    });
  }

  #hash(left: number, right: number): number {
    return (Math.imul(left, 0x9e3779b1) ^ Math.imul(right + 0x7f4a7c15, 0x85ebca6b)) >>> 0 & this.#mask;
  }

  /**
   * The rank of a pair.
   *
   * @param left Left id.
   * @param right Right id.
   * @returns Its rank, or -1 when the pair never merges.
   */
  rank(left: number, right: number): number {
    const slots = this.#slots;
    for (let slot = this.#hash(left, right);; slot = (slot + 1) & this.#mask) {
      const at = 3 * slot;
      const rank = slots[at + 2];
      if (rank < 0 || (slots[at] === left && slots[at + 1] === right)) return rank;
    }
  }

  /**
   * Merges a word.
   *
   * @param symbols The word's initial ids (one per byte for byte-level BPE), read in [0, n).
   * @param n How many of them.
   * @returns The ids after every merge.
   */
  merge(symbols: ArrayLike<number>, n: number): number[] {
    if (n <= 1) return n === 1 ? [symbols[0]] : [];
    if (this.#ids.length < n) {
      this.#ids = new Int32Array(2 * n);
      this.#prev = new Int32Array(2 * n);
      this.#next = new Int32Array(2 * n);
      this.#heap = new Float64Array(6 * n);
    }
    const ids = this.#ids, prev = this.#prev, next = this.#next, heap = this.#heap;
    for (let i = 0; i < n; i++) {
      ids[i] = symbols[i];
      prev[i] = i - 1;
      next[i] = i + 1 < n ? i + 1 : -1;
    }
    // Min-heap of rank * 2^32 + position: lowest rank first, then leftmost.
    let size = 0;
    const push = (key: number): void => {
      let i = size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heap[parent] <= key) break;
        heap[i] = heap[parent];
        i = parent;
      }
      heap[i] = key;
    };
    for (let i = 0; i + 1 < n; i++) {
      const rank = this.rank(ids[i], ids[i + 1]);
      if (rank >= 0) push(rank * POS + i);
    }
    while (size > 0) {
      const top = heap[0];
      const last = heap[--size];
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= size) break;
        if (child + 1 < size && heap[child + 1] < heap[child]) child++;
        if (heap[child] >= last) break;
        heap[i] = heap[child];
        i = child;
      }
      heap[i] = last;
      const rank = Math.floor(top / POS);
      const pos = top - rank * POS;
      const right = next[pos];
      // Stale: this position was merged into its left neighbour (next = -2), is last, or its
      // pair has changed since it was queued.
      if (right < 0 || this.rank(ids[pos], ids[right]) !== rank) continue;
      ids[pos] = this.#merged[rank];
      const after = next[right];
      next[pos] = after;
      next[right] = -2;
      if (after >= 0) prev[after] = pos;
      const before = prev[pos];
      if (before >= 0) {
        const r = this.rank(ids[before], ids[pos]);
        if (r >= 0) push(r * POS + before);
      }
      if (after >= 0) {
        const r = this.rank(ids[pos], ids[after]);
        if (r >= 0) push(r * POS + pos);
      }
    }
    const out: number[] = [];
    for (let i = 0; i >= 0; i = next[i]) out.push(ids[i]);
    return out;
  }
}
