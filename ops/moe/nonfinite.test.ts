// moe on NaN and ±Infinity, held to torch (goldens/nonfinite.py): the router's softmax is torch's, so a
// NaN or +inf logit (or a row of only -inf) makes every probability NaN, and -inf logits are
// probability 0. torch.topk ranks NaN above every number and leaves the order of equal values (NaN
// ones included) undefined, so where torch's choice is decided (no tie at the top k) the experts are
// torch's, and a NaN row takes experts 0 .. k - 1 by this op's tie rule (the lower index first), with
// NaN gates; the gates are torch's everywhere. moeGather sums the gated rows of the kept assignments:
// NaN and ±inf in y or in a gate propagate, and a dropped assignment's gate is never applied.
// (moeDispatch reads integers only.) Both entry points give the reference's values.
import { deepStrictEqual } from "node:assert/strict";
import {
  KERNELS,
  moeGather,
  type MoeGatherArgs,
  moeGatherGpu,
  moeRouter,
  type MoeRouterArgs,
  moeRouterGpu,
  type MoeVariant,
} from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  entry: "router" | "gather";
  logits?: GoldenFloat[];
  experts?: number[];
  y?: GoldenFloat[];
  tokenSlot?: number[];
  gates: GoldenFloat[];
  out?: GoldenFloat[];
  [size: string]: unknown;
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const routerArgs = (c: Case): MoeRouterArgs => ({
  logits: goldenF32(c.logits!),
  T: c.T as number,
  E: c.E as number,
  k: c.k as number,
  normTopkProb: c.normTopkProb as boolean,
});
const gatherArgs = (c: Case): MoeGatherArgs => ({
  y: goldenF32(c.y!),
  tokenSlot: Int32Array.from(c.tokenSlot!),
  gates: goldenF32(c.gates),
  T: c.T as number,
  k: c.k as number,
  slots: c.slots as number,
  D: c.D as number,
});
const routers = golden.cases.filter((c) => c.entry === "router");
const gathers = golden.cases.filter((c) => c.entry === "gather");

Deno.test(`moeRouter reference: NaN and ±Infinity logits give torch ${golden.torch}'s gates and decided choices`, () => {
  for (const c of routers) {
    const args = routerArgs(c);
    assertNonFiniteOperands({ logits: args.logits });
    const { experts, gates } = moeRouter(args);
    assertClose(gates, goldenF32(c.gates), { atol: 1e-7, rtol: 2e-6 }, `gates, norm ${args.normTopkProb}`);
    const { T, E, k, logits } = args;
    for (let t = 0; t < T; t++) {
      const row = [...logits.subarray(t * E, (t + 1) * E)];
      const mine = [...experts.subarray(t * k, (t + 1) * k)];
      const probabilities = row.map((l) => Math.exp(l - Math.max(...row)));
      if (probabilities.some(Number.isNaN)) {
        deepStrictEqual(mine, [...Array(k).keys()], `row ${t}: a NaN softmax takes experts 0 .. k - 1`);
        continue;
      }
      const sorted = [...probabilities].sort((a, b) => b - a);
      if (new Set(sorted.slice(0, k + 1)).size === k + 1) {
        deepStrictEqual(mine, c.experts!.slice(t * k, (t + 1) * k), `row ${t}: torch's choice`);
      }
    }
  }
});

Deno.test(`moeGather reference: NaN and ±Infinity in y and the gates give torch ${golden.torch}'s sums`, () => {
  for (const c of gathers) {
    const args = gatherArgs(c);
    assertNonFiniteOperands({ y: args.y, gates: args.gates });
    assertClose(moeGather(args), goldenF32(c.out!), { atol: 1e-12, rtol: 2 ** -22 }, "gather");
  }
});

// The router's choices exactly, its gates to f32 exp; the gather's sums of two terms.
const flat = (r: { experts: Int32Array; gates: Float32Array }) => Float64Array.from([...r.experts, ...r.gates]);
checkAgainstReference<MoeRouterArgs, MoeVariant>(
  "moeRouter (non-finite)",
  KERNELS,
  "router",
  routers.map((c) => ({ label: `norm ${c.normTopkProb}`, args: routerArgs(c) })),
  (args) => flat(moeRouter(args)),
  async (gpu, args, options) => flat(await moeRouterGpu(gpu, args, options)),
  { atol: 1e-7, rtol: 2e-6 },
);
checkAgainstReference<MoeGatherArgs, MoeVariant>(
  "moeGather (non-finite)",
  KERNELS,
  "gather",
  gathers.map((c) => ({ label: "gather", args: gatherArgs(c) })),
  moeGather,
  moeGatherGpu,
  { atol: 1e-6, rtol: 1e-6 },
);
