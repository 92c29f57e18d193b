import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { ResidentDevice } from "../../harness/device.ts";
import { foldWorkgroups, workgroupBytesOf } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  planningDevice,
  randomF32,
  type Tolerance,
} from "../../harness/testing.ts";
import {
  conv1d,
  type Conv1dArgs,
  conv1dGpu,
  conv1dPlan,
  conv2d,
  type Conv2dArgs,
  conv2dGpu,
  conv2dPlan,
  conv3d,
  type Conv3dArgs,
  conv3dGpu,
  conv3dPlan,
  KERNELS,
} from "./mod.ts";
import type { ConvVariant } from "./kernels.gen.ts";
import { gemmTiling } from "./gemm_tiling.ts";

type JsonF32 = (number | string)[];
type Arg = number | number[];
interface GoldenCase {
  label: string;
  rank: 1 | 2 | 3;
  N: number;
  Cin: number;
  Cout: number;
  L?: number;
  D?: number;
  H?: number;
  W?: number;
  kernelSize: Arg;
  stride: Arg;
  padding: Arg;
  dilation: Arg;
  groups: number;
  x: JsonF32;
  weight: JsonF32;
  bias: JsonF32 | null;
  out_shape: number[];
  out: JsonF32;
}
const loadConvGolden = () =>
  loadGolden<{ meta: { torch: string }; cases: GoldenCase[] }>(new URL("./goldens/conv.json", import.meta.url));
const fromJson = (xs: JsonF32) => Float32Array.from(xs, Number);
const f32 = (xs: number[]) => new Float32Array(xs);
const oneUlp = { atol: 1e-12, rtol: 2 ** -23 };

type AnyConvArgs = Conv1dArgs | Conv2dArgs | Conv3dArgs;
/** The golden case's arguments, and the reference and GPU functions of its rank. */
function golden(c: GoldenCase, overrides: Partial<Record<string, unknown>> = {}) {
  const args = {
    x: fromJson(c.x),
    weight: fromJson(c.weight),
    bias: c.bias === null ? undefined : fromJson(c.bias),
    N: c.N,
    Cin: c.Cin,
    Cout: c.Cout,
    ...(c.rank === 1 ? { L: c.L } : c.rank === 2 ? { H: c.H, W: c.W } : { D: c.D, H: c.H, W: c.W }),
    kernelSize: c.kernelSize,
    stride: c.stride,
    padding: c.padding,
    dilation: c.dilation,
    groups: c.groups,
    ...overrides,
  } as unknown as AnyConvArgs;
  const reference = (a: AnyConvArgs) =>
    c.rank === 1 ? conv1d(a as Conv1dArgs) : c.rank === 2 ? conv2d(a as Conv2dArgs) : conv3d(a as Conv3dArgs);
  return { args, reference };
}

// Kernel vs reference: each output is a sum of T = (Cin / groups) * kvol products (plus the bias)
// accumulated in f32 in a different order from the f64 reference; the error is bounded by about
// T ULPs of the sum of |terms| <= T * max|x| * max|w|. So atol = T * 2^-23 * T * max|x| max|w|
// would be the worst case; the sums here have random signs and the measured error (llvmpipe) is
// below 2^-21 of T * max|x| max|w|, so atol = 2^-20 * T * max|x| * max|w| + ULP of the bias, rtol 0.
function kernelTolerance(args: AnyConvArgs): Tolerance {
  const max = (a?: Float32Array) => a ? a.reduce((m, v) => Math.max(m, Math.abs(v)), 0) : 0;
  const terms = args.weight.length / args.Cout;
  return { atol: 2 ** -20 * terms * max(args.x) * max(args.weight) + 2 ** -22 * max(args.bias), rtol: 0 };
}

Deno.test("conv reference: hand-derived values", () => {
  // Not flipped: a [-1, 1] kernel gives forward differences x[i + 1] - x[i].
  deepStrictEqual([
    ...conv1d({ x: f32([1, 4, 9, 16]), weight: f32([-1, 1]), N: 1, Cin: 1, Cout: 1, L: 4, kernelSize: 2 }),
  ], [3, 5, 7]);
  // Padding 1 on both sides, stride 2, bias 10: windows [0,1,4], [4,9,16], [16,0,...]: L_out = floor((4 + 2 - 3) / 2) + 1 = 2.
  deepStrictEqual(
    [...conv1d({
      x: f32([1, 4, 9, 16]),
      weight: f32([1, 1, 1]),
      bias: f32([10]),
      N: 1,
      Cin: 1,
      Cout: 1,
      L: 4,
      kernelSize: 3,
      padding: 1,
      stride: 2,
    })],
    [15, 39],
  );
  // Dilation 2: taps 2 apart, x[i] + 2 x[i + 2].
  deepStrictEqual([
    ...conv1d({
      x: f32([1, 2, 3, 4, 5]),
      weight: f32([1, 2]),
      N: 1,
      Cin: 1,
      Cout: 1,
      L: 5,
      kernelSize: 2,
      dilation: 2,
    }),
  ], [7, 10, 13]);
  // Groups 2: channel 0 of the output sees input channel 0 only, channel 1 input channel 1 only.
  deepStrictEqual([
    ...conv1d({ x: f32([1, 2, 30, 40]), weight: f32([1, 1]), N: 1, Cin: 2, Cout: 2, L: 2, kernelSize: 1, groups: 2 }),
  ], [1, 2, 30, 40]);
  // 2-D: a 2 x 2 box sum, stride [1, 2] over 3 x 3.
  deepStrictEqual(
    [...conv2d({
      x: f32([1, 2, 3, 4, 5, 6, 7, 8, 9]),
      weight: f32([1, 1, 1, 1]),
      N: 1,
      Cin: 1,
      Cout: 1,
      H: 3,
      W: 3,
      kernelSize: 2,
      stride: [1, 2],
    })],
    [12, 24],
  );
  // 3-D: a temporal kernel of two taps over two 1 x 1 frames.
  deepStrictEqual([
    ...conv3d({ x: f32([3, 5]), weight: f32([1, 2]), N: 1, Cin: 1, Cout: 1, D: 2, H: 1, W: 1, kernelSize: [2, 1, 1] }),
  ], [13]);
});

async function rejectsBadInput(run: (args: Conv2dArgs) => unknown): Promise<void> {
  const x = new Float32Array(2 * 4 * 4), weight = new Float32Array(4 * 2 * 3 * 3);
  const base: Conv2dArgs = { x, weight, N: 1, Cin: 2, Cout: 4, H: 4, W: 4, kernelSize: 3 };
  await assertThrowsMessage(
    () => run({ ...base, padding: "same" as unknown as number }),
    'conv2d: padding must be an integer count (or one per axis); "same" is not accepted',
  );
  await assertThrowsMessage(
    () => run({ ...base, groups: 3 }),
    "conv2d: Cin and Cout must be divisible by groups, got Cin = 2, Cout = 4, groups = 3",
  );
  await assertThrowsMessage(
    () => run({ ...base, kernelSize: 5 }),
    "conv2d: kernelSize (5, dilation 1) is larger than the padded input along H (4 + 2 * 0)",
  );
  await assertThrowsMessage(
    () => run({ ...base, stride: [1, 0] }),
    "conv2d: stride[1] must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => run({ ...base, padding: -1 }),
    "conv2d: padding[0] must be an integer >= 0, got -1",
  );
  await assertThrowsMessage(
    () => run({ ...base, dilation: [1, 2, 3] as unknown as number }),
    "conv2d: dilation must be a number or an array of 2 numbers, got [1,2,3]",
  );
  await assertThrowsMessage(
    () => run({ ...base, x: new Float32Array(5) }),
    "conv2d: x must have length N * Cin * H * W = 32, got 5",
  );
  await assertThrowsMessage(
    () => run({ ...base, weight: new Float32Array(7) }),
    "conv2d: weight must have length Cout * Cin / groups * kH * kW = 72, got 7",
  );
  await assertThrowsMessage(
    () => run({ ...base, bias: new Float32Array(3) }),
    "conv2d: bias must have length Cout = 4, got 3",
  );
  await assertThrowsMessage(() => run({ ...base, Cin: 0 }), "conv2d: Cin must be an integer >= 1, got 0");
  await assertThrowsMessage(() => run({ ...base, W: 2.5 }), "conv2d: W must be an integer >= 1, got 2.5");
}

Deno.test("conv reference: bad input throws naming the argument", async () => {
  await rejectsBadInput(conv2d);
  const plain = { x: new Float32Array(4), weight: new Float32Array(1), N: 1, Cin: 1, Cout: 1, H: 2, W: 2 };
  await assertThrowsMessage(
    () => conv2d(plain as Conv2dArgs),
    "conv2d: kernelSize is required: a number or an array of 2 numbers, got undefined",
  );
  await assertThrowsMessage(
    () => conv2d({ ...plain, kernelSize: 1, padding: 0, strides: 2 } as Conv2dArgs),
    'conv2d: unknown argument "strides" (expected x, weight, bias, N, Cin, Cout, kernelSize, stride, padding, ' +
      "dilation, groups, H, W)",
  );
  await assertThrowsMessage(
    () => conv2d({ ...plain, kernelSize: 1, N: "1" as never }),
    'conv2d: N must be an integer >= 1, got "1"',
  );
  await assertThrowsMessage(
    () =>
      conv1d({
        x: new Float32Array(4),
        weight: new Float32Array(3),
        N: 1,
        Cin: 1,
        Cout: 1,
        L: 4,
        kernelSize: 3,
        padding: "valid" as unknown as number,
      }),
    'conv1d: padding must be an integer count (or one per axis); "valid" is not accepted',
  );
  await assertThrowsMessage(
    () =>
      conv3d({
        x: new Float32Array(8),
        weight: new Float32Array(8),
        N: 1,
        Cin: 1,
        Cout: 1,
        D: 2,
        H: 2,
        W: 2,
        kernelSize: [2, 2] as unknown as number,
      }),
    "conv3d: kernelSize must be a number or an array of 3 numbers, got [2,2]",
  );
});

gpuTest("conv GPU: bad input throws before dispatch", async (gpu) => {
  await rejectsBadInput((args) => conv2dGpu(gpu, args));
  await assertThrowsMessage(
    () => conv2dPlan(gpu, { N: 1, Cin: 3, Cout: 4, H: 4, W: 4, kernelSize: 3, groups: 2 }),
    "divisible by groups",
  );
  await assertThrowsMessage(
    () =>
      conv2dGpu(gpu, {
        x: new Float32Array(1),
        weight: new Float32Array(1),
        N: 1,
        Cin: 1,
        Cout: 1,
        H: 1,
        W: 1,
        kernelSize: 1,
      }, { override: "q8row" as never }),
    'conv2d: override "q8row" is not a variant of entry point',
  );
});

gpuTest("conv GPU: plans choose the tile by size, fold the grid, and declare the cost", (gpu) => {
  // 64 x 256 tiles: 2 over the channels x 1,024 over the 262,144 positions.
  const wide = conv2dPlan(gpu, { N: 1, Cin: 128, Cout: 128, H: 512, W: 512, kernelSize: 3, padding: 1, bias: true });
  strictEqual(wide.kernel.variant.split(".")[0], "tile64");
  deepStrictEqual(wide.workgroups, [2048, 1, 1]);
  // At most 128 positions and more than 64 channels: the 128 x 128 tile, 4 over 512 channels.
  const small = conv2dPlan(gpu, { N: 1, Cin: 512, Cout: 512, H: 8, W: 8, kernelSize: 3, padding: 1 });
  strictEqual(small.kernel.variant.split(".")[0], "kernel");
  deepStrictEqual(small.workgroups, [4, 1, 1]);
  deepStrictEqual(wide.cost, {
    bytes: 4 * (128 * 512 * 512 * 2 + 128 * 128 * 9 + 128),
    flops: 2 * 128 * 512 * 512 * 128 * 9,
  });
  const narrow = conv3dPlan(gpu, { N: 1, Cin: 64, Cout: 64, D: 16, H: 128, W: 128, kernelSize: 3, padding: 1 });
  strictEqual(narrow.kernel.variant.split(".")[0], "tile64");
  deepStrictEqual(narrow.workgroups, [1024, 1, 1]);
  // Depthwise: one tile row per group, groups x column tiles, folded past 65,535.
  const depthwise = conv2dPlan(gpu, {
    N: 4,
    Cin: 512,
    Cout: 512,
    H: 256,
    W: 256,
    kernelSize: 3,
    padding: 1,
    groups: 512,
  });
  deepStrictEqual(depthwise.workgroups, foldWorkgroups(512 * 1024, 65535));
});

gpuTest(
  "conv GPU: a 1 x 1 convolution binds x, weight, bias, out like every other, and its errors name conv2d",
  async (gpu) => {
    const shape = { N: 1, Cin: 6, Cout: 9, H: 5, W: 7, kernelSize: 1 };
    const args: Conv2dArgs = { ...shape, x: randomF32(6 * 35, 1), weight: randomF32(9 * 6, 2) };
    for (const plan of [conv2dPlan(gpu, shape), conv2dPlan(gpu, { ...shape, kernelSize: 3, padding: 1 })]) {
      strictEqual(plan.op, "conv2d");
      deepStrictEqual(plan.bindings.map((b) => b.name), ["x", "weight", "bias", "out"]);
    }
    assertClose(await conv2dGpu(gpu, args), conv2d(args), kernelTolerance(args), "1 x 1");
    const limited = gpu.withLimits({ maxStorageBufferBindingSize: 1024 });
    await assertThrowsMessage(
      () =>
        limited.run(conv2dPlan(limited, { ...shape, H: 64, W: 64 }), [randomF32(6 * 4096, 3), args.weight, f32([])]),
      "conv2d/tile64",
    );
  },
);

gpuTest("conv GPU: surplus workgroups of a folded grid write nothing", async (gpu) => {
  const args: Conv1dArgs = {
    x: randomF32(3 * 4 * 300, 3),
    weight: randomF32(6 * 2 * 3, 4),
    N: 3,
    Cin: 4,
    Cout: 6,
    L: 300,
    kernelSize: 3,
    groups: 2,
  };
  const plan = conv1dPlan(gpu, { N: 3, Cin: 4, Cout: 6, L: 300, kernelSize: 3, groups: 2 }, { override: "kernel" });
  // 2 groups x 1 x ceil(894 / 128) = 14 tiles, folded into a 4 x 4 grid.
  deepStrictEqual(plan.workgroups, [14, 1, 1]);
  const [out] = await gpu.run({ ...plan, workgroups: foldWorkgroups(14, 4) }, [
    args.x,
    args.weight,
    new Float32Array(0),
  ]);
  assertClose(out, conv1d(args), kernelTolerance(args), "folded 4 x 4 grid");
});

// Awkward shapes for both tiles: odd lengths, groups and depthwise, dilation, stride with padding,
// even kernels, 1-element axes, more channels than one tile (130 and 200), ragged input-channel
// blocks (Cin / groups not a multiple of 8), output positions not a multiple of 4 or of a tile.
const cases1d: { label: string; args: Conv1dArgs }[] = [
  [1, 3, 5, 37, 3, 1, 1, 1, 1, true],
  [2, 6, 10, 37, 5, 2, 3, 2, 2, true],
  [1, 4, 4, 19, 3, 1, 1, 1, 4, false],
  [2, 16, 12, 130, 7, 1, 3, 1, 1, true],
  [1, 9, 130, 11, 2, 3, 2, 1, 1, true],
  [1, 2, 3, 1, 3, 1, 1, 1, 1, false],
].map(([N, Cin, Cout, L, K, stride, padding, dilation, groups, bias], i) => ({
  label: `1d N=${N} Cin=${Cin} Cout=${Cout} L=${L} k${K} s${stride} p${padding} d${dilation} g${groups}`,
  args: {
    x: randomF32((N as number) * (Cin as number) * (L as number), 100 + i),
    weight: randomF32((Cout as number) * ((Cin as number) / (groups as number)) * (K as number), 200 + i),
    bias: bias ? randomF32(Cout as number, 300 + i) : undefined,
    N: N as number,
    Cin: Cin as number,
    Cout: Cout as number,
    L: L as number,
    kernelSize: K as number,
    stride: stride as number,
    padding: padding as number,
    dilation: dilation as number,
    groups: groups as number,
  },
}));
const case2d = (label: string, a: Omit<Conv2dArgs, "x" | "weight" | "bias">, bias: boolean, seed: number) => {
  const k = typeof a.kernelSize === "number" ? [a.kernelSize, a.kernelSize] : a.kernelSize;
  const groups = a.groups ?? 1;
  return {
    label,
    args: {
      ...a,
      x: randomF32(a.N * a.Cin * a.H * a.W, seed),
      weight: randomF32(a.Cout * (a.Cin / groups) * k[0] * k[1], seed + 1),
      bias: bias ? randomF32(a.Cout, seed + 2) : undefined,
    },
  };
};
const cases2d = [
  case2d(
    "2d 7x9 k[3,2] s[2,1] p[1,0] d[1,2] g2",
    {
      N: 2,
      Cin: 4,
      Cout: 6,
      H: 7,
      W: 9,
      kernelSize: [3, 2],
      stride: [2, 1],
      padding: [1, 0],
      dilation: [1, 2],
      groups: 2,
    },
    true,
    400,
  ),
  case2d(
    "2d depthwise 9x9 k3 s2 p1",
    { N: 1, Cin: 8, Cout: 8, H: 9, W: 9, kernelSize: 3, stride: 2, padding: 1, groups: 8 },
    true,
    410,
  ),
  case2d(
    "2d Cout 200 Cin 20 6x7 k3 p1",
    { N: 1, Cin: 20, Cout: 200, H: 6, W: 7, kernelSize: 3, padding: 1 },
    true,
    420,
  ),
  case2d("2d 1x1 batch 2 (implicit GEMM)", { N: 2, Cin: 5, Cout: 7, H: 3, W: 5, kernelSize: 1 }, false, 430),
  case2d("2d H=1 k[1,3]", { N: 1, Cin: 3, Cout: 2, H: 1, W: 8, kernelSize: [1, 3], padding: [0, 1] }, false, 440),
  case2d(
    "2d 16x16 k3 p1, 256 positions",
    { N: 1, Cin: 8, Cout: 16, H: 16, W: 16, kernelSize: 3, padding: 1 },
    true,
    450,
  ),
];
const cases3d: { label: string; args: Conv3dArgs }[] = [
  {
    label: "3d 3x5x4 k[2,3,1] s[1,2,1] p[1,0,1]",
    args: {
      x: randomF32(2 * 3 * 5 * 4, 500),
      weight: randomF32(3 * 2 * 2 * 3, 501),
      bias: randomF32(3, 502),
      N: 1,
      Cin: 2,
      Cout: 3,
      D: 3,
      H: 5,
      W: 4,
      kernelSize: [2, 3, 1],
      stride: [1, 2, 1],
      padding: [1, 0, 1],
    },
  },
  {
    label: "3d 5x3x3 k2 d[2,1,1] g2 batch 2",
    args: {
      x: randomF32(2 * 4 * 45, 510),
      weight: randomF32(4 * 2 * 8, 511),
      N: 2,
      Cin: 4,
      Cout: 4,
      D: 5,
      H: 3,
      W: 3,
      kernelSize: 2,
      dilation: [2, 1, 1],
      groups: 2,
    },
  },
  {
    label: "3d 4x6x6 k3 p1 Cin 12",
    args: {
      x: randomF32(12 * 144, 520),
      weight: randomF32(10 * 12 * 27, 521),
      bias: randomF32(10, 522),
      N: 1,
      Cin: 12,
      Cout: 10,
      D: 4,
      H: 6,
      W: 6,
      kernelSize: 3,
      padding: 1,
    },
  },
];
for (const entry of ["kernel", "tile64", "tile64_pipelined"]) {
  checkAgainstReference<Conv1dArgs, ConvVariant>("conv1d", KERNELS, entry, cases1d, conv1d, conv1dGpu, kernelTolerance);
  checkAgainstReference<Conv2dArgs, ConvVariant>("conv2d", KERNELS, entry, cases2d, conv2d, conv2dGpu, kernelTolerance);
  checkAgainstReference<Conv3dArgs, ConvVariant>("conv3d", KERNELS, entry, cases3d, conv3d, conv3dGpu, kernelTolerance);
}

Deno.test("conv reference matches the torch goldens", async () => {
  const { meta, cases } = await loadConvGolden();
  ok(cases.length > 0 && meta.torch, "the golden file has cases and a torch version");
  for (const c of cases) {
    const { args, reference } = golden(c);
    const got = reference(args);
    strictEqual(got.length, c.out_shape.reduce((p, v) => p * v, 1), `${c.label}: output size`);
    assertClose(got, fromJson(c.out), oneUlp, `torch ${c.label}`);
  }
});

Deno.test("conv goldens pin the conventions: no flip, torch's axis order, groups by output channel", async () => {
  const { cases } = await loadConvGolden();
  /** Whether the reference under changed arguments still gives torch's output (it must not). */
  const stillMatches = (c: GoldenCase, overrides: Partial<Record<string, unknown>>) => {
    const { args, reference } = golden(c, overrides);
    try {
      assertClose(reference(args), fromJson(c.out), { atol: 1e-3, rtol: 1e-3 });
      return true;
    } catch {
      return false;
    }
  };
  for (
    const c of cases.filter((c) => c.label.includes("k4") || c.label.includes("k[3,2]") || c.label.includes("k[2,3,1]"))
  ) {
    // The kernel flipped along every axis (a true convolution) must not match torch.
    const per = c.weight.length / c.Cout / (c.Cin / c.groups);
    const flipped = fromJson(c.weight).map((_, i, w) => w[i - (i % per) + per - 1 - (i % per)]);
    ok(!stillMatches(c, { weight: flipped }), `${c.label}: a flipped kernel must differ`);
  }
  // Spatial tuples in reversed order must not match torch (on the cases whose tuples differ per axis).
  for (const c of cases.filter((c) => c.rank > 1 && Array.isArray(c.stride) && Array.isArray(c.padding))) {
    const reversed = (v: Arg) => Array.isArray(v) ? [...v].reverse() : v;
    const spatialReversed = c.rank === 2 ? { H: c.W, W: c.H } : { D: c.W, W: c.D };
    ok(
      !stillMatches(c, {
        ...spatialReversed,
        kernelSize: reversed(c.kernelSize),
        stride: reversed(c.stride),
        padding: reversed(c.padding),
        dilation: reversed(c.dilation),
      }),
      `${c.label}: the reversed axis order must differ`,
    );
    ok(
      !stillMatches(c, { stride: reversed(c.stride), padding: reversed(c.padding) }),
      `${c.label}: reversed stride and padding must differ`,
    );
  }
  // Groups: output channel co reads group floor(co / (Cout / groups)), not co % groups. The
  // alternative is computed with the reference: channel co's weight row moved to the channel that
  // does read group co % groups under the true rule, and that channel's output moved back to co.
  const grouped = cases.find((c) => c.label.includes("groups 3"));
  ok(grouped, "a grouped golden");
  const { args, reference } = golden(grouped);
  const G = grouped.groups, perGroup = grouped.Cout / G, perWeight = grouped.weight.length / grouped.Cout;
  const stand = (co: number) => (co % G) * perGroup + Math.floor(co / G); // reads group co % G, distinct per co
  const moved = new Float32Array(args.weight.length);
  for (let co = 0; co < grouped.Cout; co++) {
    moved.set(args.weight.subarray(co * perWeight, (co + 1) * perWeight), stand(co) * perWeight);
  }
  const computed = reference({ ...args, weight: moved, bias: undefined });
  const positions = computed.length / (grouped.N * grouped.Cout);
  const alternative = computed.map((_, i) => {
    const n = Math.floor(i / (grouped.Cout * positions)), co = Math.floor(i / positions) % grouped.Cout;
    return computed[(n * grouped.Cout + stand(co)) * positions + (i % positions)] + (args.bias?.[co] ?? 0);
  });
  const expected = fromJson(grouped.out);
  ok(alternative.some((v, i) => Math.abs(v - expected[i]) > 1e-3), "groups assigned as co % groups must differ");
});

gpuTest("conv GPU matches the torch goldens (every tile)", async (gpu) => {
  const { cases } = await loadConvGolden();
  ok(cases.length > 0, "the golden file has cases");
  for (const override of [undefined, "kernel", "tile64", "tile64_pipelined"]) {
    for (const c of cases) {
      const { args } = golden(c);
      const run = c.rank === 1 ? conv1dGpu : c.rank === 2 ? conv2dGpu : conv3dGpu;
      const got = await (run as (g: typeof gpu, a: AnyConvArgs, o: { override?: string }) => Promise<Float32Array>)(
        gpu,
        args,
        { override },
      );
      assertClose(got, fromJson(c.out), kernelTolerance(args), `torch ${c.label} (${override ?? "plan's choice"})`);
    }
  }
});

// tile64_pipelined: tile64's sums over two stages of workgroup memory. Beyond the edge shapes above,
// shapes with many blocks of K (an odd and an even count, so both stages end a walk), channel and
// column tails in several tiles, groups, a one-block walk, a folded grid and non-finite inputs.
type Runner = (gpu: ResidentDevice, override: ConvVariant) => Promise<Float32Array>;
const runners = <A extends AnyConvArgs>(
  cases: { label: string; args: A }[],
  gpuFn: (gpu: ResidentDevice, args: A, options: { override: ConvVariant }) => Promise<Float32Array>,
) => cases.map(({ label, args }) => ({ label, run: ((gpu, override) => gpuFn(gpu, args, { override })) as Runner }));
const pipelinedCases: { label: string; run: Runner }[] = [
  ...runners(cases1d, conv1dGpu),
  ...runners(cases2d, conv2dGpu),
  ...runners(cases3d, conv3dGpu),
  ...runners([
    case2d(
      "2d Cout 70 Cin 20 23x23 k3 p1 batch 2: 27 blocks, 2 x 5 tiles",
      { N: 2, Cin: 20, Cout: 70, H: 23, W: 23, kernelSize: 3, padding: 1 },
      true,
      600,
    ),
    case2d(
      "2d Cout 66 Cin 16 17x19 k[2,2] s2 d2 p2: 8 blocks",
      { N: 1, Cin: 16, Cout: 66, H: 17, W: 19, kernelSize: [2, 2], stride: 2, padding: 2, dilation: 2 },
      false,
      610,
    ),
    case2d(
      "2d groups 3 Cin 27 Cout 9 31x33 k3 p1 s[1,2]",
      { N: 1, Cin: 27, Cout: 9, H: 31, W: 33, kernelSize: 3, padding: 1, stride: [1, 2], groups: 3 },
      true,
      620,
    ),
    case2d("2d 1 x 1, Cin 1: one block", { N: 3, Cin: 1, Cout: 5, H: 9, W: 11, kernelSize: 1 }, true, 630),
  ], conv2dGpu),
  {
    label: "2d non-finite x and weight",
    run: (gpu, override) => {
      const x = randomF32(2 * 9 * 100, 640), weight = randomF32(12 * 9 * 9, 641);
      [x[33], x[1000], x[1799]] = [NaN, Infinity, -Infinity];
      [weight[7], weight[500]] = [Infinity, -Infinity];
      return conv2dGpu(gpu, { x, weight, N: 2, Cin: 9, Cout: 12, H: 10, W: 10, kernelSize: 3, padding: 1 }, {
        override,
      });
    },
  },
  {
    label: "1d groups 2, 10 tiles folded into a 4 x 3 grid",
    run: async (gpu, override) => {
      const shape = { N: 3, Cin: 12, Cout: 6, L: 400, kernelSize: 3, groups: 2, bias: true };
      const plan = conv1dPlan(gpu, shape, { override });
      const [out] = await gpu.run({ ...plan, workgroups: foldWorkgroups(2 * 5, 4) }, [
        randomF32(3 * 12 * 400, 650),
        randomF32(6 * 6 * 3, 651),
        randomF32(6, 652),
      ]);
      return out as Float32Array;
    },
  },
];

/** Whether two f32 arrays hold the same bits (NaN matching NaN of any payload). */
function assertSameBits(actual: Float32Array, expected: Float32Array, label: string): void {
  strictEqual(actual.length, expected.length, `${label}: length`);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== e[i] && !(Number.isNaN(actual[i]) && Number.isNaN(expected[i]))) {
      throw new Error(`${label}: element ${i} is ${actual[i]} (0x${a[i].toString(16)}), tile64 gives ${expected[i]}`);
    }
  }
}

gpuTest("conv GPU: tile64_pipelined's outputs are bit-identical to tile64's", async (gpu) => {
  for (const { label, run } of pipelinedCases) {
    const expected = await run(gpu, "tile64");
    assertSameBits(await run(gpu, "tile64_pipelined"), expected, label);
    ok(expected.some((v) => v !== 0), `${label}: a non-trivial output`);
  }
});

Deno.test("conv kernels: workgroup memory read from the WGSL, the pipelined tile's 20 KiB within the 32 KiB allowed", () => {
  strictEqual(workgroupBytesOf(KERNELS.kernel, "kernel"), 8192);
  strictEqual(workgroupBytesOf(KERNELS.tile64, "tile64"), 10240);
  strictEqual(workgroupBytesOf(KERNELS.tile64_pipelined, "tile64_pipelined"), 2 * 10240);
});

Deno.test("conv plans: tile64_pipelined, not yet timed on a GPU, by override only; gemm_tiling's rule for a planned pipelined tile", async () => {
  const vae = { N: 1, Cin: 128, Cout: 128, H: 1024, W: 1024, kernelSize: 3, padding: 1, bias: true };
  const nvidia = planningDevice(32768, "nvidia");
  // The plans keep tile64 everywhere, NVIDIA with 32 KiB included.
  for (
    const device of [nvidia, planningDevice(32768), planningDevice(32768, "apple"), planningDevice(16384, "nvidia")]
  ) {
    strictEqual(conv2dPlan(device, vae).kernel.variant, "tile64");
  }
  strictEqual(
    conv3dPlan(nvidia, { N: 1, Cin: 64, Cout: 64, D: 16, H: 128, W: 128, kernelSize: 3, padding: 1 }).kernel.variant,
    "tile64",
  );
  // An override names it anywhere the memory is granted (the same tile as tile64: 2 x 4,096 tiles), and
  // is refused by name before dispatch elsewhere.
  const plan = conv2dPlan(nvidia, vae, { override: "tile64_pipelined" });
  strictEqual(plan.kernel.variant, "tile64_pipelined");
  deepStrictEqual(plan.workgroups, [8192, 1, 1]);
  deepStrictEqual(plan.params, conv2dPlan(planningDevice(32768), vae).params);
  const small = { N: 1, Cin: 8, Cout: 64, H: 128, W: 160, kernelSize: 3, padding: 1 };
  strictEqual(
    conv2dPlan(planningDevice(32768), small, { override: "tile64_pipelined" }).kernel.variant,
    "tile64_pipelined",
  );
  await assertThrowsMessage(
    () => conv2dPlan(planningDevice(16384), small, { override: "tile64_pipelined" }),
    "conv2d/tile64_pipelined: workgroup memory needs maxComputeWorkgroupStorageSize >= 20480, but this device allows 16384",
  );
  // The rule gemm_tiling.ts applies to a pipelined form the op marks planned: on NVIDIA where its memory
  // is granted, from 80 tiles (80 tiles of 64 x 256 at 128 x 160 positions, 79 at 128 x 158; groups
  // count), after the 128 x 128 tile's rule (few columns, many channels).
  const tiled = { entry: "tile64_pipelined", source: KERNELS.tile64_pipelined };
  const rule = (device: ResidentDevice, coutG: number, cols: number, groups = 1) =>
    gemmTiling(device, KERNELS, "conv2d", coutG, cols, undefined, tiled, groups).kernel.variant;
  strictEqual(rule(nvidia, 128, 1024 * 1024), "tile64_pipelined");
  strictEqual(rule(nvidia, 64, 128 * 160), "tile64_pipelined");
  strictEqual(rule(nvidia, 64, 128 * 158), "tile64");
  strictEqual(rule(nvidia, 64, 128 * 80, 2), "tile64_pipelined");
  strictEqual(rule(nvidia, 512, 80), "kernel");
  strictEqual(rule(planningDevice(32768), 128, 1024 * 1024), "tile64");
  strictEqual(rule(planningDevice(32768, "apple"), 128, 1024 * 1024), "tile64");
  strictEqual(rule(planningDevice(16384, "nvidia"), 128, 1024 * 1024), "tile64");
  strictEqual(
    gemmTiling(nvidia, KERNELS, "conv2d", 128, 1024 * 1024, undefined, { ...tiled, planned: false }).kernel.variant,
    "tile64",
  );
});

gpuTest(
  "conv GPU: the plans keep tile64, as this adapter and as an NVIDIA target; tile64_pipelined by override gives its bits",
  async (gpu) => {
    const shape = { N: 1, Cin: 8, Cout: 64, H: 128, W: 160, kernelSize: 3, padding: 1 };
    const nvidia = new ResidentDevice(gpu.device, { ...gpu.adapter, target: "nvidia" }, false, false);
    for (const device of [gpu, nvidia]) strictEqual(conv2dPlan(device, shape).kernel.variant.split(".")[0], "tile64");
    const args: Conv2dArgs = { ...shape, x: randomF32(8 * 128 * 160, 660), weight: randomF32(64 * 72, 661) };
    const pipelined = await conv2dGpu(nvidia, args, { override: "tile64_pipelined" });
    assertSameBits(pipelined, await conv2dGpu(gpu, args, { override: "tile64" }), "tile64_pipelined by override");
    assertClose(pipelined, conv2d(args), kernelTolerance(args), "tile64_pipelined by override");
  },
);
