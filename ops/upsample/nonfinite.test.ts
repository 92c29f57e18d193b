// nearestUpsample2d on NaN and ±Infinity, held to torch (goldens/nonfinite.py, F.interpolate(mode=
// "nearest") on the CPU): a copy of the nearest source, so NaN and infinities land where torch puts
// them. Every variant gives the reference's values exactly.
import { KERNELS, nearestUpsample2d, type NearestUpsample2dArgs, nearestUpsample2dGpu } from "./mod.ts";
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
  C: number;
  H: number;
  W: number;
  outH: number;
  outW: number;
  x: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = ({ out: _, x, ...shape }: Case): NearestUpsample2dArgs => ({ ...shape, x: goldenF32(x) });
const exact = { atol: 0, rtol: 0 };

Deno.test(`nearestUpsample2d reference: NaN and ±Infinity land where torch ${golden.torch} puts them`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ x: args.x });
    assertClose(nearestUpsample2d(args), goldenF32(c.out), exact, `${c.outH} x ${c.outW}`);
  }
});

const cases = golden.cases.map((c) => ({ label: `NaN and ±Infinity to ${c.outH} x ${c.outW}`, args: argsOf(c) }));
checkAgainstReference(
  "nearestUpsample2d (non-finite)",
  KERNELS,
  "kernel",
  cases,
  nearestUpsample2d,
  nearestUpsample2dGpu,
  exact,
);
