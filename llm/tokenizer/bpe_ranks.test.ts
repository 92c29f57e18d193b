// BpeRanks' heap against the plain definition of BPE by ranks: rescan every adjacent pair, merge the
// lowest rank (the leftmost among equals), repeat.
import assert from "node:assert/strict";
import { qwenFiles } from "../fixtures/tokenizer_files.ts";
import { BpeRanks } from "./bpe_ranks.ts";

type Table = Map<string, [number, number]>;
function tableOf(merges: readonly (readonly [number, number, number])[]): Table {
  const table: Table = new Map();
  merges.forEach(([a, b, merged], rank) => table.set(`${a},${b}`, [rank, merged])); // last rank wins
  return table;
}

function naive(symbols: number[], table: Table): number[] {
  const word = [...symbols];
  for (;;) {
    let best = -1, bestRank = Infinity, bestMerged = -1;
    for (let i = 0; i + 1 < word.length; i++) {
      const hit = table.get(`${word[i]},${word[i + 1]}`);
      if (hit && hit[0] < bestRank) [best, bestRank, bestMerged] = [i, hit[0], hit[1]];
    }
    if (best < 0) return word;
    word.splice(best, 2, bestMerged);
  }
}

function random(seed: number) {
  return () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

Deno.test("bpe ranks: hand cases — lowest rank first, leftmost among equals, a repeated pair's last rank", () => {
  // ids: a 0, b 1, c 2; merges: rank 0 "a b" -> 3 (ab), rank 1 "b c" -> 4 (bc), rank 2 "ab c" -> 5
  const ranks = new BpeRanks([[0, 1, 3], [1, 2, 4], [3, 2, 5]]);
  assert.deepEqual(ranks.merge([0, 1, 2], 3), [5]); // ab first, then ab+c
  assert.deepEqual(ranks.merge([1, 2, 0, 1], 4), [4, 3]);
  assert.deepEqual(ranks.merge([], 0), []);
  assert.deepEqual(ranks.merge([2], 1), [2]);
  // "a a a" with "a a" -> 6: the leftmost pair merges first, leaving (aa)(a), not (a)(aa).
  const aa = new BpeRanks([[0, 0, 6], [0, 6, 7]]);
  assert.deepEqual(aa.merge([0, 0, 0], 3), [6, 0]);
  // The same pair listed twice keeps its later rank (upstream builds its table by inserting in order):
  // "b c" at rank 2 now ranks after "x b" (rank 1), so "x b c" merges x+b first.
  const twice = new BpeRanks([[1, 2, 4], [9, 1, 10], [1, 2, 4]]);
  assert.equal(twice.rank(1, 2), 2);
  assert.deepEqual(twice.merge([9, 1, 2], 3), [10, 2]);
  assert.equal(twice.rank(2, 1), -1);
});

Deno.test("bpe ranks: equals the rescanning definition on random tables and words", () => {
  const next = random(3);
  for (let table = 0; table < 40; table++) {
    // A small alphabet and many merges, so merges collide, chain and repeat.
    const alphabet = 2 + Math.floor(next() * 5);
    const merges: [number, number, number][] = [];
    let id = alphabet;
    for (let r = 0; r < 30; r++) {
      const pick = () => Math.floor(next() * id);
      merges.push([pick(), pick(), id++]);
    }
    const ranks = new BpeRanks(merges);
    const table = tableOf(merges);
    for (let w = 0; w < 50; w++) {
      const word = Array.from({ length: Math.floor(next() * 60) }, () => Math.floor(next() * alphabet));
      assert.deepEqual(ranks.merge(word, word.length), naive(word, table), `table ${table}, word ${word}`);
    }
  }
});

Deno.test("bpe ranks: equals the rescanning definition with Qwen3's 151,387 merges on long byte strings", async () => {
  const files = await qwenFiles();
  const vocab: Record<string, number> = JSON.parse(new TextDecoder().decode(files.vocab));
  const merges = new TextDecoder().decode(files.merges).split("\n").slice(1).filter((l) => l !== "")
    .map((line): [number, number, number] => {
      const [a, b] = line.split(" ");
      return [vocab[a], vocab[b], vocab[a + b]];
    });
  const ranks = new BpeRanks(merges);
  const table = tableOf(merges);
  const next = random(11);
  const texts = ["the quick brown fox", "東京の冬は乾燥していて", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "🎨✨👍🏽"];
  for (let i = 0; i < 30; i++) {
    let s = "";
    const length = 1 + Math.floor(next() * 80);
    for (let j = 0; j < length; j++) s += String.fromCharCode(0x61 + Math.floor(next() * 26));
    texts.push(s);
  }
  // GPT-2's byte alphabet, written out again: printable Latin-1 bytes are themselves, the others
  // take U+0100 upward in byte order.
  const alphabet: string[] = [];
  let shifted = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    alphabet.push(String.fromCharCode(printable ? b : shifted++));
  }
  for (const text of texts) {
    const symbols = [...new TextEncoder().encode(text)].map((b) => vocab[alphabet[b]]);
    assert.ok(symbols.every((s) => s !== undefined));
    assert.deepEqual(ranks.merge(symbols, symbols.length), naive(symbols, table), text);
  }
});
