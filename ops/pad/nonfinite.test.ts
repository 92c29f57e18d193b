// pad on NaN and ±Infinity, held to torch (goldens/nonfinite.py, F.pad on the CPU): a copy, so reflect
// and replicate carry the edges' NaN and infinities into the padding where torch does, and constant
// fills with its (finite) value. Every variant gives the reference's values exactly.
import { KERNELS, pad, type PadArgs, padGpu, type PadMode } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  outer: number;
  size: number;
  inner: number;
  before: number;
  after: number;
  mode: PadMode;
  value?: number;
  x: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = ({ out: _, x, ...shape }: Case): PadArgs => ({ ...shape, x: goldenF32(x) });
const exact = { atol: 0, rtol: 0 };

Deno.test(`pad reference: NaN and ±Infinity are padded as torch ${golden.torch} pads them`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ x: args.x });
    assertClose(pad(args), goldenF32(c.out), exact, `${c.mode} inner ${c.inner}`);
  }
});

const cases = golden.cases.map((c) => ({ label: `NaN and ±Infinity, ${c.mode} inner ${c.inner}`, args: argsOf(c) }));
checkAgainstReference("pad (non-finite)", KERNELS, "kernel", cases, pad, padGpu, exact);
