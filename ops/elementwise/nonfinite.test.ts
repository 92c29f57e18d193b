// elementwise on NaN and ±Infinity, held to torch (goldens/nonfinite.py, float32 on the CPU): IEEE add
// and multiply, so NaN meets anything as NaN, inf + -inf and inf * 0 are NaN, inf * -1 is -inf. Each
// operand holds NaN, +inf and -inf; the kernels give the reference's values, NaN for NaN.
import {
  elementwise,
  elementwiseGpu,
  type ElementwiseOp,
  elementwiseRows,
  elementwiseRowsGpu,
  KERNELS,
} from "./mod.ts";
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
  entry: "kernel" | "rows";
  op: ElementwiseOp;
  rows?: number;
  cols?: number;
  a: GoldenFloat[];
  b: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case) => ({ op: c.op, a: goldenF32(c.a), b: goldenF32(c.b) });
const exact = { atol: 0, rtol: 0 }; // one f32 add or multiply, correctly rounded everywhere

Deno.test(`elementwise reference: NaN and ±Infinity in a and in b give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ a: args.a, b: args.b });
    const got = c.entry === "kernel" ? elementwise(args) : elementwiseRows({ ...args, rows: c.rows!, cols: c.cols! });
    assertClose(got, goldenF32(c.out), exact, `${c.entry} ${c.op}`);
  }
});

for (const entry of ["kernel", "rows"] as const) {
  eachVariant(KERNELS, entry, (variant) => {
    gpuTest(`elementwise GPU: ${variant} gives the reference's NaN and ±Infinity`, async (gpu) => {
      for (const c of golden.cases.filter((c) => c.entry === entry)) {
        const args = argsOf(c);
        const [want, got] = entry === "kernel"
          ? [elementwise(args), await elementwiseGpu(gpu, args, { override: variant })]
          : [
            elementwiseRows({ ...args, rows: c.rows!, cols: c.cols! }),
            await elementwiseRowsGpu(gpu, { ...args, rows: c.rows!, cols: c.cols! }, { override: variant }),
          ];
        assertClose(got, want, exact, `${variant} ${c.op}`);
      }
    });
  });
}
