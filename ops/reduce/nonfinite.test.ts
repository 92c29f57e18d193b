// reduce on NaN and ±Infinity, held to torch (goldens/nonfinite.py, float32 on the CPU): sum and mean
// propagate NaN and give NaN for inf + -inf; max and min propagate NaN (torch.amax / amin, not fmax) and
// keep the infinities. Along each dim of a small tensor; reduce.test.ts holds the kernel to the
// reference on long rows with NaN and ±Infinity too ("NaN and ±Infinity in rows of 8192").
import { KERNELS, reduce, type ReduceArgs, reduceGpu, type ReduceOp } from "./mod.ts";
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
  op: ReduceOp;
  shape: number[];
  dim: number;
  x: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): ReduceArgs => ({ op: c.op, shape: c.shape, dim: c.dim, x: goldenF32(c.x) });
// Sums of five f32 values in another order; max and min select an element and match exactly.
const tol = { atol: 1e-6, rtol: 1e-6 };

Deno.test(`reduce reference: NaN and ±Infinity give torch ${golden.torch}'s sums, means, maxima and minima`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ x: args.x });
    assertClose(reduce(args), goldenF32(c.out), tol, `${c.op} dim ${c.dim}`);
  }
});

eachVariant(KERNELS, "kernel", (variant) => {
  gpuTest(`reduce GPU: ${variant} gives the reference's NaN and ±Infinity`, async (gpu) => {
    for (const c of golden.cases) {
      const args = argsOf(c);
      assertClose(
        await reduceGpu(gpu, args, { override: variant }),
        reduce(args),
        tol,
        `${variant} ${c.op} dim ${c.dim}`,
      );
    }
  });
});
