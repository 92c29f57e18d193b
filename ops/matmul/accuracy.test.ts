import { deepStrictEqual, ok } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  seededRandom,
} from "../../harness/testing.ts";
import { variantsOf } from "../../harness/variants.ts";
import { matvecQ4G128, matvecQ8, packQ4, packQ8, quantizeQ4G128 } from "../matvec/reference.ts";
import { quantize, quantizePacked } from "../quantize/reference.ts";
import { batch, denseCase, type GemmCase, linearCase, pattern, q4Case, q8Case, randomWords } from "./cases.ts";
import {
  KERNELS,
  matmul,
  type MatmulArgs,
  matmulF16,
  type MatmulF16Args,
  matmulF16Gpu,
  matmulGpu,
  matmulLinear,
  type MatmulLinearArgs,
  matmulLinearGpu,
  matmulQ4G128,
  type MatmulQ4G128Args,
  matmulQ4G128Dp4a,
  matmulQ4G128Gpu,
  matmulQ8,
  type MatmulQ8Args,
  matmulQ8Dp4a,
  matmulQ8Gpu,
  packF16,
  unpackF16,
} from "./mod.ts";

// Every entry point against the reference at awkward sizes, and against the torch goldens, with the
// tolerance an f32 GEMM has to be given; last, what the dp4a products' int8 activations cost against
// the f32 activations (their kernels against their reference are in dp4a.test.ts). Reference facts,
// refusals and grids are in matmul.test.ts.

const f32 = (xs: number[]) => new Float32Array(xs);
// Two f64 sums of the same terms in different orders, each rounded once to f32: one f32 rounding
// apart, and 1e-12 absolute where a sum cancels to near zero.
const oneRounding = { atol: 1e-12, rtol: 2 ** -23 };

// ---- random operands of awkward shapes: 1, non-multiples of 4 and of both tiles, a long row ----

// The first six take the element-by-element paths (K and N not multiples of 4); the next four the
// vec4 paths of a (K % 4 == 0), of b and c (N % 4 == 0), or both, with edge tiles in M and N and
// blocks of K that end part-way (72 is 4.5 blocks of 16 and 9 of 8). 136x132x72 and 256x132x48 have
// interior 128 x 128 tiles beside edge tiles, with a ragged last block of K and with whole blocks;
// 129x136x76 has one whose last block is ragged for the pipelined kernels' blocks of 8 too.
const SHAPES: [number, number, number][] = [
  [1, 1, 1],
  [7, 13, 5],
  [33, 65, 129],
  [130, 257, 31],
  [257, 3, 255],
  [2, 4099, 3],
  [136, 132, 72],
  [20, 130, 44],
  [9, 132, 37],
  [129, 4, 20],
  [256, 132, 48],
  [129, 136, 76],
];
const LONG_ROW: [number, number, number] = [3, 5, 4099];
const label = (M: number, N: number, K: number) => `${M}x${N}x${K}`;

function randomDense(M: number, N: number, K: number, seed: number): GemmCase<MatmulArgs> {
  return denseCase(label(M, N, K), { a: randomF32(M * K, seed), b: randomF32(K * N, seed + 1), M, N, K });
}

/** An f32 Linear weight [N, K]: the weight's rows take the vec4 path of a's loads when K % 4 == 0. */
function randomLinear(M: number, N: number, K: number, seed: number): GemmCase<MatmulLinearArgs> {
  return linearCase(label(M, N, K), { a: randomF32(M * K, seed), weight: randomF32(N * K, seed + 1), M, N, K });
}

/** Codes in [-127, 127] packed by packQ8, or (raw) arbitrary words. */
function randomQ8(M: number, N: number, K: number, seed: number, raw = false): GemmCase<MatmulQ8Args> {
  const next = seededRandom(seed);
  const codes = Int32Array.from({ length: N * K }, () => Math.floor(next() * 255) - 127);
  const weight = raw ? randomWords(N * Math.ceil(K / 4), seed) : packQ8(codes, N, K);
  const args = { a: randomF32(M * K, seed + 1), weight, scales: randomF32(N, seed + 2, 0.001, 0.02), M, N, K };
  return q8Case(`${raw ? "raw words " : ""}${label(M, N, K)}`, args);
}

/** Weights quantized by quantizeQ4G128 and packed by packQ4, or (raw) arbitrary words. */
function randomQ4(M: number, N: number, K: number, seed: number, raw = false): GemmCase<MatmulQ4G128Args> {
  const { codes, scales } = quantizeQ4G128({ x: randomF32(N * K, seed), rows: N, cols: K });
  const weight = raw ? randomWords(N * Math.ceil(K / 8), seed) : packQ4(codes, N, K);
  return q4Case(`${raw ? "raw words " : ""}${label(M, N, K)}`, {
    a: randomF32(M * K, seed + 1),
    weight,
    scales,
    M,
    N,
    K,
  });
}

// Tolerance: batch() above, one bound per batch of similar K.
const denseShort = batch(SHAPES.map(([M, N, K], i) => randomDense(M, N, K, 100 + 10 * i)));
const denseLong = batch([randomDense(...LONG_ROW, 200)]);
checkAgainstReference("matmul, K <= 255", KERNELS, "kernel", denseShort.cases, matmul, matmulGpu, denseShort.tol);
checkAgainstReference("matmul, K <= 255", KERNELS, "tile64", denseShort.cases, matmul, matmulGpu, denseShort.tol);
checkAgainstReference("matmul, K = 4099", KERNELS, "kernel", denseLong.cases, matmul, matmulGpu, denseLong.tol);
checkAgainstReference("matmul, K = 4099", KERNELS, "tile64", denseLong.cases, matmul, matmulGpu, denseLong.tol);
checkAgainstReference(
  "matmul, K <= 255",
  KERNELS,
  "kernel_pipelined",
  denseShort.cases,
  matmul,
  matmulGpu,
  denseShort.tol,
);
checkAgainstReference(
  "matmul, K = 4099",
  KERNELS,
  "kernel_pipelined",
  denseLong.cases,
  matmul,
  matmulGpu,
  denseLong.tol,
);

const linearShort = batch(SHAPES.map(([M, N, K], i) => randomLinear(M, N, K, 900 + 10 * i)));
const linearLong = batch([randomLinear(...LONG_ROW, 1000)]);
for (const entry of ["linear", "linear_tile64", "linear_pipelined"]) {
  const [short, long] = [linearShort, linearLong];
  checkAgainstReference(
    "matmulLinear, K <= 255",
    KERNELS,
    entry,
    short.cases,
    matmulLinear,
    matmulLinearGpu,
    short.tol,
  );
  checkAgainstReference("matmulLinear, K = 4099", KERNELS, entry, long.cases, matmulLinear, matmulLinearGpu, long.tol);
}

/**
 * Operands rounded to halves by packF16, with the dense bound built from the decoded values: a
 * product of two halves (11-bit significands) is exact in f32, so the kernel differs from the
 * reference (the same products summed in f64, rounded once) only by the f32 rounding of its sums.
 */
function randomF16(M: number, N: number, K: number, seed: number): GemmCase<MatmulF16Args> {
  const args = { a: packF16(randomF32(M * K, seed)), b: packF16(randomF32(K * N, seed + 1)), M, N, K };
  const decoded = { a: unpackF16(args.a, M * K), b: unpackF16(args.b, K * N), M, N, K };
  return { label: label(M, N, K), args, absDot: denseCase("", decoded).absDot };
}

// SHAPES give odd M * K and K * N (rows straddling words, a padding half at the end) and both the
// element-by-element and the pair-of-words paths of a and of b.
const f16Short = batch(SHAPES.map(([M, N, K], i) => randomF16(M, N, K, 700 + 10 * i)));
const f16Long = batch([randomF16(...LONG_ROW, 800)]);
for (const [what, { cases, tol }] of [["K <= 255", f16Short], ["K = 4099", f16Long]] as const) {
  checkAgainstReference(`matmulF16, ${what}`, KERNELS, "f16storage", cases, matmulF16, matmulF16Gpu, tol);
}

const q8Short = batch([
  ...SHAPES.map(([M, N, K], i) => randomQ8(M, N, K, 300 + 10 * i)),
  randomQ8(5, 9, 37, 390, true),
]);
const q8Long = batch([randomQ8(...LONG_ROW, 400)]);
for (const entry of ["q8row", "q8row_tile64"]) {
  checkAgainstReference(`matmulQ8, K <= 255`, KERNELS, entry, q8Short.cases, matmulQ8, matmulQ8Gpu, q8Short.tol);
  checkAgainstReference(`matmulQ8, K = 4099`, KERNELS, entry, q8Long.cases, matmulQ8, matmulQ8Gpu, q8Long.tol);
}

const q4Short = batch([
  ...SHAPES.map(([M, N, K], i) => randomQ4(M, N, K, 500 + 10 * i)),
  randomQ4(4, 6, 300, 580),
  randomQ4(5, 9, 37, 590, true),
]);
const q4Long = batch([randomQ4(...LONG_ROW, 600)]);
const [q4Reference, q4Gpu] = [matmulQ4G128, matmulQ4G128Gpu];
for (const entry of ["q4g128", "q4g128_tile64"]) {
  checkAgainstReference(`matmulQ4G128, K <= 300`, KERNELS, entry, q4Short.cases, q4Reference, q4Gpu, q4Short.tol);
  checkAgainstReference(`matmulQ4G128, K = 4099`, KERNELS, entry, q4Long.cases, q4Reference, q4Gpu, q4Long.tol);
}

Deno.test("matmul tolerance: tight enough that dropping the last term of a sum fails it", async () => {
  for (const { cases, tol } of [denseShort, denseLong]) {
    for (const { args, label } of cases.filter((c) => c.args.K > 1)) {
      const { a, b, M, N, K } = args;
      const dropped = matmul({ a: a.map((v, i) => (i % K === K - 1 ? 0 : v)), b, M, N, K });
      await assertThrowsMessage(() => assertClose(dropped, matmul(args), tol, label), "atol");
    }
  }
});

Deno.test("matmulQ8 / matmulQ4G128 reference: each row of a is matvecQ8 / matvecQ4G128 of that row", () => {
  const { args: q8 } = randomQ8(3, 5, 300, 11);
  const { args: q4 } = randomQ4(3, 5, 300, 12);
  const [M, N, K] = [3, 5, 300];
  const [viaQ8, viaQ4] = [matmulQ8(q8), matmulQ4G128(q4)];
  for (let m = 0; m < M; m++) {
    const row = (xs: Float32Array) => xs.subarray(m * N, (m + 1) * N);
    const x8 = q8.a.subarray(m * K, (m + 1) * K);
    const x4 = q4.a.subarray(m * K, (m + 1) * K);
    assertClose(row(viaQ8), matvecQ8({ weight: q8.weight, scales: q8.scales, x: x8, N, K }), oneRounding, `q8 ${m}`);
    assertClose(
      row(viaQ4),
      matvecQ4G128({ weight: q4.weight, scales: q4.scales, x: x4, N, K }),
      oneRounding,
      `q4 ${m}`,
    );
  }
});

// ---- goldens from torch (goldens/gen.py) ------------------------------------------------------

interface GoldenShape {
  label: string;
  M: number;
  N: number;
  K: number;
  a_seed: number;
}
/** What goldens/gen.py writes. Operands come from {@link pattern}; `mm` keeps every `stride`-th output. */
interface Golden {
  meta: { torch: string };
  mm: (GoldenShape & { b_seed: number; stride: number; out64: number[]; out32: number[] })[];
  q8: (GoldenShape & { codes: number[]; scales: number[]; out: number[] })[];
  q4: (GoldenShape & { w_seed: number; codes: number[]; scales: number[]; out: number[] })[];
}
const loadMatmulGolden = () => loadGolden<Golden>(new URL("./goldens/matmul.json", import.meta.url));

function goldenCases(golden: Golden) {
  const operands = (c: GoldenShape) => ({ a: pattern(c.M * c.K, c.a_seed), M: c.M, N: c.N, K: c.K });
  return {
    mm: golden.mm.map((c) => ({
      c,
      ...batch([denseCase(c.label, { ...operands(c), b: pattern(c.K * c.N, c.b_seed) })]),
    })),
    // The same products with b given as a Linear weight, [N, K]: b transposed.
    linear: golden.mm.map((c) => {
      const b = pattern(c.K * c.N, c.b_seed);
      const weight = new Float32Array(c.N * c.K).map((_, i) => b[(i % c.K) * c.N + Math.floor(i / c.K)]);
      return { c, ...batch([linearCase(c.label, { ...operands(c), weight })]) };
    }),
    q8: golden.q8.map((c) => {
      const weight = packQ8(Int32Array.from(c.codes), c.N, c.K);
      return { c, ...batch([q8Case(c.label, { ...operands(c), weight, scales: f32(c.scales) })]) };
    }),
    q4: golden.q4.map((c) => {
      const weight = packQ4(Int32Array.from(c.codes), c.N, c.K);
      return { c, ...batch([q4Case(c.label, { ...operands(c), weight, scales: f32(c.scales) })]) };
    }),
  };
}

const strided = (xs: Float32Array, stride: number) => xs.filter((_, i) => i % stride === 0);

Deno.test("matmul reference matches the torch goldens", async () => {
  const golden = await loadMatmulGolden();
  ok(golden.meta.torch && golden.mm.length > 0 && golden.q8.length > 0 && golden.q4.length > 0, "the golden has cases");
  const { mm, linear, q8, q4 } = goldenCases(golden);
  for (const { c, cases: [{ args }], tol } of mm) {
    const got = strided(matmul(args), c.stride);
    assertClose(got, f32(c.out64), oneRounding, `torch.mm float64 ${c.label}`);
    // torch's own float32 torch.mm is within the tolerance the kernels are held to.
    assertClose(f32(c.out32), got, tol, `torch.mm float32 ${c.label}`);
  }
  for (const { c, cases: [{ args }] } of linear) {
    assertClose(strided(matmulLinear(args), c.stride), f32(c.out64), oneRounding, `linear float64 ${c.label}`);
  }
  for (const { c, cases: [{ args }] } of q8) assertClose(matmulQ8(args), f32(c.out), oneRounding, `q8 ${c.label}`);
  for (const { c, cases: [{ args }] } of q4) {
    assertClose(matmulQ4G128(args), f32(c.out), oneRounding, `q4 ${c.label}`);
    // gen.py quantized the same weights with the q4 conventions written out in it; quantizeQ4G128 agrees.
    const { codes, scales } = quantizeQ4G128({ x: pattern(c.N * c.K, c.w_seed), rows: c.N, cols: c.K });
    deepStrictEqual([...codes], c.codes, `q4 codes ${c.label}`);
    deepStrictEqual(scales, f32(c.scales), `q4 scales ${c.label}`);
  }
});

gpuTest("matmul GPU matches the torch goldens", async (gpu) => {
  const { mm, linear, q8, q4 } = goldenCases(await loadMatmulGolden());
  for (const { c, cases: [{ args }], tol } of mm) {
    for (const override of ["kernel", "tile64", "kernel_pipelined"].flatMap((e) => variantsOf(KERNELS, e))) {
      assertClose(
        strided(await matmulGpu(gpu, args, { override }), c.stride),
        f32(c.out64),
        tol,
        `${override} ${c.label}`,
      );
    }
  }
  for (const { c, cases: [{ args }], tol } of linear) {
    for (const override of ["linear", "linear_tile64", "linear_pipelined"].flatMap((e) => variantsOf(KERNELS, e))) {
      const got = strided(await matmulLinearGpu(gpu, args, { override }), c.stride);
      assertClose(got, f32(c.out64), tol, `${override} ${c.label}`);
    }
  }
  for (const { c, cases: [{ args }], tol } of q8) {
    for (const override of ["q8row", "q8row_tile64"] as const) {
      assertClose(await matmulQ8Gpu(gpu, args, { override }), f32(c.out), tol, `${override} ${c.label}`);
    }
  }
  for (const { c, cases: [{ args }], tol } of q4) {
    for (const override of ["q4g128", "q4g128_tile64"] as const) {
      assertClose(await matmulQ4G128Gpu(gpu, args, { override }), f32(c.out), tol, `${override} ${c.label}`);
    }
  }
});

// ---- the dp4a products against the f32-activation products -----------------------------------

/** Standard normal values (Box-Muller on the seeded generator). */
function normal(length: number, seed: number, sigma: number): Float32Array {
  const next = seededRandom(seed);
  return Float32Array.from(
    { length },
    () => sigma * Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()),
  );
}

Deno.test("dp4a accuracy: the int8 activations' rounding is the whole difference from matmulQ8 / matmulQ4G128", () => {
  // Realistic data: hidden states ~N(0, 1) with a few outlier channels at 20x (as LLM activations
  // have; they set the row's absmax and so its step), weights ~N(0, 0.02^2) quantised as the engine
  // quantises them. Same weights in both paths, so the only difference is a's quantisation:
  // a_q[k] = a[k] + e[k] with |e[k]| <= s/2 for the row's step s = absmax / 127 (the f32 rounding of s
  // adds at most 127 s 2^-24 per element), hence for every output
  //   |dp4a - f32 path| <= (s/2) (1 + 2^-16) sum_k |w[n, k]|  (+ two f32 roundings of the outputs).
  // With e[k] spread evenly over [-s/2, s/2] and independent of w, the difference has standard
  // deviation s / sqrt(12) * ||w[n]||_2; over M * N outputs, their RMS in those units is within
  // [0.8, 1.2] (1024 samples of a ratio whose expected square is 1).
  const M = 16, N = 64, K = 544; // K a multiple of 4 but not of 128: q4's last group is short
  const a = normal(M * K, 1, 1);
  for (let m = 0; m < M; m++) for (const k of [7, 100, 333]) a[m * K + k] *= 20;
  const w = normal(N * K, 2, 0.02);
  const { packed, scales: aScales } = quantizePacked({ x: a, rows: M, cols: K });
  const q8w = quantize({ x: w, rows: N, cols: K });
  const q4w = quantizeQ4G128({ x: w, rows: N, cols: K });
  const paths = [
    {
      name: "q8",
      dp4a: matmulQ8Dp4a({ a: packed, aScales, weight: packQ8(q8w.codes, N, K), scales: q8w.scales, M, N, K }),
      f32: matmulQ8({ a, weight: packQ8(q8w.codes, N, K), scales: q8w.scales, M, N, K }),
      weightAt: (n: number, k: number) => q8w.codes[n * K + k] * q8w.scales[n],
    },
    {
      name: "q4g128",
      dp4a: matmulQ4G128Dp4a({ a: packed, aScales, weight: packQ4(q4w.codes, N, K), scales: q4w.scales, M, N, K }),
      f32: matmulQ4G128({ a, weight: packQ4(q4w.codes, N, K), scales: q4w.scales, M, N, K }),
      weightAt: (n: number, k: number) =>
        q4w.codes[n * K + k] * q4w.scales[n * Math.ceil(K / 128) + Math.floor(k / 128)],
    },
  ];
  for (const { name, dp4a, f32: f32Path, weightAt } of paths) {
    let sumSquares = 0;
    for (let m = 0; m < M; m++) {
      const step = aScales[m];
      for (let n = 0; n < N; n++) {
        let l1 = 0, l2 = 0;
        for (let k = 0; k < K; k++) {
          l1 += Math.abs(weightAt(n, k));
          l2 += weightAt(n, k) ** 2;
        }
        const i = m * N + n;
        const diff = Math.abs(dp4a[i] - f32Path[i]);
        const bound = (step / 2) * (1 + 2 ** -16) * l1 + 2 ** -23 * (Math.abs(dp4a[i]) + Math.abs(f32Path[i]));
        ok(diff <= bound, `${name} output (${m}, ${n}): |dp4a - f32 path| = ${diff} > ${bound}`);
        sumSquares += (diff / ((step / Math.sqrt(12)) * Math.sqrt(l2))) ** 2;
      }
    }
    const rms = Math.sqrt(sumSquares / (M * N));
    ok(rms > 0.8 && rms < 1.2, `${name}: RMS difference ${rms} standard deviations of the rounding model`);
  }
});
