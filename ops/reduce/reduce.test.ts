import { deepStrictEqual, notDeepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  type ReferenceCase,
} from "../../harness/testing.ts";
import { KERNELS, reduce, type ReduceArgs, reduceGpu, type ReduceOp, reducePlan, validateReduceShape } from "./mod.ts";

/** The goldens' inputs, as goldens/gen.py draws them: multiples of 1/64 in [-2, 2), exact in f32. */
function pattern(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => (((i * 37 + 11) % 256) - 128) / 64);
}

/** JSON has no NaN or infinities; gen.py writes them as the strings "NaN", "Infinity", "-Infinity". */
type Encoded = (number | string)[];
const decode = (values: Encoded): number[] => values.map(Number);

interface Golden {
  meta: {
    torch: string;
    nan: { shape: number[]; dim: number; x: Encoded; max: Encoded; min: Encoded };
    empty: { shape: number[]; dim: number; max_refused: boolean; min_refused: boolean };
  };
  cases: { op: ReduceOp; shape: number[]; dim: number; out: Encoded }[];
}
const loadReduceGolden = () => loadGolden<Golden>(new URL("./goldens/reduce.json", import.meta.url));
const find = (golden: Golden, op: ReduceOp, shape: number[], dim: number) => {
  const found = golden.cases.find((c) => c.op === op && c.dim === dim && `${c.shape}` === `${shape}`);
  if (!found) throw new Error(`golden has no ${op} case for shape [${shape}] dim ${dim}`);
  return decode(found.out);
};
// The pattern's sums are exact in f32 in any order, so only mean's one division rounds: up to
// 2.5 ulp in WGSL, and torch may divide or multiply by the reciprocal. 4 ulp of relative slack.
const goldenTol = { atol: 0, rtol: 2 ** -21 };

// The GPU sums in f32 in its own order against an f64 reference. With |x| < 1 the error grows like
// a random walk: measured at 5.7e-6 on the 4099-long rows below (the worst-case bound is far
// looser). 1e-4 leaves room, and still catches a dropped or doubled element of |x| > 1e-4.
const sumTol = { atol: 1e-4, rtol: 0 };
// A mean is such a sum divided by the length, plus one rounding: measured at most 6e-8 (on rows
// of 3), while dropping one element moves even a 4099-long mean by about 1e-4.
const meanTol = { atol: 1e-6, rtol: 0 };

const f32 = (xs: number[]) => new Float32Array(xs);
const SENTINEL = 12345;
const m23 = f32([1, 2, 3, 4, 5, 6]);

Deno.test("reduce reference: hand-derived values over each dim of [[1, 2, 3], [4, 5, 6]]", () => {
  const at = (op: ReduceOp, dim: number) => [...reduce({ op, x: m23, shape: [2, 3], dim })];
  deepStrictEqual(at("sum", 0), [5, 7, 9]);
  deepStrictEqual(at("sum", 1), [6, 15]);
  deepStrictEqual(at("max", 0), [4, 5, 6]);
  deepStrictEqual(at("min", 1), [1, 4]);
  deepStrictEqual(at("mean", 1), [2, 5]);
  deepStrictEqual(at("mean", 0), [2.5, 3.5, 4.5]);
});

Deno.test("reduce reference: a negative dim counts from the end, as torch's dim", () => {
  const x = randomF32(24, 1);
  const at = (dim: number) => [...reduce({ op: "sum", x, shape: [2, 3, 4], dim })];
  deepStrictEqual(at(-1), at(2));
  deepStrictEqual(at(-3), at(0));
  // Counting from the front instead (-1 as axis 0, or as axis 1) gives a different answer.
  notDeepStrictEqual(at(-1), at(0));
  notDeepStrictEqual(at(-1), at(1));
});

Deno.test("reduce reference: the dim is removed from the shape (keepdim False)", () => {
  const view = validateReduceShape({ op: "sum", shape: [2, 3, 4], dim: 1 });
  deepStrictEqual(view, { dim: 1, outer: 2, length: 3, inner: 4, outShape: [2, 4] });
  notDeepStrictEqual(view.outShape, [2, 1, 4]);
});

Deno.test("reduce reference: max and min propagate NaN (torch.amax), not skip it (fmax)", () => {
  const x = f32([1, NaN, 3, 2, -Infinity, 0]);
  const max = reduce({ op: "max", x, shape: [2, 3], dim: 1 });
  const min = reduce({ op: "min", x, shape: [2, 3], dim: 1 });
  ok(Number.isNaN(max[0]) && Number.isNaN(min[0]));
  deepStrictEqual([max[1], min[1]], [2, -Infinity]);
  // A NaN-skipping max, as WGSL's max() or C's fmax, would give 3 for the first row.
  deepStrictEqual([1, NaN, 3].reduce((m, v) => (Number.isNaN(v) ? m : Math.max(m, v))), 3);
});

Deno.test("reduce reference: an empty dim sums to 0, averages to NaN, and has no max or min", async () => {
  const x = new Float32Array(0);
  deepStrictEqual([...reduce({ op: "sum", x, shape: [2, 0, 3], dim: 1 })], [0, 0, 0, 0, 0, 0]);
  ok(reduce({ op: "mean", x, shape: [2, 0, 3], dim: 1 }).every(Number.isNaN));
  await assertThrowsMessage(() => reduce({ op: "max", x, shape: [2, 0, 3], dim: 1 }), "which has length 0");
  await assertThrowsMessage(() => reduce({ op: "min", x, shape: [2, 0, 3], dim: -2 }), "torch.amin refuses it");
  // An empty axis that is not reduced gives an empty result, for max too.
  deepStrictEqual(reduce({ op: "max", x, shape: [2, 0, 3], dim: 0 }).length, 0);
});

Deno.test("reduce reference: sums accumulate in f64 and round once", () => {
  const x = f32([2 ** 24, 1, 1]);
  deepStrictEqual([...reduce({ op: "sum", x, shape: [3], dim: 0 })], [2 ** 24 + 2]);
  // Accumulating in f32 loses both ones: 2^24 + 1 rounds back to 2^24.
  deepStrictEqual(Math.fround(Math.fround(2 ** 24 + 1) + 1), 2 ** 24);
});

Deno.test("reduce reference: bad input throws naming the argument", async () => {
  const bad = (args: Partial<ReduceArgs>) => () => reduce({ op: "sum", x: m23, shape: [2, 3], dim: 0, ...args });
  await assertThrowsMessage(bad({ dim: 2 }), "dim (rank 2) must be an integer in [-2, 1], got 2");
  await assertThrowsMessage(bad({ dim: -3 }), "dim (rank 2) must be an integer in [-2, 1], got -3");
  await assertThrowsMessage(bad({ dim: 0.5 }), "dim (rank 2) must be an integer");
  await assertThrowsMessage(bad({ shape: [2, -3] }), "shape[1] must be an integer >= 0, got -3");
  await assertThrowsMessage(bad({ shape: [2, 1.5] }), "shape[1] must be an integer >= 0, got 1.5");
  await assertThrowsMessage(bad({ shape: [] }), "shape must be an array of at least 1 dimensions, got []");
  await assertThrowsMessage(bad({ shape: [3, 3] }), "x must have length the product of shape [3, 3] = 9, got 6");
  await assertThrowsMessage(bad({ x: [1, 2, 3, 4, 5, 6] as unknown as Float32Array }), "x must be a Float32Array");
  await assertThrowsMessage(bad({ op: "prod" as ReduceOp }), 'op must be one of "sum", "max", "min", "mean"');
});

Deno.test("reduce reference matches torch goldens", async () => {
  const golden = await loadReduceGolden();
  for (const c of golden.cases) {
    const x = pattern(c.shape.reduce((p, d) => p * d, 1));
    assertClose(
      reduce({ op: c.op, shape: c.shape, dim: c.dim, x }),
      decode(c.out),
      goldenTol,
      `${c.op} [${c.shape}] dim ${c.dim}`,
    );
  }
  const { nan, empty } = golden.meta;
  for (const op of ["max", "min"] as const) {
    const got = reduce({ op, x: f32(decode(nan.x)), shape: nan.shape, dim: nan.dim });
    assertClose(got, decode(nan[op]), goldenTol, `${op} with NaN`);
  }
  ok(empty.max_refused && empty.min_refused, `torch ${golden.meta.torch} no longer refuses an empty amax / amin`);
});

Deno.test("reduce goldens: dim -1 is the last dim, and axes 0 and 1 of [5, 7] differ as torch says", async () => {
  const golden = await loadReduceGolden();
  for (const op of ["sum", "max", "mean"] as const) {
    deepStrictEqual(find(golden, op, [2, 3, 4], -1), find(golden, op, [2, 3, 4], 2));
    const [down, across] = [find(golden, op, [5, 7], 0), find(golden, op, [5, 7], 1)];
    deepStrictEqual([down.length, across.length], [7, 5]);
    const x = pattern(35);
    assertClose(reduce({ op, x, shape: [5, 7], dim: 0 }), down, goldenTol, `${op} dim 0`);
    assertClose(reduce({ op, x, shape: [5, 7], dim: 1 }), across, goldenTol, `${op} dim 1`);
  }
});

gpuTest("reduce GPU matches torch goldens", async (gpu) => {
  const golden = await loadReduceGolden();
  for (const c of golden.cases) {
    const x = pattern(c.shape.reduce((p, d) => p * d, 1));
    assertClose(
      await reduceGpu(gpu, { op: c.op, shape: c.shape, dim: c.dim, x }),
      decode(c.out),
      goldenTol,
      `${c.op} [${c.shape}] dim ${c.dim}`,
    );
  }
  const { nan } = golden.meta;
  for (const op of ["max", "min"] as const) {
    const got = await reduceGpu(gpu, { op, x: f32(decode(nan.x)), shape: nan.shape, dim: nan.dim });
    assertClose(got, decode(nan[op]), goldenTol, `${op} with NaN`);
  }
});

gpuTest("reduce GPU: bad input throws before dispatch", async (gpu) => {
  await assertThrowsMessage(
    () => reduceGpu(gpu, { op: "sum", x: m23, shape: [2, 3], dim: -3 }),
    "dim (rank 2) must be an integer in [-2, 1], got -3",
  );
  await assertThrowsMessage(
    () => reduceGpu(gpu, { op: "sum", x: m23, shape: [6, 1], dim: 1.5 }),
    "dim (rank 2) must be an integer",
  );
  await assertThrowsMessage(
    () => reduceGpu(gpu, { op: "mean", x: m23, shape: [2, 4], dim: 0 }),
    "x must have length the product of shape [2, 4] = 8, got 6",
  );
  await assertThrowsMessage(
    () => reduceGpu(gpu, { op: "sum", x: m23, shape: [2, -3], dim: 0 }),
    "shape[1] must be an integer >= 0",
  );
  await assertThrowsMessage(
    () => reduceGpu(gpu, { op: "max", x: new Float32Array(0), shape: [0, 3], dim: 0 }),
    "which has length 0",
  );
  await assertThrowsMessage(
    () => reduceGpu(gpu, { op: "sum", x: m23, shape: [2, 3], dim: 0 }, { override: "kernel.nvidia" as never }),
    'override "kernel.nvidia" is not a variant of entry point "kernel"',
  );
});

gpuTest("reduce plan: a long last dim gets a workgroup per output, an earlier dim adjacent outputs", (gpu) => {
  const layout = (shape: number[], dim: number) => {
    const plan = reducePlan(gpu, { op: "sum", shape, dim });
    const [, , , lanes] = new Uint32Array(plan.params!);
    return { lanes, workgroups: plan.workgroups };
  };
  // Each lane takes up to 32 vec4s of its row (4 steps of 8): a row of more than 16,384 elements
  // takes all 256 invocations of a workgroup, shorter rows share one, 256 / lanes each.
  deepStrictEqual(layout([3, 40_000], 1), { lanes: 256, workgroups: [3, 1, 1] });
  deepStrictEqual(layout([3, 4099], 1), { lanes: 64, workgroups: [1, 1, 1] });
  deepStrictEqual(layout([1000, 1024], 1), { lanes: 8, workgroups: [32, 1, 1] });
  deepStrictEqual(layout([1000, 3], 1), { lanes: 1, workgroups: [4, 1, 1] });
  // An earlier axis: 8 vec4s of neighbouring outputs per workgroup (32 lanes along the axis), more
  // when the axis is short, fewer when there are fewer outputs, and 4 when 8 would leave fewer than
  // 256 workgroups.
  deepStrictEqual(layout([8192, 8192], 0), { lanes: 32, workgroups: [256, 1, 1] });
  deepStrictEqual(layout([4096, 4096], 0), { lanes: 64, workgroups: [256, 1, 1] });
  deepStrictEqual(layout([2, 4099, 100], 1), { lanes: 64, workgroups: [13, 1, 1] });
  deepStrictEqual(layout([64, 4, 100], 1), { lanes: 4, workgroups: [25, 1, 1] });
  deepStrictEqual(layout([4099, 3], 0), { lanes: 256, workgroups: [1, 1, 1] });
  // Past 65,535 workgroups the grid folds into y instead of exceeding the limit.
  const { workgroups } = layout([70_001, 16_388], 1);
  deepStrictEqual(workgroups, [35_001, 2, 1]);
  const plan = reducePlan(gpu, { op: "mean", shape: [3, 4099], dim: 1 });
  deepStrictEqual(plan.cost, { bytes: 4 * (3 * 4099 + 3), flops: 3 * 4098 + 3 });
});

gpuTest("reduce GPU: a folded grid recovers each workgroup's index and writes nothing past the end", async (gpu) => {
  const shapes = [[[37, 3000], 1], [[37, 2999], 1], [[9, 300, 9], 1], [[1050, 3], 1], [[7, 9, 40], 1]] as const;
  for (const [shape, dim] of shapes) {
    const args: ReduceArgs = { op: "sum", x: randomF32(shape.reduce((p, d) => p * d, 1), 3), shape: [...shape], dim };
    const plan = reducePlan(gpu, args);
    const [count] = plan.workgroups as readonly number[];
    // Folding at a limit of count - 1 gives two rows of workgroups, the second one short.
    const folded = { ...plan, workgroups: foldWorkgroups(count, count - 1) };
    ok(folded.workgroups[1] === 2 && folded.workgroups[0] * 2 > count);
    // The output buffer is longer than the result, so a write from a surplus slot would land.
    const outputs = plan.bindings[1].length;
    const x = gpu.upload(args.x, "x");
    const out = gpu.upload(new Float32Array(outputs + 512).fill(SENTINEL), "out");
    try {
      await gpu.submit([folded, [x, out]]);
      const written = await gpu.read(out);
      assertClose(written.subarray(0, outputs), reduce(args), sumTol, `folded [${shape}] dim ${dim}`);
      ok(written.subarray(outputs).every((v) => v === SENTINEL), `[${shape}]: a surplus slot wrote past the end`);
    } finally {
      x.buffer.destroy();
      out.buffer.destroy();
    }
  }
});

/** Shapes and axes for kernel-vs-reference: lengths 1, 255, 257, 4099, short rows, inner above 32. */
const SHAPES: [number[], number][] = [
  [[1], 0],
  [[255], 0],
  [[257], -1],
  [[3, 4099], 1],
  [[4099, 3], 0],
  [[5, 7], 0],
  [[5, 7], 1],
  [[1000, 3], -1],
  [[3, 33, 40], 1],
  [[2, 3, 4, 5], 2],
  [[0, 5], 1],
  [[7, 1024], 1],
  [[3, 8196], 1],
  [[300, 64], 0],
  [[3, 70, 36], 1],
  // Rows starting on a vec4 (length % 4 == 0) at every lane count: 1 (no reduction across lanes),
  // 2, 8 with loads clamped past the row's end (516 = 129 vec4s) and surplus rows in the last
  // workgroup (33 rows of 1024), 16, 32, 64, 128 and 256 (several steps per lane).
  [[9, 4], 1],
  [[4, 2, 8], 2],
  [[7, 200], 1],
  [[5, 516], 1],
  [[33, 1024], 1],
  [[5, 2000], 1],
  [[3, 3000], 1],
  [[3, 8192], 1],
  [[2, 16_384], 1],
  [[3, 40_000], 1],
];
const cases = (op: ReduceOp): ReferenceCase<ReduceArgs>[] =>
  SHAPES.map(([shape, dim], k) => ({
    label: `[${shape}] dim ${dim}`,
    args: { op, shape, dim, x: randomF32(shape.reduce((p, d) => p * d, 1), k) },
  }));

/**
 * Rows holding NaN early, NaN last, +Infinity and -Infinity, reduced along each axis; then long
 * rows (64 lanes each) with NaN in the last element of one and +-Infinity in another.
 */
function nonFinite(op: ReduceOp): ReferenceCase<ReduceArgs>[] {
  const x = randomF32(4 * 300, 9);
  [x[0], x[299], x[300 + 17], x[600 + 150], x[900 + 5], x[900 + 6]] = [NaN, NaN, Infinity, -Infinity, NaN, -Infinity];
  const long = randomF32(3 * 8192, 10);
  [long[8191], long[8192 + 4000], long[8192 + 4001], long[2 * 8192 + 5]] = [NaN, Infinity, -Infinity, NaN];
  return [
    ...[0, 1].map((dim) => ({ label: `NaN and ±Infinity, dim ${dim}`, args: { op, shape: [4, 300], dim, x } })),
    { label: "NaN and ±Infinity in rows of 8192", args: { op, shape: [3, 8192], dim: 1, x: long } },
  ];
}

// max and min select an element, so they must match exactly, NaN included.
for (const op of ["max", "min"] as const) {
  checkAgainstReference(`reduce ${op}`, KERNELS, "kernel", [...cases(op), ...nonFinite(op)], reduce, reduceGpu, {
    atol: 0,
    rtol: 0,
  });
}
checkAgainstReference(
  "reduce sum",
  KERNELS,
  "kernel",
  [
    ...cases("sum"),
    { label: "empty dim", args: { op: "sum", shape: [2, 0, 3], dim: 1, x: f32([]) } },
    { label: "empty rows", args: { op: "sum", shape: [3, 0], dim: 1, x: f32([]) } },
  ],
  reduce,
  reduceGpu,
  sumTol,
);
checkAgainstReference(
  "reduce mean",
  KERNELS,
  "kernel",
  [
    ...cases("mean"),
    { label: "empty dim", args: { op: "mean", shape: [2, 0, 3], dim: 1, x: f32([]) } },
    { label: "empty rows", args: { op: "mean", shape: [3, 0], dim: 1, x: f32([]) } },
  ],
  reduce,
  reduceGpu,
  meanTol,
);
