import { deepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  randomInt32,
  seededRandom,
} from "../../harness/testing.ts";
import type { ResidentDevice } from "../../harness/device.ts";
import { gather, gatherGpu } from "../gather/mod.ts";
import { matmul, matmulGpu } from "../matmul/mod.ts";
import {
  KERNELS,
  moeDispatch,
  type MoeDispatchArgs,
  moeDispatchGpu,
  moeDispatchPlan,
  moeGather,
  type MoeGatherArgs,
  moeGatherGpu,
  moeRouter,
  type MoeRouterArgs,
  moeRouterGpu,
} from "./mod.ts";
import type { MoeVariant } from "./kernels.gen.ts";

interface Golden {
  meta: { torch: string };
  router: {
    T: number;
    E: number;
    k: number;
    normTopkProb: boolean;
    logits: number[];
    experts: number[];
    gates: number[];
  }[];
  dispatch: {
    T: number;
    E: number;
    k: number;
    capacity: number;
    experts: number[];
    slotToken: number[];
    tokenSlot: number[];
  }[];
  layer: {
    T: number;
    D: number;
    F: number;
    E: number;
    k: number;
    normTopkProb: boolean;
    x: number[];
    logits: number[];
    wExperts: number[];
    cases: { capacity: number; dropped: number; out: number[] }[];
  };
}
const loadMoeGolden = () => loadGolden<Golden>(new URL("./goldens/moe.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);
/** Gates are rounded from f64 once on both sides. */
const oneUlp = { atol: 0, rtol: 2 ** -23 };

Deno.test("moeRouter reference: softmax then top k, ties to the lower index, normTopkProb on and off", () => {
  // Logits [0, 1, 1, -1]: experts 1 and 2 tie; the lower index comes first.
  const logits = f32([0, 1, 1, -1]);
  const normed = moeRouter({ logits, T: 1, E: 4, k: 2, normTopkProb: true });
  deepStrictEqual([...normed.experts], [1, 2]);
  deepStrictEqual([...normed.gates], [0.5, 0.5]);
  // Without renormalising, the gates are the softmax over all four: e / (2e + 1 + 1/e).
  const raw = moeRouter({ logits, T: 1, E: 4, k: 2, normTopkProb: false });
  const p = Math.E / (2 * Math.E + 1 + 1 / Math.E);
  assertClose(raw.gates, [p, p], oneUlp);
  // Switch at k = 1: renormalising would make every gate 1, which is why there is no default.
  const switchGate = moeRouter({ logits: f32([2, 0]), T: 1, E: 2, k: 1, normTopkProb: false });
  assertClose(switchGate.gates, [1 / (1 + Math.exp(-2))], oneUlp);
  ok(switchGate.gates[0] < 0.9);
  // Softmax before top-k, not top-k of the logits then softmax over k (Mixtral, not the other order):
  // with normTopkProb false those differ; the probabilities are over all E.
  const three = moeRouter({ logits: f32([3, 2, 1]), T: 1, E: 3, k: 2, normTopkProb: false });
  const z = Math.exp(3) + Math.exp(2) + Math.exp(1);
  assertClose(three.gates, [Math.exp(3) / z, Math.exp(2) / z], oneUlp);
});

Deno.test("moeDispatch reference: overflow drops by rank, then token index (not arrival order)", () => {
  // Tokens 0 and 1 choose [0, 1] and [1, 0]; capacity 1. Rank 0 first: token 0 takes expert 0,
  // token 1 takes expert 1; their second choices are both dropped. In arrival order (token 0's two
  // choices, then token 1's) token 0 would take both slots and token 1 none.
  const got = moeDispatch({ experts: new Int32Array([0, 1, 1, 0]), T: 2, E: 2, k: 2, capacity: 1 });
  deepStrictEqual([...got.slotToken], [0, 1]);
  deepStrictEqual([...got.tokenSlot], [0, -1, 1, -1]);
  // Within a rank, the lower token index wins: three tokens choosing expert 0, capacity 2.
  const same = moeDispatch({ experts: new Int32Array([0, 0, 0]), T: 3, E: 1, k: 1, capacity: 2 });
  deepStrictEqual([...same.slotToken], [0, 1]);
  deepStrictEqual([...same.tokenSlot], [0, 1, -1]);
  // Unused slots are -1: token 0 in expert 1's first slot, the other three empty.
  const single = moeDispatch({ experts: new Int32Array([1]), T: 1, E: 2, k: 1, capacity: 2 });
  deepStrictEqual([...single.slotToken], [-1, -1, 0, -1]);
});

Deno.test("moeGather reference: the gate is applied in gather, once; dropped slots add nothing", () => {
  const y = f32([1, 2, 10, 20, 100, 200]); // slots 0..2, D = 2
  const out = moeGather({
    y,
    tokenSlot: new Int32Array([2, -1, 0, 1]),
    gates: f32([0.5, 0.5, 0.25, 0.75]),
    T: 2,
    k: 2,
    slots: 3,
    D: 2,
  });
  deepStrictEqual([...out], [50, 100, 0.25 + 7.5, 0.5 + 15]);
});

Deno.test("moe reference matches the torch goldens (router, dispatch)", async () => {
  const golden = await loadMoeGolden();
  ok(golden.router.length >= 3 && golden.dispatch.length >= 2 && golden.meta.torch);
  for (const c of golden.router) {
    const got = moeRouter({ T: c.T, E: c.E, k: c.k, normTopkProb: c.normTopkProb, logits: f32(c.logits) });
    deepStrictEqual([...got.experts], c.experts, `router T=${c.T} E=${c.E} k=${c.k}`);
    assertClose(got.gates, c.gates, oneUlp, `router gates T=${c.T} E=${c.E} k=${c.k}`);
  }
  for (const c of golden.dispatch) {
    const got = moeDispatch({ T: c.T, E: c.E, k: c.k, capacity: c.capacity, experts: Int32Array.from(c.experts) });
    deepStrictEqual([...got.slotToken], c.slotToken, `dispatch T=${c.T} E=${c.E} capacity=${c.capacity}`);
    deepStrictEqual([...got.tokenSlot], c.tokenSlot, `dispatch T=${c.T} E=${c.E} capacity=${c.capacity}`);
  }
});

/** The layer's four steps through the given implementations; experts' inputs by gather, each expert a matmul. */
async function moeLayer(
  g: Golden["layer"],
  capacity: number,
  step: {
    router: (a: MoeRouterArgs) => ReturnType<typeof moeRouter> | Promise<ReturnType<typeof moeRouter>>;
    dispatch: (a: MoeDispatchArgs) => ReturnType<typeof moeDispatch> | Promise<ReturnType<typeof moeDispatch>>;
    rows: (table: Float32Array, indices: Int32Array) => Float32Array | Promise<Float32Array>;
    expert: (a: Float32Array, b: Float32Array) => Float32Array | Promise<Float32Array>;
    combine: (a: MoeGatherArgs) => Float32Array | Promise<Float32Array>;
  },
): Promise<Float32Array> {
  const { T, D, F, E, k } = g;
  const routing = await step.router({ logits: f32(g.logits), T, E, k, normTopkProb: g.normTopkProb });
  const slots = await step.dispatch({ experts: routing.experts, T, E, k, capacity });
  const inputs = await step.rows(f32(g.x), slots.slotToken); // [E * capacity, D], zeros in empty slots
  const y = new Float32Array(E * capacity * F);
  for (let e = 0; e < E; e++) {
    const a = inputs.subarray(e * capacity * D, (e + 1) * capacity * D);
    y.set(await step.expert(a, f32(g.wExperts.slice(e * D * F, (e + 1) * D * F))), e * capacity * F);
  }
  return step.combine({ y, tokenSlot: slots.tokenSlot, gates: routing.gates, T, k, slots: E * capacity, D: F });
}

// The experts' f32 products (summed over D = 12) against torch's f64: a few ULPs of the largest
// term; the gates round once. Measured: below 1e-6.
const layerTolerance = { atol: 1e-5, rtol: 1e-5 };

Deno.test("moe reference: router → dispatch → expert matmuls → gather equals a dense MoE layer (torch)", async () => {
  const g = (await loadMoeGolden()).layer;
  for (const c of g.cases) {
    const out = await moeLayer(g, c.capacity, {
      router: moeRouter,
      dispatch: moeDispatch,
      rows: (table, indices) => gather({ table, index: indices, rows: g.T, cols: g.D }),
      expert: (a, b) => matmul({ a, b, M: c.capacity, N: g.F, K: g.D }),
      combine: moeGather,
    });
    assertClose(out, c.out, layerTolerance, `capacity ${c.capacity} (${c.dropped} dropped)`);
  }
  ok(g.cases.some((c) => c.dropped > 0) && g.cases.some((c) => c.dropped === 0), "with and without drops");
});

gpuTest(
  "moe GPU: router → dispatch → ops/gather → ops/matmul → gather equals a dense MoE layer (torch)",
  async (gpu) => {
    const g = (await loadMoeGolden()).layer;
    for (const c of g.cases) {
      const out = await moeLayer(g, c.capacity, {
        router: (a) => moeRouterGpu(gpu, a),
        dispatch: (a) => moeDispatchGpu(gpu, a),
        rows: (table, indices) => gatherGpu(gpu, { table, index: indices, rows: g.T, cols: g.D }),
        expert: (a, b) => matmulGpu(gpu, { a, b, M: c.capacity, N: g.F, K: g.D }),
        combine: (a) => moeGatherGpu(gpu, a),
      });
      assertClose(out, c.out, layerTolerance, `capacity ${c.capacity} (${c.dropped} dropped)`);
    }
  },
);

gpuTest("moe GPU matches the torch goldens (router, dispatch)", async (gpu) => {
  const golden = await loadMoeGolden();
  for (const c of golden.router) {
    const got = await moeRouterGpu(gpu, {
      T: c.T,
      E: c.E,
      k: c.k,
      normTopkProb: c.normTopkProb,
      logits: f32(c.logits),
    });
    deepStrictEqual([...got.experts], c.experts, `router T=${c.T} E=${c.E} k=${c.k}`);
    assertClose(got.gates, c.gates, routerTolerance, `router gates T=${c.T} E=${c.E} k=${c.k}`);
  }
  for (const c of golden.dispatch) {
    const got = await moeDispatchGpu(gpu, {
      T: c.T,
      E: c.E,
      k: c.k,
      capacity: c.capacity,
      experts: Int32Array.from(c.experts),
    });
    deepStrictEqual([...got.slotToken], c.slotToken);
    deepStrictEqual([...got.tokenSlot], c.tokenSlot);
  }
});

async function rejectsBadInput(
  router: (a: MoeRouterArgs) => unknown,
  dispatch: (a: MoeDispatchArgs) => unknown,
  combine: (a: MoeGatherArgs) => unknown,
): Promise<void> {
  const logits = f32([1, 2, 3, 4]);
  await assertThrowsMessage(
    () => router({ logits, T: 2, E: 2, k: 3, normTopkProb: true }),
    "moeRouter: k must be an integer in [1, 2], got 3",
  );
  await assertThrowsMessage(
    () => router({ logits, T: 2, E: 2, k: 1 } as MoeRouterArgs),
    "moeRouter: normTopkProb must be true or false (no default), got undefined",
  );
  await assertThrowsMessage(
    () => router({ logits, T: 3, E: 2, k: 1, normTopkProb: false }),
    "moeRouter: logits must have length T * E = 6, got 4",
  );
  await assertThrowsMessage(
    () => dispatch({ experts: new Int32Array([0, 2]), T: 2, E: 2, k: 1, capacity: 1 }),
    "moeDispatch: experts[1] must be an expert in [0, 1], got 2",
  );
  await assertThrowsMessage(
    () => dispatch({ experts: new Int32Array([0, 1]), T: 2, E: 2, k: 1, capacity: 0 }),
    "moeDispatch: capacity must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => combine({ y: f32([1, 2]), tokenSlot: new Int32Array([2]), gates: f32([1]), T: 1, k: 1, slots: 2, D: 1 }),
    "moeGather: tokenSlot[0] must be -1 or a slot in [0, 1], got 2",
  );
  await assertThrowsMessage(
    () => combine({ y: f32([1, 2]), tokenSlot: new Int32Array([0]), gates: f32([1, 1]), T: 1, k: 1, slots: 2, D: 1 }),
    "moeGather: gates must have length T * k = 1, got 2",
  );
}
Deno.test("moe reference: bad input throws naming the argument", () =>
  rejectsBadInput(moeRouter, moeDispatch, moeGather));
gpuTest(
  "moe GPU: bad input throws before dispatch",
  (gpu) => rejectsBadInput((a) => moeRouterGpu(gpu, a), (a) => moeDispatchGpu(gpu, a), (a) => moeGatherGpu(gpu, a)),
);

gpuTest("moe GPU: more than 65,535 experts' workgroups fold into y", async (gpu: ResidentDevice) => {
  deepStrictEqual(
    moeDispatchPlan(gpu, { T: 4, E: 70_000, k: 1, capacity: 1 }).workgroups,
    foldWorkgroups(70_000, 65_535),
  );
  const args = { experts: randomInt32(50 * 2, 1, 0, 3), T: 50, E: 3, k: 2, capacity: 30 };
  // Make each token's two choices distinct (a router never picks an expert twice).
  for (let t = 0; t < 50; t++) {
    if (args.experts[2 * t] === args.experts[2 * t + 1]) args.experts[2 * t + 1] = (args.experts[2 * t] + 1) % 3;
  }
  const plan = { ...moeDispatchPlan(gpu, args), workgroups: foldWorkgroups(3, 2) };
  const [slotToken, tokenSlot] = await gpu.run(plan, [args.experts]);
  const want = moeDispatch(args);
  deepStrictEqual([...slotToken], [...want.slotToken]);
  deepStrictEqual([...tokenSlot], [...want.tokenSlot]);
});

// Router: the choices are exact (ties decided the same way); the gates are f32 exp and sums of E
// terms against f64: a few ULPs plus E · 2^-24 relative.
const routerTolerance = { atol: 1e-7, rtol: 2e-6 };
const flatRouting = (r: ReturnType<typeof moeRouter>) => Float64Array.from([...r.experts, ...r.gates]);
/** Logits with ties: small integers. */
const tiedLogits = (n: number, seed: number) => Float32Array.from(randomInt32(n, seed, -2, 3));
checkAgainstReference<MoeRouterArgs, MoeVariant>(
  "moeRouter",
  KERNELS,
  "router",
  [
    [1, 1, 1, true],
    [300, 8, 2, true],
    [257, 64, 8, false],
    [33, 20, 4, true],
    [100, 6, 6, false],
  ].flatMap(([T, E, k, norm]) => [
    {
      label: `T=${T} E=${E} k=${k} norm=${norm}`,
      args: {
        logits: randomF32(Number(T) * Number(E), Number(T), -4, 4),
        T,
        E,
        k,
        normTopkProb: norm,
      } as MoeRouterArgs,
    },
    {
      label: `T=${T} E=${E} k=${k} norm=${norm} tied`,
      args: { logits: tiedLogits(Number(T) * Number(E), Number(E)), T, E, k, normTopkProb: norm } as MoeRouterArgs,
    },
  ]),
  (args) => flatRouting(moeRouter(args)),
  async (gpu, args, options) => flatRouting(await moeRouterGpu(gpu, args, options)),
  routerTolerance,
);

/** Choices as a router makes them: k distinct experts per token, skewed so some experts overflow. */
function choices(T: number, E: number, k: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  const out = new Int32Array(T * k);
  for (let t = 0; t < T; t++) {
    const picked = new Set<number>();
    while (picked.size < k) picked.add(Math.floor(E * next() ** 2));
    out.set([...picked], t * k);
  }
  return out;
}
const flatDispatch = (d: ReturnType<typeof moeDispatch>) => Int32Array.from([...d.slotToken, ...d.tokenSlot]);
checkAgainstReference<MoeDispatchArgs, MoeVariant>(
  "moeDispatch",
  KERNELS,
  "dispatch",
  [[1, 1, 1, 1], [300, 8, 2, 40], [257, 16, 4, 100], [600, 3, 1, 1000], [50, 5, 5, 7]].map(([T, E, k, capacity]) => ({
    label: `T=${T} E=${E} k=${k} capacity=${capacity}`,
    args: { experts: choices(T, E, k, T + E), T, E, k, capacity },
  })),
  (args) => flatDispatch(moeDispatch(args)),
  async (gpu, args, options) => flatDispatch(await moeDispatchGpu(gpu, args, options)),
  { atol: 0, rtol: 0 },
);

/** tokenSlot with some drops (-1). */
const slotsFor = (T: number, k: number, slots: number, seed: number) => randomInt32(T * k, seed, -1, slots);
// Gather: k f32 products summed in order against f64: k ULPs of the sum of |terms|.
checkAgainstReference<MoeGatherArgs, MoeVariant>(
  "moeGather",
  KERNELS,
  "gather",
  [[1, 1, 1, 1], [37, 2, 50, 64], [20, 8, 100, 12], [9, 3, 20, 7], [5, 4, 11, 130]].map(([T, k, slots, D]) => ({
    label: `T=${T} k=${k} slots=${slots} D=${D}`,
    args: {
      y: randomF32(slots * D, D, -2, 2),
      tokenSlot: slotsFor(T, k, slots, T),
      gates: randomF32(T * k, k, 0, 1),
      T,
      k,
      slots,
      D,
    },
  })),
  moeGather,
  moeGatherGpu,
  { atol: 2e-6, rtol: 2e-6 },
);
