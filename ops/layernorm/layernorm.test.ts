import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { foldWorkgroups, LimitError } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import { KERNELS, layernorm, type LayernormArgs, layernormGpu, layernormPlan } from "./mod.ts";
import type { LayernormVariant } from "./kernels.gen.ts";

/** What goldens/gen.py writes; non-finite values would arrive as "Infinity", "-Infinity", "NaN". */
type JsonF32 = (number | string)[];
interface Golden {
  meta: { torch: string };
  cases: {
    label: string;
    rows: number;
    cols: number;
    eps: number;
    x: JsonF32;
    weight: JsonF32 | null;
    bias: JsonF32 | null;
    out: JsonF32;
    out_stride: number;
  }[];
  modulated: {
    label: string;
    B: number;
    T: number;
    D: number;
    eps: number;
    x: JsonF32;
    weight: JsonF32 | null;
    bias: JsonF32 | null;
    scale: JsonF32;
    shift: JsonF32 | null;
    out: JsonF32;
  }[];
}
const loadLayernormGolden = () => loadGolden<Golden>(new URL("./goldens/layernorm.json", import.meta.url));
const fromJson = (xs: JsonF32 | null) => xs === null ? undefined : Float32Array.from(xs, Number);
const f32 = (xs: number[]) => new Float32Array(xs);
const strided = (xs: Float32Array, stride: number) => xs.filter((_, i) => i % stride === 0);
/** The reference and the goldens both round an f64 result to f32 once: one f32 ULP apart at most. */
const oneUlp = { atol: 0, rtol: 2 ** -23 };

Deno.test("layernorm reference: hand-derived values", () => {
  deepStrictEqual([...layernorm({ x: f32([1, 3]), rows: 1, cols: 2, eps: 0 })], [-1, 1]);
  // x = [0, 2, 4]: mean 2, variance (4 + 0 + 4) / 3 = 8/3.
  assertClose(
    layernorm({ x: f32([0, 2, 4]), rows: 1, cols: 3, eps: 0, weight: f32([1, 2, 3]), bias: f32([0.5, 0.5, -1]) }),
    [-2 / Math.sqrt(8 / 3) + 0.5, 0.5, 3 * 2 / Math.sqrt(8 / 3) - 1],
    oneUlp,
  );
  deepStrictEqual([...layernorm({ x: f32([7]), rows: 1, cols: 1, bias: f32([0.25]) })], [0.25]);
});

Deno.test("layernorm reference: the variance is biased (divided by cols, not cols - 1)", () => {
  const out = layernorm({ x: f32([1, 3]), rows: 1, cols: 2, eps: 0 });
  deepStrictEqual([...out], [-1, 1]);
  // Dividing by cols - 1 gives variance 2 here, and outputs of -+1/sqrt(2) = -+0.707.
  ok(Math.abs(out[1] - 1 / Math.SQRT2) > 0.29);
});

Deno.test("layernorm reference: eps is inside the square root, sqrt(var + eps)", () => {
  // x = [0, 1e-3]: variance 2.5e-7, so 5e-4 / sqrt(2.5e-7 + 1e-5) = 0.1562; eps added to the
  // standard deviation instead would give 5e-4 / (5e-4 + 1e-5) = 0.980.
  const out = layernorm({ x: f32([0, 1e-3]), rows: 1, cols: 2, eps: 1e-5 });
  const half = Math.fround(1e-3) / 2;
  assertClose(out, [-half / Math.sqrt(half ** 2 + 1e-5), half / Math.sqrt(half ** 2 + 1e-5)], oneUlp);
  ok(Math.abs(out[1] - half / (half + 1e-5)) > 0.8);
});

Deno.test("layernorm reference: eps defaults to 1e-5, and a constant row gives the bias", () => {
  // x = [0, 2e-3]: variance 1e-6, so the default gives 1e-3 / sqrt(1.1e-5) = 0.3015; rmsnorm's
  // default of 1e-6 would give 0.707, and no eps at all 1.
  const half = Math.fround(2e-3) / 2;
  const expected = half / Math.sqrt(half ** 2 + 1e-5);
  assertClose(layernorm({ x: f32([0, 2e-3]), rows: 1, cols: 2 }), [-expected, expected], oneUlp);
  deepStrictEqual([...layernorm({ x: f32([5, 5, 5]), rows: 1, cols: 3, bias: f32([1, 2, 3]) })], [1, 2, 3]);
  // eps = 0 is allowed; then a constant row is 0 / 0, as torch gives.
  ok(layernorm({ x: f32([5, 5]), rows: 1, cols: 2, eps: 0 }).every(Number.isNaN));
});

async function rejectsBadInput(run: (args: LayernormArgs) => unknown): Promise<void> {
  const x = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(() => run({ x, rows: 4, cols: 2 }), "layernorm: x must have length rows * cols = 8, got 6");
  await assertThrowsMessage(() => run({ x, rows: 0, cols: 6 }), "layernorm: rows must be an integer >= 1, got 0");
  await assertThrowsMessage(() => run({ x, rows: -3, cols: -2 }), "rows must be an integer >= 1, got -3");
  await assertThrowsMessage(() => run({ x, rows: 2, cols: 3.5 }), "cols must be an integer >= 1, got 3.5");
  await assertThrowsMessage(
    () => run({ x: [1] as unknown as Float32Array, rows: 1, cols: 1 }),
    "x must be a Float32Array",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, weight: f32([1, 2]) }),
    "weight must have length cols = 3, got 2",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, bias: f32([1, 2, 3, 4]) }),
    "bias must have length cols = 3, got 4",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, bias: new Uint32Array(3) as unknown as Float32Array }),
    "bias must be a Float32Array, got Uint32Array",
  );
  await assertThrowsMessage(() => run({ x, rows: 2, cols: 3, eps: -1 }), "layernorm: eps must be >= 0, got -1");
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, eps: -Infinity }),
    "eps must be a finite f32 (|eps| <= 3.4028234663852886e+38), got -Infinity",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, eps: NaN }),
    "eps must be a finite f32 (|eps| <= 3.4028234663852886e+38), got NaN",
  );
  // 1e39 is finite in f64 but Infinity in the kernel's f32 uniform.
  await assertThrowsMessage(() => run({ x, rows: 2, cols: 3, eps: 1e39 }), "layernorm: eps must be a finite f32");
}

Deno.test("layernorm reference: bad input throws naming the argument", () => rejectsBadInput(layernorm));

gpuTest("layernorm GPU: bad input throws before dispatch", async (gpu) => {
  await rejectsBadInput((args) => layernormGpu(gpu, args));
  await assertThrowsMessage(
    () => layernormGpu(gpu, { x: f32([1]), rows: 1, cols: 1 }, { override: "kernel.apple" as never }),
    'override "kernel.apple" is not a variant of entry point "kernel"',
  );
});

// Tolerance: outputs are normalised (order 1), so the error is absolute: a mean and a variance
// off by a few f32 ULP each, inverseSqrt off by up to 2 ULP, then a product and a sum. Measured on
// llvmpipe: 4.8e-7, rows of 1000 + noise included. Simulated in f32, an unshifted two-pass kernel
// is off by 1e-5 beyond this bound on 1000 + noise and by 8e-4 on 10000 + noise, and the one-pass
// E[x^2] - E[x]^2 by 0.09, so the bound tells a stable kernel from those.
const gpuTolerance = { atol: 2e-6, rtol: 1e-5 };

gpuTest("layernorm GPU: more than 65,535 workgroups fold into y, and the kernel recovers the row", async (gpu) => {
  // Rows of 4099 take a workgroup each, so 70,000 of them need 70,000 workgroups.
  const plan = layernormPlan(gpu, { rows: 70_000, cols: 4099, hasWeight: true, hasBias: false, eps: 1e-5 });
  deepStrictEqual(plan.workgroups, [35_000, 2, 1]);
  deepStrictEqual(plan.cost, { bytes: 8 * 70_000 * 4099 + 4 * 4099, flops: 7 * 70_000 * 4099 });
  // Dispatching 70,000 workgroups takes seconds on a software adapter, so the same fold is forced at
  // a per-dimension limit of 4: 10 rows become a 4 x 3 grid whose last two workgroups must do nothing.
  const cols = 4099;
  const args = { x: randomF32(10 * cols, 5), rows: 10, cols, weight: randomF32(cols, 6), bias: randomF32(cols, 7) };
  const shape = { rows: 10, cols, hasWeight: true, hasBias: true, eps: 1e-5 };
  const folded = { ...layernormPlan(gpu, shape), workgroups: foldWorkgroups(10, 4) };
  deepStrictEqual(folded.workgroups, [4, 3, 1]);
  const [out] = await gpu.run(folded, [args.x, args.weight, args.bias]);
  assertClose(out, layernorm(args), gpuTolerance, "folded 4 x 3 grid");
  // Rows of 1024 share a workgroup 8 at a time: 20 rows take 3 workgroups, here folded into a 2 x 2
  // grid whose last workgroup and the last 4 rows of the one before must do nothing.
  const shared = {
    x: randomF32(20 * 1024, 8),
    rows: 20,
    cols: 1024,
    weight: randomF32(1024, 9),
    bias: randomF32(1024, 10),
  };
  const plan2 = layernormPlan(gpu, { ...shape, rows: 20, cols: 1024 });
  deepStrictEqual(plan2.workgroups, [3, 1, 1]);
  const [out2] = await gpu.run({ ...plan2, workgroups: foldWorkgroups(3, 2) }, [shared.x, shared.weight, shared.bias]);
  assertClose(out2, layernorm(shared), gpuTolerance, "8 rows per workgroup, folded 2 x 2 grid");
});

// Awkward sizes, rows sharing a workgroup (cols <= 4096), a row in registers at the limit (8192) and
// rows streamed in chunks (8196, 12289): aligned and not, with surplus rows in the last workgroup.
const awkward: [number, number][] = [
  [1, 1],
  [3, 255],
  [2, 256],
  [5, 257],
  [7, 100],
  [2, 4099],
  [37, 3],
  [9, 1024],
  [3, 8192],
  [2, 8196],
  [1, 12289],
  [3, 12],
  // The aligned path (cols % 4 == 0) at more reduction widths: 1 and 2 invocations per row, 16 (one
  // step), 32 and 64 with loads clamped past the row's end (516 = 129 quads, 1536 = 384 quads), 128,
  // surplus rows in the last workgroup (33 of 1024), and rows streamed in chunks, the last one partly
  // past the row's end (12304).
  [7, 4],
  [9, 64],
  [17, 512],
  [5, 516],
  [5, 1536],
  [3, 2052],
  [33, 1024],
  [2, 12304],
];
checkAgainstReference<LayernormArgs, LayernormVariant>(
  "layernorm",
  KERNELS,
  "kernel",
  [
    ...awkward.map(([rows, cols], i) => ({
      label: `rows=${rows} cols=${cols}`,
      args: {
        x: randomF32(rows * cols, rows * 10_000 + cols, -3, 3),
        rows,
        cols,
        // Every combination of weight and bias, present or absent.
        weight: i % 2 === 0 ? randomF32(cols, cols, -2, 2) : undefined,
        bias: i % 4 < 2 ? randomF32(cols, cols + 1, -1, 1) : undefined,
      },
    })),
    { label: "rows of 1000 + noise", args: { x: randomF32(2 * 513, 1, 999, 1001), rows: 2, cols: 513 } },
    { label: "rows of 1000 + noise, cols 516", args: { x: randomF32(2 * 516, 1, 999, 1001), rows: 2, cols: 516 } },
    { label: "a row of 10000 + noise", args: { x: randomF32(4099, 2, 9999.5, 10000.5), rows: 1, cols: 4099 } },
    {
      label: "rows of 10000 + noise, streamed in chunks",
      args: { x: randomF32(2 * 12292, 3, 9999.5, 10000.5), rows: 2, cols: 12292 },
    },
    { label: "a constant row", args: { x: f32([4, 4, 4, 1, -2, 3]), rows: 2, cols: 3, bias: f32([1, 2, 3]) } },
    {
      label: "a constant row, cols 4",
      args: { x: f32([4, 4, 4, 4, 1, -2, 3, 0]), rows: 2, cols: 4, bias: f32([1, 2, 3, 4]) },
    },
    { label: "variance small next to eps", args: { x: randomF32(3 * 5, 3, -1e-3, 1e-3), rows: 3, cols: 5 } },
    { label: "variance small next to eps, cols 8", args: { x: randomF32(3 * 8, 3, -1e-3, 1e-3), rows: 3, cols: 8 } },
  ],
  layernorm,
  layernormGpu,
  gpuTolerance,
);

Deno.test("layernorm reference matches the torch goldens", async () => {
  const golden = await loadLayernormGolden();
  ok(golden.cases.length > 0 && golden.meta.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    const args = {
      x: fromJson(c.x)!,
      rows: c.rows,
      cols: c.cols,
      weight: fromJson(c.weight),
      bias: fromJson(c.bias),
      eps: c.eps,
    };
    assertClose(strided(layernorm(args), c.out_stride), fromJson(c.out)!, oneUlp, `torch ${c.label}`);
  }
});

gpuTest("layernorm GPU matches the torch goldens", async (gpu) => {
  const golden = await loadLayernormGolden();
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const args = {
      x: fromJson(c.x)!,
      rows: c.rows,
      cols: c.cols,
      weight: fromJson(c.weight),
      bias: fromJson(c.bias),
      eps: c.eps,
    };
    const got = await layernormGpu(gpu, args);
    assertClose(strided(got, c.out_stride), fromJson(c.out)!, gpuTolerance, `torch ${c.label}`);
  }
});

// ---------------------------------------------------------------- adaLN modulation (entry point `modulated`)

const modulatedArgs = (c: Golden["modulated"][number]): LayernormArgs => ({
  x: fromJson(c.x)!,
  rows: c.B * c.T,
  cols: c.D,
  eps: c.eps,
  weight: fromJson(c.weight),
  bias: fromJson(c.bias),
  modulation: { rowsPerItem: c.T, scale: fromJson(c.scale)!, shift: fromJson(c.shift) },
});

Deno.test("layernorm reference: modulation multiplies by 1 + scale of item floor(row / rowsPerItem), then adds its shift", () => {
  // Rows [1, 3] normalise to [-1, 1]; two items of two rows; no affine (Anima's LayerNorm).
  const x = f32([1, 3, 1, 3, 1, 3, 1, 3]);
  const scale = f32([0, 1, 2, 3]), shift = f32([10, 20, -1, -2]);
  const got = layernorm({ x, rows: 4, cols: 2, eps: 0, modulation: { rowsPerItem: 2, scale, shift } });
  deepStrictEqual([...got], [9, 22, 9, 22, -4, 2, -4, 2]);
  // The bias is applied before the modulation, which scales it too; no shift adds nothing.
  const biased = layernorm({
    x,
    rows: 4,
    cols: 2,
    eps: 0,
    bias: f32([1, 1]),
    modulation: { rowsPerItem: 4, scale: f32([1, 1]) },
  });
  deepStrictEqual([...biased], [0, 4, 0, 4, 0, 4, 0, 4]);
});

Deno.test("layernorm goldens pin the modulation: 1 + scale (not scale), item floor(row / rowsPerItem) (not row % items)", async () => {
  const golden = await loadLayernormGolden();
  ok(golden.modulated.length > 0, "the golden file has modulated cases");
  ok(golden.modulated.some((c) => c.weight === null && c.bias === null && c.eps === 1e-6), "a case without affine");
  let timesScale = 0, byModulo = 0;
  for (const c of golden.modulated) {
    const args = modulatedArgs(c), expected = fromJson(c.out)!;
    assertClose(layernorm(args), expected, { atol: 1e-6, rtol: 2 ** -23 }, `torch ${c.label}`);
    const { scale, shift } = args.modulation!;
    const plain = layernorm({ ...args, modulation: undefined });
    plain.forEach((y, i) => {
      const row = Math.floor(i / c.D), d = i % c.D;
      const floor = Math.floor(row / c.T) * c.D + d, modulo = (row % c.B) * c.D + d;
      const add = (m: number) => shift ? shift[m] : 0;
      timesScale = Math.max(timesScale, Math.abs(y * scale[floor] + add(floor) - expected[i]));
      byModulo = Math.max(byModulo, Math.abs(y * (1 + scale[modulo]) + add(modulo) - expected[i]));
    });
  }
  ok(timesScale > 0.1, `multiplying by scale instead of 1 + scale must differ, differs by ${timesScale}`);
  ok(byModulo > 0.1, `item row % items must differ, differs by ${byModulo}`);
});

async function rejectsBadModulation(run: (args: LayernormArgs) => unknown): Promise<void> {
  const x = f32([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), scale = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: { rowsPerItem: 2.5, scale } }),
    "layernorm: modulation.rowsPerItem must be an integer >= 1, got 2.5",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: { rowsPerItem: 3, scale } }),
    "layernorm: rows must be a multiple of modulation.rowsPerItem = 3, got rows = 4",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: { rowsPerItem: 2, scale, shift: f32([1, 2, 3]) } }),
    "layernorm: modulation.shift must have length items * cols = 6, got 3",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: { rowsPerItem: 2 } as unknown as LayernormArgs["modulation"] }),
    "layernorm: modulation.scale must be a Float32Array, got undefined",
  );
}

Deno.test("layernorm reference: a bad modulation throws naming it", () => rejectsBadModulation(layernorm));

gpuTest(
  "layernorm GPU: a bad modulation throws before dispatch; the modulated plan's bindings and cost",
  async (gpu) => {
    await rejectsBadModulation((args) => layernormGpu(gpu, args));
    await assertThrowsMessage(
      () => layernormPlan(gpu, { rows: 4, cols: 3, modulation: { rowsPerItem: 2 } }, { override: "kernel" }),
      'override "kernel" is not a variant of entry point "modulated"',
    );
    const plan = layernormPlan(gpu, { rows: 6, cols: 8, eps: 1e-6, modulation: { rowsPerItem: 3, shift: true } });
    strictEqual(plan.kernel.variant, "modulated");
    deepStrictEqual(plan.bindings.map((b) => [b.name, b.length, b.role]), [
      ["x", 48, "input"],
      ["weight", 0, "input"],
      ["bias", 0, "input"],
      ["scale", 16, "input"],
      ["shift", 16, "input"],
      ["out", 48, "output"],
    ]);
    deepStrictEqual(plan.cost, { bytes: 8 * 48 + 4 * 32, flops: 6 * 48 + 3 * 48 });
  },
);

// [rows, cols, affine, rowsPerItem, shift]: the layouts of `kernel` (rows sharing a workgroup, a row
// in registers, streamed rows; aligned and ragged) with items of 1, several and all rows; rows of one
// workgroup spanning items; with and without weight and bias.
const modulatedShapes: [number, number, string, number, boolean][] = [
  [1, 1, "", 1, true],
  [6, 5, "wb", 3, false],
  [8, 7, "", 2, true],
  [4, 256, "w", 1, true],
  [12, 64, "", 3, true],
  [9, 100, "b", 9, false],
  [6, 257, "wb", 2, true],
  [2, 8192, "", 1, true],
  [2, 8196, "wb", 1, false],
  [3, 12289, "", 1, true],
];
checkAgainstReference<LayernormArgs, LayernormVariant>(
  "layernorm",
  KERNELS,
  "modulated",
  modulatedShapes.map(([rows, cols, affine, rowsPerItem, shift], i) => {
    const items = rows / rowsPerItem;
    return {
      label: `rows=${rows} cols=${cols} ${affine} rowsPerItem=${rowsPerItem}${shift ? " shift" : ""}`,
      args: {
        x: randomF32(rows * cols, 500 + i, -3, 3),
        rows,
        cols,
        eps: 1e-6,
        weight: affine.includes("w") ? randomF32(cols, 600 + i, -2, 2) : undefined,
        bias: affine.includes("b") ? randomF32(cols, 650 + i, -1, 1) : undefined,
        modulation: {
          rowsPerItem,
          scale: randomF32(items * cols, 700 + i, -1, 1),
          shift: shift ? randomF32(items * cols, 800 + i, -1, 1) : undefined,
        },
      },
    };
  }),
  layernorm,
  layernormGpu,
  // The kernel's tolerance, the absolute part scaled by what the modulation multiplies by (< 2)
  // and by the weight (< 2), as the shift and bias may cancel what they are added to.
  { atol: 4 * 2e-6, rtol: 1e-5 },
);

gpuTest("layernorm GPU: modulated matches the torch goldens", async (gpu) => {
  const golden = await loadLayernormGolden();
  for (const c of golden.modulated) {
    assertClose(
      await layernormGpu(gpu, modulatedArgs(c)),
      fromJson(c.out)!,
      { atol: 1e-5, rtol: 1e-5 },
      `torch ${c.label}`,
    );
  }
});

gpuTest(
  "layernorm GPU: a binding past maxStorageBufferBindingSize is refused, naming it, before upload",
  async (gpu) => {
    // x and out: 16 x 64 floats = 4,096 bytes each.
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 2048 });
    const args = { x: randomF32(16 * 64, 3), rows: 16, cols: 64 };
    for (const modulation of [undefined, { rowsPerItem: 8, scale: randomF32(2 * 64, 4) }]) {
      let error: unknown;
      try {
        await layernormGpu(small, { ...args, modulation });
      } catch (e) {
        error = e;
      }
      ok(error instanceof LimitError, `expected a LimitError, got ${error}`);
      strictEqual(
        error.message,
        `layernorm/${modulation ? "modulated" : "kernel"}: binding 0 (x) needs maxStorageBufferBindingSize >= 4096, ` +
          "but this device allows 2048",
      );
    }
  },
);
