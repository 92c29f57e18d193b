import { deepStrictEqual, notDeepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { LimitError } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  eachVariant,
  gpuTest,
  loadGolden,
  randomF32,
  randomInt32,
} from "../../harness/testing.ts";
import {
  gather,
  type GatherArgs,
  gatherBlockRows,
  gatherBlocksPlan,
  gatherGpu,
  gatherPlan,
  gatherQuantized,
  gatherQuantizedBlocksPlan,
  gatherQuantizedGpu,
  KERNELS,
  MAX_ROWS,
  quantizedRowWords,
  uploadTableBlocks,
} from "./mod.ts";
import { packQ4, packQ8 } from "../matvec/reference.ts";

/** What goldens/gen.py writes. */
interface Golden {
  meta: {
    torch: string;
    versus_torch_gather: {
      table: number[];
      rows: number;
      cols: number;
      index: number[];
      index_select: number[];
      torch_gather: number[];
    };
    out_of_range: { index: number[]; index_select_raises: boolean[]; python_indexing_minus_one: number[] };
  };
  cases: { rows: number; cols: number; table: number[]; index: number[]; out: number[] }[];
}
// Read by the tests that use it, so a missing fixture fails those tests and no others.
const loadGatherGolden = () => loadGolden<Golden>(new URL("./goldens/gather.json", import.meta.url));
const argsOf = (c: Golden["cases"][number]): GatherArgs => ({
  table: new Float32Array(c.table),
  index: new Int32Array(c.index),
  rows: c.rows,
  cols: c.cols,
});

/** [[0, 1], [2, 3], [4, 5]]: row r is [2r, 2r + 1], so every copied row can be read off by eye. */
const table3x2 = new Float32Array([0, 1, 2, 3, 4, 5]);
const select = (index: number[]) => [...gather({ table: table3x2, index: new Int32Array(index), rows: 3, cols: 2 })];
// A copy of a stored value, on both sides: exact agreement is required.
const exact = { atol: 0, rtol: 0 };
const SENTINEL = 12345;

/** `length` indices drawn uniformly from [lo, hi). */
Deno.test("gather reference: hand-derived rows, repeats allowed", () => {
  deepStrictEqual(select([2, 0, 2]), [4, 5, 0, 1, 4, 5]);
  deepStrictEqual(select([1]), [2, 3]);
  const column = gather({ table: new Float32Array([7, 8, 9]), index: new Int32Array([2, 2, 0]), rows: 3, cols: 1 });
  deepStrictEqual([...column], [9, 9, 7]);
});

Deno.test("gather reference: an index outside [0, rows) gathers zeros, and -1 is not the last row", () => {
  deepStrictEqual(select([-1, 3, 1]), [0, 0, 0, 0, 2, 3]);
  deepStrictEqual(select([-(2 ** 31), 2 ** 31 - 1]), [0, 0, 0, 0]);
  // The alternatives read real rows instead: Python-style wrapping (-1 is row 2) or clamping (3 is row 2).
  notDeepStrictEqual(select([-1]), select([2]));
  notDeepStrictEqual(select([3]), select([2]));
});

Deno.test("gather reference: an empty index gives an empty result, as torch.index_select does", () => {
  deepStrictEqual(gather({ table: table3x2, index: new Int32Array(0), rows: 3, cols: 2 }), new Float32Array(0));
});

Deno.test("gather is torch.index_select, not torch.gather (goldens)", async () => {
  const { table, rows, cols, index, index_select, torch_gather } = (await loadGatherGolden()).meta.versus_torch_gather;
  const got = [...gather({ table: new Float32Array(table), index: new Int32Array(index), rows, cols })];
  deepStrictEqual(got, index_select);
  deepStrictEqual(got, [4, 5, 0, 1]);
  // torch.gather on the same index picks one element per index (column 0 here), not a row.
  deepStrictEqual(torch_gather, [4, 0]);
  notDeepStrictEqual(torch_gather, index_select);
});

Deno.test("gather: torch refuses an index of -1 or rows; here it gathers zeros, not Python's last row (goldens)", async () => {
  const { index, index_select_raises, python_indexing_minus_one } = (await loadGatherGolden()).meta.out_of_range;
  deepStrictEqual(index, [-1, 3]);
  deepStrictEqual(index_select_raises, [true, true]);
  deepStrictEqual(python_indexing_minus_one, [4, 5]);
  deepStrictEqual(select(index), [0, 0, 0, 0]);
});

Deno.test("gather reference matches torch goldens", async () => {
  for (const c of (await loadGatherGolden()).cases) {
    assertClose(gather(argsOf(c)), c.out, exact, `rows=${c.rows} cols=${c.cols} indexLength=${c.index.length}`);
  }
});

Deno.test("gather reference: bad input throws naming the argument", async () => {
  const index = new Int32Array([0]);
  await assertThrowsMessage(
    () => gather({ table: table3x2.subarray(1), index, rows: 3, cols: 2 }),
    "gather: table must have length rows * cols = 6, got 5",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, index: new Float32Array([0]) as unknown as Int32Array, rows: 3, cols: 2 }),
    "gather: index must be an Int32Array, got Float32Array",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, index: [0] as unknown as Int32Array, rows: 3, cols: 2 }),
    "gather: index must be an Int32Array, got Array",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, index, rows: -3, cols: -2 }),
    "gather: rows must be an integer >= 1, got -3",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, index, rows: 2 ** 31, cols: 2 }),
    `gather: rows must be an integer <= ${MAX_ROWS} (the largest i32), got 2147483648`,
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, index, rows: 4, cols: 1.5 }),
    "gather: cols must be an integer >= 1",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, index, rows: 6, cols: 0 }),
    "gather: cols must be an integer >= 1",
  );
});

gpuTest("gather GPU: bad input throws before dispatch", async (gpu) => {
  const index = new Int32Array([0]);
  await assertThrowsMessage(
    () => gatherGpu(gpu, { table: table3x2, index, rows: 2, cols: 2 }),
    "gather: table must have length rows * cols = 4, got 6",
  );
  await assertThrowsMessage(
    () => gatherGpu(gpu, { table: table3x2, index: new Uint32Array([0]) as unknown as Int32Array, rows: 3, cols: 2 }),
    "gather: index must be an Int32Array, got Uint32Array",
  );
  await assertThrowsMessage(() => gatherGpu(gpu, { table: table3x2, index, rows: 0, cols: 6 }), "gather: rows must be");
  await assertThrowsMessage(
    () => gatherGpu(gpu, { table: table3x2, index, rows: 3, cols: NaN }),
    "gather: cols must be",
  );
  await assertThrowsMessage(
    () => gatherGpu(gpu, { table: table3x2, index, rows: 3, cols: 2 }, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
});

gpuTest("gather GPU matches torch goldens", async (gpu) => {
  for (const c of (await loadGatherGolden()).cases) {
    assertClose(
      await gatherGpu(gpu, argsOf(c)),
      c.out,
      exact,
      `rows=${c.rows} cols=${c.cols} indexLength=${c.index.length}`,
    );
  }
});

gpuTest("gather GPU: an index outside [0, rows) gathers zeros, -1 and the i32 extremes included", async (gpu) => {
  const index = new Int32Array([-1, 3, 2, -(2 ** 31), 2 ** 31 - 1, 0]);
  const got = await gatherGpu(gpu, { table: table3x2, index, rows: 3, cols: 2 });
  deepStrictEqual([...got], [0, 0, 0, 0, 4, 5, 0, 0, 0, 0, 0, 1]);
});

gpuTest("gather GPU: an empty index gives an empty result", async (gpu) => {
  deepStrictEqual(
    await gatherGpu(gpu, { table: table3x2, index: new Int32Array(0), rows: 3, cols: 2 }),
    new Float32Array(0),
  );
});

gpuTest("gatherPlan folds a grid past 65,535 workgroups into y, covering every element", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const indexLength = 2 * max * 256 + 1;
  const plan = gatherPlan(gpu, { rows: 1, cols: 1, indexLength }, { override: "kernel" });
  const [x, y, z] = plan.workgroups as [number, number, number];
  ok(x <= max && y > 1 && z === 1, `workgroups ${plan.workgroups}`);
  ok(x * y * 256 >= indexLength, `workgroups ${plan.workgroups} cover ${x * y * 256} < ${indexLength} elements`);
});

gpuTest("gatherPlan (kernel.nvidia): a block of 4096 elements per workgroup, at most 65,535, never folded", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const nvidia = { override: "kernel.nvidia" } as const;
  deepStrictEqual(gatherPlan(gpu, { rows: 16, cols: 4096, indexLength: 8192 }, nvidia).workgroups, [8192, 1, 1]);
  deepStrictEqual(gatherPlan(gpu, { rows: 7, cols: 33, indexLength: 100 }, nvidia).workgroups, [1, 1, 1]);
  deepStrictEqual(gatherPlan(gpu, { rows: 7, cols: 33, indexLength: 0 }, nvidia).workgroups, [0, 1, 1]);
  deepStrictEqual(gatherPlan(gpu, { rows: 1, cols: 1, indexLength: 2 * max * 4096 }, nvidia).workgroups, [max, 1, 1]);
});

gpuTest(
  "gather GPU (kernel.nvidia): any grid covers the output once, and nothing is written past the end",
  async (gpu) => {
    // cols a multiple of 4 (whole vec4s) and not (element by element, with a tail of indexLength * cols % 4).
    for (const [rows, cols, indexLength] of [[9, 64, 70], [9, 33, 131]]) {
      const args = {
        table: randomF32(rows * cols, cols),
        index: randomInt32(indexLength, indexLength, -2, rows + 2),
        rows,
        cols,
      };
      const plan = gatherPlan(gpu, { rows, cols, indexLength }, { override: "kernel.nvidia" });
      for (const workgroups of [[1, 1, 1], [2, 2, 1], [9, 1, 1]] as const) {
        const table = gpu.upload(args.table, "table");
        const index = gpu.upload(args.index, "index");
        const out = gpu.upload(new Float32Array(indexLength * cols + 64).fill(SENTINEL), "out");
        try {
          await gpu.submit([{ ...plan, workgroups }, [table, index, out]]);
          const written = await gpu.read(out);
          const label = `rows=${rows} cols=${cols} indexLength=${indexLength} on [${workgroups}]`;
          assertClose(written.subarray(0, indexLength * cols), gather(args), exact, label);
          ok(written.subarray(indexLength * cols).every((v) => v === SENTINEL), `${label}: a write past the end`);
        } finally {
          for (const t of [table, index, out]) t.buffer.destroy();
        }
      }
    }
  },
);

gpuTest("gather GPU: a grid folded into y gives the same rows", async (gpu) => {
  const args = { table: randomF32(7 * 33, 7), index: randomInt32(100, 100, -2, 9), rows: 7, cols: 33 };
  const plan = gatherPlan(gpu, { rows: 7, cols: 33, indexLength: 100 });
  // 3300 elements need 13 workgroups; laid out as 5 x 3, two of them past the end.
  const folded = { ...plan, workgroups: [5, 3, 1] as const };
  const [out] = await gpu.run(folded, [args.table, args.index]);
  assertClose(out, gather(args), exact, "folded");
});

// Shapes (rows, cols, indexLength): single elements, rows longer and shorter than a workgroup, an empty index;
// then cols a multiple of 4 (kernel.nvidia's whole-vec4 path): one vec4 per row, rows cut across
// blocks, and long rows.
const SHAPES = [
  [1, 1, 1],
  [7, 255, 257],
  [300, 3, 257],
  [3, 257, 5],
  [2, 4099, 3],
  [5, 3, 0],
  [5, 4, 7],
  [40, 64, 300],
  [3, 4100, 5],
];
checkAgainstReference(
  "gather",
  KERNELS,
  "kernel",
  SHAPES.map(([rows, cols, indexLength]) => ({
    label: `rows=${rows} cols=${cols} indexLength=${indexLength}`,
    // Indices from [-2, rows + 2): some out of range at both ends, and repeats.
    args: {
      table: randomF32(rows * cols, rows + cols),
      index: randomInt32(indexLength, indexLength, -2, rows + 2),
      rows,
      cols,
    },
  })),
  gather,
  gatherGpu,
  exact,
);

// Tables past one binding: the same shapes' kind at a binding limit lowered to 4,096 bytes, so that a
// table of a few hundred rows is held as several row blocks (gatherGpu splits it; each block its own
// dispatch). Indices at every block boundary, out of range at both ends, and repeats; cols a multiple of
// 4 (kernel.nvidia's whole vec4s), not (output vec4s straddling two rows of different blocks, stored
// component by component), and of 3 (a row's elements in two vec4s, a tail past the last whole vec4).
// (The index and the output stay within the lowered limit too: every binding is checked against it.)
const NARROW = { maxStorageBufferBindingSize: 4096 };
const BLOCK_SHAPES = [
  [300, 10, 67], // 102 rows a block: 102 + 102 + 96
  [300, 8, 70], // 128 rows a block: 128 + 128 + 44
  [1000, 3, 301], // 341 rows a block: 341 + 341 + 318
  [3, 500, 2], // 2 rows a block: 2 + 1
];
const blockCase = ([rows, cols, indexLength]: number[]) => {
  const per = Math.floor(4096 / (4 * cols));
  const edges = [0, per - 1, per, 2 * per - 1, 2 * per, rows - 1, -1, rows, -(2 ** 31)].filter((i) => i < rows + 1);
  const index = randomInt32(indexLength, indexLength + 1, -2, rows + 2);
  index.set(edges.slice(0, Math.min(edges.length, indexLength)));
  return {
    label: `rows=${rows} cols=${cols} indexLength=${indexLength} in blocks of ${per} rows`,
    args: { table: randomF32(rows * cols, rows + cols + 1), index, rows, cols },
  };
};
checkAgainstReference(
  "gather (row blocks)",
  KERNELS,
  "kernel",
  BLOCK_SHAPES.map(blockCase),
  gather,
  (gpu, args, options) => gatherGpu(gpu.withLimits(NARROW), args, options),
  exact,
);

gpuTest(
  "gather GPU: the plan splits a table past maxStorageBufferBindingSize into row blocks, never binding it whole",
  async (gpu) => {
    const narrow = gpu.withLimits(NARROW);
    strictEqual(gatherBlockRows(narrow, 10), 102); // 4,096 bytes / 40 bytes a row
    strictEqual(gatherBlockRows(narrow, 1024), 1);
    strictEqual(gatherBlockRows(narrow, 3), 341); // 4,092 bytes: a block's buffer is padded to 16
    let thrown: unknown;
    try {
      gatherPlan(narrow, { rows: 300, cols: 10, indexLength: 4 });
    } catch (e) {
      thrown = e;
    }
    ok(thrown instanceof LimitError && thrown.limit === "maxStorageBufferBindingSize", String(thrown));
    ok(thrown.message.includes("needs maxStorageBufferBindingSize >= 12000, but this device allows 4096"));
    ok(thrown.message.includes("gatherBlocksPlan"), thrown.message);
    // One row past the limit: refused, not split further.
    await assertThrowsMessage(
      () => gatherBlockRows(narrow, 1025),
      "one row of 1025 f32 needs maxStorageBufferBindingSize >= 4112",
    );
    await assertThrowsMessage(
      () => gatherBlocksPlan(narrow, { rows: 300, cols: 10, indexLength: 4, blockRows: 103 }),
      "a block of 103 rows needs maxStorageBufferBindingSize >= 4128, but this device allows 4096",
    );
    await assertThrowsMessage(
      () => gatherBlocksPlan(narrow, { rows: 300, cols: 10, indexLength: 4, blockRows: 0 }),
      "gather: blockRows must be",
    );
    await assertThrowsMessage(
      () => uploadTableBlocks(narrow, new Float32Array(30), 3, 11),
      "gather: table must have length rows * cols = 33, got 30",
    );

    const { blockRows, blocks, sequence } = gatherBlocksPlan(narrow, { rows: 300, cols: 10, indexLength: 4 });
    deepStrictEqual([blockRows, blocks], [102, 3]);
    deepStrictEqual(sequence.bindings.map((b) => `${b.name}:${b.length}`), [
      "table0:1020",
      "table1:1020",
      "table2:960",
      "index:4",
      "out:40",
    ]);
    deepStrictEqual(sequence.steps.map((s) => s.tensors), [[0, 3, 4], [1, 3, 4], [2, 3, 4]]);
    // A table within the limit is one block, the same dispatch as gatherPlan's.
    strictEqual(gatherBlocksPlan(gpu, { rows: 300, cols: 10, indexLength: 4 }).blocks, 1);
  },
);

gpuTest(
  "gather GPU: row blocks on resident tensors write every output element once, the zeros included",
  async (gpu) => {
    const narrow = gpu.withLimits(NARROW);
    for (const variant of ["kernel", "kernel.nvidia"] as const) {
      for (const [rows, cols, indexLength] of [[300, 10, 67], [1000, 3, 301]]) {
        const { args, label } = blockCase([rows, cols, indexLength]);
        const blocks = uploadTableBlocks(narrow, args.table, rows, cols);
        strictEqual(blocks.length, Math.ceil(rows / gatherBlockRows(narrow, cols)));
        const index = narrow.upload(args.index, "index");
        // NaN in every element and a guard past the end: an element left unwritten, or a write past it, shows.
        const out = narrow.upload(new Float32Array(indexLength * cols + 8).fill(NaN), "out");
        try {
          const { sequence } = gatherBlocksPlan(narrow, { rows, cols, indexLength }, { override: variant });
          await narrow.submitSequence(sequence, [...blocks, index, out]);
          const written = await narrow.read(out) as Float32Array;
          assertClose(written.subarray(0, indexLength * cols), gather(args), exact, `${variant} ${label}`);
          ok(written.subarray(indexLength * cols).every(Number.isNaN), `${variant} ${label}: a write past the end`);
        } finally {
          for (const t of [...blocks, index, out]) t.buffer.destroy();
        }
      }
    }
  },
);

/** A random quantized table: codes, their packing and scales, and the same table dequantized in f64 (then f32). */
function quantizedTable(format: "q8" | "q4g128", rows: number, cols: number, seed: number) {
  const max = format === "q8" ? 127 : 7;
  const codes = randomInt32(rows * cols, seed, -max, max + 1);
  const groups = format === "q8" ? 1 : Math.ceil(cols / 128);
  const scales = randomF32(rows * groups, seed + 1, 0.01, 0.5);
  const table = format === "q8" ? packQ8(codes, rows, cols) : packQ4(codes, rows, cols);
  const scaleOf = (i: number) =>
    format === "q8"
      ? scales[Math.floor(i / cols)]
      : scales[Math.floor(i / cols) * groups + Math.floor((i % cols) / 128)];
  const dequantized = Float32Array.from(codes, (c, i) => c * scaleOf(i));
  return { table, scales, dequantized };
}

Deno.test("gatherQuantized reference: the dequantized table's gather (zeros out of range); a scale per group of 128 for q4g128", () => {
  for (const format of ["q8", "q4g128"] as const) {
    const { table, scales, dequantized } = quantizedTable(format, 5, 300, 3);
    const index = new Int32Array([4, -1, 0, 5, 2, 2]);
    deepStrictEqual(
      [...gatherQuantized({ format, table, scales, index, rows: 5, cols: 300 })],
      [...gather({ table: dequantized, index, rows: 5, cols: 300 })],
      format,
    );
  }
  // q4g128's columns 128.. take the row's second scale, not its first.
  const q4 = gatherQuantized({
    format: "q4g128",
    table: packQ4(new Int32Array(130).fill(1), 1, 130),
    scales: new Float32Array([1, 3]),
    index: new Int32Array([0]),
    rows: 1,
    cols: 130,
  });
  deepStrictEqual([q4[127], q4[128], q4[129]], [1, 3, 3]);
});

for (const [format, entry] of [["q8", "q8row"], ["q4g128", "q4g128"]] as const) {
  eachVariant(KERNELS, entry, (variant) => {
    gpuTest(
      `gather/${variant}: quantized rows over row blocks, out-of-range zeros, every element written`,
      async (gpu) => {
        for (const [rows, cols, blockRows] of [[7, 300, 3], [40, 36, 40], [3, 1, 1]]) {
          const { table, scales } = quantizedTable(format, rows, cols, rows + cols);
          const index = new Int32Array([rows - 1, -1, 0, rows, 2 % rows, 0x7fffffff, 1 % rows, -0x80000000]);
          const { sequence, blocks } = gatherQuantizedBlocksPlan(
            gpu,
            { format, rows, cols, indexLength: index.length, blockRows },
            { override: variant },
          );
          strictEqual(blocks, Math.ceil(rows / blockRows));
          const per = quantizedRowWords(format, cols);
          const tensors = [];
          for (let b = 0; b < blocks; b++) {
            const [r0, r1] = [b * blockRows, Math.min(rows, (b + 1) * blockRows)];
            tensors.push(gpu.upload(table.slice(r0 * per.words, r1 * per.words)));
            tensors.push(gpu.upload(scales.slice(r0 * per.scales, r1 * per.scales)));
          }
          tensors.push(gpu.upload(index), gpu.upload(new Float32Array(index.length * cols).fill(NaN)));
          try {
            await gpu.submitSequence(sequence, tensors);
            const got = await gpu.read(tensors.at(-1)!);
            const want = gatherQuantized({ format, table, scales, index, rows, cols });
            assertClose(got, want, { atol: 0, rtol: 0 }, `${format} ${rows}x${cols} blocks of ${blockRows}`);
          } finally {
            for (const t of tensors) t.buffer.destroy();
          }
        }
        const { table, scales } = quantizedTable(format, 2, 9, 1);
        const index = new Int32Array([1, 0]);
        deepStrictEqual(
          [...await gatherQuantizedGpu(gpu, { format, table, scales, index, rows: 2, cols: 9 }, { override: variant })],
          [...gatherQuantized({ format, table, scales, index, rows: 2, cols: 9 })],
        );
      },
    );
  });
}
