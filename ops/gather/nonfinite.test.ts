// gather on NaN and ±Infinity in the table, held to torch (goldens/nonfinite.py, torch.index_select on
// the CPU): a copy, so each selected row keeps its NaN and infinities. (The index is integer: it has no
// NaN.) Every variant gives the reference's values exactly.
import { gather, type GatherArgs, gatherGpu, KERNELS } from "./mod.ts";
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
  table: GoldenFloat[];
  index: number[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): GatherArgs => ({
  rows: c.rows,
  cols: c.cols,
  table: goldenF32(c.table),
  index: Int32Array.from(c.index),
});
const exact = { atol: 0, rtol: 0 };

Deno.test(`gather reference: NaN and ±Infinity in the table are copied as torch ${golden.torch} copies them`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ table: args.table });
    assertClose(gather(args), goldenF32(c.out), exact, `index ${c.index}`);
  }
});

const cases = golden.cases.map((c) => ({ label: `NaN and ±Infinity, index ${c.index}`, args: argsOf(c) }));
checkAgainstReference("gather (non-finite)", KERNELS, "kernel", cases, gather, gatherGpu, exact);
