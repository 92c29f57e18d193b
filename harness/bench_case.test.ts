import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { randomInput } from "./bench_case.ts";
import { assertThrowsMessage } from "./testing.ts";

Deno.test("randomInput: seeded magnitudes in [lo, hi), either sign", () => {
  const x = randomInput(1000, 7, 0.5, 1.5);
  strictEqual(x.every((v) => Math.abs(v) >= 0.5 && Math.abs(v) < 1.5), true);
  strictEqual(x.some((v) => v < 0) && x.some((v) => v > 0), true);
  deepStrictEqual(randomInput(1000, 7, 0.5, 1.5), x);
  strictEqual(randomInput(0, 1).length, 0);
});

Deno.test("randomInput refuses a bad length, seed or range by name, never a RangeError or NaN values", async () => {
  for (const length of [NaN, -1, 1.5, Infinity]) {
    await assertThrowsMessage(
      () => randomInput(length, 1),
      `randomInput: length must be an integer >= 0, got ${length}`,
    );
  }
  await assertThrowsMessage(() => randomInput(3, NaN), "randomInput: seed must be an integer, got NaN");
  for (const [lo, hi] of [[2, 1], [NaN, 1], [0, Infinity], [-1, 1]]) {
    await assertThrowsMessage(
      () => randomInput(3, 1, lo, hi),
      `randomInput: lo and hi must be finite with 0 <= lo <= hi, got lo ${lo}, hi ${hi}`,
    );
  }
});
