import { deepStrictEqual, notDeepStrictEqual, notStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  randomF32,
  seededRandom,
} from "../../harness/testing.ts";
import { variantsOf } from "../../harness/variants.ts";
import type { KernelPlan } from "../../harness/device.ts";
import {
  KERNELS,
  matvec,
  matvecQ4G128,
  matvecQ4G128Gpu,
  matvecQ4G128Plan,
  matvecQ8,
  matvecQ8Gpu,
  matvecQ8Plan,
  packQ4,
  packQ8,
  QUANTIZED_TALL_MIN_ROWS,
  quantizeQ4G128,
  unpackQ4,
  unpackQ8,
} from "./mod.ts";

const f32 = (xs: number[]) => new Float32Array(xs);
const i32 = (xs: number[]) => new Int32Array(xs);
/** Uniform integer codes in [-max, max]. */
function randomCodes(length: number, max: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length }, () => Math.floor(next() * (2 * max + 1)) - max);
}
// As in matvec.test.ts: f32 sums in another order than the f64 reference; measured below 7e-6 for
// these magnitudes (|y| < ~60), while a dropped, doubled or misplaced code moves y by ~0.2.
const GPU_TOL = { atol: 1e-4, rtol: 0 };
/** Uniform random words (every byte and nibble value) after a given first one. */
function randomWords(length: number, seed: number, first: number): Uint32Array {
  const next = seededRandom(seed);
  return Uint32Array.from({ length }, (_, i) => i === 0 ? first : Math.floor(next() * 2 ** 32));
}
const EXACT = { atol: 0, rtol: 0 };

Deno.test("packQ8: four codes per word, least significant byte first, two's complement, zero padding", () => {
  const packed = packQ8(i32([1, -1, 2, 127, -127, 3, 5]), 1, 7);
  deepStrictEqual([...packed], [0x7f02ff01, 0x00050381]);
  // The byte order a little-endian host gets by viewing an Int8Array's buffer as words.
  deepStrictEqual(packed, new Uint32Array(Int8Array.from([1, -1, 2, 127, -127, 3, 5, 0]).buffer));
  // Most significant byte first would give 0x01ff027f for the first word.
  notStrictEqual(packed[0], 0x01ff027f);
  // Each row starts a new word.
  deepStrictEqual([...packQ8(i32([1, 2, 3, 4, 5, 6]), 2, 3)], [0x030201, 0x060504]);
});

Deno.test("packQ4: eight codes per word, least significant nibble first, two's complement, zero padding", () => {
  const packed = packQ4(i32([1, -1, 7, -7, 0, 2, -2, 3, 4, -3]), 1, 10);
  deepStrictEqual([...packed], [0x3e2097f1, 0xd4]);
  // Most significant nibble first would give 0x1f7902e3 for the first word.
  notStrictEqual(packed[0], 0x1f7902e3);
  deepStrictEqual([...packQ4(i32([1, 2, 3]), 3, 1)], [1, 2, 3]);
});

Deno.test("unpackQ8 / unpackQ4 invert packing on every row, ignoring the padding", () => {
  for (const [N, K] of [[1, 1], [3, 7], [2, 9], [4, 130]]) {
    const c8 = randomCodes(N * K, 127, N * K);
    deepStrictEqual(unpackQ8(packQ8(c8, N, K), N, K), c8);
    const c4 = randomCodes(N * K, 7, N + K);
    deepStrictEqual(unpackQ4(packQ4(c4, N, K), N, K), c4);
  }
  // Padding nibbles (the high half of a one-code word) are not codes.
  deepStrictEqual([...unpackQ4(new Uint32Array([0xfffffff1]), 1, 1)], [1]);
  // The one byte and nibble packing never writes decode too.
  deepStrictEqual([...unpackQ8(new Uint32Array([0x80]), 1, 1)], [-128]);
  deepStrictEqual([...unpackQ4(new Uint32Array([0x8]), 1, 1)], [-8]);
});

Deno.test("packQ8 / packQ4 refuse codes outside the symmetric ranges [-127, 127] and [-7, 7]", async () => {
  await assertThrowsMessage(() => packQ8(i32([0, -128]), 1, 2), "packQ8: codes[1] = -128 is outside [-127, 127]");
  await assertThrowsMessage(() => packQ8(i32([128]), 1, 1), "packQ8: codes[0] = 128 is outside [-127, 127]");
  await assertThrowsMessage(() => packQ4(i32([3, 4, -8]), 1, 3), "packQ4: codes[2] = -8 is outside [-7, 7]");
  await assertThrowsMessage(() => packQ4(i32([8]), 1, 1), "packQ4: codes[0] = 8 is outside [-7, 7]");
  await assertThrowsMessage(() => packQ4(i32([1, 2]), 1, 3), "packQ4: codes must have length N * K = 3");
  await assertThrowsMessage(() => packQ8(i32([1, 2]), 2, 0), "packQ8: K must be an integer >= 1");
  await assertThrowsMessage(() => packQ4(f32([1]) as unknown as Int32Array, 1, 1), "codes must be an Int32Array");
  await assertThrowsMessage(() => unpackQ4(new Uint32Array(1), 1, 9), "packed must have length N * ceil(K / 8) = 2");
});

Deno.test("quantizeQ4G128: range [-7, 7], not Q4_0's [-8, 7]", () => {
  const w = f32([-1, 1, 0.5]);
  const { codes, scales } = quantizeQ4G128({ x: w, rows: 1, cols: 3 });
  deepStrictEqual([...codes], [-7, 7, 4]);
  deepStrictEqual([...scales], [Math.fround(1 / 7)]);
  // Q4_0 divides by the signed extreme over -8: d = -1 / -8, so -1 becomes -8 and 1 clips to 7.
  const q4_0 = [...w].map((v) => Math.min(7, Math.round(v / (-1 / -8))));
  deepStrictEqual(q4_0, [-8, 7, 4]);
});

Deno.test("quantizeQ4G128: the exact quotient w * 7 / absmax, not w times a rounded reciprocal", () => {
  // bf16 weights at exactly half their group's absmax: the quotient is the tie 3.5 (or -3.5), whose
  // code is 4 (or -3). The f64 reciprocal 7 / absmax is rounded, and its product with w lands on
  // the other side of the tie for these: 3.4999999999999996 (code 3) and -3.5000000000000004 (-4).
  for (const [absmax, w, code] of [[0.04711914, 0.02355957, 4], [0.20605469, -0.103027344, -3]]) {
    const x = f32([absmax, w]);
    strictEqual(Math.abs(x[1]) * 2, x[0]);
    deepStrictEqual([...quantizeQ4G128({ x, rows: 1, cols: 2 }).codes], [7, code]);
    strictEqual((x[1] * 7) / x[0], Math.sign(code) * 3.5);
    strictEqual(Math.round(x[1] * (7 / x[0])), code - 1);
  }
  // Nor w * (1 / f32(scale)): w * 7 = 6.50000024 and 1.50000001 round up; times 1 / f32(1/7) =
  // 6.9999997 they are 6.49999995 and 1.49999995, which round down.
  const w = f32([1, 0.9285714626312256, 0.2142857164144516]);
  const { codes, scales } = quantizeQ4G128({ x: w, rows: 1, cols: 3 });
  deepStrictEqual([...codes], [7, 7, 2]);
  const inverseScale = 1 / scales[0];
  deepStrictEqual([...w].map((v) => Math.round(v * inverseScale)), [7, 6, 1]);
});

Deno.test("quantizeQ4G128: Math.round, ties toward +Infinity (not half-to-even, not away from zero)", () => {
  const { codes, scales } = quantizeQ4G128({ x: f32([7, 2.5, -2.5, 3.5, -3.5, 0.5, -0.5]), rows: 1, cols: 7 });
  strictEqual(scales[0], 1);
  // Half-to-even (torch.round) gives [7, 2, -2, 4, -4, 0, 0]; half away from zero [7, 3, -3, 4, -4, 1, -1].
  deepStrictEqual([...codes], [7, 3, -2, 4, -3, 1, 0]);
});

Deno.test("quantizeQ4G128: one scale per 128 columns of a row, the last group shorter; zeros give 0", () => {
  const N = 2, K = 300;
  const w = new Float32Array(N * K);
  w[5] = 3.5; // row 0, group 0
  w[200] = -70; // row 0, group 1
  w[299] = 0.7; // row 0, group 2 (44 columns)
  w[K + 128] = 14; // row 1, group 1; its groups 0 and 2 are all zero
  const { codes, scales } = quantizeQ4G128({ x: w, rows: N, cols: K });
  deepStrictEqual([...scales], [0.5, 10, 0.1, 0, 2, 0].map(Math.fround));
  deepStrictEqual([codes[5], codes[200], codes[299], codes[K + 128]], [7, -7, 7, 7]);
  strictEqual(codes.reduce((n, c) => n + (c !== 0 ? 1 : 0), 0), 4);
});

Deno.test("quantizeQ4G128 refuses non-finite weights and bad shapes", async () => {
  await assertThrowsMessage(
    () => quantizeQ4G128({ x: f32([1, NaN]), rows: 1, cols: 2 }),
    "quantizeQ4G128: x must be finite (an int4 code has no value for Inf or NaN), but x[1] is NaN",
  );
  await assertThrowsMessage(() => quantizeQ4G128({ x: f32([Infinity]), rows: 1, cols: 1 }), "but x[0] is Infinity");
  await assertThrowsMessage(
    () => quantizeQ4G128({ x: f32([1, 2]), rows: 1, cols: 3 }),
    "x must have length rows * cols = 3",
  );
  await assertThrowsMessage(
    () => quantizeQ4G128({ x: f32([1, 2]), rows: 0.5, cols: 4 }),
    "rows must be an integer >= 1",
  );
});

Deno.test("matvecQ8 reference: hand-derived values; the scale multiplies the dot product once", () => {
  const weight = packQ8(i32([1, 2, -3, 4]), 2, 2);
  deepStrictEqual([...matvecQ8({ weight, scales: f32([0.5, 2]), x: f32([1, 1]), N: 2, K: 2 })], [1.5, 2]);
  const s = Math.fround(1 / 3);
  const once = matvecQ8({ weight: packQ8(i32([127, -126]), 1, 2), scales: f32([s]), x: f32([1, 1]), N: 1, K: 2 });
  deepStrictEqual([...once], [s]);
  // Scaling each term first (an f32 weight dequantized per element, then matvec) is off by 7.6e-6 relative.
  const perTerm = matvec({ weight: f32([s * 127, s * -126]), x: f32([1, 1]), N: 1, K: 2 });
  deepStrictEqual([...perTerm], [0.33333587646484375]);
});

Deno.test("matvecQ4G128 reference: each group of 128 columns takes its own scale", () => {
  const K = 130;
  const codes = new Int32Array(K);
  codes[0] = 7;
  codes[127] = -1;
  codes[128] = 3;
  codes[129] = 2;
  const x = new Float32Array(K).fill(1);
  x[129] = 0.5;
  const args = { weight: packQ4(codes, 1, K), scales: f32([0.25, 4]), x, N: 1, K };
  // Group 0: 0.25 * (7 - 1); group 1: 4 * (3 + 1).
  deepStrictEqual([...matvecQ4G128(args)], [17.5]);
  // A group boundary off by one column (127 in group 1) would give 0.25 * 7 + 4 * (-1 + 3 + 1) = 13.75.
});

Deno.test("matvecQ8 / matvecQ4G128 reference: bad input throws naming the argument", async () => {
  const x = f32([1, 2, 3, 4, 5]);
  const q8 = { weight: new Uint32Array(4), scales: f32([1, 1]), x, N: 2, K: 5 };
  await assertThrowsMessage(
    () => matvecQ8({ ...q8, weight: new Uint32Array(3) }),
    "weight must have length N * ceil(K / 4) = 4",
  );
  await assertThrowsMessage(() => matvecQ8({ ...q8, scales: f32([1]) }), "matvecQ8: scales must have length N = 2");
  await assertThrowsMessage(() => matvecQ8({ ...q8, x: f32([1]) }), "matvecQ8: x must have length K = 5");
  await assertThrowsMessage(() => matvecQ8({ ...q8, N: -2 }), "matvecQ8: N must be an integer >= 1");
  await assertThrowsMessage(
    () => matvecQ8({ ...q8, weight: new Int32Array(4) as unknown as Uint32Array }),
    "weight must be a Uint32Array",
  );
  const q4 = { weight: new Uint32Array(2), scales: f32([1, 1]), x, N: 2, K: 5 };
  await assertThrowsMessage(
    () => matvecQ4G128({ ...q4, weight: new Uint32Array(4) }),
    "weight must have length N * ceil(K / 8) = 2",
  );
  await assertThrowsMessage(
    () => matvecQ4G128({ ...q4, scales: f32([1]) }),
    "scales must have length N * ceil(K / 128) = 2",
  );
  await assertThrowsMessage(() => matvecQ4G128({ ...q4, K: 1.5 }), "matvecQ4G128: K must be an integer >= 1");
});

// K = 16, 2064, 4096, 4112 run q8's vec4 path (16 codes a load); the rest its word path, with a padded
// last word whenever K % 4 != 0. N = 1031 is 129 workgroups of 8 rows, 65 of 16 or 17 of 64, the
// last with 7 rows; N = 37 ends in a partial workgroup on the vec4 path.
// Every variant of both entry points of each quantized GEMV.
const Q8_VARIANTS = [...variantsOf(KERNELS, "q8row"), ...variantsOf(KERNELS, "q8row_rows64")];
const Q4_VARIANTS = [...variantsOf(KERNELS, "q4g128"), ...variantsOf(KERNELS, "q4g128_rows64")];

const Q8_CASES = [[1, 1], [3, 3], [2, 4], [3, 7], [5, 16], [3, 255], [9, 257], [37, 2064], [2, 4096], [2, 4099], [
  3,
  4112,
], [
  1031,
  5,
]].map(([N, K]) => ({
  label: `N=${N} K=${K}`,
  args: {
    weight: packQ8(randomCodes(N * K, 127, N + K), N, K),
    scales: randomF32(N, K, 0.001, 0.02),
    x: randomF32(K, N),
    N,
    K,
  },
})).concat(
  // Arbitrary words: every byte, and non-zero padding, on both paths; the first word is four 0x80 (-128).
  [[7, 64], [5, 37]].map(([N, K]) => ({
    label: `raw words N=${N} K=${K}`,
    args: {
      weight: randomWords(N * Math.ceil(K / 4), N * K, 0x80808080),
      scales: randomF32(N, K, 0.001, 0.02),
      x: randomF32(K, N),
      N,
      K,
    },
  })),
);
checkAgainstReference("matvecQ8", KERNELS, "q8row", Q8_CASES, matvecQ8, matvecQ8Gpu, GPU_TOL);
checkAgainstReference("matvecQ8", KERNELS, "q8row_rows64", Q8_CASES, matvecQ8, matvecQ8Gpu, GPU_TOL);

// K = 32, 2080, 4096, 4128, 6336, 8352 run q4's vec4 path (32 codes a load; 4128 and 8352 end in a
// 32-column group); the rest its word path, whose last word is padded when K % 8 != 0, with 1-4
// (K = 9, 4099, 300) or 5-7 (K = 7, 13, 127) live codes. q4g128.nvidia walks the vec4 path in tiles
// of 128 vec4s a row (4096 columns), 64 invocations taking two each: K = 32 and 2080 use 1 and 65
// of one tile, 4096 all of it, 4128, 6336 and 8352 end in a tile of 1, 70 and 5 (the last two after
// a full one, whose x must not count for the vec4s past K).
// q4g128_rows64 walks the same tiles with 8 invocations taking two vec4s a step and a last single
// one when a tile's count is not a multiple of 16 (65, 70, 5). N = 1031 is 129 workgroups of 8 rows,
// 65 of 16 or 17 of 64, the last with 7 rows; N = 21 and 37 end in a partial workgroup on the vec4
// path.
const Q4_CASES = [
  [1, 1],
  [3, 7],
  [2, 8],
  [3, 9],
  [3, 13],
  [2, 32],
  [3, 127],
  [3, 129],
  [2, 300],
  [21, 2080],
  [2, 4096],
  [2, 4099],
  [2, 4128],
  [3, 6336],
  [37, 8352],
  [1031, 5],
].map(([N, K]) => {
  const { codes, scales } = quantizeQ4G128({ x: randomF32(N * K, N + K), rows: N, cols: K });
  return { label: `N=${N} K=${K}`, args: { weight: packQ4(codes, N, K), scales, x: randomF32(K, N), N, K } };
}).concat(
  // Arbitrary words: every nibble, and non-zero padding, on both paths; the first word is eight 0x8 (-8).
  [[7, 64], [5, 37]].map(([N, K]) => ({
    label: `raw words N=${N} K=${K}`,
    args: {
      weight: randomWords(N * Math.ceil(K / 8), N * K, 0x88888888),
      scales: randomF32(N * Math.ceil(K / 128), K, 0.01, 0.2),
      x: randomF32(K, N),
      N,
      K,
    },
  })),
);
checkAgainstReference("matvecQ4G128", KERNELS, "q4g128", Q4_CASES, matvecQ4G128, matvecQ4G128Gpu, GPU_TOL);
checkAgainstReference("matvecQ4G128", KERNELS, "q4g128_rows64", Q4_CASES, matvecQ4G128, matvecQ4G128Gpu, GPU_TOL);

gpuTest("matvecQ8 / matvecQ4G128 GPU: the scale multiplies the integer dot product, not each term", async (gpu) => {
  const s = Math.fround(1 / 3);
  const q8 = { weight: packQ8(i32([127, -126]), 1, 2), scales: f32([s]), x: f32([1, 1]), N: 1, K: 2 };
  // 127 - 126 is exact in f32, so the only rounding is the scale's: exactly s. Per term: 0.33333588.
  assertClose(await matvecQ8Gpu(gpu, q8), [s], EXACT, "q8");
  const q4 = { weight: packQ4(i32([7, -6]), 1, 2), scales: f32([s]), x: f32([1, 1]), N: 1, K: 2 };
  notStrictEqual(Math.fround(Math.fround(s * 7) - Math.fround(s * 6)), s);
  assertClose(await matvecQ4G128Gpu(gpu, q4), [s], EXACT, "q4");
});

gpuTest(
  "matvecQ8 / matvecQ4G128 GPU: padding codes and whatever lies past x in its buffer never count, in any variant",
  async (gpu) => {
    // Resident tensors: x is followed by NaN in its buffer and each row's last word has non-zero padding.
    // Every variant, each writing into a y that starts as NaN.
    const N = 3, K = 13;
    const x = randomF32(K, 1);
    const xPadded = gpu.upload(f32([...x, NaN, NaN, NaN]));
    const y = gpu.alloc("f32", N);
    const c8 = randomCodes(N * K, 127, 2);
    const q8 = packQ8(c8, N, K).map((word, i) => i % 4 === 3 ? word | 0xabcdef00 : word); // K % 4 = 1
    const c4 = randomCodes(N * K, 7, 3);
    const q4 = packQ4(c4, N, K).map((word, i) => i % 2 === 1 ? word | 0x77700000 : word); // K % 8 = 5
    notDeepStrictEqual([...q8], [...packQ8(c8, N, K)]);
    const scales8 = randomF32(N, 4, 0.01, 0.02), scales4 = randomF32(N, 5, 0.1, 0.2);
    const [w8, s8, w4, s4] = [q8, scales8, q4, scales4].map((data) => gpu.upload(data));
    const nan = new Float32Array(N).fill(NaN);
    try {
      for (const override of Q8_VARIANTS) {
        gpu.device.queue.writeBuffer(y.buffer, 0, nan);
        await gpu.submit([matvecQ8Plan(gpu, { N, K }, { override }), [w8, s8, xPadded, y]]);
        assertClose(await gpu.read(y), matvecQ8({ weight: q8, scales: scales8, x, N, K }), GPU_TOL, override);
      }
      for (const override of Q4_VARIANTS) {
        gpu.device.queue.writeBuffer(y.buffer, 0, nan);
        await gpu.submit([matvecQ4G128Plan(gpu, { N, K }, { override }), [w4, s4, xPadded, y]]);
        assertClose(await gpu.read(y), matvecQ4G128({ weight: q4, scales: scales4, x, N, K }), GPU_TOL, override);
      }
    } finally {
      for (const t of [xPadded, y, w8, s8, w4, s4]) t.buffer.destroy();
    }
  },
);

gpuTest(
  "matvecQ8 / matvecQ4G128 GPU: every variant computes every row of a grid folded into y, on both paths",
  async (gpu) => {
    // 645 rows are 81 workgroups of 8 rows (the last with 5), 41 of 16 or 11 of 64 (the kernel's
    // ROWS); at a limit of 9 they fold to 9 x 9, 9 x 5 or 6 x 2, the last four or one of the latter
    // two past the last row. K = 37 runs the
    // word path (its last word padded), K = 64 the vec4 path. Rows left unwritten would read back as
    // poison.
    const folding = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 9 });
    folding.poisonOutputs = true;
    const folded: Record<number, number[]> = { 8: [9, 9, 1], 16: [9, 5, 1], 64: [6, 2, 1] };
    const rowsOf = (source: string) => Number(/const ROWS = (\d+)u;/.exec(source)?.[1]);
    const N = 645;
    for (const K of [37, 64]) {
      const x = randomF32(K, K);
      const q8 = { weight: packQ8(randomCodes(N * K, 127, K), N, K), scales: randomF32(N, K, 0.001, 0.02), x, N, K };
      const q = quantizeQ4G128({ x: randomF32(N * K, K + 1), rows: N, cols: K });
      const q4 = { weight: packQ4(q.codes, N, K), scales: q.scales, x, N, K };
      for (const override of Q8_VARIANTS) {
        const plan = matvecQ8Plan(folding, { N, K }, { override });
        deepStrictEqual(plan.workgroups, folded[rowsOf(plan.kernel.source)], override);
        assertClose(await matvecQ8Gpu(folding, q8, { override }), matvecQ8(q8), GPU_TOL, `${override} K=${K}`);
      }
      for (const override of Q4_VARIANTS) {
        const plan = matvecQ4G128Plan(folding, { N, K }, { override });
        deepStrictEqual(plan.workgroups, folded[rowsOf(plan.kernel.source)], override);
        assertClose(await matvecQ4G128Gpu(folding, q4, { override }), matvecQ4G128(q4), GPU_TOL, `${override} K=${K}`);
      }
    }
  },
);

gpuTest("matvecQ8 / matvecQ4G128 GPU: weights of many rows take the rows64 entry points", async (gpu) => {
  strictEqual(QUANTIZED_TALL_MIN_ROWS, 32768);
  const entryOf = (plan: KernelPlan) => plan.kernel.variant.split(".")[0];
  strictEqual(entryOf(matvecQ8Plan(gpu, { N: 32767, K: 4096 })), "q8row");
  strictEqual(entryOf(matvecQ8Plan(gpu, { N: 32768, K: 4096 })), "q8row_rows64");
  strictEqual(entryOf(matvecQ4G128Plan(gpu, { N: 14336, K: 4096 })), "q4g128");
  strictEqual(entryOf(matvecQ4G128Plan(gpu, { N: 102400, K: 1792 })), "q4g128_rows64");
  deepStrictEqual(matvecQ8Plan(gpu, { N: 102400, K: 1792 }).workgroups, [1600, 1, 1]); // 64 rows each
  // An override of either entry point is honoured whatever the size; another op's is refused.
  strictEqual(entryOf(matvecQ8Plan(gpu, { N: 8, K: 16 }, { override: "q8row_rows64" })), "q8row_rows64");
  strictEqual(entryOf(matvecQ4G128Plan(gpu, { N: 102400, K: 32 }, { override: "q4g128" })), "q4g128");
  await assertThrowsMessage(
    () => matvecQ8Plan(gpu, { N: 8, K: 16 }, { override: "q4g128" }),
    'matvecQ8: override "q4g128" is not a variant of entry point "q8row" or "q8row_rows64"',
  );
});

/**
 * Bytes of workgroup memory a kernel declares: arrays of f32 or vec4f whose length is a product of
 * literals and the kernel's `const NAME = <n>u;` constants.
 */
function workgroupBytes(source: string): number {
  const constants = new Map([...source.matchAll(/const (\w+) = (\d+)u;/g)].map(([, name, n]) => [name, Number(n)]));
  const arrays = [...source.matchAll(/var<workgroup> \w+: array<(\w+), ([^>]+)>;/g)];
  strictEqual(arrays.length, source.split("var<workgroup>").length - 1, "every var<workgroup> is an array sized here");
  let total = 0;
  for (const [, type, length] of arrays) {
    const elements = length.split(" * ").reduce((p, f) => p * (constants.get(f) ?? Number(f.replace(/u$/, ""))), 1);
    total += elements * ({ f32: 4, vec4f: 16 } as Record<string, number>)[type];
  }
  return total;
}

Deno.test("matvec kernels: every one fits WebGPU's default 16 KiB of workgroup memory", () => {
  // The plans check no workgroup-memory limit, so no kernel may need more than every device grants.
  // q4g128.nvidia's x tile takes all of it, and its partial sums reuse the tile.
  strictEqual(workgroupBytes(KERNELS["q4g128.nvidia"]), 16384);
  strictEqual(workgroupBytes(KERNELS.q8row), 64 * 4 * 16); // LANES * GROUPS vec4s
  for (const [variant, source] of Object.entries(KERNELS)) {
    const bytes = workgroupBytes(source);
    ok(bytes > 0 && bytes <= 16384, `${variant}: ${bytes} bytes of workgroup memory`);
  }
});

gpuTest("matvecQ8 / matvecQ4G128 GPU: bad input throws before dispatch", async (gpu) => {
  const x = f32([1, 2, 3, 4, 5]);
  const q8 = { weight: new Uint32Array(4), scales: f32([1, 1]), x, N: 2, K: 5 };
  await assertThrowsMessage(
    () => matvecQ8Gpu(gpu, { ...q8, scales: f32([1]) }),
    "matvecQ8: scales must have length N = 2",
  );
  await assertThrowsMessage(() => matvecQ8Gpu(gpu, { ...q8, K: -5 }), "matvecQ8: K must be an integer >= 1");
  await assertThrowsMessage(() => matvecQ8Plan(gpu, { N: 1.5, K: 5 }), "matvecQ8: N must be an integer >= 1");
  const q4 = { weight: new Uint32Array(2), scales: f32([1, 1]), x, N: 2, K: 5 };
  await assertThrowsMessage(
    () => matvecQ4G128Gpu(gpu, { ...q4, x: f32([1]) }),
    "matvecQ4G128: x must have length K = 5",
  );
  await assertThrowsMessage(() => matvecQ4G128Plan(gpu, { N: 2, K: 0 }), "matvecQ4G128: K must be an integer >= 1");
  await assertThrowsMessage(
    () => matvecQ4G128Gpu(gpu, q4, { override: "kernel" }),
    'override "kernel" is not a variant of entry point "q4g128"',
  );
});
