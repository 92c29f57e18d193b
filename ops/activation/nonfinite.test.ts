// gatedActivation on NaN and ±Infinity in gate and in up, held to torch (goldens/nonfinite.py): every
// pair of gate in [NaN, inf, -inf, 0, 1, -1] and up in [NaN, inf, -inf, 0, 2] gives torch's float64
// f(gate) * up, so silu(-inf) * anything is NaN (-inf * sigmoid(-inf) = -inf * 0), f(gate) * 0 is NaN
// where f(gate) is infinite, and NaN anywhere gives NaN. torch's float32 CPU kernels agree except at
// geglu with gate +inf, where float32 gelu(+inf) is NaN and this op (like float64) takes the limit,
// inf (pinned below, as activation.test.ts pins it for gelu). The `kernel` entry point's non-finite
// test is in activation.test.ts ("NaN and ±Infinity give what torch gives").
import { deepStrictEqual } from "node:assert/strict";
import { gatedActivation, gatedActivationGpu, type GatedActivationKind, KERNELS } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  eachVariant,
  goldenF32,
  type GoldenFloat,
  gpuTest,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  kind: GatedActivationKind;
  gate: GoldenFloat[];
  up: GoldenFloat[];
  out: GoldenFloat[];
  out_f32: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case) => ({ kind: c.kind, gate: goldenF32(c.gate), up: goldenF32(c.up) });

Deno.test(`gatedActivation reference: NaN and ±Infinity in gate and in up give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ gate: args.gate, up: args.up });
    const out = gatedActivation(args);
    const nonFinite = (v: number) => !Number.isFinite(v);
    // The finite values are the f64 product rounded once; the non-finite ones are exact.
    assertClose(out, goldenF32(c.out), { atol: 0, rtol: 2 ** -23 }, c.kind);
    // float32 torch differs only at geglu's gate +inf, where it gives NaN.
    const f32 = goldenF32(c.out_f32);
    const differ = [...out.keys()].filter((i) => (nonFinite(f32[i]) || nonFinite(out[i])) && !Object.is(f32[i], out[i]))
      .filter((i) => !(Number.isNaN(f32[i]) && Number.isNaN(out[i])));
    const plusInfGates = [...args.gate.keys()].filter((i) => args.gate[i] === Infinity && Math.abs(args.up[i]) > 0);
    deepStrictEqual(differ, c.kind === "geglu" ? plusInfGates : [], `${c.kind}: where float32 torch differs`);
  }
});

eachVariant(KERNELS, "gated", (variant) => {
  gpuTest(`gatedActivation GPU: ${variant} gives the reference's NaN and ±Infinity`, async (gpu) => {
    for (const c of golden.cases) {
      const args = argsOf(c);
      const got = await gatedActivationGpu(gpu, args, { override: variant });
      // The kernel's activation is a few f32 ulps from the reference's (activation.test.ts); the
      // non-finite values must match exactly.
      assertClose(got, gatedActivation(args), { atol: 1e-7, rtol: 1e-6 }, `${variant} ${c.kind}`);
    }
  });
});
