// conv1d / conv2d / conv3d on NaN and ±Infinity, held to torch (goldens/nonfinite.py, float64 on
// float32 inputs, as the reference computes): a non-finite x reaches exactly the outputs whose window
// covers it; torch multiplies the zero padding like any input, so an infinite weight tap gives NaN
// (0 * inf) at every output whose window reaches the padding and ±inf elsewhere, and a NaN tap makes its
// output channel NaN throughout; a non-finite bias sets its channel. With padding, stride, dilation
// and groups. Every entry point gives the reference's values, NaN for NaN.
import {
  conv1d,
  type Conv1dArgs,
  conv1dGpu,
  conv2d,
  type Conv2dArgs,
  conv2dGpu,
  conv3d,
  type Conv3dArgs,
  conv3dGpu,
  type ConvVariant,
  KERNELS,
} from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";

interface Case {
  rank: 1 | 2 | 3;
  nonfinite: "x" | "weight" | "bias";
  x: GoldenFloat[];
  weight: GoldenFloat[];
  bias: GoldenFloat[];
  out: GoldenFloat[];
  [size: string]: unknown;
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
function argsOf(c: Case): Conv1dArgs & Conv2dArgs & Conv3dArgs {
  const { rank: _, nonfinite: __, out: ___, ...rest } = c;
  return { ...rest, x: goldenF32(c.x), weight: goldenF32(c.weight), bias: goldenF32(c.bias) } as never;
}
const REFERENCE = { 1: conv1d, 2: conv2d, 3: conv3d } as const;
const label = (c: Case) =>
  `conv${c.rank}d, non-finite ${c.nonfinite}, stride ${c.stride} padding ${c.padding} dilation ${c.dilation} groups ${c.groups}`;

Deno.test(`conv reference: NaN and ±Infinity in x, weight and bias give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ [c.nonfinite]: args[c.nonfinite]! });
    // f64 sums against torch's f64 sums, each rounded to f32 once.
    assertClose(REFERENCE[c.rank](args), goldenF32(c.out), { atol: 1e-12, rtol: 2 ** -22 }, label(c));
  }
});

// The kernels' f32 sums of at most 27 terms of order 1, in their own order.
const tol = { atol: 1e-5, rtol: 1e-5 };
const casesOf = (rank: number) =>
  golden.cases.filter((c) => c.rank === rank).map((c) => ({ label: label(c), args: argsOf(c) }));

/** Several tiles each way (288 output positions, 70 output channels, 72 summed): NaN and ±inf in x, then in the weight. */
function tiled(): { label: string; args: Conv2dArgs }[] {
  const shape = { N: 2, Cin: 8, Cout: 70, H: 12, W: 12, kernelSize: 3, padding: 1 };
  const x = randomF32(2 * 8 * 144, 41), weight = randomF32(70 * 72, 42);
  const [xs, ws] = [x.slice(), weight.slice()];
  [xs[700], xs[1500], xs[2 * 8 * 144 - 1]] = [NaN, Infinity, -Infinity];
  [ws[5], ws[40 * 72 + 4], ws[70 * 72 - 1]] = [NaN, Infinity, -Infinity];
  return [
    { label: "several tiles, non-finite x", args: { ...shape, x: xs, weight } },
    { label: "several tiles, non-finite weight", args: { ...shape, x, weight: ws } },
  ];
}

for (const entry of ["tile64", "kernel", "tile64_pipelined"]) {
  checkAgainstReference<Conv1dArgs, ConvVariant>(
    "conv1d (non-finite)",
    KERNELS,
    entry,
    casesOf(1),
    conv1d,
    conv1dGpu,
    tol,
  );
  const cases2d = [...casesOf(2), ...tiled()];
  checkAgainstReference<Conv2dArgs, ConvVariant>(
    "conv2d (non-finite)",
    KERNELS,
    entry,
    cases2d,
    conv2d,
    conv2dGpu,
    tol,
  );
  checkAgainstReference<Conv3dArgs, ConvVariant>(
    "conv3d (non-finite)",
    KERNELS,
    entry,
    casesOf(3),
    conv3d,
    conv3dGpu,
    tol,
  );
}
