import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  randomInt32,
} from "../../harness/testing.ts";
import { indexCopy, type IndexCopyArgs, indexCopyGpu, indexCopyPlan, KERNELS, validateIndexCopyShape } from "./mod.ts";

/** What goldens/gen_index_copy.py writes. */
interface Golden {
  meta: { torch: string; out_of_range: { index: number[]; rows: number; raises: boolean[] } };
  cases: {
    outer: number;
    rows: number;
    cols: number;
    index: number[];
    out: number[];
    src: number[];
    result: number[];
  }[];
}
const loadIndexCopyGolden = () => loadGolden<Golden>(new URL("./goldens/index_copy.json", import.meta.url));
const argsOf = (c: Golden["cases"][number]): IndexCopyArgs => ({
  out: new Float32Array(c.out),
  src: new Float32Array(c.src),
  index: new Int32Array(c.index),
  outer: c.outer,
  rows: c.rows,
  cols: c.cols,
});
const EXACT = { atol: 0, rtol: 0 };

Deno.test("indexCopy: hand-derived rows; the indexed axis is the middle one of [outer, rows, cols]", () => {
  // Two blocks of three rows of two: row 2 of each block gets that block's source row.
  const out = new Float32Array(12);
  const got = indexCopy({
    out,
    src: new Float32Array([1, 2, 3, 4]),
    index: new Int32Array([2]),
    outer: 2,
    rows: 3,
    cols: 2,
  });
  deepStrictEqual([...got], [0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 3, 4]);
  deepStrictEqual([...out], Array(12).fill(0), "out itself is not modified");
  // Rows no index names keep their values; the order of index is free.
  const kept = indexCopy({
    out: new Float32Array([9, 9, 9]),
    src: new Float32Array([5, 6]),
    index: new Int32Array([2, 0]),
    outer: 1,
    rows: 3,
    cols: 1,
  });
  deepStrictEqual([...kept], [6, 9, 5]);
});

Deno.test("indexCopy: an index outside [0, rows), -1 included, is dropped; torch raises for both", async () => {
  const { meta } = await loadIndexCopyGolden();
  deepStrictEqual(meta.out_of_range.raises, [true, true]);
  const got = indexCopy({
    out: new Float32Array([7, 7, 7]),
    src: new Float32Array([1, 2, 3]),
    index: new Int32Array([-1, 3, 1]),
    outer: 1,
    rows: 3,
    cols: 1,
  });
  deepStrictEqual([...got], [7, 3, 7]);
});

Deno.test("indexCopy: a repeated row, bad sizes and arrays are refused by name", () => {
  const base = {
    out: new Float32Array(6),
    src: new Float32Array(4),
    index: new Int32Array([1, 1]),
    outer: 1,
    rows: 3,
    cols: 2,
  };
  throws(() => indexCopy(base), /index must not repeat a row \(index\[0\] and index\[1\] are both 1\)/);
  // A repeated out-of-range index writes nowhere, so it is no conflict.
  indexCopy({ ...base, index: new Int32Array([-1, -1]) });
  throws(() => indexCopy({ ...base, index: new Int32Array([0, 1]), rows: 0 }), /indexCopy: rows must be an integer/);
  throws(() => indexCopy({ ...base, index: new Int32Array([0, 1]), src: new Float32Array(3) }), /indexCopy: src/);
  throws(() => indexCopy({ ...base, index: new Int32Array([0, 1]), out: new Float32Array(5) }), /indexCopy: out/);
  // The shape's check, which the plan makes once it has a device.
  throws(
    () => validateIndexCopyShape({ outer: 2 ** 16, rows: 2 ** 16, cols: 2, indexLength: 1 }),
    /outer \* rows \* cols must be at most/,
  );
});

Deno.test("indexCopy: the reference equals torch's index_copy_ on every golden case", async () => {
  const { cases } = await loadIndexCopyGolden();
  for (const c of cases) assertClose(indexCopy(argsOf(c)), c.result, EXACT, `golden ${c.outer}x${c.rows}x${c.cols}`);
});

gpuTest("indexCopy: the GPU equals torch's index_copy_ on every golden case, exactly", async (gpu) => {
  const { cases } = await loadIndexCopyGolden();
  for (const c of cases) {
    assertClose(await indexCopyGpu(gpu, argsOf(c)), c.result, EXACT, `golden ${c.outer}x${c.rows}x${c.cols}`);
  }
});

/** Distinct rows in [-2, rows + 2) (some out of range at both ends), in a shuffled order. */
function distinctRows(n: number, rows: number, seed: number): Int32Array {
  const pool = Array.from({ length: rows + 4 }, (_, i) => i - 2);
  const order = randomInt32(pool.length, seed, 0, 1 << 30);
  pool.sort((a, b) => order[a + 2] - order[b + 2]);
  return Int32Array.from(pool.slice(0, n));
}

const SHAPES: [outer: number, rows: number, cols: number, n: number][] = [
  [1, 1, 1, 1],
  [8, 64, 128, 1], // one decode position of a KV cache
  [2, 33, 128, 17], // a prefill's positions
  [3, 300, 5, 0],
  [1, 7000, 1, 300], // many short rows
  [5, 257, 3, 259],
];
const cases = SHAPES.map(([outer, rows, cols, n], s) => ({
  label: `outer=${outer} rows=${rows} cols=${cols} n=${n}`,
  args: {
    out: randomF32(outer * rows * cols, 10 + s),
    src: randomF32(outer * n * cols, 20 + s),
    index: distinctRows(n, rows, 30 + s),
    outer,
    rows,
    cols,
  },
}));
checkAgainstReference("indexCopy", KERNELS, "index_copy", cases, indexCopy, indexCopyGpu, EXACT);

gpuTest("indexCopy: a grid over the per-dimension workgroup limit folds, and every row lands", async (gpu) => {
  const small = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 16 });
  const [outer, rows, cols, n] = [2, 100, 96, 90]; // 17,280 source elements: 68 workgroups of 256
  const plan = indexCopyPlan(small, { outer, rows, cols, indexLength: n });
  ok(typeof plan.workgroups !== "number" && plan.workgroups[1] > 1, "the grid folds into y");
  const args = {
    out: randomF32(outer * rows * cols, 1),
    src: randomF32(outer * n * cols, 2),
    index: Int32Array.from({ length: n }, (_, i) => rows - 1 - i),
    outer,
    rows,
    cols,
  };
  assertClose(await indexCopyGpu(small, args), indexCopy(args), EXACT, "reversed rows");
});

gpuTest("indexCopy: the plan refuses a bad shape before any GPU work, naming the argument", async (gpu) => {
  await assertThrowsMessage(
    () => indexCopyPlan(gpu, { outer: 0, rows: 1, cols: 1, indexLength: 1 }),
    "indexCopy: outer",
  );
  await assertThrowsMessage(
    () => indexCopyPlan(gpu, { outer: 1, rows: 2 ** 31, cols: 1, indexLength: 1 }),
    "indexCopy: rows",
  );
  strictEqual(indexCopyPlan(gpu, { outer: 1, rows: 4, cols: 2, indexLength: 0 }).cost.bytes, 0);
});
