import { deepStrictEqual, notStrictEqual, strictEqual } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import { foldWorkgroups } from "../../harness/limits.ts";
import { axpy, type AxpyArgs, axpyGpu, axpyInplaceGpu, axpyInplacePlan, axpyPlan, KERNELS } from "./mod.ts";

interface GoldenCase {
  a: number;
  x: number[];
  y: number[];
  out: number[];
}
interface Golden {
  meta: { torch: string; rounds_once: GoldenCase[] };
  cases: GoldenCase[];
}
const golden = () => loadGolden<Golden>(new URL("./goldens/axpy.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);
const argsOf = (c: GoldenCase): AxpyArgs => ({ a: c.a, x: f32(c.x), y: f32(c.y) });
// Every result is the f32 nearest the exact y + a * x, on every side: agreement is exact.
const exact = { atol: 0, rtol: 0 };

// Inputs where rounding once and rounding twice disagree.
const TENTH = Math.fround(0.1);
const CANCELLING = { a: TENTH, x: f32([3]), y: f32([-Math.fround(0.3)]) };
const MIDPOINT = { a: 11865889 * 2 ** -24, x: f32([11860678 * 2 ** -47]), y: f32([1]) };

Deno.test("axpy reference: hand-derived values", () => {
  deepStrictEqual([...axpy({ a: 2, x: f32([1, 2, -0.5]), y: f32([10, 20, 1]) })], [12, 24, 0]);
  deepStrictEqual([...axpy({ a: -0.5, x: f32([4]), y: f32([0.25]) })], [-1.75]);
  deepStrictEqual([...axpy({ a: 1, x: f32([]), y: f32([]) })], []);
});

Deno.test("axpy reference: rounds once (f32(0.1) * 3 - f32(0.3) is -2^-27, not 0)", () => {
  deepStrictEqual([...axpy(CANCELLING)], [-(2 ** -27)]);
  // Multiply-then-add rounds the product first and cancels to exactly 0.
  strictEqual(Math.fround(Math.fround(TENTH * 3) - Math.fround(0.3)), 0);
});

Deno.test("axpy reference: rounds once where the f64 sum lands on an f32 midpoint", () => {
  deepStrictEqual([...axpy(MIDPOINT)], [1 + 2 ** -23]);
  // a * x is exact in f64, but y + a * x rounds to 1 + 2^-24 there, and then to even: 1.
  strictEqual(Math.fround(MIDPOINT.a * MIDPOINT.x[0] + 1), 1);
});

Deno.test("axpy reference: a is rounded to f32 first, as torch casts alpha", () => {
  deepStrictEqual([...axpy({ ...CANCELLING, a: 0.1 })], [-(2 ** -27)]);
  // With a kept in f64 the answer differs.
  notStrictEqual(Math.fround(0.1 * 3 - Math.fround(0.3)), -(2 ** -27));
});

Deno.test("axpy reference: bad input throws naming the argument", async () => {
  const x = f32([1, 2, 3]);
  await assertThrowsMessage(() => axpy({ a: 1, x, y: f32([1, 2]) }), "y must have length x.length = 3");
  await assertThrowsMessage(() => axpy({ a: NaN, x, y: x }), "a must be a finite number, got NaN");
  await assertThrowsMessage(() => axpy({ a: Infinity, x, y: x }), "a must be a finite number");
  await assertThrowsMessage(() => axpy({ a: 1e39, x, y: x }), "a must be finite in f32");
  await assertThrowsMessage(() => axpy({ a: "2" as unknown as number, x, y: x }), "a must be a finite number");
  await assertThrowsMessage(
    () => axpy({ a: 1, x: [1, 2, 3] as unknown as Float32Array, y: x }),
    "x must be a Float32Array, got Array",
  );
  await assertThrowsMessage(
    () => axpy({ a: 1, x, y: new Int32Array(3) as unknown as Float32Array }),
    "y must be a Float32Array, got Int32Array",
  );
});

Deno.test(`axpy reference matches torch goldens`, async () => {
  const { meta, cases } = await golden();
  for (const c of cases) assertClose(axpy(argsOf(c)), f32(c.out), exact, `torch ${meta.torch} n=${c.x.length}`);
  // torch.add's own float32 answer where rounding once and twice disagree.
  for (const c of meta.rounds_once) assertClose(axpy(argsOf(c)), f32(c.out), exact, `torch.add a=${c.a} x=${c.x[0]}`);
});

gpuTest("axpy GPU: both entry points match torch goldens", async (gpu) => {
  const { meta, cases } = await golden();
  for (const c of [...cases, ...meta.rounds_once]) {
    assertClose(await axpyGpu(gpu, argsOf(c)), f32(c.out), exact, `kernel n=${c.x.length}`);
    assertClose(await axpyInplaceGpu(gpu, argsOf(c)), f32(c.out), exact, `inplace n=${c.x.length}`);
  }
});

gpuTest("axpy GPU: rounds once on this device, whether or not its fma() is fused", async (gpu) => {
  for (const fn of [axpyGpu, axpyInplaceGpu]) {
    deepStrictEqual([...await fn(gpu, CANCELLING)], [-(2 ** -27)]);
    deepStrictEqual([...await fn(gpu, MIDPOINT)], [1 + 2 ** -23]);
  }
});

gpuTest("axpy GPU: inplace binds y once, read_write, and updates resident y", async (gpu) => {
  const n = 300;
  const plan = axpyInplacePlan(gpu, { a: 0.5, n });
  deepStrictEqual(plan.bindings.map((b) => [b.name, b.role]), [["x", "input"], ["y", "inout"]]);
  const x = randomF32(n, 1), y0 = randomF32(n, 2);
  const xt = gpu.upload(x, "x"), yt = gpu.upload(y0, "y");
  try {
    await gpu.submit([plan, [xt, yt]], [plan, [xt, yt]]);
    const twice = axpy({ a: 0.5, x, y: axpy({ a: 0.5, x, y: y0 }) });
    assertClose(await gpu.read(yt), twice, exact, "y after two in-place updates");
  } finally {
    xt.buffer.destroy();
    yt.buffer.destroy();
  }
});

gpuTest("axpy GPU: one buffer bound as both y and out of kernel is rejected, not computed", async (gpu) => {
  const x = gpu.upload(f32([1, 2, 3]), "x"), y = gpu.upload(f32([1, 1, 1]), "y");
  try {
    await assertThrowsMessage(
      () => gpu.submit([axpyPlan(gpu, { a: 2, n: 3 }), [x, y, y]]),
      "WebGPU rejected axpy/kernel",
    );
  } finally {
    x.buffer.destroy();
    y.buffer.destroy();
  }
});

gpuTest("axpy GPU: plans fold grids over 65,535 workgroups and state their cost", (gpu) => {
  const n = 65_535 * 256 + 1;
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  for (const plan of [axpyPlan(gpu, { a: 1, n }), axpyInplacePlan(gpu, { a: 1, n })]) {
    deepStrictEqual(plan.workgroups, foldWorkgroups(Math.ceil(n / 256), max));
    deepStrictEqual(plan.cost, { bytes: 12 * n, flops: 2 * n });
  }
});

gpuTest("axpy GPU: bad input throws before dispatch", async (gpu) => {
  const x = f32([1, 2, 3]);
  for (const fn of [axpyGpu, axpyInplaceGpu]) {
    await assertThrowsMessage(() => fn(gpu, { a: 1, x, y: f32([1]) }), "y must have length x.length = 3");
    await assertThrowsMessage(() => fn(gpu, { a: NaN, x, y: x }), "a must be a finite number");
    await assertThrowsMessage(() => fn(gpu, { a: -1e39, x, y: x }), "a must be finite in f32");
  }
  await assertThrowsMessage(
    () => axpyGpu(gpu, { a: 1, x, y: x }, { override: "inplace" }),
    'override "inplace" is not a variant of entry point "kernel"',
  );
});

// Random operands over the sizes that straddle the 256-wide workgroup, plus operands whose sum
// nearly cancels (where the rounding of the product decides the answer) and operands spread over
// 2^-40 .. 2^40, so exponents are far apart.
const sizes = [1, 255, 256, 257, 4099];
function cases(): { label: string; args: AxpyArgs }[] {
  const random = sizes.map((n) => ({ label: `n=${n}`, args: { a: 0.7, x: randomF32(n, n), y: randomF32(n, n + 1) } }));
  const x = randomF32(1000, 3);
  const cancelling = { a: 0.3, x, y: x.map((v, i) => -Math.fround(0.3) * v * (1 + (i % 7) * 1e-7)) };
  const wide = randomF32(1000, 4).map((v, i) => v * 2 ** ((i % 81) - 40));
  return [
    ...random,
    { label: "cancelling n=1000", args: cancelling },
    { label: "wide exponents n=1000", args: { a: -3.5, x: wide, y: wide.slice().reverse() } },
  ];
}
checkAgainstReference("axpy", KERNELS, "kernel", cases(), axpy, axpyGpu, exact);
checkAgainstReference("axpy", KERNELS, "inplace", cases(), axpy, axpyInplaceGpu, exact);
