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
import {
  KERNELS,
  rmsnorm,
  type RmsnormArgs,
  rmsnormGpu,
  rmsnormPlan,
  rmsnormResidual,
  rmsnormResidualGpu,
  validateRmsnormResidualShape,
} from "./mod.ts";
import type { RmsnormVariant } from "./kernels.gen.ts";

/** What goldens/gen.py writes; non-finite values would arrive as "Infinity", "-Infinity", "NaN". */
type JsonF32 = (number | string)[];
interface Golden {
  meta: {
    torch: string;
    qk_norm: {
      B: number;
      S: number;
      H: number;
      Dh: number;
      eps: number;
      x: JsonF32;
      weight: JsonF32;
      rms_norm_over_dh: JsonF32;
      rms_norm_over_h_dh: JsonF32;
    };
  };
  cases: {
    label: string;
    rows: number;
    cols: number;
    eps: number;
    x: JsonF32;
    weight: JsonF32 | null;
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
    scale: JsonF32;
    shift: JsonF32 | null;
    out: JsonF32;
  }[];
}
const loadRmsnormGolden = () => loadGolden<Golden>(new URL("./goldens/rmsnorm.json", import.meta.url));
const fromJson = (xs: JsonF32) => Float32Array.from(xs, Number);
const f32 = (xs: number[]) => new Float32Array(xs);
const strided = (xs: Float32Array, stride: number) => xs.filter((_, i) => i % stride === 0);
/** The reference and the goldens both round an f64 result to f32 once: one f32 ULP apart at most. */
const oneUlp = { atol: 0, rtol: 2 ** -23 };

Deno.test("rmsnorm reference: hand-derived values", () => {
  deepStrictEqual([...rmsnorm({ x: f32([2, -2, 2, -2]), rows: 1, cols: 4, eps: 0 })], [1, -1, 1, -1]);
  // mean(3^2, 4^2) = 12.5, plus eps 0.5 = 13: 3 / sqrt(13), 4 / sqrt(13), then times the weight.
  assertClose(
    rmsnorm({ x: f32([3, 4]), rows: 1, cols: 2, eps: 0.5, weight: f32([2, -1]) }),
    [6 / Math.sqrt(13), -4 / Math.sqrt(13)],
    oneUlp,
  );
  deepStrictEqual([...rmsnorm({ x: f32([-7]), rows: 1, cols: 1, eps: 0 })], [-1]);
});

Deno.test("rmsnorm reference: row n takes weight row n % G, not the contiguous block n / (rows / G)", () => {
  const x = f32([3, 4, 3, 4, 3, 4, 3, 4, 3, 4]);
  const weight = f32([1, 1, 10, 10]); // G = 2
  const rms = Math.sqrt((9 + 16) / 2 + 1e-6);
  const scaled = (gammas: number[]) => gammas.flatMap((g) => [(3 / rms) * g, (4 / rms) * g]);
  const out = rmsnorm({ x: x.subarray(0, 8), rows: 4, cols: 2, weight });
  assertClose(out, scaled([1, 10, 1, 10]), oneUlp, "n % G");
  // Contiguous blocks would scale the rows by 1, 1, 10, 10: row 1 would be a tenth of this.
  ok(Math.abs(out[2] - scaled([1, 1, 10, 10])[2]) > 1);
  // rows need not be a multiple of G: row 4 of 5 takes weight row 0. G = 1 is one shared gamma.
  assertClose(rmsnorm({ x, rows: 5, cols: 2, weight }), scaled([1, 10, 1, 10, 1]), oneUlp, "rows = 5, G = 2");
  assertClose(rmsnorm({ x, rows: 5, cols: 2, weight: f32([10, 10]) }), scaled([10, 10, 10, 10, 10]), oneUlp, "G = 1");
  // No weight is a weight of ones.
  deepStrictEqual(rmsnorm({ x, rows: 5, cols: 2 }), rmsnorm({ x, rows: 5, cols: 2, weight: f32([1, 1]) }));
});

Deno.test("rmsnorm reference: the mean square is over cols alone, not over the weight's (G, cols)", () => {
  // Two heads of one token, [1, 1] and [100, 100], with weight [G = 2, cols = 2] of ones.
  const out = rmsnorm({ x: f32([1, 1, 100, 100]), rows: 2, cols: 2, weight: f32([1, 1, 1, 1]), eps: 0 });
  deepStrictEqual([...out], [1, 1, 1, 1]);
  // Over (G, cols) the RMS would be sqrt((1 + 1 + 10^4 + 10^4) / 4) = 70.7, and head 0 would read 0.014.
  ok(Math.abs(1 / Math.sqrt(20002 / 4) - out[0]) > 0.9);
});

Deno.test("rmsnorm reference: eps defaults to 1e-6, and an all-zero row gives zeros", () => {
  // mean(x^2) = 1e-6, so the default gives 1e-3 / sqrt(2e-6) = 0.7071; torch's float32 default
  // (1.19e-7) would give 0.945 and layernorm's 1e-5 would give 0.302.
  const got = rmsnorm({ x: f32([1e-3, 1e-3]), rows: 1, cols: 2 });
  assertClose(got, [Math.SQRT1_2, Math.SQRT1_2], { atol: 0, rtol: 1e-6 });
  const zeroRow = rmsnorm({ x: f32([0, 0, 0, 5, 5, 5]), rows: 2, cols: 3 });
  deepStrictEqual([...zeroRow.subarray(0, 3)], [0, 0, 0]);
  assertClose(zeroRow.subarray(3), [1, 1, 1], { atol: 0, rtol: 1e-7 }, "the row after it");
  // eps = 0 is allowed; then an all-zero row is 0 / 0, as torch gives.
  ok(rmsnorm({ x: f32([0, 0]), rows: 1, cols: 2, eps: 0 }).every(Number.isNaN));
});

async function rejectsBadInput(run: (args: RmsnormArgs) => unknown): Promise<void> {
  const x = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(() => run({ x, rows: 4, cols: 2 }), "rmsnorm: x must have length rows * cols = 8, got 6");
  await assertThrowsMessage(() => run({ x, rows: 0, cols: 6 }), "rmsnorm: rows must be an integer >= 1, got 0");
  await assertThrowsMessage(() => run({ x, rows: -3, cols: -2 }), "rows must be an integer >= 1, got -3");
  await assertThrowsMessage(() => run({ x, rows: 2, cols: 3.5 }), "cols must be an integer >= 1, got 3.5");
  await assertThrowsMessage(
    () => run({ x: [1] as unknown as Float32Array, rows: 1, cols: 1 }),
    "x must be a Float32Array",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, weight: f32([1, 2, 3, 4]) }),
    "weight must have length G * cols with G >= 1 and cols = 3, got 4",
  );
  await assertThrowsMessage(() => run({ x, rows: 2, cols: 3, weight: f32([]) }), "weight must have length G * cols");
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, weight: new Int32Array(3) as unknown as Float32Array }),
    "weight must be a Float32Array, got Int32Array",
  );
  await assertThrowsMessage(() => run({ x, rows: 2, cols: 3, eps: -1e-6 }), "rmsnorm: eps must be >= 0, got -0.000001");
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, eps: Infinity }),
    "eps must be a finite f32 (|eps| <= 3.4028234663852886e+38), got Infinity",
  );
  // 1e39 is finite in f64 but Infinity in the kernel's f32 uniform.
  await assertThrowsMessage(() => run({ x, rows: 2, cols: 3, eps: 1e39 }), "rmsnorm: eps must be a finite f32");
  await assertThrowsMessage(
    () => run({ x, rows: 2, cols: 3, eps: NaN }),
    "eps must be a finite f32 (|eps| <= 3.4028234663852886e+38), got NaN",
  );
}

Deno.test("rmsnorm reference: bad input throws naming the argument", () => rejectsBadInput(rmsnorm));

gpuTest("rmsnorm GPU: bad input throws before dispatch", async (gpu) => {
  await rejectsBadInput((args) => rmsnormGpu(gpu, args));
  await assertThrowsMessage(
    () => rmsnormGpu(gpu, { x: f32([1]), rows: 1, cols: 1 }, { override: "kernel.soc" as never }),
    'override "kernel.soc" is not a variant of entry point "kernel"',
  );
});

// Tolerance: purely relative, as nothing cancels (a sum of squares, then products). The f32 sum of
// squares is off by at most ~cols/256 + 8 ULP (strided partial sums, then a tree), half of that
// after the square root, inverseSqrt by 2 ULP, and two products round: 4e-6 at cols = 4099.
// Measured on llvmpipe: 2.3e-7.
const gpuTolerance = { atol: 0, rtol: 4e-6 };

gpuTest("rmsnorm GPU: more than 65,535 workgroups fold into y, and the kernel recovers the row", async (gpu) => {
  // Rows of 4099 take a workgroup each, so 70,000 of them need 70,000 workgroups.
  const plan = rmsnormPlan(gpu, { rows: 70_000, cols: 4099, groups: 3, eps: 1e-6 });
  deepStrictEqual(plan.workgroups, [35_000, 2, 1]);
  deepStrictEqual(plan.cost, { bytes: 8 * 70_000 * 4099 + 4 * 3 * 4099, flops: 5 * 70_000 * 4099 });
  // Dispatching 70,000 workgroups takes seconds on a software adapter, so the same fold is forced at
  // a per-dimension limit of 4: 10 rows become a 4 x 3 grid whose last two workgroups must do nothing.
  const args = { x: randomF32(10 * 4099, 5), rows: 10, cols: 4099, weight: randomF32(3 * 4099, 6) };
  const folded = {
    ...rmsnormPlan(gpu, { rows: 10, cols: 4099, groups: 3, eps: 1e-6 }),
    workgroups: foldWorkgroups(10, 4),
  };
  deepStrictEqual(folded.workgroups, [4, 3, 1]);
  const [out] = await gpu.run(folded, [args.x, args.weight]);
  assertClose(out, rmsnorm(args), gpuTolerance, "folded 4 x 3 grid");
  // Rows of 1024 share a workgroup 8 at a time: 20 rows take 3 workgroups, here folded into a 2 x 2
  // grid whose last workgroup and the last 4 rows of the one before must do nothing.
  const shared = { x: randomF32(20 * 1024, 8), rows: 20, cols: 1024, weight: randomF32(3 * 1024, 9) };
  const plan2 = rmsnormPlan(gpu, { rows: 20, cols: 1024, groups: 3, eps: 1e-6 });
  deepStrictEqual(plan2.workgroups, [3, 1, 1]);
  const [out2] = await gpu.run({ ...plan2, workgroups: foldWorkgroups(3, 2) }, [shared.x, shared.weight]);
  assertClose(out2, rmsnorm(shared), gpuTolerance, "8 rows per workgroup, folded 2 x 2 grid");
});

// [rows, cols, G], G = 0 for no weight.
// Awkward sizes, rows sharing a workgroup (cols <= 4096), a row in registers at the limit (8192) and
// rows streamed in chunks (8196, 12289): aligned and not, with surplus rows in the last workgroup.
const awkward: [number, number, number][] = [
  [1, 1, 0],
  [3, 255, 1],
  [2, 256, 0],
  [5, 257, 2],
  [7, 100, 3],
  [2, 4099, 1],
  [37, 3, 2],
  [9, 1024, 2],
  [3, 8192, 1],
  [2, 8196, 2],
  [1, 12289, 1],
];
// The aligned path (cols % 4 == 0) at more reduction widths: 1 and 2 invocations per row, 16 (one
// step), 32 and 64 with loads clamped past the row's end (516 = 129 quads, 1536 = 384 quads), 128,
// surplus rows in the last workgroup (33 of 1024), and rows streamed in chunks, the last one partly
// past the row's end (12304); rows not a multiple of G.
const aligned: [number, number, number][] = [
  [7, 4, 2],
  [9, 64, 0],
  [17, 512, 3],
  [5, 516, 1],
  [5, 1536, 2],
  [3, 2052, 0],
  [33, 1024, 4],
  [3, 12304, 2],
];
checkAgainstReference<RmsnormArgs, RmsnormVariant>(
  "rmsnorm",
  KERNELS,
  "kernel",
  [
    ...[...awkward, ...aligned].map(([rows, cols, G]) => ({
      label: `rows=${rows} cols=${cols} G=${G}`,
      args: {
        x: randomF32(rows * cols, rows * 10_000 + cols, -3, 3),
        rows,
        cols,
        weight: G > 0 ? randomF32(G * cols, G * 10_000 + cols, -2, 2) : undefined,
      },
    })),
    { label: "all-zero row, eps = 0.25", args: { x: f32([0, 0, 0, 1, -2, 3]), rows: 2, cols: 3, eps: 0.25 } },
    {
      label: "all-zero row, eps = 0.25, cols 4",
      args: { x: f32([0, 0, 0, 0, 1, -2, 3, 4]), rows: 2, cols: 4, eps: 0.25 },
    },
    { label: "row of 1000 + noise", args: { x: randomF32(513, 1, 999, 1001), rows: 1, cols: 513 } },
    { label: "row of 1000 + noise, cols 516", args: { x: randomF32(516, 1, 999, 1001), rows: 1, cols: 516 } },
  ],
  rmsnorm,
  rmsnormGpu,
  gpuTolerance,
);

Deno.test("rmsnorm reference matches the torch goldens", async () => {
  const golden = await loadRmsnormGolden();
  ok(golden.cases.length > 0 && golden.meta.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    const weight = c.weight === null ? undefined : fromJson(c.weight);
    const got = rmsnorm({ x: fromJson(c.x), rows: c.rows, cols: c.cols, weight, eps: c.eps });
    assertClose(strided(got, c.out_stride), fromJson(c.out), oneUlp, `torch ${c.label}`);
  }
});

Deno.test("rmsnorm reference: torch's QK-norm broadcast is n % G over cols, not torch.nn.RMSNorm((H, Dh))", async () => {
  const qk = (await loadRmsnormGolden()).meta.qk_norm;
  const got = rmsnorm({
    x: fromJson(qk.x),
    rows: qk.B * qk.S * qk.H,
    cols: qk.Dh,
    weight: fromJson(qk.weight),
    eps: qk.eps,
  });
  assertClose(got, fromJson(qk.rms_norm_over_dh), oneUlp, "F.rms_norm(x, (Dh,)) * w");
  const worst = got.reduce((m, v, i) => Math.max(m, Math.abs(v - Number(qk.rms_norm_over_h_dh[i]))), 0);
  ok(worst > 0.1, `RMSNorm((H, Dh)) must differ visibly, differs by at most ${worst}`);
});

gpuTest("rmsnorm GPU matches the torch goldens", async (gpu) => {
  const golden = await loadRmsnormGolden();
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const weight = c.weight === null ? undefined : fromJson(c.weight);
    const got = await rmsnormGpu(gpu, { x: fromJson(c.x), rows: c.rows, cols: c.cols, weight, eps: c.eps });
    assertClose(strided(got, c.out_stride), fromJson(c.out), gpuTolerance, `torch ${c.label}`);
  }
});

// ---------------------------------------------------------------- adaLN modulation (entry point `modulated`)

const modulatedArgs = (c: Golden["modulated"][number]): RmsnormArgs => ({
  x: fromJson(c.x),
  rows: c.B * c.T,
  cols: c.D,
  eps: c.eps,
  weight: c.weight === null ? undefined : fromJson(c.weight),
  modulation: { rowsPerItem: c.T, scale: fromJson(c.scale), shift: c.shift === null ? undefined : fromJson(c.shift) },
});

Deno.test("rmsnorm reference: modulation multiplies by 1 + scale of item floor(row / rowsPerItem), then adds its shift", () => {
  // Rows [3, 4] normalise to [3, 4] / sqrt(12.5); items of 2 rows, 3 rows in all would not divide.
  const x = f32([3, 4, 3, 4, 3, 4, 3, 4]);
  const scale = f32([0, 0, 1, 2]), shift = f32([10, 20, -1, -2]);
  const r = Math.sqrt(12.5);
  const got = rmsnorm({ x, rows: 4, cols: 2, eps: 0, modulation: { rowsPerItem: 2, scale, shift } });
  const item0 = [3 / r + 10, 4 / r + 20], item1 = [(3 / r) * 2 - 1, (4 / r) * 3 - 2];
  assertClose(got, [...item0, ...item0, ...item1, ...item1], oneUlp);
  // Without a shift nothing is added, and the weight applies before the modulation.
  assertClose(
    rmsnorm({ x, rows: 4, cols: 2, eps: 0, weight: f32([2, 1]), modulation: { rowsPerItem: 2, scale } }),
    [6 / r, 4 / r, 6 / r, 4 / r, 12 / r, 12 / r, 12 / r, 12 / r],
    oneUlp,
  );
});

Deno.test("rmsnorm goldens pin the modulation: 1 + scale (not scale), item floor(row / rowsPerItem) (not row % items)", async () => {
  const golden = await loadRmsnormGolden();
  ok(golden.modulated.length > 0, "the golden file has modulated cases");
  let timesScale = 0, byModulo = 0;
  for (const c of golden.modulated) {
    const args = modulatedArgs(c), expected = fromJson(c.out);
    assertClose(rmsnorm(args), expected, oneUlp, `torch ${c.label}`);
    const { scale, shift } = args.modulation!;
    // The alternatives: the scale itself as the factor, and items dealt round-robin (row % items).
    const plain = rmsnorm({ ...args, modulation: undefined });
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

async function rejectsBadModulation(run: (args: RmsnormArgs) => unknown): Promise<void> {
  const x = randomF32(12, 1), scale = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: { rowsPerItem: 0, scale } }),
    "rmsnorm: modulation.rowsPerItem must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: { rowsPerItem: 3, scale } }),
    "rmsnorm: rows must be a multiple of modulation.rowsPerItem = 3, got rows = 4",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: { rowsPerItem: 1, scale } }),
    "rmsnorm: modulation.scale must have length items * cols = 12, got 6",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: { rowsPerItem: 2, scale, shift: [1] as unknown as Float32Array } }),
    "rmsnorm: modulation.shift must be a Float32Array, got Array",
  );
  await assertThrowsMessage(
    () => run({ x, rows: 4, cols: 3, modulation: null as unknown as RmsnormArgs["modulation"] }),
    "rmsnorm: modulation must be an object { rowsPerItem, scale, shift? }, got null",
  );
}

Deno.test("rmsnorm reference: a bad modulation throws naming it", () => rejectsBadModulation(rmsnorm));

gpuTest("rmsnorm GPU: a bad modulation throws before dispatch; the modulated plan's bindings and cost", async (gpu) => {
  await rejectsBadModulation((args) => rmsnormGpu(gpu, args));
  await assertThrowsMessage(
    () => rmsnormPlan(gpu, { rows: 4, cols: 3, modulation: { rowsPerItem: 3 } }),
    "rmsnorm: rows must be a multiple of modulation.rowsPerItem = 3, got rows = 4",
  );
  // A variant of `kernel` cannot serve a modulated call, whose bindings differ.
  await assertThrowsMessage(
    () => rmsnormPlan(gpu, { rows: 4, cols: 3, modulation: { rowsPerItem: 2 } }, { override: "kernel" }),
    'override "kernel" is not a variant of entry point "modulated"',
  );
  const plan = rmsnormPlan(gpu, { rows: 6, cols: 8, groups: 1, modulation: { rowsPerItem: 3, shift: true } });
  strictEqual(plan.kernel.variant, "modulated");
  deepStrictEqual(plan.bindings.map((b) => [b.name, b.length, b.role]), [
    ["x", 48, "input"],
    ["weight", 8, "input"],
    ["scale", 16, "input"],
    ["shift", 16, "input"],
    ["out", 48, "output"],
  ]);
  deepStrictEqual(plan.cost, { bytes: 8 * 48 + 4 * 8 + 4 * 32, flops: 5 * 48 + 3 * 48 });
  const noShift = rmsnormPlan(gpu, { rows: 6, cols: 8, modulation: { rowsPerItem: 6 } });
  deepStrictEqual(noShift.bindings.map((b) => b.length), [48, 0, 8, 0, 48]);
});

// [rows, cols, G, rowsPerItem, shift]: the layouts of `kernel` (rows sharing a workgroup, a row in
// registers, streamed rows; aligned and ragged) with items of 1, several and all rows; rows of one
// workgroup spanning items; G > 1 beside the modulation.
const modulatedShapes: [number, number, number, number, boolean][] = [
  [1, 1, 0, 1, true],
  [6, 5, 1, 3, false],
  [8, 7, 2, 2, true],
  [4, 256, 0, 1, true],
  [12, 64, 2, 3, true],
  [9, 100, 1, 9, false],
  [6, 257, 3, 2, true],
  [2, 8192, 1, 1, true],
  [2, 8196, 0, 1, false],
  [3, 12289, 1, 1, true],
];
checkAgainstReference<RmsnormArgs, RmsnormVariant>(
  "rmsnorm",
  KERNELS,
  "modulated",
  modulatedShapes.map(([rows, cols, G, rowsPerItem, shift], i) => {
    const items = rows / rowsPerItem;
    return {
      label: `rows=${rows} cols=${cols} G=${G} rowsPerItem=${rowsPerItem}${shift ? " shift" : ""}`,
      args: {
        x: randomF32(rows * cols, 500 + i, -3, 3),
        rows,
        cols,
        weight: G > 0 ? randomF32(G * cols, 600 + i, -2, 2) : undefined,
        modulation: {
          rowsPerItem,
          scale: randomF32(items * cols, 700 + i, -1, 1),
          shift: shift ? randomF32(items * cols, 800 + i, -1, 1) : undefined,
        },
      },
    };
  }),
  rmsnorm,
  rmsnormGpu,
  // The modulation multiplies by at most 2 and the shift (|shift| < 1) may cancel: the kernel's
  // relative tolerance, and as much again absolutely at the scale of the normalised values (<= 6).
  { atol: 6 * 2 * 4e-6, rtol: 4e-6 },
);

gpuTest("rmsnorm GPU: modulated matches the torch goldens", async (gpu) => {
  const golden = await loadRmsnormGolden();
  for (const c of golden.modulated) {
    assertClose(
      await rmsnormGpu(gpu, modulatedArgs(c)),
      fromJson(c.out),
      { atol: 1e-5, rtol: 4e-6 },
      `torch ${c.label}`,
    );
  }
});

gpuTest("rmsnorm GPU: a binding past maxStorageBufferBindingSize is refused, naming it, before upload", async (gpu) => {
  // x and out: 16 x 64 floats = 4,096 bytes each.
  const small = gpu.withLimits({ maxStorageBufferBindingSize: 2048 });
  const args = { x: randomF32(16 * 64, 3), rows: 16, cols: 64 };
  for (const modulation of [undefined, { rowsPerItem: 8, scale: randomF32(2 * 64, 4) }]) {
    let error: unknown;
    try {
      await rmsnormGpu(small, { ...args, modulation });
    } catch (e) {
      error = e;
    }
    ok(error instanceof LimitError, `expected a LimitError, got ${error}`);
    strictEqual(
      error.message,
      `rmsnorm/${modulation ? "modulated" : "kernel"}: binding 0 (x) needs maxStorageBufferBindingSize >= 4096, ` +
        "but this device allows 2048",
    );
  }
});

interface ResidualGolden {
  cases: {
    label: string;
    rows: number;
    row0: number;
    cols: number;
    add: boolean;
    eps: number;
    x: number[];
    delta: number[];
    weight: number[];
    x_out: number[];
    out: number[];
  }[];
}

Deno.test("rmsnormResidual reference matches torch (goldens/gen_residual.py): x += delta, then rms_norm of the rows from row0", async () => {
  const { cases } = await loadGolden<ResidualGolden>(new URL("./goldens/residual.json", import.meta.url));
  ok(cases.some((c) => c.row0 > 0) && cases.some((c) => !c.add));
  for (const c of cases) {
    const f = (v: number[]) => Float32Array.from(v);
    const { rows, row0, cols, add, eps } = c;
    const got = rmsnormResidual({ rows, row0, cols, add, eps, x: f(c.x), delta: f(c.delta), weight: f(c.weight) });
    assertClose(got.x, f(c.x_out), { atol: 0, rtol: 0 }, `${c.label}: x`); // one f32 add each, as torch's
    assertClose(got.out, c.out, { atol: 1e-7, rtol: 1e-6 }, `${c.label}: out`);
  }
  await assertThrowsMessage(
    () =>
      rmsnormResidual({
        x: new Float32Array(2),
        delta: new Float32Array(2),
        weight: new Float32Array(1),
        rows: 1,
        cols: 1,
        row0: 1,
        add: "yes" as unknown as boolean,
      }),
    "rmsnormResidual: add must be a boolean",
  );
  await assertThrowsMessage(
    () => validateRmsnormResidualShape({ rows: 1, cols: 8193, add: true }),
    "rmsnormResidual: cols must be an integer in [1, 8192], got 8193",
  );
});

const residualCases = [
  { rows: 1, cols: 1, row0: 0, add: true },
  { rows: 3, cols: 48, row0: 0, add: true },
  { rows: 1, cols: 300, row0: 2, add: false },
  { rows: 2, cols: 2048, row0: 1, add: true },
  { rows: 1, cols: 8192, row0: 0, add: true },
].map((shape, i) => {
  const total = (shape.row0 + shape.rows) * shape.cols;
  return {
    label: `${shape.rows} rows of ${shape.cols} from ${shape.row0}${shape.add ? ", added" : ""}`,
    args: {
      ...shape,
      eps: 1e-5,
      x: randomF32(total, 60 + i, -3, 3),
      delta: randomF32(total, 70 + i, -3, 3),
      weight: randomF32(shape.cols, 80 + i, 0.5, 1.5),
    },
  };
});
// x as updated, then out, in one array. Tolerance: f32 sums of up to 8,192 squares in a tree order.
checkAgainstReference(
  "rmsnormResidual",
  KERNELS,
  "residual",
  residualCases,
  (args) => {
    const { x, out } = rmsnormResidual(args);
    return [...x, ...out];
  },
  async (gpu, args, options) => {
    const { x, out } = await rmsnormResidualGpu(gpu, args, options);
    return [...x, ...out];
  },
  { atol: 1e-6, rtol: 1e-5 },
);
