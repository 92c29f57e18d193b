import { deepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import { KERNELS, softmax, type SoftmaxArgs, softmaxGpu, softmaxPlan } from "./mod.ts";
import type { SoftmaxVariant } from "./kernels.gen.ts";

/** What goldens/gen.py writes; non-finite values arrive as the strings "Infinity", "-Infinity", "NaN". */
interface Golden {
  meta: { torch: string };
  cases: {
    label: string;
    rows: number;
    cols: number;
    x: (number | string)[];
    out: (number | string)[];
    out_stride: number;
  }[];
}
const loadSoftmaxGolden = () => loadGolden<Golden>(new URL("./goldens/softmax.json", import.meta.url));
const fromJson = (xs: (number | string)[]) => Float32Array.from(xs, Number);
const f32 = (xs: number[]) => new Float32Array(xs);
const strided = (xs: Float32Array, stride: number) => xs.filter((_, i) => i % stride === 0);
/** Softmax without the max shift, the formula a max-subtracted softmax must not be. */
const unshifted = (row: number[]) => row.map((v) => Math.exp(v) / row.reduce((s, w) => s + Math.exp(w), 0));

Deno.test("softmax reference: hand-derived values", () => {
  deepStrictEqual([...softmax({ x: f32([0, Math.log(3)]), rows: 1, cols: 2 })], [0.25, 0.75]);
  deepStrictEqual([...softmax({ x: f32([5, 5, 5, 5, 7]), rows: 5, cols: 1 })], [1, 1, 1, 1, 1]);
  const uniform = softmax({ x: f32([2, 2, 2, 2, -1, -1]), rows: 2, cols: 3 });
  deepStrictEqual([...uniform.subarray(0, 3)], Array(3).fill(Math.fround(1 / 3)));
});

Deno.test("softmax reference: each row is shifted by its max, so logits of +-1000 do not overflow", () => {
  const small = softmax({ x: f32([0, 1, -1]), rows: 1, cols: 3 });
  const e = Math.E;
  assertClose(small, [1 / (1 + e + 1 / e), e / (1 + e + 1 / e), 1 / e / (1 + e + 1 / e)], { atol: 0, rtol: 1e-7 });
  deepStrictEqual(softmax({ x: f32([1000, 1001, 999]), rows: 1, cols: 3 }), small);
  deepStrictEqual(softmax({ x: f32([-1000, -999, -1001]), rows: 1, cols: 3 }), small);
  deepStrictEqual([...softmax({ x: f32([1000, -1000, 0]), rows: 1, cols: 3 })], [1, 0, 0]);
  // Without the shift, exp overflows (inf / inf) or underflows (0 / 0): NaN, never the values above.
  ok(unshifted([1000, 1001, 999]).every(Number.isNaN));
  ok(unshifted([-1000, -999, -1001]).every(Number.isNaN));
});

Deno.test("softmax reference: -inf gives 0; a row of only -inf gives NaN (torch.softmax), not zeros", () => {
  const someMasked = softmax({ x: f32([-Infinity, 0, Math.log(3), -Infinity]), rows: 1, cols: 4 });
  deepStrictEqual([...someMasked], [0, 0.25, 0.75, 0]);
  const masked = softmax({ x: f32([-Infinity, -Infinity, -Infinity, 1, 2, 3]), rows: 2, cols: 3 });
  // Zeros (a "safe" softmax) or a uniform 1/3 (masking with the lowest finite value instead of
  // -inf) are the alternatives; neither is NaN.
  ok(masked.subarray(0, 3).every(Number.isNaN));
  assertClose(masked.subarray(3), softmax({ x: f32([1, 2, 3]), rows: 1, cols: 3 }), { atol: 0, rtol: 0 }, "row 2");
});

Deno.test("softmax reference: bad input throws naming the argument", async () => {
  const x = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(() => softmax({ x, rows: 4, cols: 2 }), "x must have length rows * cols = 8, got 6");
  await assertThrowsMessage(() => softmax({ x, rows: 0, cols: 6 }), "softmax: rows must be an integer >= 1, got 0");
  await assertThrowsMessage(() => softmax({ x, rows: -2, cols: -3 }), "rows must be an integer >= 1, got -2");
  await assertThrowsMessage(() => softmax({ x, rows: 2, cols: 3.5 }), "cols must be an integer >= 1, got 3.5");
  await assertThrowsMessage(
    () => softmax({ x: [1, 2] as unknown as Float32Array, rows: 1, cols: 2 }),
    "x must be a Float32Array, got Array",
  );
});

gpuTest("softmax GPU: bad input throws before dispatch", async (gpu) => {
  const x = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(() => softmaxGpu(gpu, { x, rows: 4, cols: 2 }), "x must have length rows * cols = 8");
  await assertThrowsMessage(() => softmaxGpu(gpu, { x, rows: 6, cols: 0 }), "cols must be an integer >= 1, got 0");
  await assertThrowsMessage(() => softmaxGpu(gpu, { x, rows: 1.5, cols: 4 }), "rows must be an integer >= 1");
  await assertThrowsMessage(
    () => softmaxGpu(gpu, { x: new Float64Array(6) as unknown as Float32Array, rows: 2, cols: 3 }),
    "x must be a Float32Array, got Float64Array",
  );
  await assertThrowsMessage(
    () => softmaxGpu(gpu, { x, rows: 2, cols: 3 }, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
});

// Tolerance: WGSL allows exp an error of 3 + 2|x| ULP; with logits spanning 40 (inputs in
// [-20, 20]) that is at most 83 ULP, about 5e-6 relative, plus the division and the f32 summation
// order. Measured on llvmpipe: 3.9e-6. atol only admits subnormal outputs, which a GPU may flush to 0.
const gpuTolerance = { atol: 1e-37, rtol: 2e-5 };

gpuTest("softmax GPU: more than 65,535 workgroups fold into y, and the kernel recovers the row", async (gpu) => {
  // Rows of 4099 take a workgroup each, so 70,000 of them need 70,000 workgroups.
  const plan = softmaxPlan(gpu, { rows: 70_000, cols: 4099 });
  deepStrictEqual(plan.workgroups, [35_000, 2, 1]);
  deepStrictEqual(plan.cost, { bytes: 8 * 70_000 * 4099, flops: 5 * 70_000 * 4099 });
  // Dispatching 70,000 workgroups takes seconds on a software adapter, so the same fold is forced at
  // a per-dimension limit of 4: 10 rows become a 4 x 3 grid whose last two workgroups must do nothing.
  const args = { x: randomF32(10 * 4099, 7, -5, 5), rows: 10, cols: 4099 };
  const folded = { ...softmaxPlan(gpu, args), workgroups: foldWorkgroups(10, 4) };
  deepStrictEqual(folded.workgroups, [4, 3, 1]);
  const [out] = await gpu.run(folded, [args.x]);
  assertClose(out, softmax(args), gpuTolerance, "folded 4 x 3 grid");
  // Rows of 1024 share a workgroup 8 at a time: 20 rows take 3 workgroups, here folded into a 2 x 2
  // grid whose last workgroup and the last 4 rows of the one before must do nothing.
  const shared = { x: randomF32(20 * 1024, 8, -5, 5), rows: 20, cols: 1024 };
  const plan2 = softmaxPlan(gpu, shared);
  deepStrictEqual(plan2.workgroups, [3, 1, 1]);
  const [out2] = await gpu.run({ ...plan2, workgroups: foldWorkgroups(3, 2) }, [shared.x]);
  assertClose(out2, softmax(shared), gpuTolerance, "8 rows per workgroup, folded 2 x 2 grid");
});

// Awkward sizes, rows sharing a workgroup (cols <= 4096), a row in registers at the limit (8192) and
// rows streamed in chunks (8196, 12289): aligned and not, with surplus rows in the last workgroup.
const awkward: [number, number][] = [
  [1, 1],
  [1, 255],
  [3, 256],
  [2, 257],
  [5, 100],
  [2, 4099],
  [37, 3],
  [9, 1024],
  [3, 8192],
  [2, 8196],
  [1, 12289],
];
// The aligned path (cols % 4 == 0) at more reduction widths: 1 and 2 invocations per row, 16 (one
// step), 32 and 64 with loads clamped past the row's end (516 = 129 quads, 1536 = 384 quads), 128,
// surplus rows in the last workgroup (33 of 1024), and rows streamed in chunks, the last one partly
// past the row's end (12304).
const aligned: [number, number][] = [
  [7, 4],
  [9, 64],
  [17, 512],
  [5, 516],
  [5, 1536],
  [3, 2052],
  [33, 1024],
  [2, 12304],
];
checkAgainstReference<SoftmaxArgs, SoftmaxVariant>(
  "softmax",
  KERNELS,
  "kernel",
  [
    ...[...awkward, ...aligned].map(([rows, cols]) => ({
      label: `rows=${rows} cols=${cols}`,
      args: { x: randomF32(rows * cols, rows * 10_000 + cols, -20, 20), rows, cols },
    })),
    {
      label: "logits of +-1000 and -inf masking",
      args: {
        x: f32([1000, 1001, 999, -Infinity, -1000, -999, -Infinity, -1001, 1000, -1000, 0, 999]),
        rows: 3,
        cols: 4,
      },
    },
    {
      label: "a row of only -inf (NaN) between ordinary rows",
      args: { x: f32([1, 2, 3, -Infinity, -Infinity, -Infinity, 3, 2, -Infinity]), rows: 3, cols: 3 },
    },
    {
      label: "a row of only -inf (NaN) between ordinary rows, cols 8",
      args: {
        x: f32([1, 2, 3, 4, 5, 6, 7, 8, ...Array(8).fill(-Infinity), 3, 2, -Infinity, 0, 0, 0, 0, 1]),
        rows: 3,
        cols: 8,
      },
    },
    {
      label: "a streamed row of only -inf, and -inf in every chunk of another",
      args: {
        x: Float32Array.from(
          { length: 2 * 8196 },
          (_, i) => i < 8196 ? -Infinity : i % 1000 === 0 ? -Infinity : Math.sin(i) * 1000,
        ),
        rows: 2,
        cols: 8196,
      },
    },
  ],
  softmax,
  softmaxGpu,
  gpuTolerance,
);

Deno.test("softmax reference matches the torch goldens", async () => {
  const golden = await loadSoftmaxGolden();
  ok(golden.cases.length > 0 && golden.meta.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    const got = softmax({ x: fromJson(c.x), rows: c.rows, cols: c.cols });
    // The goldens are torch's float64 result rounded once to f32, as is the reference: one f32 ULP.
    assertClose(strided(got, c.out_stride), fromJson(c.out), { atol: 0, rtol: 2 ** -23 }, `torch ${c.label}`);
  }
});

gpuTest("softmax GPU matches the torch goldens", async (gpu) => {
  const golden = await loadSoftmaxGolden();
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const got = await softmaxGpu(gpu, { x: fromJson(c.x), rows: c.rows, cols: c.cols });
    assertClose(strided(got, c.out_stride), fromJson(c.out), gpuTolerance, `torch ${c.label}`);
  }
});
