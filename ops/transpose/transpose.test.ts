import { deepStrictEqual, notDeepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
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
  placeColumns,
  placeColumnsGpu,
  transpose,
  type TransposeArgs,
  transposeGpu,
  transposePlan,
} from "./mod.ts";

/** goldens/gen.py transposes arange(rows * cols), so each output is the index it was read from. */
interface Golden {
  meta: { torch: string };
  cases: { rows: number; cols: number; out: number[] }[];
}
const loadTransposeGolden = () => loadGolden<Golden>(new URL("./goldens/transpose.json", import.meta.url));
const arange = (n: number) => Float32Array.from({ length: n }, (_, i) => i);
// Values are moved, never computed: every comparison is exact.
const exact = { atol: 0, rtol: 0 };
const SENTINEL = 12345;

Deno.test("transpose reference: [[1, 2, 3], [4, 5, 6]] becomes [[1, 4], [2, 5], [3, 6]]", () => {
  const x = new Float32Array([1, 2, 3, 4, 5, 6]);
  deepStrictEqual([...transpose({ x, rows: 2, cols: 3 })], [1, 4, 2, 5, 3, 6]);
  // rows and cols describe x: read as [3, 2] instead, the same data transposes differently.
  deepStrictEqual([...transpose({ x, rows: 3, cols: 2 })], [1, 3, 5, 2, 4, 6]);
  // A 1 x n or n x 1 matrix transposes to the same sequence.
  deepStrictEqual([...transpose({ x, rows: 1, cols: 6 })], [...x]);
  deepStrictEqual([...transpose({ x, rows: 6, cols: 1 })], [...x]);
  deepStrictEqual(transpose({ x: new Float32Array(0), rows: 0, cols: 5 }).length, 0);
});

Deno.test("transpose reference: transposing twice gives the matrix back", () => {
  const x = randomF32(33 * 65, 1);
  const once = transpose({ x, rows: 33, cols: 65 });
  notDeepStrictEqual([...once], [...x]);
  deepStrictEqual([...transpose({ x: once, rows: 65, cols: 33 })], [...x]);
});

Deno.test("transpose reference: bad input throws naming the argument", async () => {
  const x = arange(6);
  await assertThrowsMessage(() => transpose({ x, rows: 2, cols: 2 }), "x must have length rows * cols = 4, got 6");
  await assertThrowsMessage(() => transpose({ x, rows: -2, cols: -3 }), "rows must be an integer >= 0, got -2");
  await assertThrowsMessage(() => transpose({ x, rows: 2, cols: 3.5 }), "cols must be an integer >= 0, got 3.5");
  await assertThrowsMessage(
    () => transpose({ x: [0, 1, 2, 3, 4, 5] as unknown as Float32Array, rows: 2, cols: 3 }),
    "x must be a Float32Array",
  );
});

Deno.test("transpose reference matches torch goldens", async () => {
  const golden = await loadTransposeGolden();
  ok(golden.cases.some((c) => c.rows === 33 && c.cols === 65), "golden lacks the 33 x 65 case");
  for (const { rows, cols, out } of golden.cases) {
    assertClose(transpose({ x: arange(rows * cols), rows, cols }), out, exact, `${rows} x ${cols}`);
  }
});

gpuTest("transpose GPU matches torch goldens", async (gpu) => {
  const golden = await loadTransposeGolden();
  for (const { rows, cols, out } of golden.cases) {
    assertClose(await transposeGpu(gpu, { x: arange(rows * cols), rows, cols }), out, exact, `${rows} x ${cols}`);
  }
});

gpuTest("transpose GPU: bad input throws before dispatch", async (gpu) => {
  const x = arange(6);
  await assertThrowsMessage(() => transposeGpu(gpu, { x, rows: 3, cols: 3 }), "x must have length rows * cols = 9");
  await assertThrowsMessage(() => transposeGpu(gpu, { x, rows: 2.5, cols: 3 }), "rows must be an integer >= 0");
  await assertThrowsMessage(
    () => transposeGpu(gpu, { x, rows: 2, cols: 3 }, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
});

gpuTest("transpose plan: one workgroup per 32 x 32 tile, folded into y past 65,535 tiles", (gpu) => {
  const portable = { override: "kernel" } as const;
  deepStrictEqual(transposePlan(gpu, { rows: 33, cols: 65 }, portable).workgroups, [6, 1, 1]);
  deepStrictEqual(transposePlan(gpu, { rows: 1, cols: 1 }, portable).workgroups, [1, 1, 1]);
  // A single row of 2,097,153 needs 65,537 tiles: more than one grid dimension holds.
  const long = transposePlan(gpu, { rows: 1, cols: 2_097_153 }, portable);
  deepStrictEqual(long.workgroups, [32_769, 2, 1]);
  deepStrictEqual(long.cost, { bytes: 8 * 2_097_153, flops: 0 });
});

gpuTest("transpose plan (kernel.nvidia): 64 x 64 tiles on at most 65,535 workgroups, never folded", (gpu) => {
  const nvidia = { override: "kernel.nvidia" } as const;
  deepStrictEqual(transposePlan(gpu, { rows: 33, cols: 65 }, nvidia).workgroups, [2, 1, 1]);
  deepStrictEqual(transposePlan(gpu, { rows: 8192, cols: 8192 }, nvidia).workgroups, [16_384, 1, 1]);
  deepStrictEqual(transposePlan(gpu, { rows: 0, cols: 7 }, nvidia).workgroups, [0, 1, 1]);
  // 2,097,153 columns are 32,769 tiles of 64: within one dimension.
  const long = transposePlan(gpu, { rows: 1, cols: 2_097_153 }, nvidia);
  deepStrictEqual(long.workgroups, [32_769, 1, 1]);
  deepStrictEqual(long.cost, { bytes: 8 * 2_097_153, flops: 0 });
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  deepStrictEqual(transposePlan(gpu, { rows: 64 * 300, cols: 64 * 300 }, nvidia).workgroups, [max, 1, 1]);
});

gpuTest(
  "transpose GPU (kernel.nvidia): any grid covers every tile once, and nothing is written past the end",
  async (gpu) => {
    // Fewer workgroups than tiles (each strides over several), a grid folded by hand into y, and
    // more workgroups than tiles; with vec4s (rows, cols multiples of 4) and without.
    for (const [rows, cols] of [[200, 136], [130, 70]]) {
      const args: TransposeArgs = { x: randomF32(rows * cols, rows + cols), rows, cols };
      const plan = transposePlan(gpu, args, { override: "kernel.nvidia" });
      for (const workgroups of [[1, 1, 1], [2, 3, 1], [5, 1, 1], [40, 1, 1]] as const) {
        const x = gpu.upload(args.x, "x");
        const out = gpu.upload(new Float32Array(rows * cols + 2048).fill(SENTINEL), "out");
        try {
          await gpu.submit([{ ...plan, workgroups }, [x, out]]);
          const written = await gpu.read(out);
          const label = `${rows} x ${cols} on [${workgroups}]`;
          assertClose(written.subarray(0, rows * cols), transpose(args), exact, label);
          ok(written.subarray(rows * cols).every((v) => v === SENTINEL), `${label}: a write past the end`);
        } finally {
          x.buffer.destroy();
          out.buffer.destroy();
        }
      }
    }
  },
);

gpuTest(
  "transpose GPU (kernel): a folded grid recovers each tile's index and writes nothing past the end",
  async (gpu) => {
    // Folding at a limit of tiles - 1 gives two rows of workgroups, the second one short. Running
    // the 65,537-tile row for real takes half a minute on a software adapter.
    for (const [rows, cols] of [[70, 70], [1, 200]]) {
      const args: TransposeArgs = { x: randomF32(rows * cols, rows), rows, cols };
      const plan = transposePlan(gpu, args, { override: "kernel" });
      const [tiles] = plan.workgroups as readonly number[];
      const folded = { ...plan, workgroups: foldWorkgroups(tiles, tiles - 1) };
      ok(folded.workgroups[1] === 2 && folded.workgroups[0] * 2 > tiles);
      // The output buffer is longer than the result, so a write from the surplus tile would land.
      const x = gpu.upload(args.x, "x");
      const out = gpu.upload(new Float32Array(rows * cols + 2048).fill(SENTINEL), "out");
      try {
        await gpu.submit([folded, [x, out]]);
        const written = await gpu.read(out);
        assertClose(written.subarray(0, rows * cols), transpose(args), exact, `folded ${rows} x ${cols}`);
        ok(written.subarray(rows * cols).every((v) => v === SENTINEL), `${rows} x ${cols}: a write past the end`);
      } finally {
        x.buffer.destroy();
        out.buffer.destroy();
      }
    }
  },
);

// 1x1, a row, a column, one full tile, tiles cut by 1 on either side, 33 x 65, 255 x 257 and a
// row of 4099 each way round, and an empty matrix; then shapes whose sides are multiples of 4
// (the vec4 path of kernel.nvidia): whole 64 x 64 tiles, tiles cut on either side, and long thin
// matrices each way round.
const SHAPES = [
  [1, 1],
  [1, 300],
  [300, 1],
  [32, 32],
  [31, 33],
  [33, 65],
  [64, 96],
  [255, 257],
  [2, 4099],
  [4099, 2],
  [0, 7],
  [4, 4],
  [128, 192],
  [68, 132],
  [100, 36],
  [4, 4100],
  [4100, 8],
];
checkAgainstReference(
  "transpose",
  KERNELS,
  "kernel",
  SHAPES.map(([rows, cols]) => ({ label: `${rows} x ${cols}`, args: { x: randomF32(rows * cols, cols), rows, cols } })),
  transpose,
  transposeGpu,
  exact,
);

Deno.test("placeColumns reference: the block's columns land at col0, the rest of out is kept; transposed reads x as [cols, rows]", async () => {
  const out = Float32Array.from({ length: 2 * 4 }, () => -1);
  const x = new Float32Array([1, 2, 3, 4]); // [2, 2] or, transposed, [2, 2] read column-wise
  deepStrictEqual([...placeColumns({ x, out, rows: 2, cols: 2, outCols: 4, col0: 1 })], [-1, 1, 2, -1, -1, 3, 4, -1]);
  deepStrictEqual(
    [...placeColumns({ x, out, rows: 2, cols: 2, outCols: 4, col0: 2, transposed: true })],
    [-1, -1, 1, 3, -1, -1, 2, 4],
  );
  await assertThrowsMessage(
    () => placeColumns({ x, out, rows: 2, cols: 2, outCols: 4, col0: 3 }),
    "placeColumns: outCols must be an integer >= 5, got 4",
  );
});

const placeCases = [
  { rows: 1, cols: 1, outCols: 1, col0: 0 },
  { rows: 5, cols: 70, outCols: 200, col0: 130 },
  { rows: 33, cols: 17, outCols: 40, col0: 3 },
].flatMap((shape, i) =>
  [false, true].map((transposed) => ({
    label: `${shape.rows}x${shape.cols} into ${shape.outCols} at ${shape.col0}${transposed ? ", transposed" : ""}`,
    args: {
      ...shape,
      transposed,
      x: randomF32(shape.rows * shape.cols, 10 + i),
      out: randomF32(shape.rows * shape.outCols, 20 + i),
    },
  }))
);
for (const entry of ["place", "place_transposed"]) {
  checkAgainstReference(
    "placeColumns",
    KERNELS,
    entry,
    placeCases.filter((c) => c.args.transposed === (entry === "place_transposed")),
    placeColumns,
    (gpu, args, options) => placeColumnsGpu(gpu, args, options),
    exact,
  );
}
