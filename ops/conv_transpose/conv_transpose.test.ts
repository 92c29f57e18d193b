import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  type Tolerance,
} from "../../harness/testing.ts";
import { convTranspose1d, type ConvTranspose1dArgs, convTranspose1dGpu, convTranspose1dPlan, KERNELS } from "./mod.ts";
import type { ConvTransposeVariant } from "./kernels.gen.ts";

type JsonF32 = (number | string)[];
interface GoldenCase {
  label: string;
  N: number;
  Cin: number;
  Cout: number;
  L: number;
  kernelSize: number;
  stride: number;
  padding: number;
  outputPadding: number;
  dilation: number;
  groups: number;
  x: JsonF32;
  weight: JsonF32;
  bias: JsonF32 | null;
  out_shape: number[];
  out: JsonF32;
}
const loadConvTransposeGolden = () =>
  loadGolden<{ meta: { torch: string }; cases: GoldenCase[] }>(
    new URL("./goldens/conv_transpose.json", import.meta.url),
  );
const fromJson = (xs: JsonF32) => Float32Array.from(xs, Number);
const f32 = (xs: number[]) => new Float32Array(xs);
const oneUlp = { atol: 1e-12, rtol: 2 ** -23 };
const argsOf = (c: GoldenCase): ConvTranspose1dArgs => ({
  x: fromJson(c.x),
  weight: fromJson(c.weight),
  bias: c.bias === null ? undefined : fromJson(c.bias),
  N: c.N,
  Cin: c.Cin,
  Cout: c.Cout,
  L: c.L,
  kernelSize: c.kernelSize,
  stride: c.stride,
  padding: c.padding,
  outputPadding: c.outputPadding,
  dilation: c.dilation,
  groups: c.groups,
});

// Kernel vs reference: each output sums at most (Cin / groups) * ceil(K / stride) products in f32,
// in another order than the f64 reference; as ops/conv's tests, atol = 2^-20 * (terms) * max|x| *
// max|w| plus an ULP of the bias, with terms = (Cin / groups) * K as a bound.
function kernelTolerance(args: ConvTranspose1dArgs): Tolerance {
  const max = (a?: Float32Array) => a ? a.reduce((m, v) => Math.max(m, Math.abs(v)), 0) : 0;
  const terms = (args.Cin / (args.groups ?? 1)) * args.kernelSize;
  return { atol: 2 ** -20 * terms * max(args.x) * max(args.weight) + 2 ** -22 * max(args.bias), rtol: 0 };
}

Deno.test("conv_transpose reference: hand-derived values", () => {
  const one = { N: 1, Cin: 1, Cout: 1 };
  // Each input lays the kernel down at s * stride: [1, 2, 3] at 0 and 10 x [1, 2, 3] at 2.
  const base = { ...one, x: f32([1, 10]), weight: f32([1, 2, 3]), L: 2, kernelSize: 3, stride: 2 };
  deepStrictEqual([...convTranspose1d(base)], [1, 2, 13, 20, 30]);
  // padding crops one position from each end; outputPadding adds one at the end only, with the bias.
  deepStrictEqual([...convTranspose1d({ ...base, padding: 1 })], [2, 13, 20]);
  deepStrictEqual([...convTranspose1d({ ...base, outputPadding: 1, bias: f32([0.5]) })], [
    1.5,
    2.5,
    13.5,
    20.5,
    30.5,
    0.5,
  ]);
  // Dilation 2 spreads the taps: [1, 0, 2, 0, 3].
  deepStrictEqual([...convTranspose1d({ ...base, x: f32([1]), L: 1, dilation: 2 })], [1, 0, 2, 0, 3]);
  // weight [Cin, Cout, K]: two input channels into one output, weights 1 and 100.
  deepStrictEqual([
    ...convTranspose1d({ N: 1, Cin: 2, Cout: 1, L: 1, x: f32([1, 2]), weight: f32([1, 100]), kernelSize: 1 }),
  ], [201]);
  // groups 2: input channel 1 feeds output channel 1 only.
  deepStrictEqual([
    ...convTranspose1d({ N: 1, Cin: 2, Cout: 2, L: 1, x: f32([1, 2]), weight: f32([3, 5]), kernelSize: 1, groups: 2 }),
  ], [3, 10]);
});

async function rejectsBadInput(run: (args: ConvTranspose1dArgs) => unknown): Promise<void> {
  const base = { N: 1, Cin: 2, Cout: 4, L: 5, kernelSize: 3, x: new Float32Array(10), weight: new Float32Array(24) };
  await assertThrowsMessage(
    () => run({ ...base, groups: 3 }),
    "convTranspose1d: Cin and Cout must be divisible by groups, got Cin = 2, Cout = 4, groups = 3",
  );
  await assertThrowsMessage(
    () => run({ ...base, stride: 2, outputPadding: 2 }),
    "convTranspose1d: outputPadding must be smaller than stride or dilation, got outputPadding = 2, stride = 2, dilation = 1",
  );
  await assertThrowsMessage(
    () => run({ ...base, padding: 4 }),
    "convTranspose1d: padding 4 crops the whole output (its length would be -1)",
  );
  await assertThrowsMessage(
    () => run({ ...base, stride: 0 }),
    "convTranspose1d: stride must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => run({ ...base, x: new Float32Array(9) }),
    "convTranspose1d: x must have length N * Cin * L = 10, got 9",
  );
  await assertThrowsMessage(
    () => run({ ...base, weight: new Float32Array(8) }),
    "convTranspose1d: weight must have length Cin * Cout / groups * K = 24, got 8",
  );
  await assertThrowsMessage(
    () => run({ ...base, bias: f32([1]) }),
    "convTranspose1d: bias must have length Cout = 4, got 1",
  );
  await assertThrowsMessage(() => run({ ...base, L: 0 }), "convTranspose1d: L must be an integer >= 1, got 0");
}

Deno.test("conv_transpose reference: bad input throws naming the argument", () => rejectsBadInput(convTranspose1d));

gpuTest(
  "conv_transpose GPU: bad input throws before dispatch; plans pick the tile and declare the cost",
  async (gpu) => {
    await rejectsBadInput((args) => convTranspose1dGpu(gpu, args));
    // The vocoder stage of the bench: 8 phases x 4 output-channel tiles x 8 column tiles of 64 x 256.
    const plan = convTranspose1dPlan(gpu, {
      N: 1,
      Cin: 512,
      Cout: 256,
      L: 2048,
      kernelSize: 16,
      stride: 8,
      padding: 4,
    });
    strictEqual(plan.kernel.variant.split(".")[0], "tile64");
    deepStrictEqual(plan.workgroups, [8 * 4 * 8, 1, 1]);
    deepStrictEqual(plan.cost, {
      bytes: 4 * (512 * 2048 + 512 * 256 * 16 + 256 * 16384),
      flops: 2 * 512 * 256 * 2048 * 16,
    });
    // 9 columns per phase (Lout = 18, stride 2) and 256 channels: the 128 x 128 tile, 2 x 1 x 2 phases.
    const short = convTranspose1dPlan(gpu, { N: 1, Cin: 64, Cout: 256, L: 8, kernelSize: 4, stride: 2 });
    strictEqual(short.kernel.variant.split(".")[0], "kernel");
    deepStrictEqual(short.workgroups, [4, 1, 1]);
  },
);

gpuTest("conv_transpose GPU: surplus workgroups of a folded grid write nothing", async (gpu) => {
  const args: ConvTranspose1dArgs = {
    x: randomF32(2 * 4 * 40, 1),
    weight: randomF32(4 * 3 * 6, 2),
    bias: randomF32(3, 3),
    N: 2,
    Cin: 4,
    Cout: 3,
    L: 40,
    kernelSize: 6,
    stride: 3,
    padding: 1,
  };
  const plan = convTranspose1dPlan(gpu, { ...args, bias: true }, { override: "kernel" });
  // 3 phases x 1 x ceil(2 * 41 / 128) = 3 tiles, folded into a 2 x 2 grid.
  deepStrictEqual(plan.workgroups, [3, 1, 1]);
  const [out] = await gpu.run({ ...plan, workgroups: foldWorkgroups(3, 2) }, [args.x, args.weight, args.bias!]);
  assertClose(out, convTranspose1d(args), kernelTolerance(args), "folded 2 x 2 grid");
});

// Awkward shapes for both tiles: [N, Cin, Cout, L, K, stride, padding, outputPadding, dilation, groups, bias].
// The kernels walk each phase's taps from its first one, tap_step = stride / gcd(stride, dilation)
// apart; the last rows are for that walk: K not a multiple of stride with a gcd of 2 (stride 4,
// dilation 2: half the phases get no tap, only the bias), with padding, output_padding and groups;
// stride 6, dilation 4 (taps 3 apart, two input positions per step); 600 columns of two samples,
// so a column tile and a store's four columns cross from one sample to the next, with 17 channels
// (not a multiple of the 8-channel block) and output_padding 3.
const shapes: number[][] = [
  [1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 0],
  [2, 6, 4, 13, 5, 3, 2, 1, 1, 2, 1],
  [1, 16, 130, 9, 16, 8, 4, 0, 1, 1, 1],
  [1, 3, 5, 7, 3, 2, 0, 2, 3, 1, 1],
  [1, 4, 4, 1, 2, 5, 0, 0, 1, 4, 0],
  [3, 20, 12, 33, 4, 2, 1, 1, 1, 1, 1],
  [1, 9, 70, 50, 7, 1, 3, 0, 2, 1, 1],
  [1, 24, 20, 40, 6, 4, 3, 2, 2, 2, 1],
  [1, 8, 8, 20, 5, 6, 0, 1, 4, 1, 0],
  [2, 17, 9, 300, 3, 4, 1, 3, 1, 1, 1],
];
/** Every shape above, with inputs drawn from seeds `seed`, `seed + 100` and `seed + 200` (plus the row). */
const randomCases = (seed: number) =>
  shapes.map(([N, Cin, Cout, L, K, stride, padding, outputPadding, dilation, groups, bias], i) => ({
    label:
      `N=${N} Cin=${Cin} Cout=${Cout} L=${L} K=${K} s${stride} p${padding} op${outputPadding} d${dilation} g${groups}`,
    args: {
      x: randomF32(N * Cin * L, seed + i),
      weight: randomF32(Cin * (Cout / groups) * K, seed + 100 + i),
      bias: bias ? randomF32(Cout, seed + 200 + i) : undefined,
      N,
      Cin,
      Cout,
      L,
      kernelSize: K,
      stride,
      padding,
      outputPadding,
      dilation,
      groups,
    },
  }));
for (const [entry, seed] of [["kernel", 100], ["tile64", 400]] as const) {
  checkAgainstReference<ConvTranspose1dArgs, ConvTransposeVariant>(
    "conv_transpose1d",
    KERNELS,
    entry,
    randomCases(seed),
    convTranspose1d,
    convTranspose1dGpu,
    kernelTolerance,
  );
}

Deno.test("conv_transpose reference matches the torch goldens", async () => {
  const { meta, cases } = await loadConvTransposeGolden();
  ok(cases.length > 0 && meta.torch, "the golden file has cases and a torch version");
  for (const c of cases) {
    const got = convTranspose1d(argsOf(c));
    strictEqual(got.length, c.out_shape.reduce((p, v) => p * v, 1), `${c.label}: output length`);
    assertClose(got, fromJson(c.out), oneUlp, `torch ${c.label}`);
  }
});

Deno.test("conv_transpose goldens pin the conventions: weight [Cin, Cout/g, K], no flip, padding crops, output_padding at the end", async () => {
  const { cases } = await loadConvTransposeGolden();
  const misses = (c: GoldenCase, got: Float32Array) => {
    const expected = fromJson(c.out);
    return got.length !== expected.length ||
      got.some((v, i) => Math.abs(v - expected[i]) > 1e-3 * (1 + Math.abs(expected[i])));
  };
  for (const c of cases.filter((c) => c.kernelSize > 1)) {
    const args = argsOf(c);
    // The kernel flipped along K.
    const flipped = args.weight.map((_, i, w) => w[i - (i % c.kernelSize) + c.kernelSize - 1 - (i % c.kernelSize)]);
    ok(misses(c, convTranspose1d({ ...args, weight: flipped })), `${c.label}: a flipped kernel must differ`);
  }
  const withPadding = cases.filter((c) => c.padding > 0);
  ok(withPadding.length > 0, "goldens with padding");
  for (const c of withPadding) {
    const args = argsOf(c);
    // Padding as conv's (zeros added, nothing cropped): the full result, padding positions longer at each end.
    const uncropped = convTranspose1d({ ...args, padding: 0 });
    ok(misses(c, uncropped), `${c.label}: padding that extends rather than crops must differ`);
    // Cropping only the start (or only the end) must differ too.
    const full = uncropped, Lfull = full.length / (c.N * c.Cout), Lout = c.out_shape[2];
    const startOnly = Float32Array.from(
      { length: c.N * c.Cout * Lout },
      (_, i) => full[Math.floor(i / Lout) * Lfull + (i % Lout) + 2 * c.padding],
    );
    ok(misses(c, startOnly), `${c.label}: cropping 2 * padding from the start alone must differ`);
  }
  const withOutputPadding = cases.filter((c) => c.outputPadding > 0);
  ok(withOutputPadding.length > 0, "goldens with output_padding");
  for (const c of withOutputPadding) {
    const Lout = c.out_shape[2], expected = fromJson(c.out), bias = c.bias ? fromJson(c.bias) : undefined;
    // The trailing outputPadding positions hold the bias alone (when nothing else reaches them), and
    // putting the extra positions at the start instead must differ.
    const args = argsOf(c);
    const without = convTranspose1d({ ...args, outputPadding: 0 });
    const Lshort = Lout - c.outputPadding;
    const atStart = Float32Array.from({ length: c.N * c.Cout * Lout }, (_, i) => {
      const row = Math.floor(i / Lout), t = i % Lout;
      return t < c.outputPadding ? (bias ? bias[row % c.Cout] : 0) : without[row * Lshort + t - c.outputPadding];
    });
    ok(misses(c, atStart), `${c.label}: output_padding at the start must differ`);
    for (let row = 0; row < c.N * c.Cout; row++) {
      for (let t = 0; t < Lshort; t++) {
        strictEqual(
          expected[row * Lout + t],
          without[row * Lshort + t],
          `${c.label}: the leading positions are the unpadded result`,
        );
      }
    }
  }
  // Weight read as conv1d's [Cout, Cin / groups, K] layout: differs where Cin != Cout.
  const square = cases.find((c) => c.Cin !== c.Cout && c.groups === 1);
  ok(square, "a golden with Cin != Cout");
  const args = argsOf(square), perOut = square.Cout, K = square.kernelSize;
  const asConvLayout = Float32Array.from({ length: args.weight.length }, (_, i) => {
    const ci = Math.floor(i / (perOut * K)), co = Math.floor(i / K) % perOut, k = i % K;
    return args.weight[(co * square.Cin + ci) * K + k];
  });
  ok(misses(square, convTranspose1d({ ...args, weight: asConvLayout })), "the weight in conv1d's layout must differ");
});

gpuTest("conv_transpose GPU matches the torch goldens (both tiles)", async (gpu) => {
  const { cases } = await loadConvTransposeGolden();
  ok(cases.length > 0, "the golden file has cases");
  for (const override of [undefined, "kernel", "tile64"] as const) {
    for (const c of cases) {
      const args = argsOf(c);
      assertClose(
        await convTranspose1dGpu(gpu, args, { override }),
        fromJson(c.out),
        kernelTolerance(args),
        `torch ${c.label} (${override ?? "plan's choice"})`,
      );
    }
  }
});
