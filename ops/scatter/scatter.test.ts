import { deepStrictEqual, notDeepStrictEqual, ok } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  randomInt32,
} from "../../harness/testing.ts";
import { KERNELS, MAX_COLUMNS, scatter, type ScatterArgs, scatterGpu, scatterPlan } from "./mod.ts";

/** What goldens/gen.py writes. */
interface Golden {
  meta: {
    torch: string;
    collision: {
      rows: number;
      indexCols: number;
      cols: number;
      index: number[];
      src: number[];
      scatter_add: number[];
      scatter: number[];
    };
    out_of_range: { index: number[]; scatter_add_raises: boolean[] };
  };
  cases: { rows: number; indexCols: number; cols: number; src: number[]; index: number[]; out: number[] }[];
}
// Read by the tests that use it, so a missing fixture fails those tests and no others.
const loadScatterGolden = () => loadGolden<Golden>(new URL("./goldens/scatter.json", import.meta.url));
const argsOf = (c: Golden["cases"][number]): ScatterArgs => ({
  src: new Float32Array(c.src),
  index: new Int32Array(c.index),
  rows: c.rows,
  indexCols: c.indexCols,
  cols: c.cols,
});
const labelOf = ({ rows, indexCols, cols }: ScatterArgs) => `rows=${rows} indexCols=${indexCols} cols=${cols}`;

/** One row of sources into cols columns. */
const scatterRow = (
  src: number[],
  index: number[],
  cols: number,
) => [...scatter({ src: new Float32Array(src), index: new Int32Array(index), rows: 1, indexCols: src.length, cols })];

const SENTINEL = 12345;

/** f32's unit roundoff: half an ulp of 1. */
const UNIT_ROUNDOFF = 2 ** -24;

/** Per output slot: how many values land there, and the sum of their magnitudes. */
function slotsOf(
  { src, index, rows, indexCols, cols }: ScatterArgs,
): { writes: Float64Array; magnitude: Float64Array } {
  const writes = new Float64Array(rows * cols);
  const magnitude = new Float64Array(rows * cols);
  for (let i = 0; i < rows * indexCols; i++) {
    const column = index[i];
    if (column < 0 || column >= cols) continue;
    const slot = Math.floor(i / indexCols) * cols + column;
    writes[slot] += 1;
    magnitude[slot] += Math.abs(src[i]);
  }
  return { writes, magnitude };
}

/** The most values any output slot receives. */
const mostWrites = (args: ScatterArgs) => slotsOf(args).writes.reduce((a, b) => Math.max(a, b), 0);

/**
 * An f32 sum of c values, in any order, is within (c - 1) * 2^-24 * sum|value| of the exact sum;
 * the reference adds the rounding of the exact sum, so c * 2^-24 * sum|value| bounds the two apart.
 * The largest such bound over the output's slots, for values of any sign.
 */
function summationAtol(args: ScatterArgs): number {
  const { writes, magnitude } = slotsOf(args);
  return writes.reduce((worst, c, slot) => Math.max(worst, c * magnitude[slot]), 0) * UNIT_ROUNDOFF;
}

/** `length` indices drawn uniformly from [lo, hi). */
/** Values of one sign, |v| in [0.5, 1): with no cancellation the summation bound is relative to the result. */
function oneSignValues(length: number, seed: number): Float32Array {
  const sign = seed % 2 === 0 ? 1 : -1;
  return randomF32(length, seed, 0.5, 1).map((v) => sign * v);
}

Deno.test("scatter reference: hand-derived sums, rows kept apart", () => {
  deepStrictEqual(scatterRow([1, 2, 4, 8], [0, 0, 2, 1], 3), [3, 8, 4]);
  const twoRows = scatter({
    src: new Float32Array([1, 2, 3, 4]),
    index: new Int32Array([1, 1, 0, 0]),
    rows: 2,
    indexCols: 2,
    cols: 2,
  });
  deepStrictEqual([...twoRows], [0, 3, 7, 0]);
});

Deno.test("scatter reference: colliding indices accumulate; last (or first) write wins would fail", () => {
  const got = scatterRow([1, 2, 4], [0, 0, 0], 2);
  deepStrictEqual(got, [7, 0]);
  notDeepStrictEqual(got, [4, 0]);
  notDeepStrictEqual(got, [1, 0]);
});

Deno.test("scatter reference: an index outside [0, cols) is dropped, and -1 is not the last column", () => {
  deepStrictEqual(scatterRow([1, 2, 4, 8, 16], [-1, 2, 1, -(2 ** 31), 2 ** 31 - 1], 2), [0, 4]);
  const dropped = scatterRow([1, 2], [-1, 2], 2);
  deepStrictEqual(dropped, [0, 0]);
  // The alternatives land the values somewhere: Python-style wrapping adds the 1 to column cols - 1,
  // clamping adds the 1 to column 0 and the 2 to column cols - 1.
  notDeepStrictEqual(dropped, [0, 1]);
  notDeepStrictEqual(dropped, [1, 2]);
});

Deno.test("scatter reference: sums in f64 and rounds once, not f32 add by add", () => {
  // 1 + 2^-24 rounds back to 1 in f32, twice; the exact sum 1 + 2^-23 is an f32.
  deepStrictEqual(scatterRow([1, 2 ** -24, 2 ** -24], [0, 0, 0], 1), [1 + 2 ** -23]);
  deepStrictEqual(Math.fround(Math.fround(1 + 2 ** -24) + 2 ** -24), 1);
});

Deno.test("scatter reference: rows = 0 gives an empty result, indexCols = 0 all zeros", () => {
  const empty = new Float32Array(0);
  deepStrictEqual(scatter({ src: empty, index: new Int32Array(0), rows: 0, indexCols: 4, cols: 3 }), empty);
  deepStrictEqual(
    scatter({ src: empty, index: new Int32Array(0), rows: 2, indexCols: 0, cols: 3 }),
    new Float32Array(6),
  );
});

Deno.test("scatter is scatter_add_, not scatter_ (goldens)", async () => {
  const { rows, indexCols, cols, index, src, scatter_add, scatter: scatterLastWrite } =
    (await loadScatterGolden()).meta.collision;
  const got = [...scatter({ src: new Float32Array(src), index: new Int32Array(index), rows, indexCols, cols })];
  deepStrictEqual(got, scatter_add);
  deepStrictEqual(got, [7, 0]);
  notDeepStrictEqual(scatterLastWrite, scatter_add);
});

Deno.test("scatter: torch refuses an index of -1 or cols; here it is dropped (goldens)", async () => {
  const { index, scatter_add_raises } = (await loadScatterGolden()).meta.out_of_range;
  deepStrictEqual(index, [-1, 2]);
  deepStrictEqual(scatter_add_raises, [true, true]);
  deepStrictEqual(scatterRow([1, 2], index, 2), [0, 0]);
});

Deno.test("scatter reference matches torch goldens within f32 summation error", async () => {
  for (const c of (await loadScatterGolden()).cases) {
    const args = argsOf(c);
    // torch adds in f32, one value after another: within the summation bound of the exact sum.
    assertClose(scatter(args), c.out, { atol: summationAtol(args), rtol: 0 }, labelOf(args));
  }
});

Deno.test("scatter reference: bad input throws naming the argument", async () => {
  const src = new Float32Array(6);
  const index = new Int32Array(6);
  await assertThrowsMessage(
    () => scatter({ src: src.subarray(1), index, rows: 2, indexCols: 3, cols: 4 }),
    "scatter: src must have length rows * indexCols = 6, got 5",
  );
  await assertThrowsMessage(
    () => scatter({ src, index: index.subarray(2), rows: 2, indexCols: 3, cols: 4 }),
    "scatter: index must have length rows * indexCols = 6, got 4",
  );
  await assertThrowsMessage(
    () => scatter({ src, index: new Float64Array(6) as unknown as Int32Array, rows: 2, indexCols: 3, cols: 4 }),
    "scatter: index must be an Int32Array, got Float64Array",
  );
  await assertThrowsMessage(
    () => scatter({ src, index, rows: -2, indexCols: -3, cols: 4 }),
    "scatter: rows must be an integer >= 0, got -2",
  );
  await assertThrowsMessage(
    () => scatter({ src, index, rows: 2, indexCols: 2.5, cols: 4 }),
    "scatter: indexCols must be an integer >= 0, got 2.5",
  );
  await assertThrowsMessage(
    () => scatter({ src, index, rows: 2, indexCols: 3, cols: 0 }),
    "scatter: cols must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => scatter({ src, index, rows: 2, indexCols: 3, cols: 2 ** 31 }),
    `scatter: cols must be an integer <= ${MAX_COLUMNS} (the largest i32), got 2147483648`,
  );
});

gpuTest("scatter GPU: bad input throws before dispatch", async (gpu) => {
  const src = new Float32Array(6);
  const index = new Int32Array(6);
  await assertThrowsMessage(
    () => scatterGpu(gpu, { src, index, rows: 3, indexCols: 3, cols: 4 }),
    "scatter: src must have length rows * indexCols = 9, got 6",
  );
  await assertThrowsMessage(
    () => scatterGpu(gpu, { src, index: new Uint32Array(6) as unknown as Int32Array, rows: 2, indexCols: 3, cols: 4 }),
    "scatter: index must be an Int32Array, got Uint32Array",
  );
  await assertThrowsMessage(
    () => scatterGpu(gpu, { src, index, rows: 2, indexCols: 3, cols: -1 }),
    "scatter: cols must be",
  );
  await assertThrowsMessage(
    () => scatterGpu(gpu, { src, index, rows: 6.5, indexCols: 1, cols: 1 }),
    "scatter: rows must be",
  );
  await assertThrowsMessage(
    () => scatterGpu(gpu, { src, index, rows: 2, indexCols: 3, cols: 4 }, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
});

gpuTest("scatter GPU matches torch goldens within f32 summation error", async (gpu) => {
  for (const c of (await loadScatterGolden()).cases) {
    const args = argsOf(c);
    // Both sides add in f32, in different orders: each within the summation bound, so twice it apart.
    assertClose(await scatterGpu(gpu, args), c.out, { atol: 2 * summationAtol(args), rtol: 0 }, labelOf(args));
  }
});

gpuTest("scatter GPU: colliding indices accumulate, out-of-range ones are dropped", async (gpu) => {
  const src = new Float32Array([1, 2, 4, 8, 16, 32, 64]);
  const index = new Int32Array([0, 0, 0, -1, 2, -(2 ** 31), 2 ** 31 - 1]);
  // Small integers add exactly in any order, so the sum is exact, not within a tolerance.
  deepStrictEqual([...await scatterGpu(gpu, { src, index, rows: 1, indexCols: 7, cols: 2 })], [7, 0]);
});

gpuTest("scatterPlan folds a grid past 65,535 workgroups into y, covering every source element", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const indexCols = 2 * max * 256 + 1;
  const plan = scatterPlan(gpu, { rows: 1, indexCols, cols: 4 }, { override: "kernel" });
  const [x, y, z] = plan.workgroups as [number, number, number];
  ok(x <= max && y > 1 && z === 1, `workgroups ${plan.workgroups}`);
  ok(x * y * 256 >= indexCols, `workgroups ${plan.workgroups} cover ${x * y * 256} < ${indexCols} elements`);
});

gpuTest(
  "scatterPlan (kernel.nvidia): blocks of rows in workgroup memory up to cols = 4096, global atomics past it",
  (gpu) => {
    const nvidia = { override: "kernel.nvidia" } as const;
    const of = (rows: number, indexCols: number, cols: number) => {
      const plan = scatterPlan(gpu, { rows, indexCols, cols }, nvidia);
      const [total, k, d, n, blockRows] = new Uint32Array(plan.params!).slice(0, 5);
      return { total, k, d, n, rows: blockRows, workgroups: plan.workgroups };
    };
    // One row per block, one block per workgroup.
    deepStrictEqual(of(8192, 4096, 4096), {
      total: 2 ** 25,
      k: 4096,
      d: 4096,
      n: 8192,
      rows: 1,
      workgroups: [8192, 1, 1],
    });
    // Narrow rows: several per block, but still 1,001 blocks rather than 3; the last block short.
    deepStrictEqual(of(3001, 4, 3).rows, 3);
    deepStrictEqual(of(3001, 4, 3).workgroups, [1001, 1, 1]);
    deepStrictEqual(of(2 ** 20, 1, 1).rows, 1024);
    // Rows wider than workgroup memory: one source element per invocation, global atomics.
    deepStrictEqual(of(1, 4099, 4099), { total: 4099, k: 4099, d: 4099, n: 1, rows: 0, workgroups: [17, 1, 1] });
    deepStrictEqual(of(0, 7, 2).workgroups, [0, 1, 1]);
    const max = gpu.limits.maxComputeWorkgroupsPerDimension;
    deepStrictEqual(of(100_000, 8, 4096).workgroups, [max, 1, 1]);
  },
);

gpuTest(
  "scatter GPU (kernel.nvidia): any grid covers every row once, and nothing is written past the end",
  async (gpu) => {
    // Blocks of two rows, the last one short (vec4 sources and single ones), one row per block,
    // and global atomics. (A workgroup costs milliseconds on a software adapter: grids are small.)
    for (const [rows, indexCols, cols] of [[1101, 8, 5], [1031, 5, 7], [6, 300, 64], [2, 300, 4100]]) {
      const args = {
        src: oneSignValues(rows * indexCols, rows),
        index: randomInt32(rows * indexCols, indexCols, -2, cols + 2),
        rows,
        indexCols,
        cols,
      };
      const plan = scatterPlan(gpu, args, { override: "kernel.nvidia" });
      // Not cleared by the device: zeros up to rows * cols (the flat mode adds to them), a sentinel after.
      const unzeroed = { ...plan, bindings: plan.bindings.map((b) => ({ ...b, zeroed: false })) };
      for (const workgroups of [[7, 1, 1], [2, 3, 1], [40, 1, 1]] as const) {
        const tensors = [gpu.upload(args.src, "src"), gpu.upload(args.index, "index")];
        const initial = new Float32Array(rows * cols + 64).fill(SENTINEL).fill(0, 0, rows * cols);
        const out = gpu.upload(initial, "out");
        try {
          await gpu.submit([{ ...unzeroed, workgroups }, [...tensors, out]]);
          const written = await gpu.read(out);
          const label = `rows=${rows} indexCols=${indexCols} cols=${cols} on [${workgroups}]`;
          assertClose(
            written.subarray(0, rows * cols),
            scatter(args),
            { atol: 0, rtol: mostWrites(args) * UNIT_ROUNDOFF },
            label,
          );
          ok(written.subarray(rows * cols).every((v) => v === SENTINEL), `${label}: a write past the end`);
        } finally {
          for (const t of [...tensors, out]) t.buffer.destroy();
        }
      }
    }
  },
);

gpuTest("scatter GPU: a grid folded into y gives the same sums", async (gpu) => {
  const args = {
    src: oneSignValues(3 * 1100, 2),
    index: randomInt32(3 * 1100, 3, -2, 9),
    rows: 3,
    indexCols: 1100,
    cols: 7,
  };
  const plan = scatterPlan(gpu, args);
  // 3300 source elements need 13 workgroups; laid out as 5 x 3, two of them past the end.
  const [out] = await gpu.run({ ...plan, workgroups: [5, 3, 1] }, [args.src, args.index]);
  assertClose(out, scatter(args), { atol: 0, rtol: mostWrites(args) * UNIT_ROUNDOFF }, "folded");
});

// Values of one sign per case, so the f32 summation bound is relative to the result: an f32 sum of
// c same-sign values is within c * 2^-24 of the reference's once-rounded f64 sum, relatively, in
// any order the atomics land. c is the most writes any slot of these cases receives.
// The last three are for kernel.nvidia: vec4 sources (indexCols % 4 == 0); rows of exactly 4096 (the
// widest that workgroup memory holds) and of 4097 (global atomics). Blocks of several rows need
// rows > 1024, slow on a software adapter: the test of any grid above covers them.
const SHAPES = [
  [1, 1, 1],
  [3, 255, 257],
  [2, 257, 255],
  [5, 300, 3],
  [1, 4099, 4099],
  [3, 0, 5],
  [0, 7, 2],
  [4, 256, 64],
  [2, 64, 4096],
  [2, 8, 4097],
];
const cases = SHAPES.map(([rows, indexCols, cols]) => ({
  label: `rows=${rows} indexCols=${indexCols} cols=${cols}`,
  // Indices from [-2, cols + 2): some dropped at both ends, and collisions.
  args: {
    src: oneSignValues(rows * indexCols, rows + indexCols),
    index: randomInt32(rows * indexCols, indexCols + cols, -2, cols + 2),
    rows,
    indexCols,
    cols,
  },
}));
checkAgainstReference("scatter", KERNELS, "kernel", cases, scatter, scatterGpu, {
  atol: 0,
  rtol: Math.max(...cases.map(({ args }) => mostWrites(args))) * UNIT_ROUNDOFF,
});

// 75 writes to every slot, of one sign: the tolerance is 75 * 2^-24 = 4.5e-6 relative, the most an
// f32 sum of 75 same-sign values can drift from the exact sum in any order (measured on llvmpipe,
// 20 seeds x 132 slots per layout: at most 8.9 * 2^-24). Two layouts: a slot's writes spread across
// the row (column k % cols), and all 75 from neighbouring invocations (k / 75), contending at once.
const heavy = (layout: string, columnOf: (k: number) => number, seed: number) => {
  const rows = 4, cols = 33, indexCols = 75 * cols;
  const index = Int32Array.from({ length: rows * indexCols }, (_, i) => columnOf(i % indexCols));
  return {
    label: `75 writes per slot, ${layout}`,
    args: { src: oneSignValues(rows * indexCols, seed), index, rows, indexCols, cols },
  };
};
checkAgainstReference(
  "scatter (75 writes per slot)",
  KERNELS,
  "kernel",
  [heavy("spread", (k) => k % 33, 10), heavy("neighbouring", (k) => Math.floor(k / 75), 11)],
  scatter,
  scatterGpu,
  { atol: 0, rtol: 75 * UNIT_ROUNDOFF },
);
