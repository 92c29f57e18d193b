import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { type KernelPlan, ResidentDevice } from "../../harness/device.ts";
import { foldWorkgroups, workgroupBytesOf } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  gpuTest,
  planningDevice,
  randomF32,
  seededRandom,
} from "../../harness/testing.ts";
import { packQ4, packQ8, quantizeQ4G128 } from "../matvec/reference.ts";
import {
  KERNELS,
  LARGE_TILE_MIN_TILES,
  matmul,
  matmulF16,
  matmulF16Gpu,
  matmulF16Plan,
  matmulGpu,
  matmulLinearPlan,
  matmulPlan,
  matmulQ4G128,
  matmulQ4G128Gpu,
  matmulQ4G128Plan,
  matmulQ8,
  matmulQ8Gpu,
  matmulQ8Plan,
  packF16,
  unpackF16,
} from "./mod.ts";

// Reference facts, refusals, limits and grids. Every kernel against the reference, and the torch
// goldens, are in accuracy.test.ts.

const f32 = (xs: number[]) => new Float32Array(xs);
const u32 = (xs: number[]) => new Uint32Array(xs);
/** Codes cycling through [-max, max] in a scrambled order. */
const codesFor = (length: number, max: number) =>
  Int32Array.from({ length }, (_, i) => ((i * 37) % (2 * max + 1)) - max);

// ---- reference facts --------------------------------------------------------------------------

Deno.test("matmul reference: hand-derived values; b is read as [K, N] (torch.mm), not as [N, K]", () => {
  const a = f32([1, 2, 3, 4]);
  const b = f32([5, 6, 7, 8]);
  deepStrictEqual([...matmul({ a, b, M: 2, N: 2, K: 2 })], [19, 22, 43, 50]);
  // a @ b^T, what reading b as [N, K] would give:
  deepStrictEqual([...matmul({ a, b: f32([5, 7, 6, 8]), M: 2, N: 2, K: 2 })], [17, 23, 39, 53]);
  deepStrictEqual([...matmul({ a: f32([1, 2, 3]), b: f32([1, 0, 0, 1, 1, 1]), M: 1, N: 2, K: 3 })], [4, 5]);
});

Deno.test("matmul reference: sums in f64 and rounds once (an f32 running sum would give 0 here)", () => {
  const a = f32([2 ** 24, 1, -(2 ** 24)]);
  deepStrictEqual([...matmul({ a, b: f32([1, 1, 1]), M: 1, N: 1, K: 3 })], [1]);
  strictEqual(Math.fround(Math.fround(2 ** 24 + 1) - 2 ** 24), 0);
});

Deno.test("matmulQ8 reference: the weight is [N, K] (F.linear), not [K, N]; scales[n] scales output n", () => {
  const weight = packQ8(new Int32Array([1, 2, 3, 4]), 2, 2); // rows [1, 2] and [3, 4]
  const args = { a: f32([1, 10]), weight, scales: f32([1, 1]), M: 1, N: 2, K: 2 };
  deepStrictEqual([...matmulQ8(args)], [21, 43]);
  // a @ W with W read as [K, N] gives [31, 42].
  deepStrictEqual([...matmul({ a: f32([1, 10]), b: f32([1, 2, 3, 4]), M: 1, N: 2, K: 2 })], [31, 42]);
  // One scale per weight row, i.e. per output column, for every row of a.
  deepStrictEqual([...matmulQ8({ ...args, a: f32([1, 10, 2, 0]), M: 2, scales: f32([0.5, 2]) })], [10.5, 86, 1, 12]);
});

Deno.test("matmulQ8 reference: codes are bytes least-significant first, two's complement", () => {
  // Identity activations read the codes back: word 0x80ff7f01 holds 1, 127, -1, -128 in that order.
  const identity = f32([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
  const got = matmulQ8({ a: identity, weight: u32([0x80ff7f01]), scales: f32([1]), M: 4, N: 1, K: 4 });
  deepStrictEqual([...got], [1, 127, -1, -128]);
  // Most-significant byte first would give [-128, -1, 127, 1]; unsigned bytes [1, 127, 255, 128].
  deepStrictEqual([...packQ8(new Int32Array([1, 127, -1]), 1, 3)], [0x00ff7f01]);
});

Deno.test("matmulQ8 and matmulQ4G128 reference: codes in the padding of a row's last word are ignored", () => {
  const a = f32([1, 2, 3, 4, 5]);
  const q8 = { a, scales: f32([1]), M: 1, N: 1, K: 5 };
  deepStrictEqual(matmulQ8({ ...q8, weight: u32([0x04030201, 0xffffff05]) }), f32([55]));
  deepStrictEqual(matmulQ8({ ...q8, weight: u32([0x04030201, 0x00000005]) }), f32([55]));
  const q4 = { a, scales: f32([1]), M: 1, N: 1, K: 5 };
  deepStrictEqual(matmulQ4G128({ ...q4, weight: u32([0x77754321]) }), f32([55]));
});

Deno.test("matmulQ4G128 reference: nibbles least-significant first, two's complement", () => {
  const K = 5;
  const identity = new Float32Array(K * K).map((_, i) => (i % (K + 1) === 0 ? 1 : 0));
  // Nibbles 0x1, 0x7, 0xf, 0x8, 0x9 are 1, 7, -1, -8, -7; offset binary (nibble - 8) would give -7, -1, 7, 0, 1.
  const got = matmulQ4G128({ a: identity, weight: u32([0x98f71]), scales: f32([1]), M: K, N: 1, K });
  deepStrictEqual([...got], [1, 7, -1, -8, -7]);
  deepStrictEqual([...packQ4(new Int32Array([1, 7, -1, -7]), 1, 4)], [0x9f71]);
});

Deno.test("matmulQ4G128 reference: one scale per 128 columns of a row, scales laid out [N, ceil(K/128)]", () => {
  const N = 2, K = 129;
  const weight = packQ4(new Int32Array(N * K).fill(1), N, K);
  const got = matmulQ4G128({ a: new Float32Array(K).fill(1), weight, scales: f32([1, 100, 1000, 10000]), M: 1, N, K });
  // Row 0: 128 columns at scale 1 and one at 100; row 1: 128 at 1000 and one at 10000.
  deepStrictEqual([...got], [228, 138000]);
  // Scales laid out [ceil(K/128), N] would give [128 + 1000, 128 * 100 + 10000]; groups of 32, something else again.
});

Deno.test("packF16 rounds to nearest, ties to even, as torch's .half(); unpackF16 reads the halves back", () => {
  const half = (x: number) => unpackF16(packF16(f32([x])), 1)[0];
  // Ties between two halves go to the even one (1 over 1 + 2^-10; 1 + 2^-9 over 1 + 2^-10; 0 over
  // 2^-24): truncation gives 1 + 2^-10 for the second and ties-away 1 + 2^-10 and 2^-24 for the
  // first and third.
  strictEqual(half(1 + 2 ** -11), 1);
  strictEqual(half(1 + 3 * 2 ** -11), 1 + 2 ** -9);
  strictEqual(half(2 ** -25), 0);
  // Above and below a tie, to the nearest (truncation gives 1 and 0 for these).
  strictEqual(half(1 + 2 ** -11 + 2 ** -20), 1 + 2 ** -10);
  strictEqual(half(3 * 2 ** -26), 2 ** -24);
  strictEqual(half(-(1 + 3 * 2 ** -11)), -(1 + 2 ** -9));
  // The top of the range: 65519 rounds down to the largest half, 65504; 65520, the tie with 65536,
  // overflows to infinity (truncation gives 65504 for both).
  strictEqual(half(65519), 65504);
  strictEqual(half(65520), Infinity);
  strictEqual(half(-1e9), -Infinity);
  ok(Number.isNaN(half(NaN)));
  // Subnormals are kept (multiples of 2^-24 below 2^-14), and one rounds up into the smallest normal.
  strictEqual(half(5 * 2 ** -24), 5 * 2 ** -24);
  strictEqual(half(2 ** -14 - 2 ** -26), 2 ** -14);
  ok(Object.is(half(-(2 ** -26)), -0));
  // The bits: 1 is 0x3c00, -2 0xc000, 0.5 0x3800, 65504 0x7bff, infinity 0x7c00, 2^-24 0x0001.
  deepStrictEqual([...packF16(f32([1, -2, 0.5, 65504, Infinity, 2 ** -24]))], [0xc0003c00, 0x7bff3800, 0x00017c00]);
});

Deno.test("packF16 agrees with V8's Math.f16round on random, tie and edge values", () => {
  const next = seededRandom(7);
  const values: number[] = [0, -0, 2 ** -24, 2 ** -14, 65504, 65520, 65536, Infinity, -Infinity];
  for (let i = 0; i < 20000; i++) {
    // Random f32s over the whole half range and beyond, and exact ties: an odd multiple of half the
    // spacing of the binade [2^(e - 1), 2^e) for a normal e, or of half the subnormals' 2^-24.
    values.push(Math.fround((next() - 0.5) * 2 ** (Math.floor(next() * 48) - 28)));
    const sign = next() < 0.5 ? -1 : 1;
    values.push(sign * ((1024 + Math.floor(next() * 1024)) * 2 + 1) * 2 ** (Math.floor(next() * 30) - 13 - 12));
    values.push(sign * (Math.floor(next() * 1024) * 2 + 1) * 2 ** -25);
  }
  const x = f32(values);
  const got = unpackF16(packF16(x), x.length);
  for (let i = 0; i < x.length; i++) {
    ok(
      Object.is(got[i], Math.f16round(x[i])),
      `${x[i]}: packF16 gives ${got[i]}, Math.f16round ${Math.f16round(x[i])}`,
    );
  }
});

Deno.test("matmulF16 reference: halves low bits first, element e in word e >> 1, padding ignored", () => {
  // a = [[1, 2, 3], [4, 5, 6]] (K = 3, odd): row 1 starts in the high half of word 1.
  const a = packF16(f32([1, 2, 3, 4, 5, 6]));
  deepStrictEqual([...a], [0x40003c00, 0x44004200, 0x46004500]);
  const b = u32([0x3c00 | (0x4000 << 16), 0x7e00 << 16]); // [1, 2, 0] and a NaN padding half (K * N = 3)
  deepStrictEqual([...matmulF16({ a, b, M: 2, N: 1, K: 3 })], [5, 14]);
  // The same product from f32 operands, through matmul.
  deepStrictEqual(
    matmulF16({ a, b, M: 2, N: 1, K: 3 }),
    matmul({ a: f32([1, 2, 3, 4, 5, 6]), b: f32([1, 2, 0]), M: 2, N: 1, K: 3 }),
  );
  // The values are the rounded halves': 1 + 2^-11 is 1.
  deepStrictEqual([...matmulF16({ a: packF16(f32([1 + 2 ** -11])), b: packF16(f32([3])), M: 1, N: 1, K: 1 })], [3]);
});

Deno.test("matmul reference: bad input throws naming the argument", async () => {
  const a = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(
    () => matmul({ a, b: a, M: 2, N: 4, K: 3 }),
    "matmul: b must have length K * N = 12, got 6",
  );
  await assertThrowsMessage(
    () => matmul({ a, b: a.subarray(1), M: 2, N: 2, K: 3 }),
    "b must have length K * N = 6, got 5",
  );
  await assertThrowsMessage(() => matmul({ a, b: a, M: 4, N: 2, K: 3 }), "a must have length M * K = 12, got 6");
  await assertThrowsMessage(() => matmul({ a, b: a, M: 0, N: 1, K: 6 }), "matmul: M must be an integer >= 1, got 0");
  await assertThrowsMessage(() => matmul({ a, b: a, M: 1, N: -1, K: 6 }), "N must be an integer >= 1, got -1");
  await assertThrowsMessage(() => matmul({ a, b: a, M: 1, N: 1, K: 6.5 }), "K must be an integer >= 1, got 6.5");
  await assertThrowsMessage(
    () => matmul({ a, b: [1, 2] as unknown as Float32Array, M: 1, N: 1, K: 6 }),
    "b must be a Float32Array, got Array",
  );
  const q = { a: f32([1, 2, 3]), M: 1, N: 2, K: 3 };
  await assertThrowsMessage(
    () => matmulQ8({ ...q, weight: u32([1, 2, 3]), scales: f32([1, 1]) }),
    "matmulQ8: weight must have length N * ceil(K / 4) = 2, got 3",
  );
  await assertThrowsMessage(
    () => matmulQ8({ ...q, weight: new Int32Array(2) as unknown as Uint32Array, scales: f32([1, 1]) }),
    "weight must be a Uint32Array, got Int32Array",
  );
  await assertThrowsMessage(
    () => matmulQ8({ ...q, weight: u32([1, 2]), scales: f32([1]) }),
    "scales must have length N = 2",
  );
  await assertThrowsMessage(
    () => matmulQ4G128({ ...q, K: 129, a: new Float32Array(129), weight: new Uint32Array(34), scales: f32([1, 1]) }),
    "matmulQ4G128: scales must have length N * ceil(K / 128) = 4, got 2",
  );
  await assertThrowsMessage(
    () => matmulQ4G128({ ...q, weight: u32([1]), scales: f32([1, 1]) }),
    "weight must have length N * ceil(K / 8) = 2, got 1",
  );
  const h = { a: u32([1, 2]), b: u32([1, 2]), M: 1, N: 3, K: 3 };
  await assertThrowsMessage(
    () => matmulF16({ ...h, M: 2 }),
    "matmulF16: a must have length ceil(M * K / 2) = 3, got 2",
  );
  await assertThrowsMessage(
    () => matmulF16({ ...h, b: u32([1]) }),
    "matmulF16: b must have length ceil(K * N / 2) = 5",
  );
  await assertThrowsMessage(
    () => matmulF16({ ...h, a: f32([1, 2]) as unknown as Uint32Array }),
    "matmulF16: a must be a Uint32Array, got Float32Array",
  );
  await assertThrowsMessage(() => matmulF16({ ...h, K: 0 }), "matmulF16: K must be an integer >= 1, got 0");
  await assertThrowsMessage(
    () => packF16([1] as unknown as Float32Array),
    "packF16: x must be a Float32Array, got Array",
  );
  await assertThrowsMessage(
    () => unpackF16(u32([1]), 3),
    "unpackF16: words must have length >= ceil(length / 2) = 2, got 1",
  );
});

// ---- GPU: refusals, limits, grids ------------------------------------------------------------

gpuTest("matmul GPU: bad input throws before dispatch", async (gpu) => {
  const a = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(() => matmulGpu(gpu, { a, b: a, M: 2, N: 4, K: 3 }), "b must have length K * N = 12");
  await assertThrowsMessage(() => matmulGpu(gpu, { a, b: a, M: 1, N: 6, K: 0 }), "K must be an integer >= 1, got 0");
  await assertThrowsMessage(
    () => matmulQ8Gpu(gpu, { a, weight: u32([1]), scales: f32([1, 1]), M: 1, N: 2, K: 6 }),
    "matmulQ8: weight must have length N * ceil(K / 4) = 4, got 1",
  );
  await assertThrowsMessage(
    () => matmulQ4G128Gpu(gpu, { a, weight: u32([1, 2]), scales: f32([1]), M: 1, N: 2, K: 6 }),
    "matmulQ4G128: scales must have length N * ceil(K / 128) = 2, got 1",
  );
  const valid = { a, b: a, M: 2, N: 2, K: 3 };
  await assertThrowsMessage(
    () => matmulGpu(gpu, valid, { override: "q8row" }),
    'matmul: override "q8row" is not a variant of entry point "kernel" or "tile64"',
  );
  await assertThrowsMessage(
    () => matmulGpu(gpu, valid, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
  await assertThrowsMessage(
    () =>
      matmulQ8Gpu(gpu, { a: a.subarray(0, 3), weight: u32([1, 2]), scales: f32([1, 1]), M: 1, N: 2, K: 3 }, {
        override: "kernel",
      }),
    'matmulQ8: override "kernel" is not a variant of entry point "q8row" or "q8row_tile64"',
  );
  await assertThrowsMessage(
    () => matmulF16Gpu(gpu, { a: u32([1]), b: u32([1]), M: 1, N: 3, K: 3 }),
    "matmulF16: a must have length ceil(M * K / 2) = 2, got 1",
  );
  await assertThrowsMessage(
    () => matmulF16Gpu(gpu, { a: u32([1]), b: u32([1]), M: 1, N: 1, K: 1 }, { override: "kernel" }),
    'matmulF16: override "kernel" is not a variant of entry point "f16storage"',
  );
});

gpuTest("matmulF16 GPU: the padding half of an odd-length operand is never read", async (gpu) => {
  // K * N = 3 and M * K = 3: a NaN in either padding half would poison the outputs it reached.
  const [a, b] = [packF16(f32([1, 2, 3])), packF16(f32([4, 5, 6]))];
  a[1] |= 0x7e00 << 16;
  b[1] |= 0x7e00 << 16;
  deepStrictEqual([...(await matmulF16Gpu(gpu, { a, b, M: 1, N: 1, K: 3 }))], [32]);
  deepStrictEqual([...(await matmulF16Gpu(gpu, { a, b, M: 3, N: 3, K: 1 }))], [4, 5, 6, 8, 10, 12, 12, 15, 18]);
});

gpuTest("matmul GPU: an operand past maxStorageBufferBindingSize is refused, naming it, before upload", async (gpu) => {
  // The device seen with a 4 KiB binding limit: 1,025 elements take 4,112 bytes (whole 16-byte units).
  const small = gpu.withLimits({ maxStorageBufferBindingSize: 4096 });
  const [big, bigWeight, N] = [new Float32Array(1025), new Uint32Array(1025), 1025];
  await assertThrowsMessage(
    () => matmulGpu(small, { a: f32([1]), b: big, M: 1, N, K: 1 }),
    "matmul/tile64: binding 1 (b) needs maxStorageBufferBindingSize >= 4112, but this device allows 4096",
  );
  await assertThrowsMessage(
    () => matmulQ8Gpu(small, { a: new Float32Array(4), weight: bigWeight, scales: big, M: 1, N, K: 4 }),
    "matmulQ8/q8row_tile64: binding 1 (weight) needs maxStorageBufferBindingSize >= 4112, but this device allows 4096",
  );
  await assertThrowsMessage(
    () => matmulQ4G128Gpu(small, { a: new Float32Array(8), weight: bigWeight, scales: big, M: 1, N, K: 8 }),
    "matmulQ4G128/q4g128_tile64: binding 1 (weight) needs maxStorageBufferBindingSize >= 4112",
  );
});

gpuTest("matmul GPU: tile choice and costs", (gpu) => {
  strictEqual(LARGE_TILE_MIN_TILES, 256);
  // The entry point by size (each has one variant, its portable kernel); NVIDIA takes the pipelined
  // form of the f32 128 x 128 tile (mod.ts).
  const pipelined = gpu.adapter.target === "nvidia" && gpu.device.limits.maxComputeWorkgroupStorageSize >= 32768;
  const kernel128 = pipelined ? "kernel_pipelined" : "kernel";
  strictEqual(matmulPlan(gpu, { M: 2048, N: 2048, K: 1 }).kernel.variant, kernel128); // 16 x 16 = 256 tiles of 128
  // 240 tiles of 128: under the 256 of the single-stage tile, over the 80 of the pipelined one.
  strictEqual(matmulPlan(gpu, { M: 2048, N: 1920, K: 1 }).kernel.variant, pipelined ? "kernel_pipelined" : "tile64");
  strictEqual(matmulPlan(gpu, { M: 64, N: 2 ** 16, K: 1 }).kernel.variant, "tile64"); // M < 128
  strictEqual(matmulPlan(gpu, { M: 2048, N: 2048, K: 1 }, { override: "tile64" }).kernel.variant, "tile64");
  strictEqual(matmulQ8Plan(gpu, { M: 512, N: 14336, K: 4 }).kernel.variant, "q8row"); // 4 x 112 tiles of 128
  strictEqual(matmulQ8Plan(gpu, { M: 64, N: 14336, K: 4 }).kernel.variant, "q8row_tile64");
  strictEqual(matmulQ4G128Plan(gpu, { M: 512, N: 14336, K: 8 }).kernel.variant, "q4g128");
  strictEqual(matmulQ4G128Plan(gpu, { M: 512, N: 1024, K: 8 }).kernel.variant, "q4g128_tile64"); // 32 tiles of 128
  deepStrictEqual(matmulPlan(gpu, { M: 2048, N: 2048, K: 1 }).workgroups, [256, 1, 1]);
  deepStrictEqual(
    matmulPlan(gpu, { M: 2048, N: 1920, K: 1 }).workgroups,
    pipelined ? [16 * 15, 1, 1] : [32 * 30, 1, 1],
  );
  deepStrictEqual(matmulPlan(gpu, { M: 3, N: 5, K: 7 }).cost, { bytes: 4 * (21 + 35 + 15), flops: 2 * 105 });
  deepStrictEqual(matmulQ8Plan(gpu, { M: 3, N: 5, K: 7 }).cost, { bytes: 4 * (21 + 10 + 5 + 15), flops: 2 * 105 });
  // matmulF16 has one tile, 128 x 128, whatever the size; its operands take two bytes an element.
  strictEqual(matmulF16Plan(gpu, { M: 64, N: 64, K: 1 }).kernel.variant, "f16storage");
  deepStrictEqual(matmulF16Plan(gpu, { M: 2048, N: 1920, K: 1 }).workgroups, [16 * 15, 1, 1]);
  deepStrictEqual(matmulF16Plan(gpu, { M: 3, N: 5, K: 7 }).cost, { bytes: 2 * (21 + 35) + 4 * 15, flops: 2 * 105 });
  deepStrictEqual(matmulF16Plan(gpu, { M: 3, N: 5, K: 7 }).bindings.map((b) => b.length), [11, 18, 15]);
  deepStrictEqual(matmulQ4G128Plan(gpu, { M: 3, N: 5, K: 129 }).cost, {
    bytes: 4 * (3 * 129 + 5 * 17 + 5 * 2 + 15),
    flops: 2 * 3 * 5 * 129,
  });
});

gpuTest(
  "matmul GPU: a grid past maxComputeWorkgroupsPerDimension folds into y and every tile is computed",
  async (gpu) => {
    // One row of 2^23 columns is 131,072 tiles of 64, more than one dimension holds.
    const limit = gpu.limits.maxComputeWorkgroupsPerDimension;
    const folded = foldWorkgroups(2 ** 17, limit);
    ok(folded[1] > 1 && folded[0] <= limit);
    deepStrictEqual(matmulPlan(gpu, { M: 1, N: 2 ** 23, K: 1 }).workgroups, folded);
    deepStrictEqual(matmulQ8Plan(gpu, { M: 1, N: 2 ** 23, K: 4 }).workgroups, folded);
    deepStrictEqual(matmulQ4G128Plan(gpu, { M: 1, N: 2 ** 23, K: 8 }).workgroups, folded);
    deepStrictEqual(matmulF16Plan(gpu, { M: 1, N: 2 ** 24, K: 1 }).workgroups, folded); // 2^17 tiles of 128
    // Running that many takes seconds on a software adapter, so the limit is lowered instead: 300
    // columns are 5 tiles of 64, on a 3 x 2 grid at a limit of 3, and 3 tiles of 128, on 2 x 2 at a
    // limit of 2; each grid's last workgroup has no tile.
    const [M, N, K] = [1, 300, 9];
    const dense = { a: randomF32(M * K, 1), b: randomF32(K * N, 2), M, N, K };
    const q8 = {
      a: dense.a,
      weight: packQ8(codesFor(N * K, 127), N, K),
      scales: randomF32(N, 3, 0.001, 0.02),
      M,
      N,
      K,
    };
    const q4Weight = quantizeQ4G128({ x: randomF32(N * K, 4), rows: N, cols: K });
    const q4 = { a: dense.a, weight: packQ4(q4Weight.codes, N, K), scales: q4Weight.scales, M, N, K };
    const f16 = { a: packF16(dense.a), b: packF16(dense.b), M, N, K };
    const [limit2, limit3] = [2, 3].map((n) => gpu.withLimits({ maxComputeWorkgroupsPerDimension: n }));
    const [kernel, q8row, q4g128] = (["kernel", "q8row", "q4g128"] as const).map((override) => ({ override }));
    const runs: [KernelPlan, () => Promise<Float32Array>, Float32Array][] = [
      [matmulPlan(limit2, dense, kernel), () => matmulGpu(limit2, dense, kernel), matmul(dense)],
      [matmulPlan(limit3, dense), () => matmulGpu(limit3, dense), matmul(dense)],
      [matmulQ8Plan(limit2, q8, q8row), () => matmulQ8Gpu(limit2, q8, q8row), matmulQ8(q8)],
      [matmulQ8Plan(limit3, q8), () => matmulQ8Gpu(limit3, q8), matmulQ8(q8)],
      [matmulQ4G128Plan(limit2, q4, q4g128), () => matmulQ4G128Gpu(limit2, q4, q4g128), matmulQ4G128(q4)],
      [matmulQ4G128Plan(limit3, q4), () => matmulQ4G128Gpu(limit3, q4), matmulQ4G128(q4)],
      [matmulF16Plan(limit2, f16), () => matmulF16Gpu(limit2, f16), matmulF16(f16)],
    ];
    for (const [plan, run, expected] of runs) {
      deepStrictEqual(plan.workgroups, plan.kernel.source.includes("const TILE_M = 128u;") ? [2, 2, 1] : [3, 2, 1]);
      // 9 terms with |a| <= 1 and |w| <= 2.54: accuracy.test.ts's bound, 6 * 2^-24 * 23 = 8.2e-6, rounded up.
      assertClose(await run(), expected, { atol: 1e-5, rtol: 2 ** -23 }, `${plan.kernel.variant} folded`);
    }
  },
);

Deno.test("matmul kernels: each fits WebGPU's default 16 KiB of workgroup memory but the pipelined ones, which need 32 KiB", () => {
  strictEqual(workgroupBytesOf(KERNELS.kernel, "kernel"), 16384);
  for (const [variant, source] of Object.entries(KERNELS)) {
    const bytes = workgroupBytesOf(source, variant);
    if (variant.includes("_pipelined")) {
      strictEqual(bytes, 32768, variant);
    } else {
      ok(bytes > 0 && bytes <= 16384, `${variant}: ${bytes} bytes of workgroup memory`);
    }
  }
});

Deno.test("matmul: the pipelined tiles need 32 KiB of workgroup memory: taken on NVIDIA only where granted, refused by name when overridden", async () => {
  const large = { M: 2048, N: 2048, K: 16 };
  strictEqual(matmulLinearPlan(planningDevice(32768, "nvidia"), large).kernel.variant, "linear_pipelined");
  strictEqual(matmulLinearPlan(planningDevice(16384, "nvidia"), large).kernel.variant, "linear");
  strictEqual(matmulPlan(planningDevice(16384, "nvidia"), large).kernel.variant, "kernel");
  strictEqual(matmulLinearPlan(planningDevice(32768, "apple"), large).kernel.variant, "linear");
  // Their tile rule: from 80 tiles of 128 x 128 (Qwen3-4B's o_proj over 512 rows: 4 x 20), not at 76 or 32.
  for (
    const [target, N, variant] of [
      ["nvidia", 2560, "linear_pipelined"],
      ["nvidia", 2432, "linear_tile64"],
      ["nvidia", 1024, "linear_tile64"],
      ["apple", 2560, "linear_tile64"],
    ] as const
  ) {
    strictEqual(matmulLinearPlan(planningDevice(32768, target), { M: 512, N, K: 16 }).kernel.variant, variant);
  }
  await assertThrowsMessage(
    () => matmulLinearPlan(planningDevice(16384, "apple"), large, { override: "linear_pipelined" }),
    "matmulLinear/linear_pipelined: workgroup memory needs maxComputeWorkgroupStorageSize >= 32768, but this device allows 16384",
  );
});

gpuTest("matmul GPU: with no target variant, an NVIDIA device resolves the portable kernels", (gpu) => {
  const nvidia = new ResidentDevice(gpu.device, { ...gpu.adapter, target: "nvidia" }, false, false);
  const large = { M: 2048, N: 2048, K: 16 };
  const plans = [matmulPlan, matmulQ8Plan, matmulQ4G128Plan, matmulF16Plan].map((plan) => plan(nvidia, large));
  for (const plan of plans) {
    strictEqual(plan.kernel.rung, "portable", plan.kernel.variant);
  }
  // The 128 x 128 f32 tiles are the pipelined ones there (this device grants their 32 KiB); elsewhere
  // the single-stage ones, and the 64 x 64 tile below the tile rule's size either way.
  deepStrictEqual(matmulPlan(nvidia, large).kernel.tried, ["kernel_pipelined.nvidia", "kernel_pipelined"]);
  strictEqual(matmulLinearPlan(nvidia, large).kernel.variant, "linear_pipelined");
  strictEqual(matmulLinearPlan(nvidia, { ...large, bias: true }).kernel.variant, "linear_fused_pipelined");
  strictEqual(matmulQ8Plan(nvidia, large).kernel.variant, "q8row");
  strictEqual(matmulLinearPlan(nvidia, { M: 512, N: 512, K: 16 }).kernel.variant, "linear_tile64");
  const amd = new ResidentDevice(gpu.device, { ...gpu.adapter, target: "amd" }, false, false);
  strictEqual(matmulPlan(amd, large).kernel.variant, "kernel");
  strictEqual(matmulLinearPlan(amd, { ...large, bias: true }).kernel.variant, "linear_fused");
});
