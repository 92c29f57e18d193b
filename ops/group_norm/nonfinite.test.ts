// groupNorm on NaN and ±Infinity, held to torch (goldens/nonfinite.py, in float64 on float32 inputs, as
// the reference computes): NaN or ±inf anywhere in a (sample, group) row makes the whole row NaN (its
// mean or variance is NaN); other rows are untouched; NaN and ±inf in the weight and the bias act on
// their channel alone (silu(-inf) is NaN, silu(inf) inf). One difference from F.group_norm, pinned
// below: an infinite weight gives ±inf, the sign of (x - mean) * weight, as torch's elementwise
// (x - mean) / sqrt(var + eps) * weight + bias does, where F.group_norm's kernel forms x * (rstd *
// weight) + (bias - mean * rstd * weight) and so gives NaN (inf - inf) wherever x and the mean have the
// same sign: an artifact of its algebra, not the function's value. Each path (rows, split, fused)
// gives the reference's values, NaN for NaN.
import { ok } from "node:assert/strict";
import { GROUP_NORM_PATHS, groupNorm, type GroupNormArgs, groupNormGpu } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  goldenF32,
  type GoldenFloat,
  gpuTest,
  loadGolden,
} from "../../harness/testing.ts";

interface Case extends Omit<GroupNormArgs, "x" | "weight" | "bias"> {
  nonfinite: "x" | "weight" | "bias";
  x: GoldenFloat[];
  weight: GoldenFloat[];
  bias: GoldenFloat[];
  out: GoldenFloat[];
  out_composite: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
function argsOf(c: Case): GroupNormArgs {
  const { nonfinite: _, out: __, out_composite: ___, ...rest } = c;
  return { ...rest, x: goldenF32(c.x), weight: goldenF32(c.weight), bias: goldenF32(c.bias) };
}
const label = (c: Case) => `non-finite ${c.nonfinite}${c.activation ? `, ${c.activation}` : ""}`;

Deno.test(`groupNorm reference: NaN and ±Infinity in x, weight and bias give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ [c.nonfinite]: args[c.nonfinite]! });
    const got = groupNorm(args);
    assertClose(got, goldenF32(c.out_composite), { atol: 1e-12, rtol: 2 ** -22 }, label(c));
    // F.group_norm agrees except in channels of infinite weight, where it has NaN for some of our ±inf.
    const fused = goldenF32(c.out);
    const infiniteWeight = (i: number) => Math.abs(args.weight![Math.floor(i / c.L) % c.C]) === Infinity;
    const others = [...got.keys()].filter((i) => !infiniteWeight(i));
    const pick = (xs: Float32Array, at: number[]) => at.map((i) => xs[i]);
    assertClose(pick(got, others), pick(fused, others), { atol: 1e-12, rtol: 2 ** -22 }, `${label(c)}: F.group_norm`);
    const inInfinite = [...got.keys()].filter(infiniteWeight);
    ok(inInfinite.every((i) => Number.isNaN(fused[i]) || Object.is(fused[i], got[i])), label(c));
    if (c.nonfinite === "weight") {
      ok(
        inInfinite.some((i) => Number.isNaN(fused[i]) && Math.abs(got[i]) === Infinity),
        `${label(c)}: the difference`,
      );
    }
  }
});

for (const path of GROUP_NORM_PATHS) {
  gpuTest(`groupNorm GPU: the ${path} path gives the reference's NaN and ±Infinity`, async (gpu) => {
    for (const c of golden.cases) {
      const args = argsOf(c);
      // f32 statistics and exp against f64; the non-finite values are exact.
      assertClose(
        await groupNormGpu(gpu, args, { path }),
        groupNorm(args),
        { atol: 1e-5, rtol: 1e-5 },
        `${path} ${label(c)}`,
      );
    }
  });
}
