// channelNorm on NaN and ±Infinity, held to torch (goldens/nonfinite.py, F.normalize(x, dim=1) * C **
// 0.5 * weight + bias and F.silu in float64 on float32 inputs, as the reference computes): a NaN makes
// its position's norm NaN, and torch's clamp_min(eps) keeps it, so the whole position is NaN; an
// infinity makes the norm inf, so the position's finite channels give 0 (then the bias) and the
// infinity NaN; NaN and ±inf in the weight and the bias act on their channel alone. The kernel gives
// the reference's values, NaN for NaN.
import { channelNorm, type ChannelNormArgs, channelNormGpu, KERNELS } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case extends Omit<ChannelNormArgs, "x" | "weight" | "bias"> {
  nonfinite: "x" | "weight" | "bias";
  x: GoldenFloat[];
  weight: GoldenFloat[];
  bias: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
function argsOf(c: Case): ChannelNormArgs {
  const { nonfinite: _, out: __, ...rest } = c;
  return { ...rest, x: goldenF32(c.x), weight: goldenF32(c.weight), bias: goldenF32(c.bias) };
}
const label = (c: Case) => `L ${c.L}, non-finite ${c.nonfinite}${c.activation ? `, ${c.activation}` : ""}`;

Deno.test(`channelNorm reference: NaN and ±Infinity in x, weight and bias give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ [c.nonfinite]: args[c.nonfinite]! });
    assertClose(channelNorm(args), goldenF32(c.out), { atol: 1e-12, rtol: 2 ** -22 }, label(c));
  }
});

/** More channels than a quad's lanes hold in registers (C 2100): a NaN at one position, ±inf at two others. */
function manyChannels(): ChannelNormArgs {
  const [C, L] = [2100, 4];
  const x = Float32Array.from({ length: C * L }, (_, i) => Math.sin(i));
  [x[5 * L], x[700 * L + 1], x[2099 * L + 3]] = [NaN, Infinity, -Infinity];
  return { x, N: 1, C, L };
}

// f32 norm and exp against f64; the non-finite values are exact.
const cases = [
  ...golden.cases.map((c) => ({ label: label(c), args: argsOf(c) })),
  { label: "C 2100, non-finite x", args: manyChannels() },
];
checkAgainstReference("channelNorm (non-finite)", KERNELS, "kernel", cases, channelNorm, channelNormGpu, {
  atol: 1e-5,
  rtol: 1e-5,
});
