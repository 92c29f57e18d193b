// permute on NaN and ±Infinity, held to torch (goldens/nonfinite.py, x.permute(*dims).contiguous() on
// the CPU): a copy, so each value, NaN included, lands where torch puts it, for dims that move the last
// axis and dims that keep it. Every variant gives the reference's values exactly.
import { KERNELS, permute, type PermuteArgs, permuteGpu } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  shape: number[];
  dims: number[];
  x: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): PermuteArgs => ({ shape: c.shape, dims: c.dims, x: goldenF32(c.x) });
const exact = { atol: 0, rtol: 0 };

Deno.test(`permute reference: NaN and ±Infinity land where torch ${golden.torch} puts them`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ x: args.x });
    assertClose(permute(args), goldenF32(c.out), exact, `dims ${c.dims}`);
  }
});

const cases = golden.cases.map((c) => ({ label: `NaN and ±Infinity, dims ${c.dims}`, args: argsOf(c) }));
checkAgainstReference("permute (non-finite)", KERNELS, "kernel", cases, permute, permuteGpu, exact);
