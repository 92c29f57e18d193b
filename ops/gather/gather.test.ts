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
import { gather, type GatherArgs, gatherGpu, gatherPlan, KERNELS, MAX_ROWS } from "./mod.ts";

/** What goldens/gen.py writes. */
interface Golden {
  meta: {
    torch: string;
    versus_torch_gather: {
      table: number[];
      V: number;
      D: number;
      indices: number[];
      index_select: number[];
      torch_gather: number[];
    };
    out_of_range: { indices: number[]; index_select_raises: boolean[]; python_indexing_minus_one: number[] };
  };
  cases: { V: number; D: number; table: number[]; indices: number[]; out: number[] }[];
}
// Read by the tests that use it, so a missing fixture fails those tests and no others.
const loadGatherGolden = () => loadGolden<Golden>(new URL("./goldens/gather.json", import.meta.url));
const argsOf = (c: Golden["cases"][number]): GatherArgs => ({
  table: new Float32Array(c.table),
  indices: new Int32Array(c.indices),
  V: c.V,
  D: c.D,
});

/** [[0, 1], [2, 3], [4, 5]]: row r is [2r, 2r + 1], so every copied row can be read off by eye. */
const table3x2 = new Float32Array([0, 1, 2, 3, 4, 5]);
const select = (indices: number[]) => [...gather({ table: table3x2, indices: new Int32Array(indices), V: 3, D: 2 })];
// A copy of a stored value, on both sides: exact agreement is required.
const exact = { atol: 0, rtol: 0 };
const SENTINEL = 12345;

/** `length` indices drawn uniformly from [lo, hi). */
Deno.test("gather reference: hand-derived rows, repeats allowed", () => {
  deepStrictEqual(select([2, 0, 2]), [4, 5, 0, 1, 4, 5]);
  deepStrictEqual(select([1]), [2, 3]);
  const column = gather({ table: new Float32Array([7, 8, 9]), indices: new Int32Array([2, 2, 0]), V: 3, D: 1 });
  deepStrictEqual([...column], [9, 9, 7]);
});

Deno.test("gather reference: an index outside [0, V) gathers zeros, and -1 is not the last row", () => {
  deepStrictEqual(select([-1, 3, 1]), [0, 0, 0, 0, 2, 3]);
  deepStrictEqual(select([-(2 ** 31), 2 ** 31 - 1]), [0, 0, 0, 0]);
  // The alternatives read real rows instead: Python-style wrapping (-1 is row 2) or clamping (3 is row 2).
  notDeepStrictEqual(select([-1]), select([2]));
  notDeepStrictEqual(select([3]), select([2]));
});

Deno.test("gather reference: an empty index gives an empty result, as torch.index_select does", () => {
  deepStrictEqual(gather({ table: table3x2, indices: new Int32Array(0), V: 3, D: 2 }), new Float32Array(0));
});

Deno.test("gather is torch.index_select, not torch.gather (goldens)", async () => {
  const { table, V, D, indices, index_select, torch_gather } = (await loadGatherGolden()).meta.versus_torch_gather;
  const got = [...gather({ table: new Float32Array(table), indices: new Int32Array(indices), V, D })];
  deepStrictEqual(got, index_select);
  deepStrictEqual(got, [4, 5, 0, 1]);
  // torch.gather on the same indices picks one element per index (column 0 here), not a row.
  deepStrictEqual(torch_gather, [4, 0]);
  notDeepStrictEqual(torch_gather, index_select);
});

Deno.test("gather: torch refuses an index of -1 or V; here it gathers zeros, not Python's last row (goldens)", async () => {
  const { indices, index_select_raises, python_indexing_minus_one } = (await loadGatherGolden()).meta.out_of_range;
  deepStrictEqual(indices, [-1, 3]);
  deepStrictEqual(index_select_raises, [true, true]);
  deepStrictEqual(python_indexing_minus_one, [4, 5]);
  deepStrictEqual(select(indices), [0, 0, 0, 0]);
});

Deno.test("gather reference matches torch goldens", async () => {
  for (const c of (await loadGatherGolden()).cases) {
    assertClose(gather(argsOf(c)), c.out, exact, `V=${c.V} D=${c.D} N=${c.indices.length}`);
  }
});

Deno.test("gather reference: bad input throws naming the argument", async () => {
  const indices = new Int32Array([0]);
  await assertThrowsMessage(
    () => gather({ table: table3x2.subarray(1), indices, V: 3, D: 2 }),
    "gather: table must have length V * D = 6, got 5",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, indices: new Float32Array([0]) as unknown as Int32Array, V: 3, D: 2 }),
    "gather: indices must be an Int32Array, got Float32Array",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, indices: [0] as unknown as Int32Array, V: 3, D: 2 }),
    "gather: indices must be an Int32Array, got Array",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, indices, V: -3, D: -2 }),
    `gather: V must be an integer in [1, ${MAX_ROWS}], got -3`,
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, indices, V: 2 ** 31, D: 2 }),
    `gather: V must be an integer in [1, ${MAX_ROWS}], got 2147483648`,
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, indices, V: 4, D: 1.5 }),
    "gather: D must be an integer >= 1",
  );
  await assertThrowsMessage(
    () => gather({ table: table3x2, indices, V: 6, D: 0 }),
    "gather: D must be an integer >= 1",
  );
});

gpuTest("gather GPU: bad input throws before dispatch", async (gpu) => {
  const indices = new Int32Array([0]);
  await assertThrowsMessage(
    () => gatherGpu(gpu, { table: table3x2, indices, V: 2, D: 2 }),
    "gather: table must have length V * D = 4, got 6",
  );
  await assertThrowsMessage(
    () => gatherGpu(gpu, { table: table3x2, indices: new Uint32Array([0]) as unknown as Int32Array, V: 3, D: 2 }),
    "gather: indices must be an Int32Array, got Uint32Array",
  );
  await assertThrowsMessage(() => gatherGpu(gpu, { table: table3x2, indices, V: 0, D: 6 }), "gather: V must be");
  await assertThrowsMessage(() => gatherGpu(gpu, { table: table3x2, indices, V: 3, D: NaN }), "gather: D must be");
  await assertThrowsMessage(
    () => gatherGpu(gpu, { table: table3x2, indices, V: 3, D: 2 }, { override: "kernel.amd" }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
});

gpuTest("gather GPU matches torch goldens", async (gpu) => {
  for (const c of (await loadGatherGolden()).cases) {
    assertClose(await gatherGpu(gpu, argsOf(c)), c.out, exact, `V=${c.V} D=${c.D} N=${c.indices.length}`);
  }
});

gpuTest("gather GPU: an index outside [0, V) gathers zeros, -1 and the i32 extremes included", async (gpu) => {
  const indices = new Int32Array([-1, 3, 2, -(2 ** 31), 2 ** 31 - 1, 0]);
  const got = await gatherGpu(gpu, { table: table3x2, indices, V: 3, D: 2 });
  deepStrictEqual([...got], [0, 0, 0, 0, 4, 5, 0, 0, 0, 0, 0, 1]);
});

gpuTest("gather GPU: an empty index gives an empty result", async (gpu) => {
  deepStrictEqual(
    await gatherGpu(gpu, { table: table3x2, indices: new Int32Array(0), V: 3, D: 2 }),
    new Float32Array(0),
  );
});

gpuTest("gatherPlan folds a grid past 65,535 workgroups into y, covering every element", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const N = 2 * max * 256 + 1;
  const plan = gatherPlan(gpu, { V: 1, D: 1, N }, { override: "kernel" });
  const [x, y, z] = plan.workgroups as [number, number, number];
  ok(x <= max && y > 1 && z === 1, `workgroups ${plan.workgroups}`);
  ok(x * y * 256 >= N, `workgroups ${plan.workgroups} cover ${x * y * 256} < ${N} elements`);
});

gpuTest("gatherPlan (kernel.nvidia): a block of 4096 elements per workgroup, at most 65,535, never folded", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const nvidia = { override: "kernel.nvidia" };
  deepStrictEqual(gatherPlan(gpu, { V: 32768, D: 4096, N: 8192 }, nvidia).workgroups, [8192, 1, 1]);
  deepStrictEqual(gatherPlan(gpu, { V: 7, D: 33, N: 100 }, nvidia).workgroups, [1, 1, 1]);
  deepStrictEqual(gatherPlan(gpu, { V: 7, D: 33, N: 0 }, nvidia).workgroups, [0, 1, 1]);
  deepStrictEqual(gatherPlan(gpu, { V: 1, D: 1, N: 2 * max * 4096 }, nvidia).workgroups, [max, 1, 1]);
});

gpuTest(
  "gather GPU (kernel.nvidia): any grid covers the output once, and nothing is written past the end",
  async (gpu) => {
    // D a multiple of 4 (whole vec4s) and not (element by element, with a tail of N * D % 4).
    for (const [V, D, N] of [[9, 64, 70], [9, 33, 131]]) {
      const args = { table: randomF32(V * D, D), indices: randomInt32(N, N, -2, V + 2), V, D };
      const plan = gatherPlan(gpu, { V, D, N }, { override: "kernel.nvidia" });
      for (const workgroups of [[1, 1, 1], [2, 2, 1], [9, 1, 1]] as const) {
        const table = gpu.upload(args.table, "table");
        const indices = gpu.upload(args.indices, "indices");
        const out = gpu.upload(new Float32Array(N * D + 64).fill(SENTINEL), "out");
        try {
          await gpu.submit([{ ...plan, workgroups }, [table, indices, out]]);
          const written = await gpu.read(out);
          const label = `V=${V} D=${D} N=${N} on [${workgroups}]`;
          assertClose(written.subarray(0, N * D), gather(args), exact, label);
          ok(written.subarray(N * D).every((v) => v === SENTINEL), `${label}: a write past the end`);
        } finally {
          for (const t of [table, indices, out]) t.buffer.destroy();
        }
      }
    }
  },
);

gpuTest("gather GPU: a grid folded into y gives the same rows", async (gpu) => {
  const args = { table: randomF32(7 * 33, 7), indices: randomInt32(100, 100, -2, 9), V: 7, D: 33 };
  const plan = gatherPlan(gpu, { V: 7, D: 33, N: 100 });
  // 3300 elements need 13 workgroups; laid out as 5 x 3, two of them past the end.
  const folded = { ...plan, workgroups: [5, 3, 1] as const };
  const [out] = await gpu.run(folded, [args.table, args.indices]);
  assertClose(out, gather(args), exact, "folded");
});

// Shapes (V, D, N): single elements, rows longer and shorter than a workgroup, an empty index;
// then D a multiple of 4 (kernel.nvidia's whole-vec4 path): one vec4 per row, rows cut across
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
  SHAPES.map(([V, D, N]) => ({
    label: `V=${V} D=${D} N=${N}`,
    // Indices from [-2, V + 2): some out of range at both ends, and repeats.
    args: { table: randomF32(V * D, V + D), indices: randomInt32(N, N, -2, V + 2), V, D },
  })),
  gather,
  gatherGpu,
  exact,
);
