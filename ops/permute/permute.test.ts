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
import { transpose } from "../transpose/reference.ts";
import { collapsePermutation, KERNELS, permute, type PermuteArgs, permuteGpu, permutePlan } from "./mod.ts";

/** goldens/gen.py permutes arange(n), so each output is the flat index it was read from. */
interface Golden {
  meta: { torch: string; t_equals_permute_1_0: boolean };
  cases: { shape: number[]; dims: number[]; out: number[] }[];
}
const loadPermuteGolden = () => loadGolden<Golden>(new URL("./goldens/permute.json", import.meta.url));
const find = (golden: Golden, shape: number[], dims: number[]) => {
  const found = golden.cases.find((c) => `${c.shape}` === `${shape}` && `${c.dims}` === `${dims}`);
  if (!found) throw new Error(`golden has no case for shape [${shape}] dims [${dims}]`);
  return found.out;
};
const size = (shape: readonly number[]) => shape.reduce((p, d) => p * d, 1);
const arange = (n: number) => Float32Array.from({ length: n }, (_, i) => i);
const at = (shape: number[], dims: number[]) => [...permute({ x: arange(size(shape)), shape, dims })];
// Values are moved, never computed: every comparison is exact.
const exact = { atol: 0, rtol: 0 };
const SENTINEL = 12345;

Deno.test("permute reference: output axis a is input axis dims[a]", () => {
  // x[i, j, k] = 12i + 4j + k over [2, 3, 4]; dims [2, 0, 1] gives out[k, i, j] = x[i, j, k].
  const out = at([2, 3, 4], [2, 0, 1]);
  for (const [i, j, k] of [[0, 0, 1], [1, 2, 3], [1, 0, 2]]) {
    deepStrictEqual(out[k * 6 + i * 3 + j], 12 * i + 4 * j + k);
  }
  // The inverse reading (input axis a goes to position dims[a]) is the inverse permutation, [1, 2, 0].
  notDeepStrictEqual(at([2, 3, 4], [1, 2, 0]), out);
  deepStrictEqual(at([2, 3, 4], [0, 1, 2]), [...arange(24)]);
});

Deno.test("permute reference: negative entries count from the end, as torch's permute", () => {
  deepStrictEqual(at([2, 3, 4], [-1, 0, 1]), at([2, 3, 4], [2, 0, 1]));
  deepStrictEqual(at([2, 3, 4], [-2, -1, -3]), at([2, 3, 4], [1, 2, 0]));
  deepStrictEqual(at([3, 5], [-1, -2]), at([3, 5], [1, 0]));
});

Deno.test("permute reference: [1, 0] is transpose", () => {
  for (const [rows, cols] of [[3, 5], [1, 7], [33, 65]]) {
    const x = randomF32(rows * cols, rows);
    deepStrictEqual([...permute({ x, shape: [rows, cols], dims: [1, 0] })], [...transpose({ x, rows, cols })]);
  }
});

Deno.test("permute reference: rank 1 to 6, and empty tensors", () => {
  deepStrictEqual(at([5], [0]), [0, 1, 2, 3, 4]);
  // Reversing the axes of a rank-6 tensor with sizes 2, 1, 3, 1, 2, 1 reads x[a, 0, c, 0, e, 0] at out[0, e, 0, c, 0, a].
  const reversed = at([2, 1, 3, 1, 2, 1], [5, 4, 3, 2, 1, 0]);
  deepStrictEqual(reversed, [0, 6, 2, 8, 4, 10, 1, 7, 3, 9, 5, 11]);
  deepStrictEqual(permute({ x: new Float32Array(0), shape: [2, 0, 3], dims: [2, 1, 0] }).length, 0);
});

Deno.test("permute reference: bad input throws naming the argument", async () => {
  const x = arange(24);
  const bad = (args: Partial<PermuteArgs>) => () => permute({ x, shape: [2, 3, 4], dims: [2, 0, 1], ...args });
  await assertThrowsMessage(bad({ dims: [0, 0, 1] }), "dims [0, 0, 1] name axis 0 twice");
  await assertThrowsMessage(bad({ dims: [2, -1, 0] }), "dims [2, -1, 0] name axis 2 twice");
  await assertThrowsMessage(
    bad({ dims: [0, 1] }),
    "dims must have one entry per axis of shape [2, 3, 4] (3), got [0,1]",
  );
  await assertThrowsMessage(bad({ dims: [0, 1, 2, 3] }), "dims must have one entry per axis");
  await assertThrowsMessage(bad({ dims: [0, 1, 3] }), "dims[2] (rank 3) must be an integer in [-3, 2], got 3");
  await assertThrowsMessage(bad({ dims: [0, -4, 1] }), "dims[1] (rank 3) must be an integer in [-3, 2], got -4");
  await assertThrowsMessage(bad({ dims: [0, 1.5, 2] }), "dims[1] (rank 3) must be an integer");
  await assertThrowsMessage(bad({ shape: [2, -3, -4] }), "shape[1] must be an integer >= 0, got -3");
  await assertThrowsMessage(bad({ shape: [], dims: [] }), "shape must be an array of 1 to 6 dimensions, got []");
  await assertThrowsMessage(
    bad({ shape: [1, 1, 1, 1, 1, 1, 24], dims: [0, 1, 2, 3, 4, 5, 6] }),
    "shape must be an array of 1 to 6 dimensions",
  );
  await assertThrowsMessage(
    bad({ shape: [2, 3, 5] }),
    "x must have length the product of shape [2, 3, 5] = 30, got 24",
  );
  await assertThrowsMessage(bad({ x: new Int32Array(24) as unknown as Float32Array }), "x must be a Float32Array");
});

Deno.test("permute reference matches torch goldens", async () => {
  const golden = await loadPermuteGolden();
  for (const { shape, dims, out } of golden.cases) {
    assertClose(permute({ x: arange(size(shape)), shape, dims }), out, exact, `[${shape}] dims [${dims}]`);
  }
});

Deno.test("permute goldens: a rank-3 permutation and its inverse differ; [1, 0] is torch's .t()", async () => {
  const golden = await loadPermuteGolden();
  const forward = find(golden, [2, 3, 4], [1, 2, 0]);
  const inverse = find(golden, [2, 3, 4], [2, 0, 1]);
  notDeepStrictEqual(forward, inverse);
  deepStrictEqual(at([2, 3, 4], [1, 2, 0]), forward);
  deepStrictEqual(at([2, 3, 4], [2, 0, 1]), inverse);
  deepStrictEqual(find(golden, [2, 3, 4], [-1, 0, 1]), inverse);
  ok(golden.meta.t_equals_permute_1_0, `torch ${golden.meta.torch}: x.t() and x.permute(1, 0) disagree`);
  deepStrictEqual(find(golden, [3, 5], [1, 0]), [...transpose({ x: arange(15), rows: 3, cols: 5 })]);
});

gpuTest("permute GPU matches torch goldens", async (gpu) => {
  const golden = await loadPermuteGolden();
  for (const { shape, dims, out } of golden.cases) {
    assertClose(
      await permuteGpu(gpu, { x: arange(size(shape)), shape, dims }),
      out,
      exact,
      `[${shape}] dims [${dims}]`,
    );
  }
});

gpuTest("permute GPU: bad input throws before dispatch", async (gpu) => {
  const x = arange(24);
  await assertThrowsMessage(() => permuteGpu(gpu, { x, shape: [2, 3, 4], dims: [1, 1, 0] }), "name axis 1 twice");
  await assertThrowsMessage(() => permuteGpu(gpu, { x, shape: [2, 3, 4], dims: [1, 0] }), "dims must have one entry");
  await assertThrowsMessage(
    () => permuteGpu(gpu, { x, shape: [2, 3, 4], dims: [0, 5, 1] }),
    "dims[1] (rank 3) must be an integer in [-3, 2], got 5",
  );
  await assertThrowsMessage(
    () => permuteGpu(gpu, { x, shape: [4, 3, 4], dims: [0, 2, 1] }),
    "x must have length the product of shape [4, 3, 4] = 48, got 24",
  );
  await assertThrowsMessage(
    () => permuteGpu(gpu, { x, shape: [24], dims: [0] }, { override: "kernel.soc" as never }),
    'override "kernel.soc" is not a variant of entry point "kernel"',
  );
});

gpuTest("permute plan: source strides padded to six axes, grid folded past 65,535 workgroups", (gpu) => {
  const portable = { override: "kernel" } as const;
  const plan = permutePlan(gpu, { shape: [2, 3, 4], dims: [2, 0, 1] }, portable);
  const [n, ...rest] = new Uint32Array(plan.params!).slice(0, 13);
  deepStrictEqual({ n, sizes: rest.slice(0, 6), strides: rest.slice(6) }, {
    n: 24,
    sizes: [1, 1, 1, 4, 2, 3],
    strides: [0, 0, 0, 1, 12, 4],
  });
  deepStrictEqual(plan.workgroups, [1, 1, 1]);
  const big = permutePlan(gpu, { shape: [4099, 4099], dims: [1, 0] }, portable);
  deepStrictEqual(big.workgroups, [32_817, 2, 1]);
  deepStrictEqual(big.cost, { bytes: 8 * 4099 * 4099, flops: 0 });
});

Deno.test("collapsePermutation: size-1 axes dropped, neighbours that stay neighbours merged", () => {
  deepStrictEqual(collapsePermutation([2, 3, 4], [2, 0, 1]), { shape: [6, 4], dims: [1, 0] });
  deepStrictEqual(collapsePermutation([2, 3, 4], [0, 1, 2]), { shape: [24], dims: [0] });
  deepStrictEqual(collapsePermutation([64, 512, 2048], [2, 1, 0]), { shape: [64, 512, 2048], dims: [2, 1, 0] });
  deepStrictEqual(collapsePermutation([32, 128, 64, 64], [0, 2, 1, 3]), {
    shape: [32, 128, 64, 64],
    dims: [0, 2, 1, 3],
  });
  // [B, S, H, D] -> [S, B, H, D]: H and D stay together; a size-1 axis between two others vanishes.
  deepStrictEqual(collapsePermutation([2, 5, 3, 4], [1, 0, 2, 3]), { shape: [2, 5, 12], dims: [1, 0, 2] });
  deepStrictEqual(collapsePermutation([2, 1, 3, 4], [3, 1, 0, 2]), { shape: [6, 4], dims: [1, 0] });
  deepStrictEqual(collapsePermutation([1, 1, 1], [2, 0, 1]), { shape: [1], dims: [0] });
  deepStrictEqual(collapsePermutation([1, 7, 1], [2, 1, 0]), { shape: [7], dims: [0] });
  // Collapsing never changes the result.
  for (const [shape, dims] of CASES) {
    if (size(shape) === 0) continue;
    const c = collapsePermutation(shape, dims.map((d) => (d + shape.length) % shape.length));
    const x = randomF32(size(shape), 3);
    deepStrictEqual(permute({ x, shape: c.shape, dims: c.dims }), permute({ x, shape, dims }), `[${shape}] [${dims}]`);
  }
});

gpuTest("permute plan (kernel.nvidia): rows when the last axis stays, tiles when it moves", (gpu) => {
  const nvidia = { override: "kernel.nvidia" } as const;
  const plan = (shape: number[], dims: number[]) => permutePlan(gpu, { shape, dims }, nvidia);
  const rows = (shape: number[], dims: number[]) => {
    const { kernel, params, workgroups } = plan(shape, dims);
    const [n, inner, axes, ...slots] = new Uint32Array(params!).slice(0, 13);
    return { kernel: kernel.variant, n, inner, axes, sizes: slots.slice(0, 5), xs: slots.slice(5, 10), workgroups };
  };
  const tiles = (shape: number[], dims: number[]) => {
    const { kernel, params, workgroups } = plan(shape, dims);
    const [n, p, q, pStride, qStride, axes, ...slots] = new Uint32Array(params!).slice(0, 21);
    return {
      kernel: kernel.variant,
      n,
      p,
      q,
      pStride,
      qStride,
      axes,
      sizes: slots.slice(0, 5),
      xs: slots.slice(5, 10),
      os: slots.slice(10, 15),
      workgroups,
    };
  };
  // Attention head split: rows of 64 floats, three outer axes in output order [32, 64, 128].
  deepStrictEqual(rows([32, 128, 64, 64], [0, 2, 1, 3]), {
    kernel: "rows",
    n: 2 ** 24,
    inner: 64,
    axes: 3,
    sizes: [1, 1, 32, 64, 128],
    xs: [0, 0, 128 * 64 * 64, 64, 64 * 64],
    workgroups: [2 ** 24 / 4096, 1, 1],
  });
  // An identity collapses to one row of every element, with no outer axes.
  deepStrictEqual(rows([2, 3, 4], [0, 1, 2]), {
    kernel: "rows",
    n: 24,
    inner: 24,
    axes: 0,
    sizes: [1, 1, 1, 1, 1],
    xs: [0, 0, 0, 0, 0],
    workgroups: [1, 1, 1],
  });
  // A batch of 64 [512, 2048] transposes: 8 x 32 tiles each.
  deepStrictEqual(tiles([64, 512, 2048], [0, 2, 1]), {
    kernel: "kernel.nvidia",
    n: 2 ** 26,
    p: 512,
    q: 2048,
    pStride: 2048,
    qStride: 512,
    axes: 1,
    sizes: [1, 1, 1, 1, 64],
    xs: [0, 0, 0, 0, 512 * 2048],
    os: [0, 0, 0, 0, 2048 * 512],
    workgroups: [8 * 32 * 64, 1, 1],
  });
  // [A, B, C] -> [C, B, A]: the middle axis is the batch, at stride C in x and A in out.
  deepStrictEqual(tiles([64, 512, 2048], [2, 1, 0]), {
    kernel: "kernel.nvidia",
    n: 2 ** 26,
    p: 64,
    q: 2048,
    pStride: 512 * 2048,
    qStride: 512 * 64,
    axes: 1,
    sizes: [1, 1, 1, 1, 512],
    xs: [0, 0, 0, 0, 2048],
    os: [0, 0, 0, 0, 64],
    workgroups: [32 * 512, 1, 1],
  });
  deepStrictEqual(plan([3, 0, 2], [2, 1, 0]).workgroups, [0, 1, 1]);
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  deepStrictEqual(plan([8192, 8192 * 2], [1, 0]).workgroups, [Math.min(128 * 256, max), 1, 1]);
  deepStrictEqual(plan([4099, 4099], [1, 0]).workgroups, [65 * 65, 1, 1]);
  deepStrictEqual(plan([2 ** 14, 2 ** 14], [0, 1]).workgroups, [Math.min(2 ** 28 / 4096, max), 1, 1]);
});

gpuTest(
  "permute GPU (kernel.nvidia): any grid covers the tensor once, and nothing is written past the end",
  async (gpu) => {
    // rows with and without vec4s, kernel.nvidia's tiles with and without (whole tiles and tiles
    // cut by the edge), each on fewer workgroups than blocks, on a grid folded by hand and on more
    // workgroups than blocks.
    const cases: [number[], number[]][] = [
      [[3, 5, 4, 8], [0, 2, 1, 3]],
      [[3, 5, 4, 7], [1, 0, 2, 3]],
      [[2, 68, 132], [0, 2, 1]],
      [[3, 67, 70], [2, 1, 0]],
    ];
    for (const [shape, dims] of cases) {
      const args: PermuteArgs = { x: randomF32(size(shape), shape[1]), shape, dims };
      const plan = permutePlan(gpu, args, { override: "kernel.nvidia" });
      for (const workgroups of [[1, 1, 1], [2, 3, 1], [40, 1, 1]] as const) {
        const x = gpu.upload(args.x, "x");
        const out = gpu.upload(new Float32Array(size(shape) + 512).fill(SENTINEL), "out");
        try {
          await gpu.submit([{ ...plan, workgroups }, [x, out]]);
          const written = await gpu.read(out);
          const label = `[${shape}] dims [${dims}] on [${workgroups}]`;
          assertClose(written.subarray(0, size(shape)), permute(args), exact, label);
          ok(written.subarray(size(shape)).every((v) => v === SENTINEL), `${label}: a write past the end`);
        } finally {
          x.buffer.destroy();
          out.buffer.destroy();
        }
      }
    }
  },
);

gpuTest("permute GPU: a folded grid recovers each invocation's index and writes nothing past the end", async (gpu) => {
  // 1,100 elements fill 5 workgroups; folded at a limit of 4 they take 3 x 2, the last one spare.
  const args: PermuteArgs = { x: randomF32(1100, 5), shape: [11, 4, 25], dims: [2, 0, 1] };
  const folded = { ...permutePlan(gpu, args), workgroups: foldWorkgroups(5, 4) };
  deepStrictEqual(folded.workgroups, [3, 2, 1]);
  // The output buffer is longer than the result, so a write from a surplus invocation would land.
  const x = gpu.upload(args.x, "x");
  const out = gpu.upload(new Float32Array(1100 + 512).fill(SENTINEL), "out");
  try {
    await gpu.submit([folded, [x, out]]);
    const written = await gpu.read(out);
    assertClose(written.subarray(0, 1100), permute(args), exact, "folded");
    ok(written.subarray(1100).every((v) => v === SENTINEL), "an invocation past the end wrote to the output");
  } finally {
    x.buffer.destroy();
    out.buffer.destroy();
  }
});

// Every rank from 1 to 6, sizes that are not multiples of 256, size-1 axes, a row of 4099 and an
// empty tensor; then, for kernel.nvidia's two kernels with and without vec4s: the last axis kept
// (`rows`: rows of 8 and of 7, attention head splits, one with whole blocks of 4,096 elements and
// a cut one), the last axis moved (kernel.nvidia's batched transposes of whole, cut and
// single-element tiles), and a permutation that collapses to a plain copy.
const CASES: [number[], number[]][] = [
  [[1], [0]],
  [[257], [0]],
  [[255, 3], [1, 0]],
  [[3, 4099], [-1, -2]],
  [[7, 1, 9], [2, 0, 1]],
  [[5, 6, 7], [1, 2, 0]],
  [[2, 3, 4, 5], [3, 1, 0, 2]],
  [[3, 1, 4, 2, 5], [4, 2, 0, 3, 1]],
  [[2, 3, 2, 1, 3, 5], [5, 3, 1, 4, 0, 2]],
  [[2, 3, 2, 2, 3, 2], [0, 1, 2, 3, 4, 5]],
  [[3, 0, 2], [2, 1, 0]],
  [[2, 3, 5, 8], [0, 2, 1, 3]],
  [[4, 3, 5, 7], [2, 0, 1, 3]],
  [[2, 16, 4, 12], [0, 2, 1, 3]],
  [[4, 36, 8, 16], [0, 2, 1, 3]],
  [[3, 64, 128], [0, 2, 1]],
  [[2, 68, 132], [0, 2, 1]],
  [[8, 3, 100], [2, 1, 0]],
  [[5, 4, 33], [2, 0, 1]],
  [[1, 130, 1, 6], [3, 2, 1, 0]],
  [[2, 4, 1, 8], [2, 0, 1, 3]],
];
checkAgainstReference(
  "permute",
  KERNELS,
  "kernel",
  CASES.map(([shape, dims], k) => ({
    label: `[${shape}] dims [${dims}]`,
    args: { x: randomF32(size(shape), k), shape, dims },
  })),
  permute,
  permuteGpu,
  exact,
);
