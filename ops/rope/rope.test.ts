import { deepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  type Tolerance,
} from "../../harness/testing.ts";
import {
  KERNELS,
  permuteRopeChannels,
  rope,
  type RopeArgs,
  ropeFrequencies,
  ropeGpu,
  ropePlan,
  type RopeScaling,
} from "./mod.ts";
import type { RopeVariant } from "./kernels.gen.ts";

interface Golden {
  meta: { torch: string; transformers: string; config_api: string };
  freqs: {
    label: string;
    headDim: number;
    theta: number;
    scaling: RopeScaling | null;
    invFreq: number[];
    attentionFactor: number;
    forwardCosLast?: number[];
  }[];
  llama: {
    S: number;
    H: number;
    HKV: number;
    D: number;
    hidden: number;
    offset: number;
    theta: number;
    scaling: RopeScaling;
    attentionFactor: number;
    x: number[];
    wq: number[];
    wk: number[];
    qEmbed: number[];
    kEmbed: number[];
    scores: number[];
  };
  fractional: { positions: number[]; x: number[]; out: number[] };
}
const loadRopeGolden = () => loadGolden<Golden>(new URL("./goldens/rope.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);
function maxAbs(xs: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < xs.length; i++) m = Math.max(m, Math.abs(xs[i]));
  return m;
}

/**
 * GPU against the reference: the kernel's angle is one f32 product (error |angle| 2^-24), reduced to
 * [-pi, pi] (error ~2^-24 · k) and then cos/sin of a GPU (an NVIDIA fast sine: ~2^-21 absolute);
 * each output sums two products of x with those, times the attention factor: 2 |x| af (|angle| 2^-23
 * + 2^-19) covers it with margin. Measured on llvmpipe: below 1e-6 at the sizes here.
 */
function ropeTolerance(args: RopeArgs): Tolerance {
  const positions = args.positions ?? Float32Array.from({ length: args.tokens }, (_, t) => t);
  const angle = (maxAbs(positions) + Math.abs(args.offset ?? 0)) *
    maxAbs(ropeFrequencies(args.headDim, args.theta, args.scaling).invFreq);
  const af = ropeFrequencies(args.headDim, args.theta, args.scaling).attentionFactor;
  return { atol: 2 * maxAbs(args.x) * af * (angle * 2 ** -23 + 2 ** -19), rtol: 2 ** -22 };
}

Deno.test("rope reference: hand-derived values, adjacent pairs (2i, 2i+1), not rotate_half's (i, i + D/2)", () => {
  // One token at position 1, one head of 4 channels, theta 100: pair 0 turns by 1, pair 1 by 100^-0.5 = 0.1.
  const out = rope({ x: f32([1, 0, 1, 0]), tokens: 1, heads: 1, headDim: 4, theta: 100, offset: 1 });
  assertClose(out, [Math.cos(1), Math.sin(1), Math.cos(0.1), Math.sin(0.1)], { atol: 0, rtol: 2 ** -23 });
  // rotate_half would pair channel 0 with channel 2: x = [1, 0, 0, 0] would become [cos 1, 0, sin 1, 0].
  const single = rope({ x: f32([1, 0, 0, 0]), tokens: 1, heads: 1, headDim: 4, theta: 100, offset: 1 });
  assertClose(single, [Math.cos(1), Math.sin(1), 0, 0], { atol: 0, rtol: 2 ** -23 });
  ok(Math.abs(single[2]) < 1e-12 && Math.abs(single[1] - Math.sin(1)) < 1e-7, "pair (0, 1), not (0, 2)");
});

Deno.test("rope reference: x is [tokens, heads, headDim], token t at position t", () => {
  // Two tokens, two heads, head of 2 channels, all x = [1, 0]. Token 1's heads turn by 1 radian,
  // token 0's not at all. Under [heads, tokens, headDim] element row 1 (token 0, head 1) would turn.
  const out = rope({ x: f32([1, 0, 1, 0, 1, 0, 1, 0]), tokens: 2, heads: 2, headDim: 2 });
  assertClose(out, [1, 0, 1, 0, Math.cos(1), Math.sin(1), Math.cos(1), Math.sin(1)], { atol: 0, rtol: 2 ** -23 });
});

Deno.test("rope reference: offset and positions add, fractional positions turn by fractional angles", () => {
  const x = randomF32(3 * 2 * 6, 1);
  const base = { x, tokens: 3, heads: 2, headDim: 6 };
  deepStrictEqual(rope({ ...base, offset: 7 }), rope({ ...base, positions: f32([7, 8, 9]) }));
  deepStrictEqual(
    rope({ ...base, positions: f32([1, 2, 3]), offset: 6 }),
    rope({ ...base, positions: f32([7, 8, 9]) }),
  );
  const half = rope({ x: f32([1, 0]), tokens: 1, heads: 1, headDim: 2, positions: f32([0.5]) });
  assertClose(half, [Math.cos(0.5), Math.sin(0.5)], { atol: 0, rtol: 2 ** -23 });
});

Deno.test("rope reference: ropeCache serves integer positions inside it; past its end the angle is computed, not wrapped", () => {
  const tokens = 6, heads = 1, headDim = 4;
  const x = randomF32(tokens * heads * headDim, 2);
  // A cache of 3 rows made with another theta, so a cached angle is told apart from a computed one.
  const other = ropeFrequencies(headDim, 7).invFreq;
  const ropeCache = Float32Array.from({ length: 3 * 2 }, (_, k) => Math.floor(k / 2) * other[k % 2]);
  const got = rope({ x, tokens, heads, headDim, ropeCache });
  const viaCache = rope({ x, tokens, heads, headDim, theta: 7 });
  const computed = rope({ x, tokens, heads, headDim });
  assertClose(got.subarray(0, 12), viaCache.subarray(0, 12), { atol: 0, rtol: 2 ** -23 }, "rows 0..2 from the cache");
  assertClose(got.subarray(12), computed.subarray(12), { atol: 0, rtol: 0 }, "rows 3..5 computed");
  // Wrapping would turn position 3 by cache row 0 (angle 0): x unchanged.
  ok(Math.abs(got[12] - x[12]) > 1e-3 || Math.abs(got[13] - x[13]) > 1e-3, "position 3 is not cache row 0");
  // A fractional position inside the table's range is computed too.
  const frac = rope({ x: x.subarray(0, 4), tokens: 1, heads, headDim, ropeCache, positions: f32([1.5]) });
  deepStrictEqual(frac, rope({ x: x.subarray(0, 4), tokens: 1, heads, headDim, positions: f32([1.5]) }));
});

Deno.test("rope reference: headOffset/headCount turn whole heads and copy the others exactly", () => {
  const x = randomF32(3 * 4 * 6, 3);
  const args = { x, tokens: 3, heads: 4, headDim: 6, offset: 2 };
  const got = rope({ ...args, headOffset: 1, headCount: 2 });
  const all = rope(args);
  for (let t = 0; t < 3; t++) {
    for (let h = 0; h < 4; h++) {
      const row = (t * 4 + h) * 6;
      const want = h === 1 || h === 2 ? all : x;
      deepStrictEqual([...got.subarray(row, row + 6)], [...want.subarray(row, row + 6)], `token ${t} head ${h}`);
    }
  }
});

Deno.test("rope reference: YaRN's attention factor multiplies the output", () => {
  const scaling: RopeScaling = { type: "yarn", factor: 8, originalMaxPositionEmbeddings: 4096 };
  const { attentionFactor } = ropeFrequencies(8, 10000, scaling);
  assertClose([attentionFactor], [0.1 * Math.log(8) + 1], { atol: 0, rtol: 1e-15 });
  const out = rope({ x: f32([1, 0, 0, 0, 0, 0, 0, 0]), tokens: 1, heads: 1, headDim: 8, scaling });
  assertClose([out[0]], [attentionFactor], { atol: 0, rtol: 2 ** -23 }, "position 0: x times the factor");
});

Deno.test("rope reference: frequencies match transformers' LlamaRotaryEmbedding for every scaling", async () => {
  const golden = await loadRopeGolden();
  ok(golden.freqs.length >= 7 && golden.meta.transformers, "golden has the scalings and a transformers version");
  for (const c of golden.freqs) {
    const { invFreq, attentionFactor } = ropeFrequencies(c.headDim, c.theta, c.scaling ?? undefined);
    // transformers computes theta ** (2i / dim) in f32; ours is f64 rounded once: a few f32 ULPs apart.
    assertClose(invFreq, c.invFreq, { atol: 0, rtol: 2 ** -20 }, `${c.label} invFreq`);
    assertClose([attentionFactor], [c.attentionFactor], { atol: 0, rtol: 1e-6 }, `${c.label} attention factor`);
    if (c.forwardCosLast) {
      // The forward pass at positions 0 .. seqLen - 1 used these frequencies (dynamic NTK's update).
      const last = (c.scaling as { seqLen: number }).seqLen - 1;
      const cos = Array.from(invFreq, (f) => Math.cos(last * f));
      assertClose(cos, c.forwardCosLast, { atol: last * 2 ** -22, rtol: 0 }, `${c.label} forward cos`);
    }
  }
});

/** Applies the reference rope after permuting the weights, for the transformers equivalence tests. */
function ropeViaPermutation(
  g: Golden["llama"],
  run: (args: RopeArgs) => Float32Array | Promise<Float32Array>,
): Promise<{ q: Float32Array; k: Float32Array }> {
  const project = (w: Float32Array, rows: number) => {
    const out = new Float32Array(g.S * rows);
    for (let s = 0; s < g.S; s++) {
      for (let r = 0; r < rows; r++) {
        let acc = 0;
        for (let c = 0; c < g.hidden; c++) acc += g.x[s * g.hidden + c] * w[r * g.hidden + c];
        out[s * rows + r] = acc;
      }
    }
    return out;
  };
  const wq = permuteRopeChannels(f32(g.wq), g.H, g.D, g.hidden);
  const wk = permuteRopeChannels(f32(g.wk), g.HKV, g.D, g.hidden);
  const common = { tokens: g.S, headDim: g.D, offset: g.offset, theta: g.theta, scaling: g.scaling };
  return Promise.all([
    run({ ...common, x: project(wq, g.H * g.D), heads: g.H }),
    run({ ...common, x: project(wk, g.HKV * g.D), heads: g.HKV }),
  ]).then(([q, k]) => ({ q, k }));
}

/** transformers' rotate_half output `[S, H, D]` in the adjacent order: channel 2i <- i, 2i + 1 <- i + D/2. */
function adjacentOrder(values: number[], rows: number, D: number): Float32Array {
  return permuteRopeChannels(f32(values), rows, D, 1);
}

async function checkLlamaEquivalence(run: (args: RopeArgs) => Float32Array | Promise<Float32Array>, label: string) {
  const g = (await loadRopeGolden()).llama;
  const { q, k } = await ropeViaPermutation(g, run);
  // Both sides round q to f32 and turn it (f32 angles on the torch side): |q| (|angle| 2^-22 + 2^-20).
  const tol = { atol: maxAbs(g.qEmbed) * ((g.offset + g.S) * 2 ** -22 + 2 ** -19), rtol: 2 ** -20 };
  assertClose(q, adjacentOrder(g.qEmbed, g.S * g.H, g.D), tol, `${label}: q`);
  assertClose(k, adjacentOrder(g.kEmbed, g.S * g.HKV, g.D), tol, `${label}: k`);
  // The scores are invariant: q·k over the permuted channels equals transformers' q_embed·k_embed.
  const scores: number[] = [];
  for (let h = 0; h < g.H; h++) {
    for (let i = 0; i < g.S; i++) {
      for (let j = 0; j < g.S; j++) {
        let acc = 0;
        for (let d = 0; d < g.D; d++) acc += q[(i * g.H + h) * g.D + d] * k[(j * g.HKV) * g.D + d];
        scores.push(acc);
      }
    }
  }
  assertClose(scores, g.scores, { atol: 8 * tol.atol * maxAbs(g.kEmbed) * g.D, rtol: 2 ** -18 }, `${label}: scores`);
}

Deno.test("rope reference + permuteRopeChannels equals transformers' apply_rotary_pos_emb (YaRN, offset 7)", async () => {
  await checkLlamaEquivalence(rope, "reference");
  // Pinned: the same rope on the unpermuted projection lands elsewhere.
  const g = (await loadRopeGolden()).llama;
  const unpermuted = rope({
    x: Float32Array.from({ length: g.S * g.H * g.D }, (_, e) => {
      const s = Math.floor(e / (g.H * g.D)), r = e % (g.H * g.D);
      let acc = 0;
      for (let c = 0; c < g.hidden; c++) acc += g.x[s * g.hidden + c] * g.wq[r * g.hidden + c];
      return acc;
    }),
    tokens: g.S,
    heads: g.H,
    headDim: g.D,
    offset: g.offset,
    theta: g.theta,
    scaling: g.scaling,
  });
  const expected = adjacentOrder(g.qEmbed, g.S * g.H, g.D);
  ok(unpermuted.some((v, i) => Math.abs(v - expected[i]) > 0.05), "rope without the permutation must differ");
});

Deno.test("permuteRopeChannels: bad sizes are refused by name", async () => {
  await assertThrowsMessage(
    () => permuteRopeChannels(new Float32Array(12), 1, 3, 4),
    "permuteRopeChannels: headDim must be even, got 3",
  );
  await assertThrowsMessage(
    () => permuteRopeChannels(new Float32Array(10), 1, 4, 2),
    "permuteRopeChannels: weight must have length heads * headDim * cols = 8, got 10",
  );
  await assertThrowsMessage(
    () => permuteRopeChannels(new Float32Array(0), 0, 4, 2),
    "heads must be an integer >= 1, got 0",
  );
});

Deno.test("permuteRopeChannels: row 2i <- i, 2i + 1 <- i + D/2 within each head", () => {
  deepStrictEqual([...permuteRopeChannels(f32([0, 1, 2, 3, 4, 5, 6, 7]), 2, 4, 1)], [0, 2, 1, 3, 4, 6, 5, 7]);
  deepStrictEqual([...permuteRopeChannels(f32([0, 1, 2, 3]), 1, 2, 2)], [0, 1, 2, 3]);
});

Deno.test("rope reference matches torch at fractional positions", async () => {
  const g = (await loadRopeGolden()).fractional;
  const got = rope({ x: f32(g.x), tokens: 3, heads: 2, headDim: 6, positions: f32(g.positions) });
  assertClose(got, g.out, { atol: 0, rtol: 2 ** -22 }, "fractional positions");
});

// positions[t] + offset is rounded to f32 before it multiplies invFreq, as the kernel adds in f32.
// At 0.3 + 1000 the f32 sum, 1000.2999878, is 1.2e-5 below the f64 one: an angle off by that much.
// (The kernel's tolerance at angles near 1000, ropeTolerance, is larger than that, so only the
// reference's rule is told apart here.)
Deno.test("rope reference: a fractional position plus offset is rounded to f32 before the angle (0.3 + 1000)", () => {
  const args = { x: f32([1, 0]), tokens: 1, heads: 1, headDim: 2, positions: f32([0.3]), offset: 1000 };
  const p = Math.fround(Math.fround(0.3) + 1000);
  ok(Math.abs(p - (Math.fround(0.3) + 1000)) > 1e-5, "the f32 sum differs from the f64 one");
  assertClose(rope(args), [Math.cos(p), Math.sin(p)], { atol: 0, rtol: 2 ** -22 });
});

async function rejectsBadRope(run: (args: RopeArgs) => unknown): Promise<void> {
  const x = f32([1, 2, 3, 4, 5, 6, 7, 8]);
  await assertThrowsMessage(() => run({ x, tokens: 1, heads: 1, headDim: 3 }), "rope: headDim must be even, got 3");
  await assertThrowsMessage(
    () => run({ x, tokens: 3, heads: 1, headDim: 4 }),
    "rope: x must have length tokens * heads * headDim = 12, got 8",
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 0, heads: 1, headDim: 8 }),
    "rope: tokens must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 2, heads: 1, headDim: 4, headOffset: 2 }),
    "rope: headOffset must be an integer in [0, 1], got 2",
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 2, heads: 2, headDim: 2, headOffset: 1, headCount: 2 }),
    "rope: headCount must be an integer in [0, 1], got 2",
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 2, heads: 1, headDim: 4, theta: -1 }),
    "rope: theta must be > 0, got -1",
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 2, heads: 1, headDim: 4, offset: 1e39 }),
    "rope: offset must be a finite f32",
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 2, heads: 1, headDim: 4, positions: f32([1]) }),
    "rope: positions must have length tokens = 2, got 1",
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 2, heads: 1, headDim: 4, ropeCache: f32([1, 2, 3]) }),
    "rope: ropeCache must have length cacheLength * headDim / 2 (a multiple of 2), got 3",
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 2, heads: 1, headDim: 4, scaling: { type: "ntk" } as unknown as RopeScaling }),
    'rope: scaling.type must be one of "linear", "dynamic", "yarn", "llama3", got "ntk"',
  );
  await assertThrowsMessage(
    () => run({ x, tokens: 2, heads: 1, headDim: 4, scaling: { type: "linear", factor: 0 } }),
    "rope: scaling.factor must be > 0, got 0",
  );
  await assertThrowsMessage(
    () =>
      run({
        x,
        tokens: 2,
        heads: 1,
        headDim: 4,
        scaling: {
          type: "llama3",
          factor: 8,
          lowFreqFactor: 4,
          highFreqFactor: 1,
          originalMaxPositionEmbeddings: 8192,
        },
      }),
    "rope: scaling.highFreqFactor must be > lowFreqFactor, got 1 <= 4",
  );
}

Deno.test("rope reference: bad input throws naming the argument", () => rejectsBadRope(rope));

gpuTest("rope GPU: bad input throws before dispatch", async (gpu) => {
  await rejectsBadRope((args) => ropeGpu(gpu, args));
  await assertThrowsMessage(
    () => ropeGpu(gpu, { x: f32([1, 2]), tokens: 1, heads: 1, headDim: 2 }, { override: "kernel.soc" as never }),
    'override "kernel.soc" is not a variant of entry point "kernel"',
  );
});

gpuTest("rope GPU: more than 65,535 workgroups fold into y, and the kernel recovers its place", async (gpu) => {
  const plan = ropePlan(gpu, { tokens: 600_000, heads: 32, headDim: 128 });
  // 600,000 tokens x 4 groups of 8 heads x 32 vec4 columns / 256 = 300,000 workgroups.
  deepStrictEqual(plan.workgroups, foldWorkgroups(300_000, 65_535));
  deepStrictEqual(plan.cost, { bytes: 8 * 600_000 * 32 * 128 + 4 * 600_000, flops: 3 * 600_000 * 32 * 128 });
  const args = { x: randomF32(17 * 12 * 64, 4), tokens: 17, heads: 12, headDim: 64, offset: 5 };
  const small = ropePlan(gpu, args);
  deepStrictEqual(small.workgroups, [3, 1, 1]); // 17 x 2 x 16 = 544 invocations
  const folded = { ...small, workgroups: foldWorkgroups(3, 2) };
  const { invFreq } = ropeFrequencies(64);
  const positions = Float32Array.from({ length: 17 }, (_, t) => t);
  const [out] = await gpu.run(folded, [args.x, positions, invFreq, new Float32Array(0)]);
  assertClose(out, rope(args), ropeTolerance(args), "folded 2 x 2 grid, the last workgroup idle");
});

const ropeCases: { label: string; args: RopeArgs }[] = [];
for (
  const [tokens, heads, headDim] of [[1, 1, 2], [7, 3, 8], [5, 9, 128], [3, 17, 64], [9, 5, 6], [4, 3, 10], [2, 8, 80]]
) {
  const x = randomF32(tokens * heads * headDim, tokens * 100 + heads * 10 + headDim, -2, 2);
  ropeCases.push({ label: `${tokens}x${heads}x${headDim}`, args: { x, tokens, heads, headDim } });
  ropeCases.push({
    label: `${tokens}x${heads}x${headDim} offset, fractional positions, head range, yarn`,
    args: {
      x,
      tokens,
      heads,
      headDim,
      positions: randomF32(tokens, tokens, -3, 300),
      offset: 1000,
      headOffset: Math.min(1, heads),
      headCount: Math.max(0, heads - 2),
      theta: 500000,
      scaling: { type: "yarn", factor: 4, originalMaxPositionEmbeddings: 512 },
    },
  });
  ropeCases.push({
    label: `${tokens}x${heads}x${headDim} cache of 4, llama3`,
    args: {
      x,
      tokens,
      heads,
      headDim,
      positions: Float32Array.from({ length: tokens }, (_, t) => [0, 3, 4, 2.5, -1, 1, 7, 3, 2][t]),
      ropeCache: randomF32(4 * (headDim / 2), 9, -4, 4),
      scaling: { type: "llama3", factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 64 },
    },
  });
}
checkAgainstReference<RopeArgs, RopeVariant>("rope", KERNELS, "kernel", ropeCases, rope, ropeGpu, ropeTolerance);

gpuTest("rope GPU matches transformers' apply_rotary_pos_emb through permuteRopeChannels", async (gpu) => {
  await checkLlamaEquivalence((args) => ropeGpu(gpu, args), "GPU");
});
