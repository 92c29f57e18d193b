import { deepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import { assertClose, assertThrowsMessage, checkAgainstReference, gpuTest, loadGolden } from "../../harness/testing.ts";
import { KERNELS, pope, type PopeArgs, popeArguments, popeGpu, popePlan } from "./mod.ts";
import type { PopeVariant } from "./kernels.gen.ts";

interface Golden {
  meta: { torch: string };
  cases: { S: number; D: number; posOffset: number; out: number[] }[];
}
const loadPopeGolden = () => loadGolden<Golden>(new URL("./goldens/pope.json", import.meta.url));

Deno.test("pope reference: the order is the position and the argument sweeps [-1, 1) across D", () => {
  // posOffset 0: row 0 is P_0 = 1, row 1 is P_1(x) = x, row 2 is (3x^2 - 1) / 2, at x = -1, -0.5, 0, 0.5.
  const out = pope({ S: 3, D: 4, posOffset: 0 });
  deepStrictEqual([...out], [1, 1, 1, 1, -1, -0.5, 0, 0.5, 1, -0.125, -0.5, -0.125]);
  // The other reading (order from the column, argument from the row) would start row 0 with
  // P_0(-1), P_1(-1), P_2(-1), P_3(-1) = 1, -1, 1, -1.
  ok(out[1] !== -1, "row 0 is one order, not one argument");
  // 1 itself is excluded: the last argument is 1 - 2/D.
  deepStrictEqual([...popeArguments(4)], [-1, -0.5, 0, 0.5]);
});

Deno.test("pope reference: posOffset is required and shifts the orders", async () => {
  const shifted = pope({ S: 2, D: 4, posOffset: 1 });
  deepStrictEqual([...shifted], [...pope({ S: 3, D: 4, posOffset: 0 }).subarray(4)]);
  await assertThrowsMessage(
    () => pope({ S: 2, D: 4 } as PopeArgs),
    "pope: posOffset is required (the paper does not say whether positions start at order 0 or 1)",
  );
});

Deno.test("pope reference matches torch.special.legendre_polynomial_p", async () => {
  const golden = await loadPopeGolden();
  ok(golden.cases.length >= 4 && golden.meta.torch);
  for (const c of golden.cases) {
    // f64 recurrence against torch's own f64 evaluation: a few f64 ULPs, then one f32 rounding.
    assertClose(
      pope({ S: c.S, D: c.D, posOffset: c.posOffset }),
      c.out,
      { atol: 1e-7, rtol: 2 ** -22 },
      `S=${c.S} D=${c.D} posOffset=${c.posOffset}`,
    );
  }
});

async function rejectsBadInput(run: (args: PopeArgs) => unknown): Promise<void> {
  await assertThrowsMessage(() => run({ S: 0, D: 4, posOffset: 0 }), "pope: S must be an integer >= 1, got 0");
  await assertThrowsMessage(() => run({ S: 2, D: 2.5, posOffset: 0 }), "pope: D must be an integer >= 1, got 2.5");
  await assertThrowsMessage(
    () => run({ S: 2, D: 4, posOffset: -1 }),
    "pope: posOffset must be an integer in [0, 16777216], got -1",
  );
  await assertThrowsMessage(
    () => run({ S: 2 ** 24, D: 4, posOffset: 1 }),
    "pope: S + posOffset must be at most 2^24 (orders exact in f32), got 16777217",
  );
}
Deno.test("pope reference: bad input throws naming the argument", () => rejectsBadInput(pope));
gpuTest("pope GPU: bad input throws before dispatch", (gpu) => rejectsBadInput((args) => popeGpu(gpu, args)));

/**
 * GPU against the reference: the kernel chains 2 x 2 transfer matrices in f32 over the orders; away
 * from x = -1 (written exactly) its error grows about linearly with the highest order (measured
 * 1.8e-4 at order 4,096 next to x = -1, ~1e-6 for |x| <= 0.97; llvmpipe at the sizes below: < 2e-6);
 * 5e-8 per order covers it.
 */
const tolerance = ({ S, posOffset }: PopeArgs) => ({ atol: 1e-6 + 5e-8 * (S + posOffset), rtol: 0 });

gpuTest("pope GPU matches torch.special.legendre_polynomial_p", async (gpu) => {
  for (const c of (await loadPopeGolden()).cases) {
    assertClose(
      await popeGpu(gpu, { S: c.S, D: c.D, posOffset: c.posOffset }),
      c.out,
      tolerance(c),
      `S=${c.S} D=${c.D} posOffset=${c.posOffset}`,
    );
  }
});

gpuTest("pope GPU: more than 65,535 workgroups fold into y", async (gpu) => {
  deepStrictEqual(popePlan(gpu, { S: 1, D: 16 * 70_000, posOffset: 0 }).workgroups, foldWorkgroups(70_000, 65_535));
  const args = { S: 9, D: 40, posOffset: 2 }; // 3 workgroups of 16 columns
  const plan = popePlan(gpu, args);
  deepStrictEqual(plan.workgroups, [3, 1, 1]);
  const [out] = await gpu.run({ ...plan, workgroups: foldWorkgroups(3, 2) }, [popeArguments(40)]);
  assertClose(out, pope(args), tolerance(args), "folded 2 x 2 grid");
});

checkAgainstReference<PopeArgs, PopeVariant>(
  "pope",
  KERNELS,
  "kernel",
  [[1, 1, 0], [3, 4, 0], [7, 10, 1], [300, 64, 0], [100, 33, 500], [1, 16, 4000], [1000, 20, 3], [65, 17, 0], [
    129,
    12,
    0,
  ], [2, 9, 127]].map((
    [S, D, posOffset],
  ) => ({ label: `S=${S} D=${D} posOffset=${posOffset}`, args: { S, D, posOffset } })),
  pope,
  popeGpu,
  tolerance,
);
