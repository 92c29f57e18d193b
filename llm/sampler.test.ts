import assert from "node:assert/strict";
import { drawFromCandidates, drawUniform, pcgHash, sampleNext, samplingCandidates } from "./sampler.ts";

// probabilities 0.1, 0.4, 0.2, 0.3 exactly, up to softmax's rounding
const P = [0.1, 0.4, 0.2, 0.3];
const LOGITS = P.map(Math.log);
const close = (got: number[], want: number[]) =>
  got.forEach((g, i) => assert.ok(Math.abs(g - want[i]) < 1e-12, `${got} vs ${want}`));

Deno.test("sampler: pcgHash is PCG-RXS-M-XS, checked by an independent BigInt computation", () => {
  const M = 1n << 32n;
  const reference = (x: bigint) => {
    const state = (x * 747796405n + 2891336453n) % M;
    const word = (((state >> ((state >> 28n) + 4n)) ^ state) * 277803737n) % M;
    return Number((word >> 22n) ^ word);
  };
  for (const x of [0, 1, 2, 12345, 0x7fffffff, 0xffffffff]) assert.equal(pcgHash(x), reference(BigInt(x)));
  // u = (hash(hash(step) + seed) >>> 8) / 2^24
  const u = (Number(reference((BigInt(reference(3n)) + 42n) % M)) >>> 8) / 2 ** 24;
  assert.equal(drawUniform(42, 3), u);
  assert.ok(u >= 0 && u < 1 && Number.isInteger(u * 2 ** 24));
});

Deno.test("sampler: temperature 1, no filters: every token kept, drawn in ascending id order", () => {
  const c = samplingCandidates(LOGITS, { mode: "sample", temperature: 1, seed: 0 });
  assert.deepEqual(c.ids, [0, 1, 2, 3]);
  close(c.probs, P);
  // running sums 0.1, 0.5, 0.7, 1.0: u = 0.45 lands on id 1, u = 0.05 on id 0, u = 0.69 on id 2
  assert.equal(drawFromCandidates(c, 0.45), 1);
  assert.equal(drawFromCandidates(c, 0.05), 0);
  assert.equal(drawFromCandidates(c, 0.69), 2);
  assert.equal(drawFromCandidates(c, 0.71), 3);
});

Deno.test("sampler: top-k then renormalize then top-p (top-p on the raw probabilities would keep two)", () => {
  const c = samplingCandidates(LOGITS, { mode: "sample", temperature: 1, topK: 2, seed: 0 });
  assert.deepEqual(c.ids, [1, 3]);
  close(c.probs, [4 / 7, 3 / 7]);
  // after top-k, id 1 has 4/7 = 0.571 >= 0.5 alone; on the raw 0.4 it would need id 3 too
  const d = samplingCandidates(LOGITS, { mode: "sample", temperature: 1, topK: 2, topP: 0.5, seed: 0 });
  assert.deepEqual(d.ids, [1]);
});

Deno.test("sampler: temperature before top-p", () => {
  // T = 2: p ∝ sqrt(P) = [.163, .325, .230, .282]; cumulative .325, .607, .837 -> p = 0.65 keeps 3.
  // Top-p on the unscaled P would stop at .4 + .3 = .7 with two.
  const c = samplingCandidates(LOGITS, { mode: "sample", temperature: 2, topP: 0.65, seed: 0 });
  assert.deepEqual(c.ids, [1, 2, 3]);
  const s = [Math.sqrt(0.4), Math.sqrt(0.2), Math.sqrt(0.3)];
  const total = s[0] + s[1] + s[2];
  close(c.probs, s.map((x) => x / total));
});

Deno.test("sampler: top-p before min-p", () => {
  // top-p 0.75 keeps .4, .3, .2 (cumulative .9); min-p 0.5 then keeps p >= .2: all three.
  // min-p first would keep the same three, renormalize to .444 .333 .222, and top-p would stop at two.
  const c = samplingCandidates(LOGITS, { mode: "sample", temperature: 1, topP: 0.75, minP: 0.5, seed: 0 });
  assert.deepEqual(c.ids, [1, 2, 3]);
  close(c.probs, [0.4 / 0.9, 0.2 / 0.9, 0.3 / 0.9]);
  const m = samplingCandidates(LOGITS, { mode: "sample", temperature: 1, minP: 0.6, seed: 0 });
  assert.deepEqual(m.ids, [1, 3]); // floor .24
});

Deno.test("sampler: greedy is argmax with ties to the lower id; the constraint applies first", () => {
  assert.equal(sampleNext([1, 3, 3, 2], [], { mode: "greedy" }), 1);
  const only = { nextAllowed: () => new Set([0, 2]) };
  assert.equal(sampleNext(LOGITS, [], { mode: "greedy" }, only), 2);
  for (let seed = 0; seed < 50; seed++) {
    const id = sampleNext(LOGITS, [], { mode: "sample", temperature: 5, seed }, only);
    assert.ok(id === 0 || id === 2);
  }
  assert.throws(() => sampleNext(LOGITS, [], { mode: "greedy" }, { nextAllowed: () => new Set() }), /allows no token/);
});

Deno.test("sampler: a seed repeats exactly; draws follow the distribution", () => {
  const options = { mode: "sample", temperature: 1, seed: 1234 } as const;
  const run = () => Array.from({ length: 32 }, (_, step) => sampleNext(LOGITS, new Array(step).fill(0), options));
  assert.deepEqual(run(), run());
  const counts = [0, 0, 0, 0];
  const n = 20000;
  for (let seed = 0; seed < n; seed++) counts[sampleNext(LOGITS, [], { mode: "sample", temperature: 1, seed })]++;
  // binomial standard deviation at n = 20000 is at most 0.0035; allow 5 of them
  counts.forEach((c, i) => assert.ok(Math.abs(c / n - P[i]) < 0.0175, `${i}: ${c / n} vs ${P[i]}`));
});

Deno.test("sampler: a Llama-3-sized vocabulary (128,256 logits) samples without trouble", () => {
  const logits = new Float32Array(128256);
  logits[77777] = 10;
  const c = samplingCandidates(logits, { mode: "sample", temperature: 1, topK: 3, seed: 0 });
  assert.equal(c.ids.length, 3);
  assert.ok(c.ids.includes(77777) && c.probs[c.ids.indexOf(77777)] > 0.99);
  assert.equal(sampleNext(logits, [], { mode: "greedy" }), 77777);
});

Deno.test("sampler: bad options are refused, naming the argument", () => {
  assert.throws(
    () => sampleNext(LOGITS, [], { mode: "sample", temperature: 0, seed: 0 }),
    /temperature must be finite and > 0, got 0/,
  );
  assert.throws(() => sampleNext(LOGITS, [], { mode: "sample", temperature: 1, topK: 0, seed: 0 }), /topK/);
  assert.throws(() => sampleNext(LOGITS, [], { mode: "sample", temperature: 1, topP: 0, seed: 0 }), /topP/);
  assert.throws(() => sampleNext(LOGITS, [], { mode: "sample", temperature: 1, minP: 1, seed: 0 }), /minP/);
  assert.throws(() => sampleNext(LOGITS, [], { mode: "sample", temperature: 1, seed: -1 }), /seed/);
  assert.throws(() => sampleNext([NaN, 1], [], { mode: "greedy" }), /logit 0 is NaN/);
  assert.throws(() => sampleNext(LOGITS, [], { mode: "greedy" }, { nextAllowed: () => new Set([9]) }), /allows id 9/);
});

Deno.test("sampler: non-finite logits as torch: greedy picks +Infinity, refuses all -Infinity; sampling refuses +Infinity", () => {
  assert.strictEqual(sampleNext(new Float32Array([1, Infinity, 2]), [], { mode: "greedy" }), 1);
  assert.strictEqual(sampleNext(new Float32Array([-Infinity, 3, -Infinity]), [], { mode: "greedy" }), 1);
  assert.throws(
    () => sampleNext(new Float32Array([-Infinity, -Infinity]), [], { mode: "greedy" }),
    /every allowed logit is -Infinity, so no token is possible/,
  );
  const sample = { mode: "sample", temperature: 1, seed: 1 } as const;
  assert.throws(() => sampleNext(new Float32Array([1, Infinity, 2]), [], sample), /logit 1 is \+Infinity/);
  assert.throws(
    () => sampleNext(new Float32Array([-Infinity, -Infinity]), [], sample),
    /no allowed token has a finite logit/,
  );
});
