// axpy on NaN and ±Infinity, held to torch (goldens/nonfinite.py, torch.add(y, x, alpha) in float32 on
// the CPU): IEEE semantics through the one rounding, so NaN in x or y gives NaN, inf - inf is NaN,
// alpha 0 times an infinite x is NaN (the product is not skipped), and a finite product past the f32
// range is inf. Each operand holds NaN, +inf and -inf; both entry points give the reference's values,
// on the fused path or the exact fallback, whichever the device's fma() probe picks.
import { axpy, axpyGpu, axpyInplaceGpu, KERNELS } from "./mod.ts";
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
  alpha: number;
  x: GoldenFloat[];
  y: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case) => ({ alpha: c.alpha, x: goldenF32(c.x), y: goldenF32(c.y) });
const exact = { atol: 0, rtol: 0 }; // one rounding of the exact y + alpha * x everywhere

Deno.test(`axpy reference: NaN and ±Infinity in x and in y give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ x: args.x, y: args.y });
    assertClose(axpy(args), goldenF32(c.out), exact, `alpha ${c.alpha}`);
  }
});

eachVariant(KERNELS, "kernel", (variant) => {
  gpuTest(`axpy GPU: ${variant} gives the reference's NaN and ±Infinity`, async (gpu) => {
    for (const c of golden.cases) {
      const args = argsOf(c);
      assertClose(await axpyGpu(gpu, args, { override: variant }), axpy(args), exact, `${variant} alpha ${c.alpha}`);
    }
  });
});

eachVariant(KERNELS, "inplace", (variant) => {
  gpuTest(`axpy GPU: ${variant} gives the reference's NaN and ±Infinity`, async (gpu) => {
    for (const c of golden.cases) {
      const args = argsOf(c);
      const got = await axpyInplaceGpu(gpu, args, { override: variant });
      assertClose(got, axpy(args), exact, `${variant} alpha ${c.alpha}`);
    }
  });
});
