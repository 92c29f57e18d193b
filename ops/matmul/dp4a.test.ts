import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { ResidentDevice } from "../../harness/device.ts";
import { foldWorkgroups, workgroupBytesOf } from "../../harness/limits.ts";
import { hasDp4a } from "../../harness/roofline.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  planningDevice,
  randomF32,
} from "../../harness/testing.ts";
import { packQ4, packQ8, quantizeQ4G128 } from "../matvec/reference.ts";
import { DP4A_Q8_TOL, dp4aQ4Case, dp4aQ4Tolerance, dp4aQ8Case } from "./cases.ts";
import { quantizePacked, quantizePackedPlan } from "../quantize/mod.ts";
import {
  KERNELS,
  MATMUL_DP4A_MAX_K,
  matmulQ4G128,
  matmulQ4G128Dp4a,
  type MatmulQ4G128Dp4aArgs,
  matmulQ4G128Dp4aGpu,
  matmulQ4G128Dp4aPlan,
  matmulQ8,
  matmulQ8Dp4a,
  type MatmulQ8Dp4aArgs,
  matmulQ8Dp4aGpu,
  matmulQ8Dp4aPlan,
  type MatmulVariant,
  PIPELINED_MIN_TILES,
} from "./mod.ts";

// The dp4a products: reference facts, refusals, every kernel against the reference, and non-finite
// activations. What they cost against the f32-activation products is in accuracy.test.ts; their fused
// epilogue is held to the reference in dp4a_epilogue.test.ts.

const f32 = (xs: number[]) => new Float32Array(xs);
const u32 = (xs: number[]) => new Uint32Array(xs);
const ceil = Math.ceil;

// ---- reference facts --------------------------------------------------------------------------

Deno.test("matmulQ8Dp4a reference: hand-derived values; a's row m takes aScales[m], weight row n scales[n]", () => {
  // a rows [1, 2, 3, 4] and [-1, 0, 0, 5]; weight rows [1, 1, 1, -1] and [2, 0, 0, 0] ([N, K], F.linear).
  const args = {
    a: u32([0x04030201, 0x050000ff]),
    aScales: f32([0.5, 0.25]),
    weight: packQ8(new Int32Array([1, 1, 1, -1, 2, 0, 0, 0]), 2, 4),
    scales: f32([2, 8]),
    M: 2,
    N: 2,
    K: 4,
  };
  // Row 0: (1 + 2 + 3 - 4) 0.5 2 = 2 and (2) 0.5 8 = 8; row 1: (-1 - 5) 0.25 2 = -3 and (-2) 0.25 8 = -4.
  deepStrictEqual([...matmulQ8Dp4a(args)], [2, 8, -3, -4]);
  // The weight read as [K, N] instead would give other values.
  const transposed = packQ8(new Int32Array([1, 2, 1, 0, 1, 0, -1, 0]), 2, 4);
  deepStrictEqual([...matmulQ8Dp4a({ ...args, weight: transposed })].some((v, i) => v !== [2, 8, -3, -4][i]), true);
});

Deno.test("matmulQ8Dp4a / matmulQ4G128Dp4a reference: codes in the padding of a row's last word are ignored", () => {
  const q8 = { aScales: f32([1]), scales: f32([1]), M: 1, N: 1, K: 5 };
  const a = u32([0x01010101, 0x00000001]); // five codes of 1
  deepStrictEqual(matmulQ8Dp4a({ ...q8, a, weight: u32([0x04030201, 0xffffff05]) }), f32([15]));
  deepStrictEqual(
    matmulQ8Dp4a({ ...q8, a: u32([0x01010101, 0x7f7f7f01]), weight: u32([0x04030201, 0x05]) }),
    f32([15]),
  );
  deepStrictEqual(matmulQ4G128Dp4a({ ...q8, a: u32([0x01010101, 0x7f7f7f01]), weight: u32([0x77754321]) }), f32([15]));
});

Deno.test("matmulQ4G128Dp4a reference: one weight scale per 128 columns, laid out [N, ceil(K/128)]", () => {
  const N = 2, K = 129;
  const a = packQ8(new Int32Array(K).fill(1), 1, K);
  const weight = packQ4(new Int32Array(N * K).fill(1), N, K);
  const got = matmulQ4G128Dp4a({ a, aScales: f32([0.5]), weight, scales: f32([1, 100, 1000, 10000]), M: 1, N, K });
  // Row 0: 128 columns at scale 1, one at 100; row 1: 128 at 1000, one at 10000; times a's 0.5.
  deepStrictEqual([...got], [114, 69000]);
});

Deno.test("dp4a reference: the product of matmulQ8 / matmulQ4G128 on the dequantised activations", () => {
  // Activation scales that are powers of two make code * scale exact in f32, so the f32-activation
  // references compute the same real product; q8's is exact in f64 in both (sums of multiples of one
  // unit), so the two agree bit for bit; q4's f64 sum over groups may round, hence one f32 ULP.
  const M = 3, N = 5, K = 300;
  const codes = new Int32Array(M * K).map((_, i) => ((i * 53) % 255) - 127);
  const aScales = f32([2 ** -7, 2 ** -3, 2 ** -10]);
  const a = packQ8(codes, M, K);
  const dequantized = Float32Array.from(codes, (c, i) => c * aScales[Math.floor(i / K)]);
  const w8 = {
    weight: packQ8(new Int32Array(N * K).map((_, i) => ((i * 37) % 255) - 127), N, K),
    scales: randomF32(N, 2, 0.001, 0.01),
  };
  deepStrictEqual(matmulQ8Dp4a({ a, aScales, ...w8, M, N, K }), matmulQ8({ a: dequantized, ...w8, M, N, K }));
  const q4 = quantizeQ4G128({ x: randomF32(N * K, 3), rows: N, cols: K });
  const w4 = { weight: packQ4(q4.codes, N, K), scales: q4.scales };
  assertClose(
    matmulQ4G128Dp4a({ a, aScales, ...w4, M, N, K }),
    matmulQ4G128({ a: dequantized, ...w4, M, N, K }),
    { atol: 0, rtol: 2 ** -23 },
    "q4g128",
  );
});

Deno.test("dp4a reference: bad input throws naming the argument; K bounded for q8", async () => {
  const q8 = { a: u32([0]), aScales: f32([1]), weight: u32([0]), scales: f32([1]), M: 1, N: 1, K: 4 };
  await assertThrowsMessage(() => matmulQ8Dp4a({ ...q8, M: 0 }), "matmulQ8Dp4a: M must be an integer >= 1");
  await assertThrowsMessage(() => matmulQ8Dp4a({ ...q8, a: u32([0, 0]) }), "matmulQ8Dp4a: a");
  await assertThrowsMessage(() => matmulQ8Dp4a({ ...q8, aScales: f32([1, 1]) }), "aScales");
  await assertThrowsMessage(() => matmulQ8Dp4a({ ...q8, a: f32([0]) as unknown as Uint32Array }), "Uint32Array");
  await assertThrowsMessage(() => matmulQ4G128Dp4a({ ...q8, scales: f32([1, 1]) }), "N * ceil(K / 128)");
  // 131,071 products of (-128)^2 reach 2^31 - 16384; one more would pass i32's largest value.
  strictEqual(MATMUL_DP4A_MAX_K, 131071);
  ok(MATMUL_DP4A_MAX_K * 128 ** 2 <= 2 ** 31 - 1 && (MATMUL_DP4A_MAX_K + 1) * 128 ** 2 > 2 ** 31 - 1);
  const big = MATMUL_DP4A_MAX_K + 1;
  await assertThrowsMessage(
    () => matmulQ8Dp4a({ ...q8, K: big, a: new Uint32Array(ceil(big / 4)), weight: new Uint32Array(ceil(big / 4)) }),
    "matmulQ8Dp4a: K must be an integer in [1, 131071], got 131072",
  );
});

// ---- every kernel against the reference -------------------------------------------------------

// Shapes: M, N below, at and past the 64 x 64 tile and past the 128 x 128 one; K of 1, not a
// multiple of 4, of 128 (q4's group, the 64 x 64 kernels' step, two of the 128 x 128 kernels'), one
// group plus a few columns, several groups, and a last group that ends after one of the 128 x 128
// kernels' steps (K = 200) or two (K = 260).
const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [3, 5, 7],
  [64, 64, 128],
  [65, 67, 130],
  [17, 70, 301],
  [2, 3, 1029],
  [129, 131, 260],
  [7, 130, 200],
];

const q8Cases = [...SHAPES.map(([M, N, K], i) => dp4aQ8Case(M, N, K, 10 + i)), dp4aQ8Case(5, 9, 37, 30, true)];
const q4Cases = [...SHAPES.map(([M, N, K], i) => dp4aQ4Case(M, N, K, 40 + i)), dp4aQ4Case(5, 9, 301, 60, true)];
checkAgainstReference("matmulQ8Dp4a", KERNELS, "q8row_dp4a", q8Cases, matmulQ8Dp4a, matmulQ8Dp4aGpu, DP4A_Q8_TOL);
checkAgainstReference(
  "matmulQ8Dp4a",
  KERNELS,
  "q8row_dp4a_tile64",
  q8Cases,
  matmulQ8Dp4a,
  matmulQ8Dp4aGpu,
  DP4A_Q8_TOL,
);
const [q4Reference, q4Gpu] = [matmulQ4G128Dp4a, matmulQ4G128Dp4aGpu];
checkAgainstReference("matmulQ4G128Dp4a", KERNELS, "q4g128_dp4a", q4Cases, q4Reference, q4Gpu, dp4aQ4Tolerance);
checkAgainstReference("matmulQ4G128Dp4a", KERNELS, "q4g128_dp4a_tile64", q4Cases, q4Reference, q4Gpu, dp4aQ4Tolerance);

// The pipelined 128 x 128 kernels at the same shapes and at shapes with interior tiles (wholly inside
// c), which load the steps inside K unchecked and the rest checked: K a multiple of the step (every
// step unchecked, four tiles), tails of 3, 2 and 1 codes past the last full word (the tail's step
// checked and masked; raw words put non-zero codes in the padding), q4's last group ending one word
// into its second step (K = 330) and after one word (K = 259), and two or three tiles in a direction
// with edge tiles beside interior ones.
const INTERIOR_SHAPES: [number, number, number, boolean][] = [
  [256, 256, 256, false],
  [130, 129, 259, true],
  [257, 130, 330, false],
  [129, 256, 197, true],
];
const q8PipelinedCases = [
  ...q8Cases,
  ...INTERIOR_SHAPES.map(([M, N, K, raw], i) => dp4aQ8Case(M, N, K, 90 + i, raw)),
];
const q4PipelinedCases = [
  ...q4Cases,
  ...INTERIOR_SHAPES.map(([M, N, K, raw], i) => dp4aQ4Case(M, N, K, 95 + i, raw)),
];
checkAgainstReference(
  "matmulQ8Dp4a",
  KERNELS,
  "q8row_dp4a_pipelined",
  q8PipelinedCases,
  matmulQ8Dp4a,
  matmulQ8Dp4aGpu,
  DP4A_Q8_TOL,
);
checkAgainstReference(
  "matmulQ4G128Dp4a",
  KERNELS,
  "q4g128_dp4a_pipelined",
  q4PipelinedCases,
  q4Reference,
  q4Gpu,
  dp4aQ4Tolerance,
);

gpuTest("dp4a: each pipelined kernel's outputs are its single-stage kernel's, bit for bit", async (gpu) => {
  // The integer sums are exact and the f32 steps after them are the same text in the same order, so
  // the two walks over K give the same bits: at edge shapes, at interior tiles with and without K
  // tails, over many q4 groups, on quantised and on raw words.
  const shapes: [number, number, number, boolean][] = [
    [3, 5, 7, false],
    [129, 131, 260, true],
    [7, 130, 1029, false],
    ...INTERIOR_SHAPES,
  ];
  const pairs = [
    ["q8row_dp4a", "q8row_dp4a_pipelined", false],
    ["q4g128_dp4a", "q4g128_dp4a_pipelined", true],
  ] as const;
  for (const [single, pipelined, isQ4] of pairs) {
    for (const [i, [M, N, K, raw]] of shapes.entries()) {
      const { args } = (isQ4 ? dp4aQ4Case : dp4aQ8Case)(M, N, K, 4000 + i, raw);
      const run = (override: MatmulVariant) =>
        isQ4
          ? matmulQ4G128Dp4aGpu(gpu, args as MatmulQ4G128Dp4aArgs, { override })
          : matmulQ8Dp4aGpu(gpu, args, { override });
      const expected = await run(single);
      deepStrictEqual(await run(pipelined), expected, `${pipelined} against ${single} at ${M}x${N}x${K}`);
      ok(expected.some((v) => v !== 0), `${single} ${M}x${N}x${K}: a product to compare`);
    }
  }
});

gpuTest(
  "dp4a: the pipelined kernels compute every tile of a grid folded past maxComputeWorkgroupsPerDimension",
  async (gpu) => {
    // 300 columns are 3 tiles of 128, on a 2 x 2 grid at a limit of 2; the grid's last workgroup has
    // no tile and returns before the walk's barriers.
    const limit2 = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 2 });
    const q8 = dp4aQ8Case(2, 300, 37, 120).args;
    const q4 = dp4aQ4Case(2, 300, 37, 121).args;
    const q8Plan = matmulQ8Dp4aPlan(limit2, { M: 2, N: 300, K: 37 }, { override: "q8row_dp4a_pipelined" });
    deepStrictEqual(q8Plan.workgroups, [2, 2, 1]);
    const q8Out = await matmulQ8Dp4aGpu(limit2, q8, { override: "q8row_dp4a_pipelined" });
    assertClose(q8Out, matmulQ8Dp4a(q8), DP4A_Q8_TOL, "q8row_dp4a_pipelined folded");
    const q4Out = await matmulQ4G128Dp4aGpu(limit2, q4, { override: "q4g128_dp4a_pipelined" });
    assertClose(q4Out, matmulQ4G128Dp4a(q4), dp4aQ4Tolerance(q4), "q4g128_dp4a_pipelined folded");
  },
);

Deno.test("dp4a tolerance: tight enough that one code product too many or too few fails it", () => {
  for (const { args } of q8Cases.slice(1, 4)) {
    const ref = matmulQ8Dp4a(args);
    // The smallest change of an integer sum moves an output by aScales[m] scales[n]; the tolerance
    // must be below it at the outputs whose value it would change.
    const off = ref.map((v, i) => v + args.aScales[Math.floor(i / args.N)] * args.scales[i % args.N]);
    ok(
      ref.some((v, i) => Math.abs(off[i] - v) > DP4A_Q8_TOL.atol + DP4A_Q8_TOL.rtol * Math.abs(v)),
      "q8 tolerance too loose",
    );
  }
  for (const { args } of q4Cases.slice(1, 4)) {
    const ref = matmulQ4G128Dp4a(args);
    const tol = dp4aQ4Tolerance(args);
    const groups = ceil(args.K / 128);
    const step = (i: number) => args.aScales[Math.floor(i / args.N)] * Math.abs(args.scales[(i % args.N) * groups]);
    ok(ref.some((v, i) => step(i) > tol.atol + tol.rtol * Math.abs(v)), "q4 tolerance too loose");
  }
});

// ---- plans ------------------------------------------------------------------------------------

gpuTest("dp4a plans: bindings; the tile by the matmul rule, one workgroup per tile (folded past 65,535)", (gpu) => {
  // The software adapter here (lavapipe) lists packed_4x8_integer_dot_product, as the H200 does: the
  // kernels above ran, so this is a fact of this machine, asserted so that a change is noticed.
  ok(hasDp4a(), "this adapter's WGSL lacks packed_4x8_integer_dot_product");
  const q8 = matmulQ8Dp4aPlan(gpu, { M: 65, N: 130, K: 7 });
  deepStrictEqual(q8.bindings.map((b) => [b.name, b.dtype, b.length, b.role]), [
    ["a", "u32", 65 * 2, "input"],
    ["aScales", "f32", 65, "input"],
    ["weight", "u32", 130 * 2, "input"],
    ["scales", "f32", 130, "input"],
    ["c", "f32", 65 * 130, "output"],
  ]);
  strictEqual(q8.kernel.variant, "q8row_dp4a_tile64");
  deepStrictEqual(q8.workgroups, [2 * 3, 1, 1]);
  const q4 = matmulQ4G128Dp4aPlan(gpu, { M: 1, N: 3, K: 300 });
  deepStrictEqual(q4.bindings.map((b) => [b.name, b.length]), [
    ["a", 75],
    ["aScales", 1],
    ["weight", 3 * 38],
    ["scales", 3 * 3],
    ["c", 3],
  ]);
  // 16 x 16 tiles of 128 (LARGE_TILE_MIN_TILES) take the large tile; one row of tiles fewer does not.
  // (The pipelined tiles, not yet timed, by override only.)
  for (const [plan, large] of [[matmulQ8Dp4aPlan, "q8row_dp4a"], [matmulQ4G128Dp4aPlan, "q4g128_dp4a"]] as const) {
    const chosen = plan(gpu, { M: 16 * 128, N: 16 * 128, K: 256 });
    strictEqual(chosen.kernel.variant, large);
    deepStrictEqual(chosen.workgroups, [256, 1, 1]);
    strictEqual(plan(gpu, { M: 15 * 128, N: 16 * 128, K: 256 }).kernel.variant, `${large}_tile64`);
    deepStrictEqual(plan(gpu, { M: 64, N: 64, K: 4 }, { override: large }).workgroups, [1, 1, 1]);
    deepStrictEqual(plan(gpu, { M: 129, N: 64, K: 4 }, { override: `${large}_pipelined` }).workgroups, [2, 1, 1]);
  }
  const big = matmulQ8Dp4aPlan(gpu, { M: 64 * 300, N: 64 * 300, K: 4 }, { override: "q8row_dp4a_tile64" });
  deepStrictEqual(big.workgroups, foldWorkgroups(90000, gpu.limits.maxComputeWorkgroupsPerDimension));
  ok(big.workgroups[1] > 1);
});

gpuTest("dp4a plans: refused before dispatch where WGSL lacks dot4I8Packed; other refusals", async (gpu) => {
  const features = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(navigator.gpu), "wgslLanguageFeatures");
  ok(features, "navigator.gpu has no wgslLanguageFeatures to hide");
  Object.defineProperty(navigator.gpu, "wgslLanguageFeatures", { value: new Set<string>(), configurable: true });
  try {
    ok(!hasDp4a());
    await assertThrowsMessage(
      () => matmulQ8Dp4aPlan(gpu, { M: 1, N: 1, K: 4 }),
      "matmulQ8Dp4a: this adapter's WGSL lacks the packed_4x8_integer_dot_product language feature",
    );
    await assertThrowsMessage(
      () => matmulQ4G128Dp4aGpu(gpu, q4Cases[0].args),
      "matmulQ4G128Dp4a: this adapter's WGSL lacks the packed_4x8_integer_dot_product",
    );
  } finally {
    delete (navigator.gpu as unknown as Record<string, unknown>).wgslLanguageFeatures;
  }
  ok(hasDp4a());
  await assertThrowsMessage(
    () => matmulQ8Dp4aPlan(gpu, { M: 1, N: 1, K: 4 }, { override: "q8row" }),
    `override "q8row" is not a variant of entry point "q8row_dp4a" or "q8row_dp4a_tile64" or "q8row_dp4a_pipelined"`,
  );
  await assertThrowsMessage(
    () => matmulQ8Dp4aPlan(gpu, { M: 1, N: 1, K: 4 }, { override: "q8row_dp4a_fused_pipelined" }),
    `override "q8row_dp4a_fused_pipelined" is not a variant of entry point "q8row_dp4a" or "q8row_dp4a_tile64" or`,
  );
});

Deno.test("dp4a kernels: the pipelined ones declare two stages in 32 KiB of workgroup memory, the others one in 16 KiB", () => {
  // The software adapter here grants exactly 32 KiB, so every kernel runs in the tests above.
  for (const [variant, source] of Object.entries(KERNELS)) {
    if (!variant.includes("_dp4a")) continue;
    strictEqual(workgroupBytesOf(source, variant), variant.endsWith("_pipelined") ? 32768 : 16384, variant);
  }
});

Deno.test("dp4a plans: the pipelined tiles, not yet timed on a GPU, are taken by an override only (on NVIDIA too); refused by name where not granted", async () => {
  strictEqual(PIPELINED_MIN_TILES, 80);
  const large = { M: 2048, N: 2048, K: 16 };
  const nvidia = planningDevice(32768, "nvidia");
  for (
    const [plan, op, base] of [
      [matmulQ8Dp4aPlan, "matmulQ8Dp4a", "q8row_dp4a"],
      [matmulQ4G128Dp4aPlan, "matmulQ4G128Dp4a", "q4g128_dp4a"],
    ] as const
  ) {
    // The single-stage tiles by size on every device, NVIDIA's with 32 KiB included.
    for (
      const device of [nvidia, planningDevice(16384, "nvidia"), planningDevice(32768, "apple"), planningDevice(32768)]
    ) {
      strictEqual(plan(device, large).kernel.variant, base);
      strictEqual(plan(device, { ...large, activation: "silu" }).kernel.variant, `${base}_fused`);
      strictEqual(plan(device, { M: 512, N: 2560, K: 16 }).kernel.variant, `${base}_tile64`);
    }
    for (const shape of [{ M: 4608, N: 10240, K: 3840 }, { M: 4608, N: 3840, K: 10240 }]) {
      strictEqual(plan(nvidia, shape).kernel.variant, base);
    }
    // An override may name them on any device that grants their memory, and is refused where it does not.
    strictEqual(
      plan(planningDevice(32768, "apple"), { M: 3, N: 5, K: 7 }, { override: `${base}_pipelined` }).kernel.variant,
      `${base}_pipelined`,
    );
    strictEqual(plan(nvidia, large, { override: `${base}_pipelined` }).kernel.variant, `${base}_pipelined`);
    deepStrictEqual(plan(nvidia, large, { override: `${base}_pipelined` }).workgroups, [256, 1, 1]);
    strictEqual(plan(nvidia, large, { override: base }).kernel.variant, base);
    await assertThrowsMessage(
      () => plan(planningDevice(16384, "apple"), large, { override: `${base}_pipelined` }),
      `${op}/${base}_pipelined: workgroup memory needs maxComputeWorkgroupStorageSize >= 32768, but this device allows 16384`,
    );
    await assertThrowsMessage(
      () => plan(planningDevice(16384, "nvidia"), { ...large, bias: true }, { override: `${base}_fused_pipelined` }),
      `${op}/${base}_fused_pipelined: workgroup memory needs maxComputeWorkgroupStorageSize >= 32768`,
    );
  }
});

gpuTest(
  "dp4a plans: this adapter, as itself and as an NVIDIA target, takes the single-stage tiles; the pipelined ones run by override",
  async (gpu) => {
    const large = { M: 2048, N: 2048, K: 16 };
    ok(gpu.device.limits.maxComputeWorkgroupStorageSize >= 32768, "this adapter grants 32 KiB of workgroup memory");
    const nvidia = new ResidentDevice(gpu.device, { ...gpu.adapter, target: "nvidia" }, false, false);
    for (const device of [gpu, nvidia]) {
      strictEqual(matmulQ8Dp4aPlan(device, large).kernel.variant, "q8row_dp4a");
      strictEqual(matmulQ4G128Dp4aPlan(device, { ...large, activation: "gelu" }).kernel.variant, "q4g128_dp4a_fused");
    }
    // What an override runs at the 80 tiles the rule would start from: q8 within the reference's
    // tolerance, q4 bit for bit the single-stage kernel's (the tests above hold that one to the
    // reference; dp4aQ4Tolerance is not made for a million outputs).
    const q8 = dp4aQ8Case(512, 2560, 9, 130).args;
    const pipelinedQ8 = await matmulQ8Dp4aGpu(nvidia, q8, { override: "q8row_dp4a_pipelined" });
    assertClose(pipelinedQ8, matmulQ8Dp4a(q8), DP4A_Q8_TOL, "q8 pipelined by override");
    const q4 = dp4aQ4Case(512, 2560, 9, 131).args;
    const single = await matmulQ4G128Dp4aGpu(gpu, q4, { override: "q4g128_dp4a" });
    deepStrictEqual(
      await matmulQ4G128Dp4aGpu(nvidia, q4, { override: "q4g128_dp4a_pipelined" }),
      single,
      "q4 pipelined",
    );
    ok(single.some((v) => v !== 0));
  },
);

// ---- non-finite activations -------------------------------------------------------------------

gpuTest(
  "dp4a: a row of a with NaN or ±Inf gives NaN outputs, the same in the reference and the kernels",
  async (gpu) => {
    // torch gives NaN for a NaN row and ±Inf or NaN per output for an Inf row; an int8 row cannot carry
    // either. ops/quantize's packed plan marks such a row with scale NaN and codes 0 (its module doc
    // says why); the products then give NaN for the whole row. Rows 1 and 3 here hold NaN, +Inf and
    // -Inf; rows 0 and 2 are finite and are quantised as the reference does.
    const M = 4, N = 6, K = 130;
    const x = randomF32(M * K, 7);
    x[K + 3] = NaN;
    x[K + 4] = Infinity;
    x[3 * K + 100] = -Infinity;
    x[3 * K + 5] = NaN;
    x[3 * K + 6] = Infinity;
    x[K + 129] = -Infinity;
    assertNonFiniteOperands({ x });
    const finiteRows = Float32Array.from(x, (v) => (Number.isFinite(v) ? v : 0));
    const marked = quantizePacked({ x: finiteRows, rows: M, cols: K });
    for (const bad of [1, 3]) {
      marked.packed.fill(0, bad * ceil(K / 4), (bad + 1) * ceil(K / 4));
      marked.scales[bad] = NaN;
    }
    const q8 = dp4aQ8Case(M, N, K, 80).args;
    const q4 = dp4aQ4Case(M, N, K, 81).args;
    const tensors = {
      x: gpu.upload(x),
      a: gpu.alloc("u32", M * ceil(K / 4)),
      aScales: gpu.alloc("f32", M),
    };
    await gpu.submit([quantizePackedPlan(gpu, { rows: M, cols: K }), [tensors.x, tensors.a, tensors.aScales]]);
    deepStrictEqual([...await gpu.read(tensors.a)], [...marked.packed]);
    deepStrictEqual([...await gpu.read(tensors.aScales)], [...marked.scales]);
    for (
      const [name, args, plan, reference, tol] of [
        ["q8", q8, matmulQ8Dp4aPlan, matmulQ8Dp4a, DP4A_Q8_TOL],
        ["q4g128", q4, matmulQ4G128Dp4aPlan, matmulQ4G128Dp4a, null],
      ] as const
    ) {
      const c = gpu.alloc("f32", M * N);
      const weight = gpu.upload(args.weight), scales = gpu.upload(args.scales);
      await gpu.submit([plan(gpu, { M, N, K }), [tensors.a, tensors.aScales, weight, scales, c]]);
      const expected = (reference as (a: MatmulQ8Dp4aArgs) => Float32Array)({
        ...args,
        a: marked.packed,
        aScales: marked.scales,
      });
      for (let i = 0; i < M * N; i++) strictEqual(Number.isNaN(expected[i]), [1, 3].includes(Math.floor(i / N)));
      const finite = { ...(args as MatmulQ4G128Dp4aArgs), a: marked.packed, aScales: marked.scales.map((s) => s || 0) };
      const t = tol ?? dp4aQ4Tolerance(finite);
      assertClose(await gpu.read(c), expected, t, `dp4a ${name} with non-finite rows of a`);
    }
  },
);
