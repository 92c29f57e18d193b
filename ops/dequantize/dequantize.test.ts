import { deepStrictEqual, notStrictEqual, ok, strictEqual } from "node:assert/strict";
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
import { dequantize, type DequantizeArgs, dequantizeGpu, dequantizePlan, KERNELS } from "./mod.ts";
import type { DequantizeVariant } from "./kernels.gen.ts";

interface GoldenCase {
  M: number;
  N: number;
  acc: number[];
  aScales: number[];
  wScales: number[];
  out: number[];
  out_f32: number[];
}
interface Golden {
  meta: { torch: string };
  cases: GoldenCase[];
}
const golden = () => loadGolden<Golden>(new URL("./goldens/dequantize.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);
const argsOf = (c: GoldenCase): DequantizeArgs => ({
  acc: new Int32Array(c.acc),
  aScales: f32(c.aScales),
  wScales: f32(c.wScales),
  M: c.M,
  N: c.N,
});

// The conversion and both products are each correctly rounded f32 operations, in the same order
// on every side (torch's float32 expression included): agreement is exact.
const exact = { atol: 0, rtol: 0 };
const SENTINEL = 12345;
// Against the exact product rounded once (torch in float64): three roundings on one side and one
// on the other, each within 2^-24 relative, so within 4 * 2^-24 = 2^-22.
const versusExact = { atol: 0, rtol: 2.5e-7 };

Deno.test("dequantize reference: both scales are applied", () => {
  const args = { acc: new Int32Array([10, -4, 6, 0]), aScales: f32([0.5, 2]), wScales: f32([0.25, 2]), M: 2, N: 2 };
  const both = [...dequantize(args)];
  deepStrictEqual(both, [1.25, -4, 3, 0]);
  // Applying only one of them gives something else.
  const ones = f32([1, 1]);
  deepStrictEqual([...dequantize({ ...args, wScales: ones })], [5, -2, 12, 0]);
  deepStrictEqual([...dequantize({ ...args, aScales: ones })], [2.5, -8, 1.5, 0]);
});

Deno.test("dequantize reference: (acc * aScales) * wScales, left to right, each product rounded", () => {
  const a = Math.fround(0.01), w = Math.fround(0.03);
  const [out] = dequantize({ acc: new Int32Array([1001]), aScales: f32([a]), wScales: f32([w]), M: 1, N: 1 });
  strictEqual(out, 0.3003000020980835);
  strictEqual(out, Math.fround(Math.fround(1001 * a) * w));
  // The scales multiplied first give a different f32.
  strictEqual(Math.fround(1001 * Math.fround(a * w)), 0.3002999722957611);
});

Deno.test("dequantize reference: acc is rounded to the nearest f32, ties to even", () => {
  const acc = new Int32Array([16777217, 16777219, -16777219, 2147483647, -2147483648, 33554435]);
  const out = dequantize({ acc, aScales: f32([1]), wScales: new Float32Array(6).fill(1), M: 1, N: 6 });
  deepStrictEqual([...out], [16777216, 16777220, -16777220, 2147483648, -2147483648, 33554436]);
  // 16777219 lies between the f32 values 16777218 and 16777220; rounding toward zero, which WGSL's
  // f32(i32) is allowed to do, gives the other one.
  strictEqual(Math.fround(16777218), 16777218);
  notStrictEqual(out[1], 16777218);
});

Deno.test("dequantize reference: bad input throws naming the argument", async () => {
  const acc = new Int32Array(6), aScales = f32([1, 1]), wScales = f32([1, 1, 1]);
  await assertThrowsMessage(
    () => dequantize({ acc, aScales, wScales, M: 3, N: 2 }),
    "aScales must have length M = 3, got 2",
  );
  await assertThrowsMessage(
    () => dequantize({ acc, aScales, wScales: f32([1]), M: 2, N: 3 }),
    "wScales must have length N = 3",
  );
  await assertThrowsMessage(
    () => dequantize({ acc: new Int32Array(5), aScales, wScales, M: 2, N: 3 }),
    "acc must have length M * N = 6, got 5",
  );
  await assertThrowsMessage(
    () => dequantize({ acc, aScales, wScales, M: 0, N: 3 }),
    "M must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(() => dequantize({ acc, aScales, wScales, M: 2, N: 2.5 }), "N must be an integer >= 1");
  await assertThrowsMessage(
    () => dequantize({ acc: new Float32Array(6) as unknown as Int32Array, aScales, wScales, M: 2, N: 3 }),
    /acc must be an? Int32Array, got Float32Array/,
  );
});

// torch's acc.float() * a_scales[:, None] * w_scales[None, :] at non-finite scales, by IEEE rules:
// row 0 (a scale of NaN) is NaN throughout; row 1 meets w_scales [Infinity, -Infinity, 2] with
// accumulators [0, 5, -3] and a scale of 2: 0 * 2 * Infinity = NaN, 10 * -Infinity = -Infinity,
// -6 * 2 = -12. Refusing them is the alternative.
const NON_FINITE = {
  acc: new Int32Array([7, 1, 1, 0, 5, -3]),
  aScales: f32([NaN, 2]),
  wScales: f32([Infinity, -Infinity, 2]),
  M: 2,
  N: 3,
};
const NON_FINITE_OUT = [NaN, NaN, NaN, NaN, -Infinity, -12];

Deno.test("dequantize reference: NaN and ±Infinity scales propagate as torch's expression gives", () => {
  assertClose(dequantize(NON_FINITE), NON_FINITE_OUT, { atol: 0, rtol: 0 }, "non-finite scales");
});

Deno.test("dequantize reference matches torch goldens", async () => {
  const { meta, cases } = await golden();
  for (const c of cases) {
    const out = dequantize(argsOf(c));
    assertClose(out, f32(c.out_f32), exact, `torch ${meta.torch} float32, M=${c.M} N=${c.N}`);
    assertClose(out, f32(c.out), versusExact, `torch ${meta.torch} float64, M=${c.M} N=${c.N}`);
  }
});

gpuTest("dequantize GPU matches torch goldens", async (gpu) => {
  for (const c of (await golden()).cases) {
    const out = await dequantizeGpu(gpu, argsOf(c));
    assertClose(out, f32(c.out_f32), exact, `float32, M=${c.M} N=${c.N}`);
    assertClose(out, f32(c.out), versusExact, `float64, M=${c.M} N=${c.N}`);
  }
});

gpuTest("dequantize GPU: plans fold grids over 65,535 workgroups and state their cost", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  for (const [M, N] of [[2, 3], [4096, 4099]]) {
    const plan = dequantizePlan(gpu, { M, N }, { override: "kernel" });
    deepStrictEqual(plan.workgroups, foldWorkgroups(Math.ceil((M * N) / 256), max));
    deepStrictEqual(plan.cost, { bytes: 8 * M * N + 4 * (M + N), flops: 2 * M * N });
  }
});

gpuTest(
  "dequantize plan (kernel.nvidia): a block of 4096 elements per workgroup, at most 65,535, never folded",
  (gpu) => {
    const max = gpu.limits.maxComputeWorkgroupsPerDimension;
    const nvidia = { override: "kernel.nvidia" } as const;
    deepStrictEqual(dequantizePlan(gpu, { M: 8192, N: 8192 }, nvidia).workgroups, [16_384, 1, 1]);
    deepStrictEqual(dequantizePlan(gpu, { M: 2, N: 3 }, nvidia).workgroups, [1, 1, 1]);
    deepStrictEqual(dequantizePlan(gpu, { M: 65_536, N: 8192 }, nvidia).workgroups, [max, 1, 1]);
    deepStrictEqual(dequantizePlan(gpu, { M: 4096, N: 4099 }, nvidia).cost, {
      bytes: 8 * 4096 * 4099 + 4 * (4096 + 4099),
      flops: 2 * 4096 * 4099,
    });
  },
);

gpuTest(
  "dequantize GPU (kernel.nvidia): any grid covers the output once, and nothing is written past the end",
  async (gpu) => {
    // N a multiple of 4 (one row per vec4) and not (with a tail of M * N % 4 elements).
    for (const { label, args } of cases().filter(({ args }) => args.M * args.N > 1000)) {
      const plan = dequantizePlan(gpu, args, { override: "kernel.nvidia" });
      const total = args.M * args.N;
      for (const workgroups of [[1, 1, 1], [2, 2, 1], [9, 1, 1]] as const) {
        const tensors = [gpu.upload(args.acc), gpu.upload(args.aScales), gpu.upload(args.wScales)];
        const out = gpu.upload(new Float32Array(total + 64).fill(SENTINEL), "out");
        try {
          await gpu.submit([{ ...plan, workgroups }, [...tensors, out]]);
          const written = await gpu.read(out);
          assertClose(written.subarray(0, total), dequantize(args), exact, `${label} on [${workgroups}]`);
          ok(written.subarray(total).every((v) => v === SENTINEL), `${label} on [${workgroups}]: a write past the end`);
        } finally {
          for (const t of [...tensors, out]) t.buffer.destroy();
        }
      }
    }
  },
);

gpuTest("dequantize GPU: NaN and ±Infinity scales propagate as torch's expression gives", async (gpu) => {
  for (const variant of Object.keys(KERNELS) as DequantizeVariant[]) {
    const out = await dequantizeGpu(gpu, NON_FINITE, { override: variant });
    assertClose(out, NON_FINITE_OUT, { atol: 0, rtol: 0 }, variant);
  }
});

gpuTest("dequantize GPU: bad input throws before dispatch", async (gpu) => {
  const acc = new Int32Array(6), aScales = f32([1, 1]), wScales = f32([1, 1, 1]);
  await assertThrowsMessage(
    () => dequantizeGpu(gpu, { acc, aScales, wScales, M: 3, N: 2 }),
    "aScales must have length M = 3",
  );
  await assertThrowsMessage(
    () => dequantizeGpu(gpu, { acc, aScales, wScales, M: -1, N: 3 }),
    "M must be an integer >= 1",
  );
  await assertThrowsMessage(
    () => dequantizeGpu(gpu, { acc, aScales, wScales, M: 2, N: 3 }, { override: "kernel.soc" as never }),
    'override "kernel.soc" is not a variant of entry point "kernel"',
  );
});

// Accumulators over the whole int32 range (most beyond 2^24, where the conversion rounds) and
// small ones, with scales of either sign; shapes whose element counts straddle the 256-wide
// workgroup, a long row and many short rows; then N a multiple of 4 (kernel.nvidia's one-row
// vec4s): rows of one vec4, of 64, and rows cut across its 4096-element blocks.
function cases(): { label: string; args: DequantizeArgs }[] {
  const shapes = [[1, 1], [1, 255], [1, 256], [3, 257], [2, 4099], [300, 7], [5, 4], [33, 64], [3, 4100]];
  return shapes.map(([M, N]) => {
    const next = seededRandom(M * 7919 + N);
    const acc = Int32Array.from({ length: M * N }, (_, i) => {
      const v = Math.floor(next() * 2 ** 32) - 2 ** 31;
      return i % 2 === 0 ? v : v >> 12;
    });
    acc[0] = -(2 ** 31);
    const label = `M=${M} N=${N}`;
    return {
      label,
      args: { acc, aScales: randomF32(M, M, 1e-4, 1e-2), wScales: randomF32(N, N + 1, -1e-2, 1e-2), M, N },
    };
  });
}
checkAgainstReference("dequantize", KERNELS, "kernel", cases(), dequantize, dequantizeGpu, exact);
