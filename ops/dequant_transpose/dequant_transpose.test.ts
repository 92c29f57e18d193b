import { deepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  seededRandom,
} from "../../harness/testing.ts";
import { matmul, matmulQ8 } from "../matmul/reference.ts";
import { packQ8 } from "../matvec/reference.ts";
import {
  dequantTranspose,
  type DequantTransposeArgs,
  dequantTransposeGpu,
  dequantTransposePlan,
  KERNELS,
} from "./mod.ts";

const f32 = (xs: number[]) => new Float32Array(xs);
const u32 = (xs: number[]) => new Uint32Array(xs);
// One f32 multiply per element on both sides, correctly rounded: exact agreement is required.
const exact = { atol: 0, rtol: 0 };

/** Arbitrary words: every byte value, -128 included, and non-zero padding. */
function randomWeight(N: number, K: number, seed: number): DequantTransposeArgs {
  const next = seededRandom(seed);
  const weight = Uint32Array.from({ length: N * Math.ceil(K / 4) }, () => Math.floor(next() * 2 ** 32));
  return { weight, scales: randomF32(N, seed + 1, 0.001, 0.02), N, K };
}

Deno.test("dequantTranspose reference: out is [K, N], out[k, n] = code[n, k] * scales[n]", () => {
  // Rows [1, 2, 3] scaled by 0.5 and [-1, 0, 4] scaled by 2.
  const args = { weight: packQ8(new Int32Array([1, 2, 3, -1, 0, 4]), 2, 3), scales: f32([0.5, 2]), N: 2, K: 3 };
  deepStrictEqual([...dequantTranspose(args)], [0.5, -2, 1, 0, 1.5, 8]);
  // Left in the weight's own [N, K] order it would read [0.5, 1, 1.5, -2, 0, 8].
});

Deno.test("dequantTranspose reference: bytes least-significant first, two's complement; padding ignored", () => {
  const column = dequantTranspose({ weight: u32([0x80ff7f01]), scales: f32([1]), N: 1, K: 4 });
  deepStrictEqual([...column], [1, 127, -1, -128]); // MSB first would give [-128, -1, 127, 1]
  const padded = { scales: f32([1]), N: 1, K: 5 };
  deepStrictEqual(
    dequantTranspose({ ...padded, weight: u32([0x04030201, 0xffffff05]) }),
    dequantTranspose({ ...padded, weight: u32([0x04030201, 0x00000005]) }),
  );
});

Deno.test("dequantTranspose reference: the result is matmul's b, so matmul(a, it) is matmulQ8(a, weight)", async () => {
  const [M, N, K] = [3, 5, 7];
  const weight = randomWeight(N, K, 1);
  const a = randomF32(M * K, 2);
  const dense = dequantTranspose(weight);
  const direct = matmulQ8({ a, weight: weight.weight, scales: weight.scales, M, N, K });
  // Only the f32 rounding of each weight differs: |diff| <= 2^-24 sum |a| |w| <= 2^-24 * 7 * 128 * 0.02.
  const tol = { atol: 2 ** -24 * 7 * 128 * 0.02, rtol: 2 ** -23 };
  assertClose(matmul({ a, b: dense, M, N, K }), direct, tol, "matmul of the f32 weight");
  // Had it kept the weight's [N, K] order, the same call would compute something else.
  const untransposed = dense.map((_, i) => dense[(i % K) * N + Math.floor(i / K)]);
  await assertThrowsMessage(() => assertClose(matmul({ a, b: untransposed, M, N, K }), direct, tol), "atol");
});

Deno.test("dequantTranspose reference: bad input throws naming the argument", async () => {
  const weight = u32([1, 2]);
  const scales = f32([1, 1]);
  await assertThrowsMessage(
    () => dequantTranspose({ weight, scales, N: 2, K: 5 }),
    "dequantTranspose: weight must have length N * ceil(K / 4) = 4, got 2",
  );
  await assertThrowsMessage(
    () => dequantTranspose({ weight, scales: f32([1]), N: 2, K: 4 }),
    "scales must have length N = 2",
  );
  await assertThrowsMessage(() => dequantTranspose({ weight, scales, N: 0, K: 4 }), "N must be an integer >= 1, got 0");
  await assertThrowsMessage(
    () => dequantTranspose({ weight, scales, N: 2, K: -4 }),
    "K must be an integer >= 1, got -4",
  );
  await assertThrowsMessage(() => dequantTranspose({ weight, scales, N: 2, K: 3.5 }), "K must be an integer >= 1");
  await assertThrowsMessage(
    () => dequantTranspose({ weight: new Int32Array(2) as unknown as Uint32Array, scales, N: 2, K: 4 }),
    "weight must be a Uint32Array, got Int32Array",
  );
});

gpuTest("dequantTranspose GPU: bad input throws before dispatch", async (gpu) => {
  const weight = u32([1, 2]);
  const scales = f32([1, 1]);
  await assertThrowsMessage(
    () => dequantTransposeGpu(gpu, { weight, scales, N: 2, K: 5 }),
    "dequantTranspose: weight must have length N * ceil(K / 4) = 4, got 2",
  );
  await assertThrowsMessage(
    () => dequantTransposeGpu(gpu, { weight, scales, N: 2.5, K: 4 }),
    "N must be an integer >= 1",
  );
  await assertThrowsMessage(
    () => dequantTransposeGpu(gpu, { weight, scales, N: 2, K: 4 }, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
});

gpuTest(
  "dequantTranspose GPU: a weight or output past maxStorageBufferBindingSize is refused, naming it",
  async (gpu) => {
    // The device seen with a 4 KiB binding limit: a 1,025-word weight takes 4,112 bytes (whole 16-byte
    // units), and a 33 x 32 weight is only 264 words but its f32 output is 4,224 bytes.
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 4096 });
    await assertThrowsMessage(
      () =>
        dequantTransposeGpu(small, { weight: new Uint32Array(1025), scales: new Float32Array(1025), N: 1025, K: 1 }),
      "dequantTranspose/kernel: binding 0 (weight) needs maxStorageBufferBindingSize >= 4112, but this device allows 4096",
    );
    await assertThrowsMessage(
      () => dequantTransposeGpu(small, { weight: new Uint32Array(264), scales: new Float32Array(33), N: 33, K: 32 }),
      "binding 2 (out) needs maxStorageBufferBindingSize >= 4224",
    );
  },
);

gpuTest("dequantTranspose GPU: cost, and a grid past maxComputeWorkgroupsPerDimension folding into y", async (gpu) => {
  deepStrictEqual(dequantTransposePlan(gpu, { N: 3, K: 5 }).cost, { bytes: 4 * (3 * 2 + 3 + 15), flops: 15 });
  // One row of 2^24 columns is 131,072 tiles of 128 x 128, more than one dimension holds.
  const limit = gpu.limits.maxComputeWorkgroupsPerDimension;
  const folded = foldWorkgroups(2 ** 17, limit);
  ok(folded[1] > 1 && folded[0] <= limit);
  deepStrictEqual(dequantTransposePlan(gpu, { N: 1, K: 2 ** 24 }).workgroups, folded);
  deepStrictEqual(dequantTransposePlan(gpu, { N: 300, K: 129 }).workgroups, [6, 1, 1]);
  // Running that many takes seconds on a software adapter, so the limit is lowered instead: a 20 x 600
  // weight is 5 tiles, on a 3 x 2 grid at a limit of 3, whose last workgroup has no tile.
  const limit3 = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 3 });
  const args = randomWeight(20, 600, 3);
  deepStrictEqual(dequantTransposePlan(limit3, args).workgroups, [3, 2, 1]);
  assertClose(await dequantTransposeGpu(limit3, args), dequantTranspose(args), exact, "folded to 3 x 2");
});

// Small and ragged shapes, which move one code at a time; then shapes with the vec4 path (N % 4 == 0,
// ceil(K / 4) % 4 == 0): whole 128 x 128 tiles only, and whole tiles beside tiles cut on both sides
// (K = 269 also pads its last word).
checkAgainstReference(
  "dequantTranspose",
  KERNELS,
  "kernel",
  [[1, 1], [2, 3], [33, 65], [255, 257], [3, 4099], [4099, 2], [100, 1], [256, 384], [388, 269]].map(([N, K], i) => ({
    label: `N=${N} K=${K}`,
    args: randomWeight(N, K, 10 * i),
  })),
  dequantTranspose,
  dequantTransposeGpu,
  exact,
);

/** What goldens/gen.py writes; `out` keeps every `stride`-th element of the [K, N] result. */
interface Golden {
  meta: { torch: string };
  cases: { label: string; N: number; K: number; weight: number[]; scales: number[]; stride: number; out: number[] }[];
}
const loadDequantGolden = () => loadGolden<Golden>(new URL("./goldens/dequant_transpose.json", import.meta.url));
const goldenArgs = (c: Golden["cases"][number]) => ({ weight: u32(c.weight), scales: f32(c.scales), N: c.N, K: c.K });
const strided = (xs: Float32Array, stride: number) => xs.filter((_, i) => i % stride === 0);

Deno.test("dequantTranspose reference matches the torch goldens", async () => {
  const golden = await loadDequantGolden();
  ok(golden.meta.torch && golden.cases.length > 0, "the golden has cases");
  for (const c of golden.cases) {
    assertClose(strided(dequantTranspose(goldenArgs(c)), c.stride), f32(c.out), exact, `torch ${c.label}`);
  }
});

gpuTest("dequantTranspose GPU matches the torch goldens", async (gpu) => {
  for (const c of (await loadDequantGolden()).cases) {
    assertClose(
      strided(await dequantTransposeGpu(gpu, goldenArgs(c)), c.stride),
      f32(c.out),
      exact,
      `torch ${c.label}`,
    );
  }
});
