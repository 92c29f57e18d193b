/**
 * SentencePiece's BPE segmentation (bpe_model.cc), over normalized UTF-8: start from characters
 * (a user-defined symbol is one frozen symbol), and repeatedly merge the adjacent pair whose
 * concatenation is a piece with the highest score, ties to the leftmost pair — upstream's agenda
 * and comparator, stale entries skipped when popped.
 *
 * @module
 */
import type { ByteTrie } from "./byte_trie.ts";
import { utf8CharLength } from "./normalizer.ts";

/**
 * Segments `s` by BPE.
 *
 * @param s Normalized text.
 * @param trie NORMAL and USER_DEFINED pieces, valued by id.
 * @param userTrie USER_DEFINED pieces alone, or null when there are none.
 * @param scores Each id's score.
 * @returns [id, start, end] per final symbol; id -1 where the symbol's bytes are not a piece.
 */
export function bpeSegments(s: Uint8Array, trie: ByteTrie, userTrie: ByteTrie | null, scores: Float32Array): number[] {
  // Symbols as a linked list over byte ranges; `node` is the trie node of the symbol's bytes
  // (-1 when no piece starts with them), so a pair is looked up by walking on from the left one.
  const capacity = s.length;
  const starts = new Int32Array(capacity);
  const ends = new Int32Array(capacity);
  const nodes = new Int32Array(capacity);
  const frozen = new Uint8Array(capacity);
  let count = 0;
  for (let pos = 0; pos < s.length; count++) {
    // Longest user-defined symbol here (frozen: never merged), else one character.
    let userEnd = -1;
    if (userTrie !== null) {
      let node = 0;
      for (let i = pos; i < s.length; i++) {
        node = userTrie.child(node, s[i]);
        if (node < 0) break;
        if (userTrie.value(node) >= 0) userEnd = i + 1;
      }
    }
    const end = userEnd > 0 ? userEnd : pos + Math.min(utf8CharLength(s[pos]) || 1, s.length - pos);
    starts[count] = pos;
    ends[count] = end;
    nodes[count] = trie.walk(0, s, pos, end);
    frozen[count] = userEnd > 0 ? 1 : 0;
    pos = end;
  }
  const prev = new Int32Array(count);
  const next = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    prev[i] = i - 1;
    next[i] = i + 1 < count ? i + 1 : -1;
  }
  // Agenda: candidate pairs in parallel arrays, and a binary max-heap of their indices ordered
  // by (score, then smaller left index) — upstream's comparator. Each merge queues at most two
  // pairs, so 3 * count bounds both.
  const capacity3 = 3 * count + 3;
  const pairScore = new Float64Array(capacity3);
  const pairLeft = new Int32Array(capacity3);
  const pairRight = new Int32Array(capacity3);
  const pairSize = new Int32Array(capacity3);
  const pairNode = new Int32Array(capacity3);
  const heap = new Int32Array(capacity3);
  let pairs = 0;
  let heapSize = 0;
  const above = (a: number, b: number): boolean =>
    pairScore[a] > pairScore[b] || (pairScore[a] === pairScore[b] && pairLeft[a] < pairLeft[b]);
  const maybeAdd = (left: number, right: number): void => {
    if (left === -1 || right === -1 || frozen[left] || frozen[right] || nodes[left] < 0) return;
    const node = trie.walk(nodes[left], s, starts[right], ends[right]);
    if (node < 0) return;
    const id = trie.value(node);
    if (id < 0) return;
    const entry = pairs++;
    pairScore[entry] = scores[id];
    pairLeft[entry] = left;
    pairRight[entry] = right;
    pairSize[entry] = ends[right] - starts[left];
    pairNode[entry] = node;
    let i = heapSize++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!above(entry, heap[parent])) break;
      heap[i] = heap[parent];
      i = parent;
    }
    heap[i] = entry;
  };
  for (let i = 1; i < count; i++) maybeAdd(i - 1, i);
  while (heapSize > 0) {
    const top = heap[0];
    const last = heap[--heapSize];
    let i = 0;
    for (;;) {
      const l = 2 * i + 1, r = l + 1;
      let best = last;
      let bestAt = -1;
      if (l < heapSize && above(heap[l], best)) best = heap[l], bestAt = l;
      if (r < heapSize && above(heap[r], best)) best = heap[r], bestAt = r;
      if (bestAt < 0) break;
      heap[i] = best;
      i = bestAt;
    }
    heap[i] = last;
    const left = pairLeft[top], right = pairRight[top];
    // Stale entries: a side already merged away, or grown since the pair was queued.
    if (next[left] !== right || ends[right] - starts[left] !== pairSize[top]) continue;
    ends[left] = ends[right];
    nodes[left] = pairNode[top];
    next[left] = next[right];
    if (next[right] >= 0) prev[next[right]] = left;
    next[right] = -2; // merged away
    maybeAdd(prev[left], left);
    maybeAdd(left, next[left]);
  }
  const out: number[] = [];
  for (let i = count > 0 ? 0 : -1; i >= 0; i = next[i]) {
    out.push(nodes[i] >= 0 ? trie.value(nodes[i]) : -1, starts[i], ends[i]);
  }
  return out;
}
