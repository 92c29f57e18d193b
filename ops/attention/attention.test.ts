import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertClose, assertThrowsMessage, checkAgainstReference, gpuTest } from "../../harness/testing.ts";
import {
  attention,
  type AttentionArgs,
  attentionGpu,
  attentionPlan,
  KERNELS,
  keyPaddingBias,
  validateAttentionShape,
} from "./mod.ts";
import { boundBytes, gpuTolerance, loadSdpaGolden, mha, randomCase as randomGroupedCase } from "./testing_helpers.ts";

/** The family's helpers give gqa's kvHeads too; attention has none (it refuses the key). */
const randomCase = (...c: Parameters<typeof randomGroupedCase>) => mha(randomGroupedCase(...c));

const f32 = (xs: number[]) => new Float32Array(xs);
const goldenUrl = new URL("./goldens/attention.json", import.meta.url);

/** One head, one query row, keys along the first axis of D = 1 unless stated. */
const single = (q: number[], k: number[], v: number[], extra: Partial<AttentionArgs> = {}): AttentionArgs => ({
  B: 1,
  H: 1,
  L: 1,
  S: k.length,
  D: 1,
  q: f32(q),
  k: f32(k),
  v: f32(v),
  ...extra,
});

Deno.test("attention reference: equal scores average the values; a score log(3) higher weighs 3x", () => {
  deepStrictEqual([...attention(single([1], [2, 2], [2, 4]))], [3]);
  // scale 1: scores 0 and log 3 give weights 1/4 and 3/4.
  const out = attention(single([1], [0, Math.log(3)], [4, 8], { scale: 1 }));
  assertClose(out, [4 / 4 + 8 * 3 / 4], { atol: 0, rtol: 1e-7 });
});

Deno.test("attention reference: the default scale is 1/sqrt(D) of the query's head dim, not of Dv", () => {
  // D = 4, Dv = 1: q · k0 = 4, q · k1 = 0; scale 1/2 gives scores 2 and 0.
  const args: AttentionArgs = {
    B: 1,
    H: 1,
    L: 1,
    S: 2,
    D: 4,
    Dv: 1,
    q: f32([1, 1, 1, 1]),
    k: f32([1, 1, 1, 1, 0, 0, 0, 0]),
    v: f32([1, 0]),
  };
  const weight = (s: number) => Math.exp(s) / (Math.exp(s) + 1);
  assertClose(attention(args), [weight(2)], { atol: 0, rtol: 1e-7 });
  ok(Math.abs(weight(2) - weight(4)) > 0.1, "1/sqrt(Dv) = 1 would give scores 4 and 0");
  assertClose(attention({ ...args, scale: 0.25 }), [weight(1)], { atol: 0, rtol: 1e-7 }, "scale overrides");
});

Deno.test("attention reference: causal is upper-left aligned; queryOffset S - L is lower-right", () => {
  // L = 2, S = 3, scores all 0: row i averages the keys it sees.
  const args: AttentionArgs = {
    B: 1,
    H: 1,
    L: 2,
    S: 3,
    D: 1,
    causal: true,
    q: f32([0, 0]),
    k: f32([0, 0, 0]),
    v: f32([3, 6, 9]),
  };
  deepStrictEqual([...attention(args)], [3, 4.5]); // row 0 sees key 0, row 1 keys 0-1 (torch's is_causal)
  deepStrictEqual([...attention({ ...args, queryOffset: 1 })], [4.5, 6]); // causal_lower_right
  deepStrictEqual([...attention({ ...args, queryOffset: -1 })], [0, 3]); // row 0 sees nothing: zeros
});

Deno.test("attention reference: a fully masked row is zeros (aten::_safe_softmax), not NaN", () => {
  const mask = f32([-Infinity, -Infinity, 0, -Infinity]);
  const out = attention({
    B: 1,
    H: 1,
    L: 2,
    S: 2,
    D: 1,
    q: f32([1, 1]),
    k: f32([1, 2]),
    v: f32([5, 7]),
    mask,
    maskShape: [1, 1, 2, 2],
  });
  deepStrictEqual([...out], [0, 5]);
  // A finite mask, however negative, is not a mask on its own: equal -1e30 scores average.
  const finite = attention(single([0], [0, 0], [5, 7], { mask: f32([-1e30, -1e30]), maskShape: [1, 1, 1, 2] }));
  deepStrictEqual([...finite], [6]);
});

Deno.test("attention reference: the mask is added to the scores and broadcast by maskShape", () => {
  const base = randomCase({ B: 2, H: 3, L: 4, S: 5, D: 4 }, 1);
  const row = Float32Array.from({ length: 2 * 5 }, (_, i) => (i % 3 === 0 ? -Infinity : i / 3));
  const full = new Float32Array(2 * 3 * 4 * 5);
  for (let i = 0; i < full.length; i++) full[i] = row[Math.floor(i / 60) * 5 + (i % 5)];
  const broadcast = attention({ ...base, mask: row, maskShape: [2, 1, 1, 5] });
  deepStrictEqual(broadcast, attention({ ...base, mask: full, maskShape: [2, 3, 4, 5] }));
  ok(broadcast.some((x, i) => x !== attention(base)[i]), "the mask changed the result");
});

Deno.test("keyPaddingBias: true attends (torch's attn_mask polarity), false masks", () => {
  deepStrictEqual([...keyPaddingBias([true, false, 1, 0])], [0, -Infinity, 0, -Infinity]);
  deepStrictEqual([...keyPaddingBias(new Uint8Array([1, 0]))], [0, -Infinity]);
  // key_padding_mask polarity (true = ignore) would keep the padded key and drop the real one.
  const out = attention(single([1], [1, 1], [2, 4], { mask: keyPaddingBias([true, false]), maskShape: [1, 1, 1, 2] }));
  deepStrictEqual([...out], [2]);
});

Deno.test("attention reference: logits of +-1000 stay finite and pick the largest", () => {
  // Scores 1000, 1000 + d and -1000 with d = 1000 * 2^-10 (all exact in f32): the weights of a
  // softmax over (0, d), and nothing for the third.
  const d = 1000 * 2 ** -10;
  const out = attention(single([1000], [1, 1 + 2 ** -10, -1], [1, 2, 3], { scale: 1 }));
  assertClose(out, [1 / (1 + Math.exp(d)) + 2 * Math.exp(d) / (1 + Math.exp(d))], { atol: 0, rtol: 1e-6 });
});

Deno.test("attention reference: bad input throws naming the argument", async () => {
  const ok1 = single([1], [1, 1], [2, 4]);
  await assertThrowsMessage(
    () => attention({ ...ok1, S: 3 }),
    "attention: k must have length B * H * S * D = 3, got 2",
  );
  await assertThrowsMessage(
    () => attention({ ...ok1, D: 0 }),
    "attention: D must be an integer in [1, 16777216], got 0",
  );
  await assertThrowsMessage(() => attention({ ...ok1, scale: 1e39 }), "attention: scale must be a finite f32");
  await assertThrowsMessage(() => attention({ ...ok1, queryOffset: 1.5 }), "attention: queryOffset must be an integer");
  await assertThrowsMessage(
    () => attention({ ...ok1, causal: true, mask: f32([0, 0]), maskShape: [1, 1, 1, 2] }),
    "attention: causal and mask cannot both be given",
  );
  await assertThrowsMessage(
    () => attention({ ...ok1, mask: f32([0, 0]) }),
    "attention: maskShape must be [mB, mH, mL, S]",
  );
  await assertThrowsMessage(
    () => attention({ ...ok1, mask: f32([0, 0]), maskShape: [1, 1, 1, 3] }),
    "attention: maskShape[3] must be S = 2, got 3",
  );
  await assertThrowsMessage(
    () =>
      attention({
        ...ok1,
        H: 2,
        q: f32([1, 1]),
        k: f32([1, 1, 1, 1]),
        v: f32([1, 1, 1, 1]),
        mask: f32([0, 0, 0, 0, 0, 0]),
        maskShape: [1, 3, 1, 2],
      }),
    "attention: maskShape[1] must be 1 or H = 2, got 3",
  );
  await assertThrowsMessage(
    () => attention({ ...ok1, mask: f32([0]), maskShape: [1, 1, 1, 2] }),
    "mask must have length the product of maskShape = 2",
  );
  await assertThrowsMessage(
    () => attention({ ...ok1, maskShape: [1, 1, 1, 2] }),
    "attention: maskShape was given without a mask",
  );
  await assertThrowsMessage(
    () => keyPaddingBias([true, 2]),
    "keyPaddingBias: mask[1] must be a boolean or 0 / 1, got 2",
  );
  await assertThrowsMessage(
    () => attention({ ...ok1, q: [1] as unknown as Float32Array }),
    "attention: q must be a Float32Array, got Array",
  );
});

Deno.test("attention reference matches the torch goldens", async () => {
  const golden = await loadSdpaGolden(goldenUrl);
  ok(golden.cases.length > 0 && golden.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    // torch computed in float64 on the same f32 inputs and rounded once, as the reference: the two
    // differ only in f64 summation order, far below one f32 ULP (atol for outputs near zero).
    assertClose(attention(mha(c.args)), c.out, { atol: 1e-12, rtol: 2 ** -22 }, `torch ${c.label}`);
  }
});

Deno.test("attention: the two plans bind the [B, H, L, S] scores: 4n^2 + 132n + 96 bytes at L = S = n, D = Dv = 8", () => {
  const fakeGpu = {
    resolve: (sources: Record<string, string>, entry: string) => ({
      variant: entry,
      source: sources[entry],
      rung: "portable",
      tried: [entry],
    }),
    limits: { maxComputeWorkgroupsPerDimension: 65535 },
  };
  for (const n of [16, 100, 1000]) {
    const { scores, weightedSum } = attentionPlan(fakeGpu as never, {
      B: 1,
      H: 1,
      L: n,
      S: n,
      D: 8,
      maskShape: [1, 1, 1, n],
    });
    strictEqual(boundBytes([scores, weightedSum]), 4 * n * n + 132 * n + 96, `n = ${n}`);
  }
});

const cases = [
  { B: 1, H: 1, L: 1, S: 1, D: 1 },
  { B: 1, H: 2, L: 5, S: 7, D: 3, Dv: 5 },
  { B: 2, H: 1, L: 17, S: 33, D: 8, causal: true },
  { B: 1, H: 2, L: 4, S: 70, D: 16, causal: true, queryOffset: 66 },
  { B: 1, H: 1, L: 9, S: 4, D: 4, causal: true, queryOffset: -2 },
  { B: 2, H: 2, L: 3, S: 65, D: 8, Dv: 67, maskShape: [2, 1, 1, 65] as [number, number, number, number] },
  { B: 2, H: 3, L: 4, S: 5, D: 8, maskShape: [1, 3, 4, 5] as [number, number, number, number] },
].map((c, i) => ({ label: JSON.stringify(c), args: randomCase(c, 100 + 10 * i) }));

checkAgainstReference("attention", KERNELS, "scores", cases, attention, attentionGpu, gpuTolerance);
checkAgainstReference("attention", KERNELS, "weighted_sum", cases, attention, attentionGpu, gpuTolerance);

gpuTest("attention GPU: a fully masked row is zeros, and logits of +-1000 stay finite", async (gpu) => {
  const masked = {
    B: 1,
    H: 1,
    L: 2,
    S: 2,
    D: 1,
    q: f32([1, 1]),
    k: f32([1, 2]),
    v: f32([5, 7]),
    mask: f32([-Infinity, -Infinity, 0, -Infinity]),
    maskShape: [1, 1, 2, 2] as [number, number, number, number],
  };
  deepStrictEqual([...await attentionGpu(gpu, masked)], [0, 5]);
  const none = {
    B: 1,
    H: 1,
    L: 2,
    S: 3,
    D: 1,
    causal: true,
    queryOffset: -1,
    q: f32([0, 0]),
    k: f32([0, 0, 0]),
    v: f32([3, 6, 9]),
  };
  deepStrictEqual([...await attentionGpu(gpu, none)], [0, 3]);
  const big = single([1000], [1, 1 + 2 ** -10, -1], [1, 2, 3], { scale: 1 });
  assertClose(
    await attentionGpu(gpu, big),
    attention(big),
    { atol: 1e-3, rtol: 0 },
    "+-1000 (scores within 1 of each other)",
  );
});

gpuTest("attention GPU: bad input throws before dispatch", async (gpu) => {
  const ok1 = single([1], [1, 1], [2, 4]);
  await assertThrowsMessage(
    () => attentionGpu(gpu, { ...ok1, S: 3 }),
    "attention: k must have length B * H * S * D = 3",
  );
  await assertThrowsMessage(
    () => attentionGpu(gpu, { ...ok1, causal: true, mask: f32([0, 0]), maskShape: [1, 1, 1, 2] }),
    "causal and mask",
  );
  await assertThrowsMessage(
    () => attentionGpu(gpu, ok1, { override: "kernel" as never }),
    'attention: override "kernel" is not a variant of entry point "scores" or "weighted_sum"',
  );
  await assertThrowsMessage(
    () => validateAttentionShape({ B: 1, H: 1, L: 1, S: 1, D: 1, queryOffset: 2 ** 31 }),
    "queryOffset must be an integer in [-1073741824, 1073741824]",
  );
});

gpuTest("attention GPU matches the torch goldens", async (gpu) => {
  const golden = await loadSdpaGolden(goldenUrl);
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    assertClose(await attentionGpu(gpu, mha(c.args)), c.out, gpuTolerance(c.args), `torch ${c.label}`);
  }
});

gpuTest("attention GPU: score tiles and rows past the per-dimension limit fold into y", async (gpu) => {
  // At a limit of 5: 7 key tiles x 2 row tiles = 14 score tiles (a 5 x 3 grid, 1 idle) and 17 rows (5 x 4, 3 idle).
  const narrow = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 5 });
  const args = randomCase({ B: 1, H: 1, L: 17, S: 100, D: 8, causal: true }, 13);
  const { scores, weightedSum } = attentionPlan(narrow, args);
  deepStrictEqual([scores.workgroups, weightedSum.workgroups], [[5, 3, 1], [5, 4, 1]]);
  assertClose(await attentionGpu(narrow, args), attention(args), gpuTolerance(args), "folded");
});
