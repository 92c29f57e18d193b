import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { assertThrowsMessage } from "../harness/testing.ts";
import { type LogitModel, perplexity, tokenWindows } from "./perplexity.ts";

/** A model whose logits for every row are `row(previousIds)`, recording the resets it sees. */
function fakeModel(vocab: number, row: (seen: readonly number[]) => number[]): LogitModel & { resets: number } {
  let seen: number[] = [];
  return {
    config: { vocabSize: vocab },
    resets: 0,
    reset() {
      seen = [];
      this.resets++;
    },
    forward(ids) {
      const out = new Float32Array(ids.length * vocab);
      ids.forEach((id, i) => {
        seen.push(id);
        out.set(row(seen), i * vocab);
      });
      return out;
    },
  };
}

Deno.test("perplexity: uniform logits give the vocabulary size; each window starts from an empty cache", async () => {
  const model = fakeModel(7, () => new Array(7).fill(0.25));
  const result = await perplexity(model, [[1, 2, 3], [4, 5]]);
  assertEquals(result.tokens, 3);
  assert(Math.abs(result.perplexity - 7) < 1e-12, `${result.perplexity}`);
  assert(Math.abs(result.nll - 3 * Math.log(7)) < 1e-12);
  assertEquals(model.resets, 2);
});

Deno.test("perplexity: the logit at position i scores id i + 1, by natural-log softmax", async () => {
  // Row i's logits: log 3 for the id equal to (last seen id + 1) % 2, 0 for the other: p = 3/4 or 1/4.
  const model = fakeModel(2, (seen) => {
    const r = [0, 0];
    r[(seen[seen.length - 1] + 1) % 2] = Math.log(3);
    return r;
  });
  // 0 -> 1 predicted (3/4), 1 -> 1 not (1/4), 1 -> 0 predicted (3/4).
  const { nll, windowNll } = await perplexity(model, [[0, 1, 1, 0]]);
  const expected = -(Math.log(0.75) + Math.log(0.25) + Math.log(0.75));
  assert(Math.abs(nll - expected) < 1e-6, `${nll} vs ${expected}`);
  assertEquals(windowNll.length, 1);
});

Deno.test("perplexity, tokenWindows: refuse windows that predict nothing, by name", async () => {
  assertEquals(tokenWindows([1, 2, 3, 4, 5, 6, 7], 3), [[1, 2, 3], [4, 5, 6]]);
  assertEquals(tokenWindows([1, 2, 3, 4], 2), [[1, 2], [3, 4]]);
  assertThrowsMessage(() => tokenWindows([1, 2], 1), "tokenWindows: size must be an integer >= 2, got 1");
  const model = fakeModel(2, () => [0, 0]);
  let message = "";
  await perplexity(model, [[1, 2], [3]]).catch((e) => (message = e.message));
  assertEquals(message, "perplexity: windows[1] has 1 ids; a window needs at least 2");
  assertEquals(model.resets, 0);
  for (
    const [m, w, expected] of [
      [undefined, [[1, 2]], "perplexity: model must have forward(ids), reset() and config.vocabSize, got undefined"],
      [model, undefined, "perplexity: windows must be an array of id arrays, got undefined"],
      [model, [5], "perplexity: windows[0] must be an array of ids, got 5"],
    ] as const
  ) {
    await perplexity(m as never, w as never).then(() => (message = "resolved"), (e) => (message = e.message));
    assertEquals(message, expected);
  }
});
