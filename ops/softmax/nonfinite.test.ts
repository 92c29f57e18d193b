// softmax on NaN and ±Infinity, held to torch (goldens/nonfinite.py, torch.softmax in float32 on the
// CPU): a NaN or a +inf anywhere in a row makes the whole row NaN (exp(inf - inf)), -inf gives 0, and a
// row of only -inf is NaN. The kernel gives the reference's values on each of its paths: ragged and
// aligned rows held in registers (the goldens' shapes) and streamed rows (cols past 8192, below).
import { KERNELS, softmax, softmaxGpu } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  eachVariant,
  goldenF32,
  type GoldenFloat,
  gpuTest,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  rows: number;
  cols: number;
  x: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case) => ({ x: goldenF32(c.x), rows: c.rows, cols: c.cols });
// exp in f32 (WGSL: 3 + 2|x| ulp) and the row sum's order; the non-finite values are exact.
const tol = { atol: 1e-7, rtol: 1e-5 };

Deno.test(`softmax reference: NaN and ±Infinity give torch ${golden.torch}'s rows`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ x: args.x });
    assertClose(softmax(args), goldenF32(c.out), tol, `cols ${c.cols}`);
  }
});

/** Streamed rows (one per workgroup, read in chunks): zeros with one non-finite value each, and an ordinary row. */
function streamed(cols: number): { x: Float32Array; rows: number; cols: number } {
  const x = new Float32Array(5 * cols).map((_, i) => Math.sin(i));
  x[cols - 1] = NaN; // in the last chunk of row 0
  x[cols + 3] = Infinity; // in the first chunk of row 1
  x[2 * cols + 5000] = -Infinity; // row 2: a 0, the rest as usual
  for (let i = 3 * cols; i < 4 * cols; i++) x[i] = -Infinity; // row 3: NaN
  return { x, rows: 5, cols };
}

eachVariant(KERNELS, "kernel", (variant) => {
  gpuTest(`softmax GPU: ${variant} gives the reference's NaN and ±Infinity`, async (gpu) => {
    for (const args of [...golden.cases.map(argsOf), streamed(8200), streamed(8203)]) {
      const got = await softmaxGpu(gpu, args, { override: variant });
      assertClose(got, softmax(args), tol, `${variant} rows ${args.rows} cols ${args.cols}`);
    }
  });
});
