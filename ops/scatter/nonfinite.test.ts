// scatter and indexCopy on NaN and ±Infinity, held to torch (goldens/nonfinite.py, float32 on the CPU):
// scatter_add_ adds colliding values, so NaN wins, inf + -inf is NaN and an infinity absorbs finite
// values, in any order of the atomic adds; index_copy_ copies src's rows (NaN and infinities as they
// are) over out's and keeps out's other rows, non-finite ones included. (The index is integer.) Every
// variant gives the reference's values exactly.
import { indexCopy, type IndexCopyArgs, indexCopyGpu, KERNELS, scatter, type ScatterArgs, scatterGpu } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  entry: "kernel" | "index_copy";
  rows: number;
  cols: number;
  indexCols?: number;
  outer?: number;
  out_before?: GoldenFloat[];
  src: GoldenFloat[];
  index: number[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const [scatterCase, copyCase] = ["kernel", "index_copy"].map((e) => golden.cases.find((c) => c.entry === e)!);
const scatterArgs: ScatterArgs = {
  rows: scatterCase.rows,
  cols: scatterCase.cols,
  indexCols: scatterCase.indexCols!,
  src: goldenF32(scatterCase.src),
  index: Int32Array.from(scatterCase.index),
};
const copyArgs: IndexCopyArgs = {
  outer: copyCase.outer!,
  rows: copyCase.rows,
  cols: copyCase.cols,
  out: goldenF32(copyCase.out_before!),
  src: goldenF32(copyCase.src),
  index: Int32Array.from(copyCase.index),
};
const exact = { atol: 0, rtol: 0 };

Deno.test(`scatter reference: NaN and ±Infinity in src accumulate as torch ${golden.torch}'s scatter_add_`, () => {
  assertNonFiniteOperands({ src: scatterArgs.src });
  assertClose(scatter(scatterArgs), goldenF32(scatterCase.out), exact, "scatter");
});

Deno.test(`indexCopy reference: NaN and ±Infinity in out and src as torch ${golden.torch}'s index_copy_`, () => {
  assertNonFiniteOperands({ out: copyArgs.out, src: copyArgs.src });
  assertClose(indexCopy(copyArgs), goldenF32(copyCase.out), exact, "indexCopy");
});

const label = "NaN and ±Infinity";
checkAgainstReference(
  "scatter (non-finite)",
  KERNELS,
  "kernel",
  [{ label, args: scatterArgs }],
  scatter,
  scatterGpu,
  exact,
);
checkAgainstReference(
  "indexCopy (non-finite)",
  KERNELS,
  "index_copy",
  [{ label, args: copyArgs }],
  indexCopy,
  indexCopyGpu,
  exact,
);
