import { deepStrictEqual, notStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import { axpy, type AxpyArgs, axpyGpu, axpyInplaceGpu, axpyInplacePlan, axpyPlan, KERNELS } from "./mod.ts";

interface GoldenCase {
  alpha: number;
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
const argsOf = (c: GoldenCase): AxpyArgs => ({ alpha: c.alpha, x: f32(c.x), y: f32(c.y) });
// Every result is the f32 nearest the exact y + a * x, on every side: agreement is exact.
const exact = { atol: 0, rtol: 0 };

// Inputs where rounding once and rounding twice disagree.
const TENTH = Math.fround(0.1);
const CANCELLING = { alpha: TENTH, x: f32([3]), y: f32([-Math.fround(0.3)]) };
const MIDPOINT = { alpha: 11865889 * 2 ** -24, x: f32([11860678 * 2 ** -47]), y: f32([1]) };

Deno.test("axpy reference: hand-derived values", () => {
  deepStrictEqual([...axpy({ alpha: 2, x: f32([1, 2, -0.5]), y: f32([10, 20, 1]) })], [12, 24, 0]);
  deepStrictEqual([...axpy({ alpha: -0.5, x: f32([4]), y: f32([0.25]) })], [-1.75]);
  deepStrictEqual([...axpy({ alpha: 1, x: f32([]), y: f32([]) })], []);
});

Deno.test("axpy reference: rounds once (f32(0.1) * 3 - f32(0.3) is -2^-27, not 0)", () => {
  deepStrictEqual([...axpy(CANCELLING)], [-(2 ** -27)]);
  // Multiply-then-add rounds the product first and cancels to exactly 0.
  strictEqual(Math.fround(Math.fround(TENTH * 3) - Math.fround(0.3)), 0);
});

Deno.test("axpy reference: rounds once where the f64 sum lands on an f32 midpoint", () => {
  deepStrictEqual([...axpy(MIDPOINT)], [1 + 2 ** -23]);
  // a * x is exact in f64, but y + a * x rounds to 1 + 2^-24 there, and then to even: 1.
  strictEqual(Math.fround(MIDPOINT.alpha * MIDPOINT.x[0] + 1), 1);
});

Deno.test("axpy reference: alpha is rounded to f32 first, as torch casts alpha", () => {
  deepStrictEqual([...axpy({ ...CANCELLING, alpha: 0.1 })], [-(2 ** -27)]);
  // With a kept in f64 the answer differs.
  notStrictEqual(Math.fround(0.1 * 3 - Math.fround(0.3)), -(2 ** -27));
});

Deno.test("axpy reference: bad input throws naming the argument", async () => {
  const x = f32([1, 2, 3]);
  await assertThrowsMessage(() => axpy({ alpha: 1, x, y: f32([1, 2]) }), "y must have length x.length = 3");
  await assertThrowsMessage(
    () => axpy({ alpha: NaN, x, y: x }),
    "alpha must be a finite f32 (|alpha| <= 3.4028234663852886e+38), got NaN",
  );
  await assertThrowsMessage(() => axpy({ alpha: Infinity, x, y: x }), "alpha must be a finite f32");
  await assertThrowsMessage(
    () => axpy({ alpha: 1e39, x, y: x }),
    "axpy: alpha must be a finite f32 (|alpha| <= 3.4028234663852886e+38), got 1e+39",
  );
  await assertThrowsMessage(() => axpy({ alpha: "2" as unknown as number, x, y: x }), "alpha must be a finite f32");
  await assertThrowsMessage(
    () => axpy({ alpha: 1, x: [1, 2, 3] as unknown as Float32Array, y: x }),
    "x must be a Float32Array, got Array",
  );
  await assertThrowsMessage(
    () => axpy({ alpha: 1, x, y: new Int32Array(3) as unknown as Float32Array }),
    "y must be a Float32Array, got Int32Array",
  );
});

Deno.test(`axpy reference matches torch goldens`, async () => {
  const { meta, cases } = await golden();
  for (const c of cases) assertClose(axpy(argsOf(c)), f32(c.out), exact, `torch ${meta.torch} n=${c.x.length}`);
  // torch.add's own float32 answer where rounding once and twice disagree.
  for (const c of meta.rounds_once) {
    assertClose(axpy(argsOf(c)), f32(c.out), exact, `torch.add alpha=${c.alpha} x=${c.x[0]}`);
  }
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
  const plan = axpyInplacePlan(gpu, { alpha: 0.5, n });
  deepStrictEqual(plan.bindings.map((b) => [b.name, b.role]), [["x", "input"], ["y", "inout"]]);
  const x = randomF32(n, 1), y0 = randomF32(n, 2);
  const xt = gpu.upload(x, "x"), yt = gpu.upload(y0, "y");
  try {
    await gpu.submit([plan, [xt, yt]], [plan, [xt, yt]]);
    const twice = axpy({ alpha: 0.5, x, y: axpy({ alpha: 0.5, x, y: y0 }) });
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
      () => gpu.submit([axpyPlan(gpu, { alpha: 2, n: 3 }), [x, y, y]]),
      "WebGPU rejected axpy/kernel",
    );
  } finally {
    x.buffer.destroy();
    y.buffer.destroy();
  }
});

gpuTest("axpy GPU: plans use a 1-D grid of 4096-element blocks, capped, and state their cost", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  for (const [n, groups] of [[0, 0], [1, 1], [4096, 1], [4097, 2], [2 ** 26, 2 ** 14], [2 ** 30, max]]) {
    for (const plan of [axpyPlan(gpu, { alpha: 1, n }), axpyInplacePlan(gpu, { alpha: 1, n })]) {
      deepStrictEqual([plan.workgroups, plan.cost], [groups, { bytes: 12 * n, flops: 2 * n }], `n=${n}`);
    }
  }
});

gpuTest("axpy GPU: bad input throws before dispatch", async (gpu) => {
  const x = f32([1, 2, 3]);
  for (const fn of [axpyGpu, axpyInplaceGpu]) {
    await assertThrowsMessage(() => fn(gpu, { alpha: 1, x, y: f32([1]) }), "y must have length x.length = 3");
    await assertThrowsMessage(() => fn(gpu, { alpha: NaN, x, y: x }), "alpha must be a finite f32");
    await assertThrowsMessage(
      () => fn(gpu, { alpha: -1e39, x, y: x }),
      "axpy: alpha must be a finite f32 (|alpha| <= 3.4028234663852886e+38), got -1e+39",
    );
  }
  await assertThrowsMessage(
    () => axpyGpu(gpu, { alpha: 1, x, y: x }, { override: "inplace" }),
    'override "inplace" is not a variant of entry point "kernel"',
  );
});

// Random operands over lengths around the kernels' geometry (4 elements per vec4, 4096 per workgroup
// block: 1..3 and 4099 end in a partial vec4, 5001 in a partial block and a partial vec4), plus
// operands whose sum nearly cancels (where the rounding of the product decides the answer) and
// operands spread over 2^-40 .. 2^40, so exponents are far apart.
const sizes = [1, 2, 3, 4, 255, 256, 257, 4096, 4099, 5001];
function cases(): { label: string; args: AxpyArgs }[] {
  const random = sizes.map((n) => ({
    label: `n=${n}`,
    args: { alpha: 0.7, x: randomF32(n, n), y: randomF32(n, n + 1) },
  }));
  const x = randomF32(1000, 3);
  const cancelling = { alpha: 0.3, x, y: x.map((v, i) => -Math.fround(0.3) * v * (1 + (i % 7) * 1e-7)) };
  const wide = randomF32(1000, 4).map((v, i) => v * 2 ** ((i % 81) - 40));
  return [
    ...random,
    { label: "cancelling n=1000", args: cancelling },
    { label: "wide exponents n=1000", args: { alpha: -3.5, x: wide, y: wide.slice().reverse() } },
  ];
}
checkAgainstReference("axpy", KERNELS, "kernel", cases(), axpy, axpyGpu, exact);
checkAgainstReference("axpy", KERNELS, "inplace", cases(), axpy, axpyInplaceGpu, exact);

// A device that allows 2 workgroups per dimension, so the grid-stride loop takes several blocks per
// workgroup (the full-size grid needs over 2^28 elements to loop). It poisons outputs like the shared one.
function twoWorkgroups(gpu: ResidentDevice): ResidentDevice {
  const low = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 2 });
  low.poisonOutputs = true;
  return low;
}
const strideCases = [3, 4097, 5 * 4096 + 7, 8 * 4096].map((n) => ({
  label: `n=${n}`,
  args: { alpha: -1.25, x: randomF32(n, n), y: randomF32(n, n + 1) },
}));
checkAgainstReference(
  "axpy, grid-stride over 2 workgroups",
  KERNELS,
  "kernel",
  strideCases,
  axpy,
  (gpu, args, options) => axpyGpu(twoWorkgroups(gpu), args, options),
  exact,
);
checkAgainstReference(
  "axpy, grid-stride over 2 workgroups",
  KERNELS,
  "inplace",
  strideCases,
  axpy,
  (gpu, args, options) => axpyInplaceGpu(twoWorkgroups(gpu), args, options),
  exact,
);

// Forces one path of the kernels whatever this device's fma() does, by replacing the probe in the
// plan's uniform (fields 2..4: probe_a, probe_x, probe_y): (1, 1, 1) reads as fused (fma gives 2),
// (0, 0, 0) as not (fma gives 0). Each device then runs both paths: llvmpipe its fma() path, which
// it otherwise never takes, and a GPU with a fused fma() its exact fallback.
function withProbe(plan: KernelPlan, probe: 0 | 1): KernelPlan {
  const view = new DataView(plan.params!.slice(0));
  const offsets = [8, 12, 16];
  // The probe where the WGSL Params struct has it, so a layout change fails here rather than passing.
  deepStrictEqual(offsets.map((o) => view.getFloat32(o, true)), [TENTH, 3, -Math.fround(0.3)]);
  for (const o of offsets) view.setFloat32(o, probe, true);
  return { ...plan, params: view.buffer };
}

const ENTRY_PLANS = { kernel: axpyPlan, inplace: axpyInplacePlan } as const;
const forcedCases = [...cases(), ...strideCases];

gpuTest("axpy GPU: the exact fallback, forced, rounds once on any device", async (gpu) => {
  for (const [entry, makePlan] of Object.entries(ENTRY_PLANS)) {
    for (const device of [gpu, twoWorkgroups(gpu)]) {
      for (const { label, args } of [...forcedCases, { label: "cancelling", args: CANCELLING }]) {
        const plan = withProbe(makePlan(device, { alpha: args.alpha, n: args.x.length }), 0);
        const [got] = await device.run(plan, [args.x, args.y]);
        assertClose(got, axpy(args), exact, `${entry} ${label} (${device.limits.maxComputeWorkgroupsPerDimension})`);
      }
    }
  }
});

gpuTest("axpy GPU: the fma() path, forced, rounds once or twice per element and misses none", async (gpu) => {
  for (const [entry, makePlan] of Object.entries(ENTRY_PLANS)) {
    for (const device of [gpu, twoWorkgroups(gpu)]) {
      for (const { label, args } of forcedCases) {
        const plan = withProbe(makePlan(device, { alpha: args.alpha, n: args.x.length }), 1);
        const [got] = await device.run(plan, [args.x, args.y]);
        const once = axpy(args);
        const a = Math.fround(args.alpha);
        for (let i = 0; i < got.length; i++) {
          const twice = Math.fround(Math.fround(a * args.x[i]) + args.y[i]);
          ok(
            Object.is(got[i], once[i]) || Object.is(got[i], twice),
            `${entry} ${label}: element ${i} is ${got[i]}, expected ${once[i]} (rounded once) or ${twice} (twice)`,
          );
        }
      }
    }
  }
});
