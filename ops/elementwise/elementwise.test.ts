import { deepStrictEqual } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import {
  elementwise,
  elementwiseGpu,
  type ElementwiseOp,
  elementwisePlan,
  elementwiseRows,
  elementwiseRowsGpu,
  elementwiseRowsPlan,
  KERNELS,
} from "./mod.ts";
import type { ResidentDevice } from "../../harness/device.ts";

interface Golden {
  meta: { torch: string; rows_alignment: Record<string, number[]> };
  cases: { entry: string; op: ElementwiseOp; rows?: number; cols?: number; a: number[]; b: number[]; out: number[] }[];
}
const golden = await loadGolden<Golden>(new URL("./goldens/elementwise.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);

Deno.test("elementwise reference: hand-derived values", () => {
  deepStrictEqual(
    [...elementwise({ op: "add", a: f32([1, -2, 0.5]), b: f32([10, 2, 0.25]) })],
    [11, 0, 0.75],
  );
  deepStrictEqual([...elementwise({ op: "multiply", a: f32([3, -2]), b: f32([0.5, 4]) })], [1.5, -8]);
});

Deno.test("elementwiseRows reference: b aligns from the right (torch a + c, not a + c.unsqueeze(1))", () => {
  const { a, c, a_plus_c, a_plus_c_unsqueeze1 } = golden.meta.rows_alignment;
  const got = [...elementwiseRows({ op: "add", a: f32(a), b: f32(c), rows: 3, cols: 3 })];
  deepStrictEqual(got, a_plus_c);
  deepStrictEqual(got, [1, 3, 5, 4, 6, 8, 7, 9, 11]);
  // The alternative broadcast gives a different answer, so the test above can tell them apart.
  deepStrictEqual(a_plus_c_unsqueeze1, [1, 2, 3, 5, 6, 7, 9, 10, 11]);
});

Deno.test(`elementwise reference matches torch ${golden.meta.torch} goldens`, () => {
  for (const c of golden.cases) {
    const got = c.entry === "kernel"
      ? elementwise({ op: c.op, a: f32(c.a), b: f32(c.b) })
      : elementwiseRows({ op: c.op, a: f32(c.a), b: f32(c.b), rows: c.rows!, cols: c.cols! });
    // One f32 add or multiply of f32 inputs is correctly rounded on both sides: exact.
    assertClose(got, c.out, { atol: 0, rtol: 0 }, `${c.entry} ${c.op} n=${c.a.length}`);
  }
});

Deno.test("elementwise reference: bad input throws naming the argument", async () => {
  const a = f32([1, 2, 3]);
  await assertThrowsMessage(() => elementwise({ op: "add", a, b: f32([1, 2]) }), "b must have length a.length = 3");
  await assertThrowsMessage(() => elementwise({ op: "divide" as ElementwiseOp, a, b: a }), 'op must be one of "add"');
  await assertThrowsMessage(
    () => elementwise({ op: "add", a: [1, 2, 3] as unknown as Float32Array, b: a }),
    "a must be a Float32Array",
  );
  const six = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(
    () => elementwiseRows({ op: "add", a: six, b: six, rows: 2, cols: 3 }),
    "b must have length cols = 3",
  );
  await assertThrowsMessage(
    () => elementwiseRows({ op: "add", a: six, b: a, rows: 3, cols: 3 }),
    "a must have length rows * cols = 9",
  );
  await assertThrowsMessage(
    () => elementwiseRows({ op: "add", a: six, b: a, rows: -2, cols: 3 }),
    "rows must be an integer >= 1",
  );
  await assertThrowsMessage(
    () => elementwiseRows({ op: "add", a: six, b: a, rows: 2, cols: 1.5 }),
    "cols must be an integer >= 1",
  );
});

gpuTest("elementwise GPU: bad input throws before dispatch", async (gpu) => {
  const a = f32([1, 2, 3]);
  await assertThrowsMessage(
    () => elementwiseGpu(gpu, { op: "add", a, b: f32([1]) }),
    "b must have length a.length = 3",
  );
  await assertThrowsMessage(
    () => elementwiseRowsGpu(gpu, { op: "add", a, b: a, rows: 0, cols: 3 }),
    "rows must be an integer >= 1",
  );
  await assertThrowsMessage(
    () => elementwiseGpu(gpu, { op: "add", a, b: a }, { override: "kernel.nvidia" as never }),
    'override "kernel.nvidia" is not a variant of entry point "kernel"',
  );
  await assertThrowsMessage(
    () => elementwiseGpu(gpu, { op: "add", a, b: a }, { override: "kernel.nvidai" as never }),
    'suffix "nvidai" is not a target',
  );
});

gpuTest("elementwise GPU matches torch goldens", async (gpu) => {
  for (const c of golden.cases) {
    const got = c.entry === "kernel"
      ? await elementwiseGpu(gpu, { op: c.op, a: f32(c.a), b: f32(c.b) })
      : await elementwiseRowsGpu(gpu, { op: c.op, a: f32(c.a), b: f32(c.b), rows: c.rows!, cols: c.cols! });
    assertClose(got, c.out, { atol: 0, rtol: 0 }, `${c.entry} ${c.op} n=${c.a.length}`);
  }
});

// Lengths around the kernels' geometry: 4 elements per vec4, 4096 per workgroup block. 1..3 and
// 4099 have only a trailing partial vec4 beyond whole ones; 4096 is exactly one block; 5001 ends in
// a partial block and a partial vec4.
const sizes = [1, 2, 3, 4, 255, 256, 257, 4096, 4099, 5001];
// Shapes [rows, cols]: cols % 4 == 0 takes b as whole vec4s (its column carried across vec4s and blocks:
// cols / 4 below, equal to and above the 256-wide workgroup), any other cols per component, with rows
// that straddle vec4s and blocks.
const rowShapes = [
  [1, 1],
  [3, 3],
  [7, 257],
  [300, 5],
  [2, 4],
  [5, 8],
  [300, 12],
  [3, 1024],
  [9, 2052],
  [3, 4096],
  [9, 1001],
];
// A device that allows 2 workgroups per dimension, so the grid-stride loop takes several blocks per
// workgroup (the full-size grid needs over 2^28 elements to loop). It poisons outputs like the shared one.
function twoWorkgroups(gpu: ResidentDevice): ResidentDevice {
  const low = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 2 });
  low.poisonOutputs = true;
  return low;
}
// One correctly rounded f32 operation per element on both sides: exact agreement is required.
const exact = { atol: 0, rtol: 0 };
for (const op of ["add", "multiply"] as const) {
  const flat = (ns: number[]) =>
    ns.map((n) => ({ label: `n=${n}`, args: { op, a: randomF32(n, n), b: randomF32(n, n + 1) } }));
  const rows = (shapes: number[][]) =>
    shapes.map(([rows, cols]) => ({
      label: `rows=${rows} cols=${cols}`,
      args: { op, a: randomF32(rows * cols, rows), b: randomF32(cols, cols), rows, cols },
    }));
  checkAgainstReference(`elementwise ${op}`, KERNELS, "kernel", flat(sizes), elementwise, elementwiseGpu, exact);
  checkAgainstReference(
    `elementwise ${op}, grid-stride over 2 workgroups`,
    KERNELS,
    "kernel",
    flat([3, 4097, 5 * 4096 + 7, 8 * 4096]),
    elementwise,
    (gpu, args, options) => elementwiseGpu(twoWorkgroups(gpu), args, options),
    exact,
  );
  checkAgainstReference(
    `elementwiseRows ${op}`,
    KERNELS,
    "rows",
    rows(rowShapes),
    elementwiseRows,
    elementwiseRowsGpu,
    exact,
  );
  checkAgainstReference(
    `elementwiseRows ${op}, grid-stride over 2 workgroups`,
    KERNELS,
    "rows",
    rows([[5, 4096], [41, 1000], [21, 1001], [3, 2]]),
    elementwiseRows,
    (gpu, args, options) => elementwiseRowsGpu(twoWorkgroups(gpu), args, options),
    exact,
  );
}

gpuTest(
  "elementwise GPU: plans use a 1-D grid of 4096- or 2048-element blocks, capped, and state their cost",
  (gpu) => {
    const max = gpu.limits.maxComputeWorkgroupsPerDimension;
    for (const [n, groups] of [[0, 0], [1, 1], [4096, 1], [4097, 2], [2 ** 26, 2 ** 14], [2 ** 30, max]]) {
      const plan = elementwisePlan(gpu, { op: "add", n });
      deepStrictEqual([plan.workgroups, plan.cost], [groups, { bytes: 12 * n, flops: n }], `n=${n}`);
    }
    for (const [rows, cols, groups] of [[1, 2048, 1], [1, 2049, 2], [16384, 4096, 2 ** 15], [2 ** 20, 1024, max]]) {
      const plan = elementwiseRowsPlan(gpu, { op: "multiply", rows, cols });
      const n = rows * cols;
      deepStrictEqual(
        [plan.workgroups, plan.cost],
        [groups, { bytes: 8 * n + 4 * cols, flops: n }],
        `rows=${rows} cols=${cols}`,
      );
    }
  },
);
