// transpose on NaN and ±Infinity, held to torch (goldens/nonfinite.py, x.t().contiguous() on the CPU):
// a copy, so each value, NaN included, lands where torch puts it. Every variant gives the reference's
// values exactly.
import { KERNELS, transpose, type TransposeArgs, transposeGpu } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  rows: number;
  cols: number;
  x: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): TransposeArgs => ({ rows: c.rows, cols: c.cols, x: goldenF32(c.x) });
const exact = { atol: 0, rtol: 0 };

Deno.test(`transpose reference: NaN and ±Infinity land where torch ${golden.torch} puts them`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ x: args.x });
    assertClose(transpose(args), goldenF32(c.out), exact, `${c.rows} x ${c.cols}`);
  }
});

const cases = golden.cases.map((c) => ({ label: `NaN and ±Infinity, ${c.rows} x ${c.cols}`, args: argsOf(c) }));
checkAgainstReference("transpose (non-finite)", KERNELS, "kernel", cases, transpose, transposeGpu, exact);
