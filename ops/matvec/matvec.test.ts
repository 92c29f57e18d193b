import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { ResidentDevice } from "../../harness/device.ts";
import { LimitError } from "../../harness/limits.ts";
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
  matvec,
  matvecGpu,
  matvecPlan,
  matvecQ4G128,
  matvecQ4G128Gpu,
  matvecQ4G128Plan,
  matvecQ8,
  matvecQ8Gpu,
  matvecQ8Plan,
  packQ4,
  packQ8,
  quantizeQ4G128,
} from "./mod.ts";

/** What goldens/gen.py writes. Inputs are regenerated from `seed` by {@link lcg}. */
interface Golden {
  meta: { torch: string };
  f32: { N: number; K: number; seed: number; y32: number[]; y64: number[] }[];
  q8: { N: number; K: number; seed: number; packed: number[]; scales: number[]; y: number[]; codes?: number[] }[];
  q4: { N: number; K: number; seed: number; packed: number[]; scales: number[]; y: number[]; codes?: number[] }[];
  q4_conventions: {
    N: number;
    K: number;
    x: number[];
    codes: number[];
    scales: number[];
    codes_half_to_even: number[];
    codes_reciprocal_in_f64: number[];
    codes_reciprocal_of_f32_scale: number[];
  };
}
const loadMatvecGolden = () => loadGolden<Golden>(new URL("./goldens/matvec.json", import.meta.url));

/** gen.py's generator: n values in [-1, 1), each the top 24 bits of a 32-bit LCG state over 2^23. */
function lcg(seed: number, n: number): Float32Array {
  let state = seed >>> 0;
  return Float32Array.from({ length: n }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return ((state >>> 8) - 2 ** 23) / 2 ** 23;
  });
}
const goldenInputs = (N: number, K: number, seed: number) => ({ weight: lcg(seed, N * K), x: lcg(seed + 1, K) });
const f32 = (xs: number[]) => new Float32Array(xs);

// The kernels sum in f32 in another order than the f64 reference: 64 strided partial sums per row,
// then a tree. With |w|, |x| <= 1 (or q8/q4 codes times their scales of the same size) and K <= 4128,
// |y| stays below ~60 and the measured error is below 7e-6 on llvmpipe; 1e-4 leaves a 15x margin,
// while a dropped, doubled or misplaced term moves y by ~0.2 on average.
const GPU_TOL = { atol: 1e-4, rtol: 0 };
// Two f64 sums of the same products in different orders differ by ~1e-16 relative, which can move
// the f32 rounding of the result by at most one ulp (2^-23 relative, at most).
const ONE_ULP = { atol: 1e-12, rtol: 2 ** -23 };
const EXACT = { atol: 0, rtol: 0 };

Deno.test("matvec reference: hand-derived values", () => {
  const weight = f32([1, 2, 3, 4, 5, 6]);
  deepStrictEqual([...matvec({ weight, x: f32([1, 0, -1]), N: 2, K: 3 })], [-2, -2]);
  deepStrictEqual([...matvec({ weight, x: f32([1, 1]), N: 3, K: 2 })], [3, 7, 11]);
  deepStrictEqual([...matvec({ weight: f32([-3]), x: f32([0.5]), N: 1, K: 1 })], [-1.5]);
});

Deno.test("matvec reference: accumulates in f64 and rounds once, not in f32", () => {
  const tiny = 2 ** -24;
  const got = matvec({ weight: f32([1, tiny, tiny]), x: f32([1, 1, 1]), N: 1, K: 3 })[0];
  strictEqual(got, 1 + 2 * tiny);
  // An f32 accumulator loses each half-ulp term to round-to-even and returns exactly 1.
  let f32Sum = 0;
  for (const term of [1, tiny, tiny]) f32Sum = Math.fround(f32Sum + term);
  strictEqual(f32Sum, 1);
});

Deno.test("matvec reference: bad input throws naming the argument", async () => {
  const six = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(() => matvec({ weight: six, x: f32([1, 2]), N: 2, K: 3 }), "x must have length K = 3");
  await assertThrowsMessage(
    () => matvec({ weight: six, x: f32([1, 2]), N: 2, K: 2 }),
    "weight must have length N * K = 4",
  );
  await assertThrowsMessage(() => matvec({ weight: six, x: six, N: -1, K: 6 }), "N must be an integer >= 1");
  await assertThrowsMessage(() => matvec({ weight: six, x: six, N: 1, K: 0 }), "K must be an integer >= 1");
  await assertThrowsMessage(() => matvec({ weight: six, x: f32([1, 2]), N: 3, K: 2.5 }), "K must be an integer >= 1");
  await assertThrowsMessage(
    () => matvec({ weight: Float64Array.from(six) as unknown as Float32Array, x: six, N: 1, K: 6 }),
    "weight must be a Float32Array",
  );
});

Deno.test("matvec goldens: reference matches torch.mv (f32 and f64)", async () => {
  const golden = await loadMatvecGolden();
  for (const { N, K, seed, y32, y64 } of golden.f32) {
    const y = matvec({ ...goldenInputs(N, K, seed), N, K });
    assertClose(y, y64, ONE_ULP, `torch ${golden.meta.torch} f64 N=${N} K=${K}`);
    // torch's own f32 summation order differs from both.
    assertClose(y, y32, GPU_TOL, `torch ${golden.meta.torch} f32 N=${N} K=${K}`);
  }
});

Deno.test("matvec goldens: packQ8 and matvecQ8 match the script's q8", async () => {
  const golden = await loadMatvecGolden();
  for (const { N, K, seed, packed, scales, codes, y } of golden.q8) {
    if (codes) deepStrictEqual([...packQ8(Int32Array.from(codes), N, K)], packed, `packQ8 N=${N} K=${K}`);
    const got = matvecQ8({
      weight: Uint32Array.from(packed),
      scales: f32(scales),
      x: goldenInputs(N, K, seed).x,
      N,
      K,
    });
    // Every term is exact in f64, so the dot product is exact and the scale's rounding is the only one.
    assertClose(got, f32(y), EXACT, `matvecQ8 N=${N} K=${K}`);
  }
});

Deno.test("matvec goldens: quantizeQ4G128, packQ4 and matvecQ4G128 match the script's q4", async () => {
  const golden = await loadMatvecGolden();
  for (const { N, K, seed, packed, scales, codes, y } of golden.q4) {
    const { weight, x } = goldenInputs(N, K, seed);
    const q = quantizeQ4G128({ x: weight, rows: N, cols: K });
    if (codes) deepStrictEqual([...q.codes], codes, `codes N=${N} K=${K}`);
    deepStrictEqual([...q.scales], scales, `scales N=${N} K=${K}`);
    deepStrictEqual([...packQ4(q.codes, N, K)], packed, `packQ4 N=${N} K=${K}`);
    const got = matvecQ4G128({ weight: Uint32Array.from(packed), scales: f32(scales), x, N, K });
    // Group dot products are exact and the script sums the groups in the reference's order.
    assertClose(got, f32(y), EXACT, `matvecQ4G128 N=${N} K=${K}`);
  }
});

Deno.test("matvec goldens: q4 ties, exact quotient and range agree with the script, and its alternatives do not", async () => {
  const c = (await loadMatvecGolden()).q4_conventions;
  const q = quantizeQ4G128({ x: f32(c.x), rows: c.N, cols: c.K });
  deepStrictEqual([...q.codes], c.codes);
  deepStrictEqual([...q.scales], c.scales);
  ok(c.codes_half_to_even.some((v, i) => v !== c.codes[i]), "half-to-even rounding must give other codes");
  ok(c.codes_reciprocal_of_f32_scale.some((v, i) => v !== c.codes[i]), "1 / f32(scale) must give other codes");
  ok(c.codes_reciprocal_in_f64.some((v, i) => v !== c.codes[i]), "w * (7 / absmax) must give other codes");
});

gpuTest("matvec GPU: all three entry points match the goldens", async (gpu) => {
  const golden = await loadMatvecGolden();
  for (const { N, K, seed, y64 } of golden.f32) {
    assertClose(await matvecGpu(gpu, { ...goldenInputs(N, K, seed), N, K }), y64, GPU_TOL, `f32 N=${N} K=${K}`);
  }
  for (const { N, K, seed, packed, scales, y } of golden.q8) {
    const args = { weight: Uint32Array.from(packed), scales: f32(scales), x: goldenInputs(N, K, seed).x, N, K };
    assertClose(await matvecQ8Gpu(gpu, args), y, GPU_TOL, `q8 N=${N} K=${K}`);
  }
  for (const { N, K, seed, packed, scales, y } of golden.q4) {
    const args = { weight: Uint32Array.from(packed), scales: f32(scales), x: goldenInputs(N, K, seed).x, N, K };
    assertClose(await matvecQ4G128Gpu(gpu, args), y, GPU_TOL, `q4 N=${N} K=${K}`);
  }
});

checkAgainstReference(
  "matvec",
  KERNELS,
  "kernel",
  // K = 4100 runs the vec4 path over many strides, K = 4099 the element path; N = 1031 is 258
  // workgroups with the last one a quarter full.
  [[1, 1], [1, 4], [3, 7], [5, 255], [7, 256], [9, 257], [2, 4099], [3, 4100], [1031, 3]].map(([N, K]) => ({
    label: `N=${N} K=${K}`,
    args: { weight: randomF32(N * K, N + K), x: randomF32(K, K), N, K },
  })),
  matvec,
  matvecGpu,
  GPU_TOL,
);

gpuTest("matvec GPU: bad input throws before dispatch", async (gpu) => {
  const six = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(
    () => matvecGpu(gpu, { weight: six, x: f32([1, 2]), N: 2, K: 3 }),
    "x must have length K = 3",
  );
  await assertThrowsMessage(() => matvecGpu(gpu, { weight: six, x: six, N: 0, K: 6 }), "N must be an integer >= 1");
  await assertThrowsMessage(() => matvecPlan(gpu, { N: 2, K: -3 }), "matvec: K must be an integer >= 1");
  await assertThrowsMessage(
    () => matvecGpu(gpu, { weight: six, x: six, N: 1, K: 6 }, { override: "q8row" }),
    'override "q8row" is not a variant of entry point "kernel"',
  );
});

/** One plan and its inputs per entry point, for N rows of K columns. */
function everyEntry(gpu: ResidentDevice, N: number, K: number) {
  const x = randomF32(K, 7);
  const weight = randomF32(N * K, 8);
  const q8 = {
    weight: packQ8(Int32Array.from(weight, (w) => Math.round(w * 127)), N, K),
    scales: randomF32(N, 9),
    x,
    N,
    K,
  };
  const q = quantizeQ4G128({ x: weight, rows: N, cols: K });
  const q4 = { weight: packQ4(q.codes, N, K), scales: q.scales, x, N, K };
  return [
    { plan: matvecPlan(gpu, { N, K }), inputs: [weight, x], expected: matvec({ weight, x, N, K }) },
    { plan: matvecQ8Plan(gpu, { N, K }), inputs: [q8.weight, q8.scales, x], expected: matvecQ8(q8) },
    { plan: matvecQ4G128Plan(gpu, { N, K }), inputs: [q4.weight, q4.scales, x], expected: matvecQ4G128(q4) },
  ];
}

gpuTest(
  "matvec GPU: a grid past maxComputeWorkgroupsPerDimension folds into y and every row is computed",
  async (gpu) => {
    // 100 rows are 25 workgroups of 4 rows, 13 of 8 or 7 of 16 (the kernel's ROWS); at a limit of 5
    // they fold to 5 x 5, 5 x 3 or 4 x 2, the last one or two past the last row. (Running 262,141
    // rows to cross the real limit of 65,535 takes seconds on a software adapter.)
    const N = 100, K = 37;
    const folding = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 5 });
    for (const { plan, inputs, expected } of everyEntry(folding, N, K)) {
      const rows = Number(/const ROWS = (\d+)u;/.exec(plan.kernel.source)?.[1]);
      deepStrictEqual(plan.workgroups, { 4: [5, 5, 1], 8: [5, 3, 1], 16: [4, 2, 1] }[rows]);
      const [y] = await folding.run(plan, inputs);
      assertClose(y, expected, GPU_TOL, `${plan.kernel.variant} folded`);
    }
  },
);

gpuTest("matvec GPU: a weight past maxStorageBufferBindingSize is refused, naming it, before upload", async (gpu) => {
  const N = 64, K = 128; // weight: 32 KiB as f32, 8 KiB as q8, 4 KiB as q4; x 512 B, scales <= 256 B
  const small = gpu.withLimits({ maxStorageBufferBindingSize: 2048 });
  // The variant is the one resolved for the device (kernel or kernel.nvidia, and so on).
  const refusals = [32768, 8192, 4096].map((bytes) =>
    `binding 0 (weight) needs maxStorageBufferBindingSize >= ${bytes}, but this device allows 2048`
  );
  const entries = everyEntry(small, N, K);
  for (const [i, { plan, inputs }] of entries.entries()) {
    let error: unknown;
    try {
      await small.run(plan, inputs);
    } catch (e) {
      error = e;
    }
    ok(error instanceof LimitError && error.limit === "maxStorageBufferBindingSize", String(error));
    strictEqual(error.message, `matvec/${plan.kernel.variant}: ${refusals[i]}`);
  }
  const { weight, x } = goldenInputs(N, K, 1);
  await assertThrowsMessage(() => matvecGpu(small, { weight, x, N, K }), "binding 0 (weight) needs");
});

gpuTest("matvec GPU: every plan costs the bytes it must move and 2NK flops", (gpu) => {
  const N = 10, K = 300;
  deepStrictEqual(matvecPlan(gpu, { N, K }).cost, { bytes: 4 * (N * K + K + N), flops: 2 * N * K });
  deepStrictEqual(matvecQ8Plan(gpu, { N, K }).cost, { bytes: 4 * (N * 75 + N + K + N), flops: 2 * N * K });
  deepStrictEqual(matvecQ4G128Plan(gpu, { N, K }).cost, { bytes: 4 * (N * 38 + N * 3 + K + N), flops: 2 * N * K });
});
