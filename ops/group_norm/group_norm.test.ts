import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { foldWorkgroups, LimitError } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  type ReferenceCase,
  type Tolerance,
} from "../../harness/testing.ts";
import { GROUP_NORM_SPLIT_ROWS, groupNorm, type GroupNormArgs, groupNormGpu, groupNormPlan, KERNELS } from "./mod.ts";
import type { GroupNormVariant } from "./kernels.gen.ts";

type JsonF32 = (number | string)[];
interface GoldenCase {
  label: string;
  N: number;
  C: number;
  L: number;
  groups: number;
  eps: number;
  activation: "silu" | null;
  x: JsonF32;
  weight: JsonF32 | null;
  bias: JsonF32 | null;
  out: JsonF32;
}
interface Golden {
  meta: { torch: string; nchw_equals_flattened: boolean };
  cases: GoldenCase[];
}
const loadGroupNormGolden = () => loadGolden<Golden>(new URL("./goldens/group_norm.json", import.meta.url));
const fromJson = (xs: JsonF32) => Float32Array.from(xs, Number);
const argsOf = (c: GoldenCase): GroupNormArgs => ({
  x: fromJson(c.x),
  N: c.N,
  C: c.C,
  L: c.L,
  groups: c.groups,
  eps: c.eps,
  activation: c.activation ?? undefined,
  weight: c.weight === null ? undefined : fromJson(c.weight),
  bias: c.bias === null ? undefined : fromJson(c.bias),
});
const f32 = (xs: number[]) => new Float32Array(xs);
/** The reference and the goldens both round an f64 result to f32 once. */
const oneUlp = { atol: 1e-12, rtol: 2 ** -23 };

/** Per (sample, group): the f64 mean and biased variance, for the tolerances and the alternatives below. */
function groupStats(args: GroupNormArgs): { mean: number; variance: number }[] {
  const d = (args.C / args.groups) * args.L;
  return Array.from({ length: args.N * args.groups }, (_, r) => {
    const row = args.x.subarray(r * d, (r + 1) * d);
    const mean = row.reduce((s, v) => s + v, 0) / d;
    return { mean, variance: row.reduce((s, v) => s + (v - mean) ** 2, 0) / d };
  });
}

// Kernel vs reference. The kernel's mean is off by a few f32 ULPs of the values' magnitude (per-chunk
// sums of 16, then pairwise merges), and x - mean carries that error into an output scaled by
// 1 / std; its variance comes from deviations, so it is off by a few ULPs relative. So atol = 8 ULPs
// of max |x| divided by the smallest group's std, times max |weight| (plus the bias's own rounding),
// and rtol 1e-5. For 100 +- 1 that is 1.7e-4 absolute on outputs of order 1; for unit-scale inputs,
// about 1e-6.
function kernelTolerance(args: GroupNormArgs): Tolerance {
  const maxX = args.x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const minStd = Math.min(...groupStats(args).map((s) => Math.sqrt(s.variance + (args.eps ?? 1e-5))));
  const maxW = args.weight ? args.weight.reduce((m, v) => Math.max(m, Math.abs(v)), 0) : 1;
  const maxB = args.bias ? args.bias.reduce((m, v) => Math.max(m, Math.abs(v)), 0) : 0;
  return { atol: (8 * 2 ** -23 * maxX / minStd) * maxW + 2 ** -22 * maxB, rtol: 1e-5 };
}

Deno.test("group_norm reference: hand-derived values", () => {
  // One group of [1, 3 | 5, 7]: mean 4, biased variance (9 + 1 + 1 + 9) / 4 = 5.
  const s5 = Math.sqrt(5);
  assertClose(groupNorm({ x: f32([1, 3, 5, 7]), N: 1, C: 2, L: 2, groups: 1, eps: 0 }), [
    -3 / s5,
    -1 / s5,
    1 / s5,
    3 / s5,
  ], oneUlp);
  // Two groups of one channel each: [1, 3] and [5, 7], each mean +-1 deviation: -1, 1, -1, 1; then
  // weight per channel [2, 3], bias per channel [10, 20].
  assertClose(
    groupNorm({ x: f32([1, 3, 5, 7]), N: 1, C: 2, L: 2, groups: 2, eps: 0, weight: f32([2, 3]), bias: f32([10, 20]) }),
    [8, 12, 17, 23],
    oneUlp,
  );
  // eps inside the root: variance 1, eps 3 -> divide by 2.
  assertClose(groupNorm({ x: f32([-1, 1]), N: 1, C: 1, L: 2, groups: 1, eps: 3 }), [-0.5, 0.5], oneUlp);
  // A constant group gives zeros (then the bias).
  deepStrictEqual([...groupNorm({ x: f32([4, 4, 4]), N: 1, C: 1, L: 3, groups: 1, bias: f32([2]) })], [2, 2, 2]);
});

async function rejectsBadInput(run: (args: GroupNormArgs) => unknown): Promise<void> {
  const x = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, groups: 2 }),
    "groupNorm: C must be divisible by groups, got C = 3 and groups = 2",
  );
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, groups: 0 }),
    "groupNorm: groups must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => run({ x, N: 2, C: 3, L: 2, groups: 1 }),
    "groupNorm: x must have length N * C * L = 12, got 6",
  );
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2.5, groups: 1 }),
    "groupNorm: L must be an integer >= 1, got 2.5",
  );
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, groups: 1, weight: f32([1, 2]) }),
    "groupNorm: weight must have length C = 3, got 2",
  );
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, groups: 1, bias: new Float64Array(3) as unknown as Float32Array }),
    "groupNorm: bias must be a Float32Array, got Float64Array",
  );
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, groups: 1, eps: -1 }),
    "groupNorm: eps must be >= 0, got -1",
  );
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, groups: 1, eps: 1e39 }),
    "groupNorm: eps must be a finite f32",
  );
}

Deno.test("group_norm reference: bad input throws naming the argument", () => rejectsBadInput(groupNorm));

gpuTest("group_norm GPU: bad input throws before dispatch; the plans declare their cost", async (gpu) => {
  await rejectsBadInput((args) => groupNormGpu(gpu, args));
  await assertThrowsMessage(
    () => groupNormPlan(gpu, { N: 1, C: 6, L: 4, groups: 4 }),
    "C must be divisible by groups, got C = 6 and groups = 4",
  );
  await assertThrowsMessage(
    () => groupNormPlan(gpu, { N: 1, C: 6, L: 4, groups: 3 }, { path: "tiles" as "rows" }),
    'groupNorm: path must be one of "rows", "split", "fused", got "tiles"',
  );
  await assertThrowsMessage(
    () => groupNormPlan(gpu, { N: 1, C: 6, L: 4, groups: 3 }, { override: "combine" as never }),
    'groupNorm: override "combine" is not a variant of entry point kernel, stats, apply or fused',
  );
  const rows = groupNormPlan(gpu, { N: 2, C: 6, L: 5, groups: 3, weight: true });
  strictEqual(rows.path, "rows");
  const [plan] = rows.steps;
  deepStrictEqual(plan.workgroups, [6, 1, 1]);
  deepStrictEqual(plan.bindings.map((b) => [b.name, b.length]), [["x", 60], ["weight", 6], ["bias", 0], ["out", 60]]);
  deepStrictEqual(plan.cost, { bytes: 12 * 60 + 4 * 6, flops: 8 * 60 });
  // 2 rows of 4 x 2052 elements (2,052 quads: blocks of 1,024, 1,024 and 4): three pieces per row.
  const split = groupNormPlan(gpu, { N: 1, C: 8, L: 2052, groups: 2, bias: true });
  strictEqual(split.path, "split");
  const [stats, apply] = split.steps;
  const n = 8 * 2052;
  deepStrictEqual([stats.kernel.variant, apply.kernel.variant], ["stats", "apply"]);
  deepStrictEqual([stats.workgroups, apply.workgroups], [[6, 1, 1], [6, 1, 1]]);
  deepStrictEqual(stats.bindings.map((b) => [b.name, b.length]), [["x", n], ["partials", 24]]);
  deepStrictEqual(apply.bindings.map((b) => [b.name, b.length]), [
    ["x", n],
    ["partials", 24],
    ["weight", 0],
    ["bias", 8],
    ["out", n],
  ]);
  deepStrictEqual([stats.cost, apply.cost], [{ bytes: 4 * n + 96, flops: 4 * n }, {
    bytes: 8 * n + 96 + 32,
    flops: 4 * n,
  }]);
});

gpuTest("group_norm GPU: the split path is taken when rows are few and longer than one block", (gpu) => {
  const path = (shape: { N: number; C: number; L: number; groups: number }, options = {}) =>
    groupNormPlan(gpu, shape, options).path;
  strictEqual(path({ N: 1, C: 512, L: 128 * 128, groups: 32 }), "split");
  strictEqual(path({ N: 1, C: 4, L: 1024, groups: 1 }), "rows", "one block per row: nothing to split");
  strictEqual(path({ N: 1, C: 4, L: 1025, groups: 1 }), "split", "a ragged row of 4,100 elements is 5 blocks");
  strictEqual(path({ N: GROUP_NORM_SPLIT_ROWS + 1, C: 1, L: 8192, groups: 1 }), "rows");
  strictEqual(path({ N: GROUP_NORM_SPLIT_ROWS, C: 1, L: 8192, groups: 1 }), "split");
  strictEqual(path({ N: 1, C: 512, L: 128 * 128, groups: 32 }, { override: "kernel" }), "rows");
  strictEqual(path({ N: 1, C: 4, L: 8, groups: 1 }, { override: "apply" }), "split");
  strictEqual(path({ N: 1, C: 4, L: 8, groups: 1 }, { path: "split" }), "split");
});

gpuTest("group_norm GPU: more than 65,535 rows fold into y, and surplus workgroups write nothing", async (gpu) => {
  deepStrictEqual(groupNormPlan(gpu, { N: 70_000, C: 4, L: 4, groups: 2 }).steps[0].workgroups, [46_667, 3, 1]);
  const args = { x: randomF32(7 * 4 * 3, 3, -2, 2), N: 7, C: 4, L: 3, groups: 2, weight: randomF32(4, 4) };
  const [plan] = groupNormPlan(gpu, { ...args, weight: true }).steps;
  const folded = { ...plan, workgroups: foldWorkgroups(14, 4) };
  deepStrictEqual(folded.workgroups, [4, 4, 1]);
  const [out] = await gpu.run(folded, [args.x, args.weight, new Float32Array(0)]);
  assertClose(out, groupNorm(args), kernelTolerance(args), "folded 4 x 4 grid");
});

gpuTest("group_norm GPU: the split path's grid folds into y, and surplus workgroups write nothing", async (gpu) => {
  // 3 rows of 2 x 2050 elements (ragged: 5 blocks of 1,024 elements), 5 pieces each: 15 workgroups
  // on a 4 x 4 grid.
  const args = { x: randomF32(3 * 2 * 2050, 5, -2, 2), N: 3, C: 2, L: 2050, groups: 1, bias: randomF32(2, 6) };
  const { path, steps } = groupNormPlan(gpu, { ...args, bias: true });
  strictEqual(path, "split");
  deepStrictEqual(steps[0].workgroups, [15, 1, 1]);
  const [stats, apply] = steps.map((s) => ({ ...s, workgroups: foldWorkgroups(15, 4) }));
  deepStrictEqual(stats.workgroups, [4, 4, 1]);
  const x = gpu.upload(args.x), bias = gpu.upload(args.bias), none = gpu.alloc("f32", 0);
  const partials = gpu.alloc("f32", stats.bindings[1].length), out = gpu.alloc("f32", args.x.length);
  try {
    await gpu.submit([stats, [x, partials]], [apply, [x, partials, none, bias, out]]);
    assertClose(await gpu.read(out), groupNorm(args), kernelTolerance(args), "folded 4 x 4 grid");
  } finally {
    for (const t of [x, bias, none, partials, out]) t.buffer.destroy();
  }
});

// [N, C, L, groups, affine]: the aligned path (d % 4 == 0 and L % 4 == 0) and the ragged one (L odd,
// L % 4 == 2 with d % 4 == 0, L = 1); groups = 1 and groups = C; rows longer than one block of
// 256 x 4 quads (8,192 elements, 3 blocks) and shorter than one; weight and bias each absent.
const shapes: [number, number, number, number, string][] = [
  [1, 1, 1, 1, "wb"],
  [2, 6, 5, 3, "wb"],
  [3, 6, 1, 2, "b"],
  [2, 4, 9, 4, "w"],
  [1, 4, 16, 2, "wb"],
  [2, 8, 6, 2, ""],
  [1, 32, 64, 8, "wb"],
  [1, 8, 1024, 1, "wb"],
  [1, 6, 4097, 3, "w"],
  [1, 3, 12288, 1, "b"],
];
checkAgainstReference<GroupNormArgs, GroupNormVariant>(
  "group_norm",
  KERNELS,
  "kernel",
  [
    ...shapes.map(([N, C, L, groups, affine], i) => ({
      label: `N=${N} C=${C} L=${L} groups=${groups} ${affine}`,
      args: {
        x: randomF32(N * C * L, 10 + i, -3, 3),
        N,
        C,
        L,
        groups,
        weight: affine.includes("w") ? randomF32(C, 40 + i, -2, 2) : undefined,
        bias: affine.includes("b") ? randomF32(C, 70 + i, -2, 2) : undefined,
      },
    })),
    { label: "values 100 +- 1, aligned", args: { x: randomF32(4 * 2048, 5, 99, 101), N: 1, C: 4, L: 2048, groups: 2 } },
    { label: "values 100 +- 1, ragged", args: { x: randomF32(3 * 2047, 6, 99, 101), N: 1, C: 3, L: 2047, groups: 1 } },
    {
      label: "constant group, eps 0.25",
      args: { x: f32([3, 3, 3, 3, 1, 2, 3, 4]), N: 2, C: 1, L: 4, groups: 1, eps: 0.25 },
    },
  ],
  groupNorm,
  groupNormGpu,
  kernelTolerance,
);

// The split path (entry points stats and apply, forced by the override): rows of several pieces,
// aligned and ragged (L odd; L % 4 == 2 with d % 4 == 0), a last piece shorter than the others (2
// quads; 2 elements), pieces of two blocks (a row of 257 blocks, more than the 256 pieces a row may
// have), a piece boundary inside a channel and a channel boundary inside a piece, weight and bias
// each absent, and the large mean (100 +- 1) over several pieces, where Chan's merges across pieces
// must keep the variance's digits.
const splitShapes: [number, number, number, number, string, number][] = [
  [1, 4, 4100, 2, "wb", 0],
  [2, 6, 2049, 3, "w", 0],
  [1, 2, 2054, 1, "b", 0],
  [1, 1, 4 * 1024 * 257, 1, "wb", 0],
  [1, 1, 1024 * 257 + 1, 1, "", 0],
  [1, 2, 8192, 1, "wb", 100],
  [1, 3, 2047 * 3, 1, "", 100],
];
checkAgainstReference(
  "group_norm",
  KERNELS,
  "stats",
  splitShapes.map(([N, C, L, groups, affine, mean], i): ReferenceCase<GroupNormArgs> => ({
    label: `N=${N} C=${C} L=${L} groups=${groups} ${affine}${mean ? ` values ${mean} +- 1` : ""}`,
    args: {
      x: mean ? randomF32(N * C * L, 100 + i, mean - 1, mean + 1) : randomF32(N * C * L, 100 + i, -3, 3),
      N,
      C,
      L,
      groups,
      weight: affine.includes("w") ? randomF32(C, 140 + i, -2, 2) : undefined,
      bias: affine.includes("b") ? randomF32(C, 170 + i, -2, 2) : undefined,
    },
  })),
  groupNorm,
  groupNormGpu,
  kernelTolerance,
);

gpuTest(
  "group_norm GPU: the default path for few long rows is split, and matches the reference at 100 +- 1",
  async (gpu) => {
    const args = { x: randomF32(2 * 4 * 4096, 9, 99, 101), N: 2, C: 4, L: 4096, groups: 2, weight: randomF32(4, 10) };
    strictEqual(groupNormPlan(gpu, { ...args, weight: true }).path, "split");
    assertClose(await groupNormGpu(gpu, args), groupNorm(args), kernelTolerance(args), "default path");
  },
);

Deno.test("group_norm reference matches the torch goldens", async () => {
  const golden = await loadGroupNormGolden();
  ok(golden.cases.length > 0 && golden.meta.torch, "the golden file has cases and a torch version");
  ok(golden.meta.nchw_equals_flattened, "torch's group_norm of [N, C, H, W] equals that of its [N, C, H * W] view");
  for (const c of golden.cases) assertClose(groupNorm(argsOf(c)), fromJson(c.out), oneUlp, `torch ${c.label}`);
});

Deno.test("group_norm goldens pin the conventions: biased variance, eps inside the root, statistics per group, affine per channel", async () => {
  const golden = await loadGroupNormGolden();
  /** The largest |difference| from torch of an alternative definition, over every golden case with groups != C. */
  const miss = (
    alternative: (args: GroupNormArgs, i: number, v: number) => number,
    skip = (_: GoldenCase) => false,
  ) => {
    let worst = 0;
    for (const c of golden.cases.filter((c) => !skip(c) && c.activation === null)) {
      const args = argsOf(c), expected = fromJson(c.out), stats = groupStats(args);
      const d = (c.C / c.groups) * c.L;
      args.x.forEach((v, i) => {
        const { mean, variance } = stats[Math.floor(i / d)];
        const channel = Math.floor(i / c.L) % c.C;
        const normalised = alternative(args, i, v);
        const got = Number.isNaN(normalised)
          ? normalised
          : normalised * (args.weight?.[channel] ?? 1) + (args.bias?.[channel] ?? 0);
        void mean, variance;
        worst = Math.max(worst, Math.abs(got - expected[i]));
      });
    }
    return worst;
  };
  const withStats =
    (f: (v: number, mean: number, variance: number, eps: number, count: number) => number) =>
    (args: GroupNormArgs, i: number, v: number) => {
      const d = (args.C / args.groups) * args.L;
      const { mean, variance } = groupStats(args)[Math.floor(i / d)];
      return f(v, mean, variance, args.eps ?? 1e-5, d);
    };
  ok(miss(withStats((v, m, s2, eps) => (v - m) / Math.sqrt(s2 + eps))) < 1e-5, "the definition itself agrees");
  ok(
    miss(
      withStats((v, m, s2, eps, n) => (v - m) / Math.sqrt((s2 * n) / (n - 1) + eps)),
      (c) => c.C / c.groups * c.L < 2,
    ) > 1e-2,
    "the unbiased variance must differ",
  );
  ok(miss(withStats((v, m, s2, eps) => (v - m) / (Math.sqrt(s2) + eps))) > 1e-3, "eps outside the root must differ");
  // Statistics per channel (instance norm) rather than per group: differs wherever a group has > 1 channel.
  const perChannel = (args: GroupNormArgs, i: number, v: number) => {
    const c = Math.floor(i / args.L);
    const row = args.x.subarray(c * args.L, (c + 1) * args.L);
    const mean = row.reduce((s, u) => s + u, 0) / args.L;
    const variance = row.reduce((s, u) => s + (u - mean) ** 2, 0) / args.L;
    return (v - mean) / Math.sqrt(variance + (args.eps ?? 1e-5));
  };
  ok(miss(perChannel, (c) => c.groups === c.C) > 0.1, "statistics per channel must differ");
  // Affine per group (weight[g]) rather than per channel.
  let perGroupAffine = 0;
  for (const c of golden.cases.filter((c) => c.weight !== null && c.groups < c.C && c.activation === null)) {
    const args = argsOf(c), per = c.C / c.groups;
    const groupWeight = Float32Array.from({ length: c.C }, (_, ch) => args.weight![Math.floor(ch / per) % c.groups]);
    const got = groupNorm({ ...args, weight: groupWeight });
    perGroupAffine = Math.max(perGroupAffine, ...got.map((v, i) => Math.abs(v - Number(c.out[i]))));
  }
  ok(perGroupAffine > 0.1, "a weight per group must differ");
});

Deno.test("groupNorm: a one-pass E[x^2] - E[x]^2 in f32 fails the tolerance the kernel is held to at 100 +- 1", async () => {
  const c = (await loadGroupNormGolden()).cases.find((c) => c.label.includes("100 +- 1"));
  ok(c, "the golden has the 100 +- 1 case");
  const args = argsOf(c), expected = fromJson(c.out), tol = kernelTolerance(args);
  // The one-pass formula as an f32 kernel would run it: sums of x and x^2 accumulated in f32, each
  // addition rounded, then mean = sum / n and var = E[x^2] - mean^2, each step rounded.
  const fr = Math.fround, n = args.x.length;
  let sum = 0, squares = 0;
  for (const v of args.x) {
    sum = fr(sum + v);
    squares = fr(squares + fr(v * v));
  }
  const mean = fr(sum / n), variance = fr(fr(squares / n) - fr(mean * mean));
  const rstd = fr(1 / Math.sqrt(fr(variance + c.eps)));
  const naive = args.x.map((v, i) =>
    fr(fr(v - mean) * rstd) * args.weight![Math.floor(i / c.L)] + args.bias![Math.floor(i / c.L)]
  );
  let failed = false;
  try {
    assertClose(naive, expected, tol, "one-pass");
  } catch {
    failed = true;
  }
  ok(failed, "the one-pass f32 formula must fail the kernel's tolerance on this case");
  // Even with each moment rounded to f32 only once (the best a one-pass kernel could do), it fails.
  const exactMean = args.x.reduce((s, v) => s + v, 0) / n;
  const exactSquares = args.x.reduce((s, v) => s + v * v, 0) / n;
  const bestVariance = fr(fr(exactSquares) - fr(fr(exactMean) ** 2));
  const best = args.x.map((v, i) =>
    ((v - exactMean) / Math.sqrt(bestVariance + c.eps)) * args.weight![Math.floor(i / c.L)] +
    args.bias![Math.floor(i / c.L)]
  );
  failed = false;
  try {
    assertClose(best, expected, tol, "one-pass, moments rounded once");
  } catch {
    failed = true;
  }
  ok(failed, "the one-pass formula with correctly rounded f32 moments must fail too");
});

gpuTest("group_norm GPU matches the torch goldens, 100 +- 1 included", async (gpu) => {
  const golden = await loadGroupNormGolden();
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertClose(await groupNormGpu(gpu, args), fromJson(c.out), kernelTolerance(args), `torch ${c.label}`);
  }
});

// ---------------------------------------------------------------- SiLU after the norm, every path

Deno.test("group_norm reference: SiLU applies after the weight and bias, as F.silu(F.group_norm(...))", async () => {
  // One group [-1, 1] (mean 0, variance 1): normalised to [-1, 1], weight 2, bias 1: [-1, 3], then silu.
  const silu = (v: number) => v / (1 + Math.exp(-v));
  assertClose(
    groupNorm({
      x: f32([-1, 1]),
      N: 1,
      C: 1,
      L: 2,
      groups: 1,
      eps: 0,
      weight: f32([2]),
      bias: f32([1]),
      activation: "silu",
    }),
    [silu(-1), silu(3)],
    oneUlp,
  );
  const golden = await loadGroupNormGolden();
  const cases = golden.cases.filter((c) => c.activation === "silu");
  ok(cases.length >= 2, "the golden file has SiLU cases");
  let beforeAffine = 0;
  for (const c of cases) {
    const args = argsOf(c), expected = fromJson(c.out);
    assertClose(groupNorm(args), expected, oneUlp, `torch ${c.label}`);
    // The alternative: SiLU of the normalised value, then the affine.
    const plain = groupNorm({ ...args, activation: undefined, weight: undefined, bias: undefined });
    plain.forEach((v, i) => {
      const ch = Math.floor(i / c.L) % c.C;
      const other = silu(v) * (args.weight?.[ch] ?? 1) + (args.bias?.[ch] ?? 0);
      beforeAffine = Math.max(beforeAffine, Math.abs(other - expected[i]));
    });
  }
  ok(beforeAffine > 0.01, `SiLU before the affine must differ, differs by ${beforeAffine}`);
  await assertThrowsMessage(
    () => groupNorm({ x: f32([1, 2]), N: 1, C: 1, L: 2, groups: 1, activation: "gelu" as "silu" }),
    'groupNorm: activation must be one of "silu", got "gelu"',
  );
});

/** Random arguments for [N, C, L, groups, affine], with SiLU when `silu`. */
const randomArgs = (
  [N, C, L, groups, affine]: [number, number, number, number, string],
  seed: number,
  silu: boolean,
  mean = 0,
): GroupNormArgs => ({
  x: mean ? randomF32(N * C * L, seed, mean - 1, mean + 1) : randomF32(N * C * L, seed, -3, 3),
  N,
  C,
  L,
  groups,
  weight: affine.includes("w") ? randomF32(C, seed + 1, -2, 2) : undefined,
  bias: affine.includes("b") ? randomF32(C, seed + 2, -2, 2) : undefined,
  activation: silu ? "silu" : undefined,
});

// The normalised value's error passes through SiLU scaled by its slope (at most 1.1), and WGSL's exp
// (3 + 2|y| ULPs) adds a few ULPs relative: the kernel tolerance with twice the relative part.
const siluTolerance = (args: GroupNormArgs): Tolerance => {
  const t = kernelTolerance(args);
  return { atol: 1.1 * t.atol, rtol: 2 * t.rtol };
};

gpuTest(
  "group_norm GPU: SiLU on every path (rows, split, fused) matches the reference and the goldens",
  async (gpu) => {
    const shapes: [number, number, number, number, string][] = [
      [2, 6, 5, 3, "wb"],
      [1, 8, 2052, 2, "w"],
      [1, 3, 2049, 1, ""],
    ];
    for (const [i, shape] of shapes.entries()) {
      const args = randomArgs(shape, 300 + 10 * i, true);
      for (const path of ["rows", "split", "fused"] as const) {
        assertClose(await groupNormGpu(gpu, args, { path }), groupNorm(args), siluTolerance(args), `${path} ${shape}`);
      }
    }
    const golden = await loadGroupNormGolden();
    for (const c of golden.cases.filter((c) => c.activation === "silu")) {
      const args = argsOf(c);
      for (const path of ["rows", "split", "fused"] as const) {
        assertClose(
          await groupNormGpu(gpu, args, { path }),
          fromJson(c.out),
          siluTolerance(args),
          `${path} ${c.label}`,
        );
      }
    }
  },
);

// ---------------------------------------------------------------- the fused path

gpuTest(
  "group_norm GPU: the fused path's plan: one dispatch, a zeroed ticket-and-summaries state, the split's cut",
  (gpu) => {
    // 2 rows of 4 x 2052 elements (2,052 quads: 3 blocks of 1,024, 3 pieces): 2 x (3 + 3) tasks.
    const { path, steps, sequence } = groupNormPlan(gpu, { N: 1, C: 8, L: 2052, groups: 2, bias: true }, {
      path: "fused",
    });
    strictEqual(path, "fused");
    strictEqual(steps.length, 1);
    const [plan] = steps;
    strictEqual(plan.kernel.variant, "fused");
    const n = 8 * 2052;
    deepStrictEqual(plan.bindings.map((b) => [b.name, b.dtype, b.length, b.role, b.zeroed ?? false]), [
      ["x", "f32", n, "input", false],
      ["weight", "f32", 0, "input", false],
      ["bias", "f32", 8, "input", false],
      ["state", "u32", 1 + 2 * 2 * 3, "output", true],
      ["out", "f32", n, "output", false],
    ]);
    deepStrictEqual(plan.workgroups, [12, 1, 1]);
    deepStrictEqual(plan.cost, { bytes: 12 * n + 32, flops: 8 * n });
    strictEqual(sequence!.variant, "fused");
    deepStrictEqual(sequence!.bindings.map((b) => b.name), ["x", "weight", "bias", "out"]);
    deepStrictEqual(sequence!.intermediates.map((b) => b.name), ["state"]);
    // A variant of `fused` forces the path; the default never takes it.
    strictEqual(groupNormPlan(gpu, { N: 1, C: 4, L: 8, groups: 1 }, { override: "fused" }).path, "fused");
    strictEqual(groupNormPlan(gpu, { N: 1, C: 512, L: 128 * 128, groups: 32 }).path, "split");
  },
);

gpuTest(
  "group_norm GPU: the fused path writes every element once, whatever the grid, and runs again on its state",
  async (gpu) => {
    // 3 rows of 2 x 2050 elements (ragged: 5 blocks, 5 pieces): 30 tasks, on a folded 8 x 4 grid whose
    // last two workgroups take tickets past the last task and must do nothing. run() poisons `out`.
    const args = randomArgs([3, 2, 2050, 1, "wb"], 7, false);
    const [plan] = groupNormPlan(gpu, { ...args, weight: true, bias: true }, { path: "fused" }).steps;
    deepStrictEqual(plan.workgroups, [30, 1, 1]);
    const folded = { ...plan, workgroups: foldWorkgroups(32, 8) };
    deepStrictEqual(folded.workgroups, [8, 4, 1]);
    const [state, out] = await gpu.run(folded, [args.x, args.weight!, args.bias!]);
    assertClose(out, groupNorm(args), kernelTolerance(args), "folded 8 x 4 grid");
    // Every workgroup took a ticket (32), and every piece published both of its words.
    strictEqual(state[0], 32);
    ok(state.subarray(1).every((w) => w !== 0), "every summary word was written");
    // Resident tensors, the same state submitted twice: it is cleared before each run.
    const tensors = [args.x, args.weight!, args.bias!].map((a) => gpu.upload(a));
    const st = gpu.alloc("u32", plan.bindings[3].length), o = gpu.alloc("f32", args.x.length);
    try {
      for (let run = 0; run < 2; run++) {
        await gpu.submit([plan, [...tensors, st, o]]);
        assertClose(await gpu.read(o), groupNorm(args), kernelTolerance(args), `resident run ${run}`);
        strictEqual((await gpu.read(st))[0], 30, `run ${run} counted 30 tickets`);
      }
    } finally {
      for (const t of [...tensors, st, o]) t.buffer.destroy();
    }
  },
);

gpuTest(
  "group_norm GPU: the fused path with no polling: every block computes its row's statistics itself",
  async (gpu) => {
    // polls: 0 leaves every piece unpublished as far as the blocks know, so the fallback (a block
    // computing a missing piece with the statistics workgroup's own code) carries the whole row.
    for (const [i, shape] of ([[1, 4, 4100, 2, "wb"], [2, 6, 2049, 3, "w"], [1, 2, 8192, 1, "b"]] as const).entries()) {
      const args = randomArgs([...shape], 950 + 10 * i, i === 1, i === 2 ? 100 : 0);
      const tol = args.activation ? siluTolerance(args) : kernelTolerance(args);
      assertClose(await groupNormGpu(gpu, args, { path: "fused", polls: 0 }), groupNorm(args), tol, `${shape} polls 0`);
    }
    await assertThrowsMessage(
      () => groupNormPlan(gpu, { N: 1, C: 4, L: 8, groups: 1 }, { path: "fused", polls: -1 }),
      "groupNorm: polls must be an integer >= 0, got -1",
    );
  },
);

// The split path's shapes (see above) on the fused path, 100 +- 1 included.
checkAgainstReference(
  "group_norm",
  KERNELS,
  "fused",
  splitShapes.map(([N, C, L, groups, affine, mean], i): ReferenceCase<GroupNormArgs> => ({
    label: `N=${N} C=${C} L=${L} groups=${groups} ${affine}${mean ? ` values ${mean} +- 1` : ""}`,
    args: randomArgs([N, C, L, groups, affine], 900 + 10 * i, false, mean),
  })),
  groupNorm,
  groupNormGpu,
  kernelTolerance,
);

gpuTest(
  "group_norm GPU: a tensor past maxStorageBufferBindingSize is refused, naming it, before upload",
  async (gpu) => {
    // x and out: 1 x 4 x 1,024 floats = 16,384 bytes; on the split and fused paths too.
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 8192 });
    const args = randomArgs([1, 4, 1024, 2, "wb"], 11, true);
    for (const [path, variant] of [["rows", "kernel"], ["split", "stats"], ["fused", "fused"]] as const) {
      let error: unknown;
      try {
        await groupNormGpu(small, args, { path });
      } catch (e) {
        error = e;
      }
      ok(error instanceof LimitError, `${path}: expected a LimitError, got ${error}`);
      strictEqual(
        error.message,
        `group_norm/${variant}: binding 0 (x) needs maxStorageBufferBindingSize >= 16384, but this device allows 8192`,
      );
    }
  },
);
