import { deepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import { assertClose, assertThrowsMessage, checkAgainstReference, gpuTest, loadGolden } from "../../harness/testing.ts";
import { alibi, type AlibiArgs, alibiGpu, alibiPlan, alibiSlopes, KERNELS } from "./mod.ts";
import type { AlibiVariant } from "./kernels.gen.ts";

type JsonF32 = (number | string)[];
interface Golden {
  meta: { torch: string };
  cases: { H: number; L: number; S: number; queryOffset: number; slopes: number[]; out: number[] }[];
  sdpa: {
    H: number;
    L: number;
    S: number;
    D: number;
    queryOffset: number;
    q: number[];
    k: number[];
    v: number[];
    causal: JsonF32;
    out: number[];
    outBloom: number[];
  };
}
const loadAlibiGolden = () => loadGolden<Golden>(new URL("./goldens/alibi.json", import.meta.url));
const fromJson = (xs: JsonF32) => Float32Array.from(xs, Number);
/** The reference and torch both round an f64 bias to f32 once (slopes identical in f64). */
const oneUlp = { atol: 0, rtol: 2 ** -23 };
/**
 * The kernel multiplies the exact integer distance by the f32-rounded slope and rounds once (up to
 * 2^-23 relative from the exact bias); the reference and torch round the exact product once (2^-24):
 * up to 1.5 x 2^-23 apart, so 2^-22.
 */
const gpuTolerance = { atol: 0, rtol: 2 ** -22 };

Deno.test("alibi reference: the paper's slopes, including the non-monotonic tail for 12 and 20 heads", async () => {
  deepStrictEqual(alibiSlopes(8), [1, 2, 3, 4, 5, 6, 7, 8].map((k) => 2 ** -k));
  deepStrictEqual(alibiSlopes(1), [2 ** -8]);
  // 12 heads: the 8 slopes of 8 heads, then every other slope of 16 heads (2^-0.5, 2^-1.5, ...).
  assertClose(alibiSlopes(12), [...alibiSlopes(8), 2 ** -0.5, 2 ** -1.5, 2 ** -2.5, 2 ** -3.5], {
    atol: 0,
    rtol: 1e-15,
  });
  ok(alibiSlopes(12)[8] > alibiSlopes(12)[7], "not monotonic");
  for (const c of (await loadAlibiGolden()).cases) {
    assertClose(alibiSlopes(c.H), c.slopes, { atol: 0, rtol: 1e-15 }, `get_slopes(${c.H})`);
  }
});

Deno.test("alibi reference: [1, H, L, S] with bias m (j - (i + queryOffset)), the relative form, not BLOOM's m j", () => {
  const m = 2 ** -8;
  deepStrictEqual([...alibi({ H: 1, L: 2, S: 3 })], [0, m, 2 * m, -m, 0, m].map(Math.fround));
  // Decode: one query at position 3 of 4 keys.
  deepStrictEqual([...alibi({ H: 1, L: 1, S: 4, queryOffset: 3 })], [-3 * m, -2 * m, -m, 0].map(Math.fround));
  // Head-major: 2 heads have slopes 2^-4 and 2^-8; head 1's rows come after all of head 0's.
  const two = alibi({ H: 2, L: 1, S: 2 });
  deepStrictEqual([...two], [0, 2 ** -4, 0, 2 ** -8]);
});

Deno.test("alibi reference matches the torch goldens (H = 1, 8, 12, 20, 32; odd L and S; query offsets)", async () => {
  const golden = await loadAlibiGolden();
  ok(golden.cases.length >= 5 && golden.meta.torch, "golden has cases and a torch version");
  for (const c of golden.cases) {
    assertClose(
      alibi({ H: c.H, L: c.L, S: c.S, queryOffset: c.queryOffset }),
      c.out,
      oneUlp,
      `H=${c.H} L=${c.L} S=${c.S} offset=${c.queryOffset}`,
    );
  }
});

/** Softmax attention in f64 with an additive bias [H, L, S] (what attention does with a float mask). */
function attend(g: Golden["sdpa"], bias: Float32Array): number[] {
  const { H, L, S, D } = g;
  const out: number[] = [];
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < L; i++) {
      const scores = Array.from({ length: S }, (_, j) => {
        let dot = 0;
        for (let d = 0; d < D; d++) dot += g.q[(h * L + i) * D + d] * g.k[(h * S + j) * D + d];
        return dot / Math.sqrt(D) + bias[(h * L + i) * S + j];
      });
      const top = Math.max(...scores);
      const w = scores.map((s) => Math.exp(s - top));
      const sum = w.reduce((a, b) => a + b, 0);
      for (let d = 0; d < D; d++) out.push(w.reduce((acc, wj, j) => acc + wj * g.v[(h * S + j) * D + d], 0) / sum);
    }
  }
  return out;
}

Deno.test("alibi composes with attention's additive causal mask by addition, as torch's SDPA with attn_mask", async () => {
  const g = (await loadAlibiGolden()).sdpa;
  const bias = alibi({ H: g.H, L: g.L, S: g.S, queryOffset: g.queryOffset });
  const causal = fromJson(g.causal); // [L, S], -Infinity above the offset diagonal
  const mask = bias.map((b, e) => b + causal[e % (g.L * g.S)]);
  const got = attend(g, mask);
  // f64 attention on the f32-rounded bias against torch's f64 on the exact bias: the bias differs by
  // an f32 rounding (|m (j - i)| 2^-24 < 2^-18 here), softmax weights by as much relatively.
  assertClose(got, g.out, { atol: 1e-5, rtol: 1e-5 }, "SDPA(q, k, v, attn_mask = alibi + causal)");
  // BLOOM's m j gives the same attention, which is why only the bias itself can pin the form.
  assertClose(g.outBloom, g.out, { atol: 1e-6, rtol: 1e-6 }, "BLOOM's form, same attention");
  // Without the bias the attention differs: the bias matters at these sizes.
  const plain = attend(g, mask.map((_, e) => causal[e % (g.L * g.S)]));
  ok(plain.some((v, i) => Math.abs(v - g.out[i]) > 1e-3), "the bias changes the result");
});

async function rejectsBadInput(run: (args: AlibiArgs) => unknown): Promise<void> {
  await assertThrowsMessage(() => run({ H: 0, L: 1, S: 1 }), "alibi: H must be an integer >= 1, got 0");
  await assertThrowsMessage(
    () => run({ H: 2, L: 1.5, S: 1 }),
    "alibi: L must be an integer in [1, 16777216], got 1.5",
  );
  await assertThrowsMessage(
    () => run({ H: 2, L: 1, S: 2 ** 25 }),
    "alibi: S must be an integer in [1, 16777216], got 33554432",
  );
  await assertThrowsMessage(
    () => run({ H: 2, L: 1, S: 3, queryOffset: 0.5 }),
    "alibi: queryOffset must be an integer in [-16777216, 16777216], got 0.5",
  );
  await assertThrowsMessage(
    () => run({ H: 1024, L: 2 ** 12, S: 2 ** 12 }),
    "alibi: H * L * S must be at most 4294967295, got 17179869184",
  );
}
Deno.test("alibi reference: bad input throws naming the argument", () => rejectsBadInput(alibi));

gpuTest("alibi GPU: bad input throws before dispatch", async (gpu) => {
  await rejectsBadInput((args) => alibiGpu(gpu, args));
  await assertThrowsMessage(
    () => alibiGpu(gpu, { H: 1, L: 1, S: 1 }, { override: "kernel.soc" as never }),
    'override "kernel.soc" is not a variant of entry point "kernel"',
  );
});

gpuTest("alibi GPU: more than 65,535 workgroups fold into y, and the kernel recovers its place", async (gpu) => {
  deepStrictEqual(alibiPlan(gpu, { H: 32, L: 4096, S: 4096 }).workgroups, foldWorkgroups(524_288, 65_535));
  const args = { H: 3, L: 7, S: 100, queryOffset: 2 }; // 2100 elements: 525 vec4s, 3 workgroups
  const plan = alibiPlan(gpu, args);
  deepStrictEqual(plan.workgroups, [3, 1, 1]);
  const [out] = await gpu.run({ ...plan, workgroups: foldWorkgroups(3, 2) }, [Float32Array.from(alibiSlopes(3))]);
  assertClose(out, alibi(args), gpuTolerance, "folded 2 x 2 grid");
});

gpuTest("alibi GPU matches the torch goldens", async (gpu) => {
  for (const c of (await loadAlibiGolden()).cases) {
    assertClose(
      await alibiGpu(gpu, { H: c.H, L: c.L, S: c.S, queryOffset: c.queryOffset }),
      c.out,
      gpuTolerance,
      `H=${c.H} L=${c.L} S=${c.S}`,
    );
  }
});

// Tolerance: gpuTolerance (the kernel rounds the slope, then the product).
checkAgainstReference<AlibiArgs, AlibiVariant>(
  "alibi",
  KERNELS,
  "kernel",
  [
    [1, 1, 1, 0],
    [12, 5, 9, 4],
    [20, 3, 13, -2],
    [12, 7, 16, 9],
    [5, 1, 4099, 4098],
    [32, 33, 64, 31],
    [3, 2, 3, 0],
    [6, 3, 5, 100],
  ].map(([H, L, S, queryOffset]) => ({
    label: `H=${H} L=${L} S=${S} offset=${queryOffset}`,
    args: { H, L, S, queryOffset },
  })),
  alibi,
  alibiGpu,
  gpuTolerance,
);
