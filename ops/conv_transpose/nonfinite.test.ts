// convTranspose1d on NaN and ±Infinity, held to torch (goldens/nonfinite.py, F.conv_transpose1d in
// float64 on float32 inputs, as the reference computes): a non-finite x reaches the outputs its taps
// land on; a non-finite weight tap reaches the outputs it lands on from every input position (times a
// zero x, an infinite tap is NaN); outputs no tap reaches (between strides) are the bias alone, however
// non-finite the weight; a non-finite bias sets its channel. With stride, padding, outputPadding,
// dilation and groups. Every entry point gives the reference's values, NaN for NaN.
import {
  convTranspose1d,
  type ConvTranspose1dArgs,
  convTranspose1dGpu,
  type ConvTransposeVariant,
  KERNELS,
} from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case extends Omit<ConvTranspose1dArgs, "x" | "weight" | "bias"> {
  nonfinite: "x" | "weight" | "bias";
  x: GoldenFloat[];
  weight: GoldenFloat[];
  bias: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
function argsOf(c: Case): ConvTranspose1dArgs {
  const { nonfinite: _, out: __, ...rest } = c;
  return { ...rest, x: goldenF32(c.x), weight: goldenF32(c.weight), bias: goldenF32(c.bias) };
}
const label = (c: Case) =>
  `non-finite ${c.nonfinite}, K ${c.kernelSize} stride ${c.stride} padding ${c.padding} dilation ${c.dilation} groups ${c.groups}`;

Deno.test(`convTranspose1d reference: NaN and ±Infinity in x, weight and bias give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ [c.nonfinite]: args[c.nonfinite]! });
    // f64 sums against torch's f64 sums, each rounded to f32 once.
    assertClose(convTranspose1d(args), goldenF32(c.out), { atol: 1e-12, rtol: 2 ** -22 }, label(c));
  }
});

// The kernels' f32 sums of a few terms of order 1, in their own order.
const tol = { atol: 1e-5, rtol: 1e-5 };
const cases = golden.cases.map((c) => ({ label: label(c), args: argsOf(c) }));
for (const entry of ["tile64", "kernel"]) {
  checkAgainstReference<ConvTranspose1dArgs, ConvTransposeVariant>(
    "convTranspose1d (non-finite)",
    KERNELS,
    entry,
    cases,
    convTranspose1d,
    convTranspose1dGpu,
    tol,
  );
}
