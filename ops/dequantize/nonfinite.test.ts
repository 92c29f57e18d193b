// dequantize on NaN and ±Infinity scales, held to torch (goldens/nonfinite.py, acc.float() * aScales[:,
// None] * wScales[None, :] in float32 on the CPU): NaN in either scale gives NaN, an infinite scale
// times a zero accumulator is NaN, and infinities otherwise keep their sign. (The accumulators are
// int32: they hold no NaN.) Every variant gives the reference's values exactly.
import { dequantize, type DequantizeArgs, dequantizeGpu, KERNELS } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  M: number;
  N: number;
  acc: number[];
  aScales: GoldenFloat[];
  wScales: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): DequantizeArgs => ({
  M: c.M,
  N: c.N,
  acc: Int32Array.from(c.acc),
  aScales: goldenF32(c.aScales),
  wScales: goldenF32(c.wScales),
});
const exact = { atol: 0, rtol: 0 }; // two f32 products, each rounded, in torch's order

Deno.test(`dequantize reference: NaN and ±Infinity in both scales give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ aScales: args.aScales, wScales: args.wScales });
    assertClose(dequantize(args), goldenF32(c.out), exact, `${c.M} x ${c.N}`);
  }
});

const cases = golden.cases.map((c) => ({ label: `NaN and ±Infinity scales, ${c.M} x ${c.N}`, args: argsOf(c) }));
checkAgainstReference("dequantize (non-finite)", KERNELS, "kernel", cases, dequantize, dequantizeGpu, exact);
