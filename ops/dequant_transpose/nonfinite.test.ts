// dequantTranspose on NaN and ±Infinity scales, held to torch (goldens/nonfinite.py, (codes.float() *
// scales[:, None]).t() in float32 on the CPU): a NaN scale makes its row NaN, an infinite scale times a
// zero code is NaN and otherwise ±inf by the code's sign. (The codes are integers: they hold no NaN.)
// Every variant gives the reference's values exactly.
import { dequantTranspose, type DequantTransposeArgs, dequantTransposeGpu, KERNELS } from "./mod.ts";
import { packQ8 } from "../matvec/reference.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  N: number;
  K: number;
  codes: number[];
  scales: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): DequantTransposeArgs => ({
  N: c.N,
  K: c.K,
  weight: packQ8(Int32Array.from(c.codes), c.N, c.K),
  scales: goldenF32(c.scales),
});
const exact = { atol: 0, rtol: 0 }; // one f32 product per element

Deno.test(`dequantTranspose reference: NaN and ±Infinity scales give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ scales: args.scales });
    assertClose(dequantTranspose(args), goldenF32(c.out), exact, `${c.N} x ${c.K}`);
  }
});

const cases = golden.cases.map((c) => ({ label: `NaN and ±Infinity scales, ${c.N} x ${c.K}`, args: argsOf(c) }));
checkAgainstReference(
  "dequantTranspose (non-finite)",
  KERNELS,
  "kernel",
  cases,
  dequantTranspose,
  dequantTransposeGpu,
  exact,
);
