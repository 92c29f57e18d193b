import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { foldWorkgroups, LimitError } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  type Tolerance,
} from "../../harness/testing.ts";
import {
  channelNorm,
  type ChannelNormArgs,
  channelNormGpu,
  channelNormLayout,
  channelNormPlan,
  KERNELS,
} from "./mod.ts";
import type { ChannelNormVariant } from "./kernels.gen.ts";

type JsonF32 = (number | string)[];
interface GoldenCase {
  label: string;
  N: number;
  C: number;
  L: number;
  eps: number;
  activation: "silu" | null;
  x: JsonF32;
  weight: JsonF32 | null;
  bias: JsonF32 | null;
  out: JsonF32;
}
interface Golden {
  meta: { torch: string; nchw_equals_flattened: boolean };
  cases: GoldenCase[];
}
const loadChannelNormGolden = () => loadGolden<Golden>(new URL("./goldens/channel_norm.json", import.meta.url));
const fromJson = (xs: JsonF32) => Float32Array.from(xs, Number);
const argsOf = (c: GoldenCase): ChannelNormArgs => ({
  x: fromJson(c.x),
  N: c.N,
  C: c.C,
  L: c.L,
  eps: c.eps,
  activation: c.activation ?? undefined,
  weight: c.weight === null ? undefined : fromJson(c.weight),
  bias: c.bias === null ? undefined : fromJson(c.bias),
});
const f32 = (xs: number[]) => new Float32Array(xs);
/** The reference and the goldens both round an f64 result to f32 once. */
const oneUlp = { atol: 1e-12, rtol: 2 ** -23 };
const maxAbs = (xs?: Float32Array) => xs ? xs.reduce((m, v) => Math.max(m, Math.abs(v)), 0) : 0;

// Kernel vs reference. The f32 sum of squares over C channels (up to 8 per invocation, then a tree
// over the lanes) is off by a few ULPs relative, half of that after the square root; the factor's
// division and the products round a few more times: 4e-6 relative on the normalised value, whose
// magnitude is at most sqrt(C) times the weight. The bias may cancel it, so that error is also
// allowed absolutely (plus the bias's own rounding). SiLU's exp (WGSL allows 3 + 2|y| ULPs) adds a
// little more relative error: 1e-5 with it.
function kernelTolerance(args: ChannelNormArgs): Tolerance {
  const scale = Math.sqrt(args.C) * (args.weight ? maxAbs(args.weight) : 1);
  return { atol: 4e-6 * scale + 2 ** -22 * maxAbs(args.bias), rtol: args.activation === "silu" ? 1e-5 : 4e-6 };
}

Deno.test("channel_norm reference: hand-derived values", () => {
  // One position of [3, 4]: norm 5, times sqrt(2).
  const r2 = Math.SQRT2;
  assertClose(channelNorm({ x: f32([3, 4]), N: 1, C: 2, L: 1 }), [0.6 * r2, 0.8 * r2], oneUlp);
  // Two positions [3, 4] and [0, 1] laid out [C, L] = [[3, 0], [4, 1]], weight [2, 10], bias [1, -1].
  assertClose(
    channelNorm({ x: f32([3, 0, 4, 1]), N: 1, C: 2, L: 2, weight: f32([2, 10]), bias: f32([1, -1]) }),
    [0.6 * r2 * 2 + 1, 1, 0.8 * r2 * 10 - 1, r2 * 10 - 1],
    oneUlp,
  );
  // C = 1: every nonzero value becomes its sign (norm |x|, times sqrt(1)).
  deepStrictEqual([...channelNorm({ x: f32([-3, 0.5, 7]), N: 1, C: 1, L: 3 })], [-1, 1, 1]);
  // SiLU after the bias: y = 1 (x = 1, C = 1) plus bias 1 is 2, silu(2) = 2 / (1 + e^-2).
  assertClose(
    channelNorm({ x: f32([1]), N: 1, C: 1, L: 1, bias: f32([1]), activation: "silu" }),
    [2 / (1 + Math.exp(-2))],
    oneUlp,
  );
});

Deno.test("channel_norm reference: eps bounds the norm from below; an all-zero position gives zeros", () => {
  // Norm 5e-13 < 1e-12: divided by 1e-12, so 3e-13 -> 0.3 * sqrt(2). Adding eps to the norm would
  // give 3e-13 / 1.5e-12 * sqrt(2) = 0.2 * sqrt(2); eps inside a root of the mean square, ~4e-7.
  const got = channelNorm({ x: f32([3e-13, 4e-13]), N: 1, C: 2, L: 1 });
  assertClose(got, [0.3 * Math.SQRT2, 0.4 * Math.SQRT2], { atol: 0, rtol: 1e-6 });
  deepStrictEqual(
    [...channelNorm({ x: f32([0, 1, 0, 1]), N: 1, C: 2, L: 2, bias: f32([5, 6]) })].map((v, i) => i % 2 === 0 ? v : 0),
    [5, 0, 6, 0],
  );
  // eps = 0 is allowed; then an all-zero position is 0 / 0, as torch gives.
  ok(channelNorm({ x: f32([0, 0]), N: 1, C: 2, L: 1, eps: 0 }).every(Number.isNaN));
});

async function rejectsBadInput(run: (args: ChannelNormArgs) => unknown): Promise<void> {
  const x = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(
    () => run({ x, N: 2, C: 3, L: 2 }),
    "channelNorm: x must have length N * C * L = 12, got 6",
  );
  await assertThrowsMessage(() => run({ x, N: 1, C: 0, L: 6 }), "channelNorm: C must be an integer >= 1, got 0");
  await assertThrowsMessage(() => run({ x, N: 1, C: 3, L: 2.5 }), "channelNorm: L must be an integer >= 1, got 2.5");
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, weight: f32([1, 2]) }),
    "channelNorm: weight must have length C = 3, got 2",
  );
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, bias: new Float64Array(3) as unknown as Float32Array }),
    "channelNorm: bias must be a Float32Array, got Float64Array",
  );
  await assertThrowsMessage(() => run({ x, N: 1, C: 3, L: 2, eps: -1 }), "channelNorm: eps must be >= 0, got -1");
  await assertThrowsMessage(() => run({ x, N: 1, C: 3, L: 2, eps: 1e39 }), "channelNorm: eps must be a finite f32");
  await assertThrowsMessage(
    () => run({ x, N: 1, C: 3, L: 2, activation: "gelu" as "silu" }),
    'channelNorm: activation must be one of "silu", got "gelu"',
  );
  await assertThrowsMessage(() => run(undefined as unknown as ChannelNormArgs), "channelNorm: args must be an object");
}

Deno.test("channel_norm reference: bad input throws naming the argument", () => rejectsBadInput(channelNorm));

gpuTest("channel_norm GPU: bad input throws before dispatch; the plan declares its bindings and cost", async (gpu) => {
  await rejectsBadInput((args) => channelNormGpu(gpu, args));
  await assertThrowsMessage(
    () => channelNormGpu(gpu, { x: f32([1]), N: 1, C: 1, L: 1 }, { override: "kernel.soc" as never }),
    'override "kernel.soc" is not a variant of entry point "kernel"',
  );
  const plan = channelNormPlan(gpu, { N: 2, C: 384, L: 100, weight: true, activation: "silu" });
  deepStrictEqual(plan.bindings.map((b) => [b.name, b.length, b.role]), [
    ["x", 76_800, "input"],
    ["weight", 384, "input"],
    ["bias", 0, "input"],
    ["out", 76_800, "output"],
  ]);
  // 25 quads of positions per channel, 4 quads a workgroup (64 lanes for 384 channels): 7 a sample.
  deepStrictEqual(channelNormLayout({ N: 2, C: 384, L: 100 }), {
    lanes: 64,
    span: 4,
    quads: 25,
    blocks: 7,
    resident: true,
  });
  deepStrictEqual(plan.workgroups, [14, 1, 1]);
  deepStrictEqual(plan.cost, { bytes: 8 * 76_800 + 4 * 384, flops: 8 * 76_800 });
  deepStrictEqual(channelNormLayout({ N: 1, C: 2049, L: 4 }).resident, false);
  deepStrictEqual(channelNormLayout({ N: 1, C: 3, L: 4 }), {
    lanes: 1,
    span: 256,
    quads: 1,
    blocks: 1,
    resident: true,
  });
});

gpuTest(
  "channel_norm GPU: a tensor past maxStorageBufferBindingSize is refused, naming it, before upload",
  async (gpu) => {
    // x and out are 2 x 8 x 32 floats = 2,048 bytes each; the weight 32 bytes.
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 1024 });
    const args = { x: randomF32(512, 1), N: 2, C: 8, L: 32, weight: randomF32(8, 2) };
    let error: unknown;
    try {
      await channelNormGpu(small, args);
    } catch (e) {
      error = e;
    }
    ok(error instanceof LimitError, `expected a LimitError, got ${error}`);
    strictEqual(
      error.message,
      "channel_norm/kernel: binding 0 (x) needs maxStorageBufferBindingSize >= 2048, but this device allows 1024",
    );
    // The same on resident tensors: refused before anything is encoded, out left as it was.
    const x = small.upload(args.x), weight = small.upload(args.weight), none = small.alloc("f32", 0);
    const out = small.alloc("f32", 512);
    try {
      await assertThrowsMessage(
        () => small.submit([channelNormPlan(small, { N: 2, C: 8, L: 32, weight: true }), [x, weight, none, out]]),
        "binding 0 (x) needs maxStorageBufferBindingSize >= 2048",
      );
      ok((await small.read(out)).every((v) => v === 0), "nothing was written");
      // At the limit it runs.
      const exact = gpu.withLimits({ maxStorageBufferBindingSize: 2048 });
      assertClose(await channelNormGpu(exact, args), channelNorm(args), kernelTolerance(args), "at the limit");
    } finally {
      for (const t of [x, weight, none, out]) t.buffer.destroy();
    }
  },
);

gpuTest(
  "channel_norm GPU: more than 65,535 workgroups fold into y, and surplus workgroups write nothing",
  async (gpu) => {
    // 1 x 384 x 2^20 positions: 2^18 quads, 4 a workgroup: 65,536 workgroups, one more than a dimension holds.
    deepStrictEqual(channelNormPlan(gpu, { N: 1, C: 384, L: 2 ** 20 }).workgroups, [32_768, 2, 1]);
    // Forced at a small per-dimension limit: 3 samples of 2 blocks (C = 96: 16 lanes, 16 quads a
    // workgroup; L = 100 is 25 quads), folded at 4 a dimension into 3 x 2, and on a 4 x 2 grid whose
    // last two workgroups must do nothing.
    const args = { x: randomF32(3 * 96 * 100, 3, -2, 2), N: 3, C: 96, L: 100, bias: randomF32(96, 4) };
    const plan = channelNormPlan(gpu, { ...args, bias: true });
    deepStrictEqual(plan.workgroups, [6, 1, 1]);
    const folded = { ...plan, workgroups: foldWorkgroups(6, 4) };
    deepStrictEqual(folded.workgroups, [3, 2, 1]);
    const [out] = await gpu.run({ ...plan, workgroups: [4, 2, 1] }, [args.x, new Float32Array(0), args.bias]);
    assertClose(out, channelNorm(args), kernelTolerance(args), "4 x 2 grid");
    const [out2] = await gpu.run(folded, [args.x, new Float32Array(0), args.bias]);
    assertClose(out2, channelNorm(args), kernelTolerance(args), "3 x 2 grid");
  },
);

// [N, C, L, affine, silu]. Registers (L % 4 == 0, C <= 2,048): one lane (C <= 8), channels not a
// multiple of the lanes (9, 96, 384: 2 of a lane's 8 slots empty), the VAE's widths, C at the
// resident limit (2,048), a last workgroup with quads past the sample's end (L = 100: 25 quads), N > 1.
// The general path: odd L and L % 4 == 2 (ragged quads), L = 1, and more than 2,048 channels
// (aligned and ragged), read twice.
const shapes: [number, number, number, string, boolean][] = [
  [1, 1, 4, "wb", false],
  [2, 3, 8, "w", true],
  [1, 8, 36, "", false],
  [3, 9, 20, "wb", true],
  [1, 96, 100, "w", true],
  [2, 384, 24, "wb", false],
  [1, 384, 100, "w", true],
  [1, 2048, 8, "b", false],
  [2, 5, 7, "wb", true],
  [1, 16, 1, "w", false],
  [3, 6, 1022, "b", false],
  [1, 384, 9, "wb", true],
  [1, 2056, 4, "w", false],
  [2, 2051, 3, "wb", true],
];
checkAgainstReference<ChannelNormArgs, ChannelNormVariant>(
  "channel_norm",
  KERNELS,
  "kernel",
  [
    ...shapes.map(([N, C, L, affine, silu], i) => ({
      label: `N=${N} C=${C} L=${L} ${affine}${silu ? " silu" : ""}`,
      args: {
        x: randomF32(N * C * L, 10 + i, -3, 3),
        N,
        C,
        L,
        weight: affine.includes("w") ? randomF32(C, 40 + i, 0.5, 1.5) : undefined,
        bias: affine.includes("b") ? randomF32(C, 70 + i, -1, 1) : undefined,
        activation: silu ? "silu" as const : undefined,
      },
    })),
    {
      label: "zero positions and norms below eps",
      args: { x: f32([0, 1e-13, 0, 2, 0, -3e-13, 0, 1, 0, 2e-13, 0, 5]), N: 1, C: 3, L: 4, bias: f32([1, 2, 3]) },
    },
    { label: "eps 0.5", args: { x: randomF32(4 * 12, 7, -0.2, 0.2), N: 1, C: 4, L: 12, eps: 0.5 } },
  ],
  channelNorm,
  channelNormGpu,
  kernelTolerance,
);

Deno.test("channel_norm reference matches the torch goldens", async () => {
  const golden = await loadChannelNormGolden();
  ok(golden.cases.length > 0 && golden.meta.torch, "the golden file has cases and a torch version");
  ok(golden.meta.nchw_equals_flattened, "torch's normalisation of [N, C, H, W] equals that of its [N, C, H * W] view");
  for (const c of golden.cases) assertClose(channelNorm(argsOf(c)), fromJson(c.out), oneUlp, `torch ${c.label}`);
});

Deno.test("channel_norm goldens pin the conventions: over channels, eps clamps the norm, sqrt(C), SiLU after the bias", async () => {
  const golden = await loadChannelNormGolden();
  /** The largest |difference| from torch of an alternative: `normalised(args, n, c, l)`, then the affine and SiLU as given. */
  const miss = (
    normalised: (args: ChannelNormArgs, n: number, c: number, l: number) => number,
    finish = (y: number, args: ChannelNormArgs, c: number) => {
      const z = y * (args.weight?.[c] ?? 1) + (args.bias?.[c] ?? 0);
      return args.activation === "silu" ? z / (1 + Math.exp(-z)) : z;
    },
  ) => {
    let worst = 0;
    for (const gc of golden.cases) {
      const args = argsOf(gc), expected = fromJson(gc.out);
      for (let n = 0; n < gc.N; n++) {
        for (let c = 0; c < gc.C; c++) {
          for (let l = 0; l < gc.L; l++) {
            const i = (n * gc.C + c) * gc.L + l;
            worst = Math.max(worst, Math.abs(finish(normalised(args, n, c, l), args, c) - expected[i]));
          }
        }
      }
    }
    return worst;
  };
  const at = (args: ChannelNormArgs, n: number, c: number, l: number) => args.x[(n * args.C + c) * args.L + l];
  const squaresAt = (args: ChannelNormArgs, n: number, l: number) => {
    let s = 0;
    for (let c = 0; c < args.C; c++) s += at(args, n, c, l) ** 2;
    return s;
  };
  const eps = (args: ChannelNormArgs) => args.eps ?? 1e-12;
  const definition = (args: ChannelNormArgs, n: number, c: number, l: number) =>
    at(args, n, c, l) / Math.max(Math.sqrt(squaresAt(args, n, l)), eps(args)) * Math.sqrt(args.C);
  ok(miss(definition) < 1e-5, "the definition itself agrees");
  ok(
    miss((a, n, c, l) => at(a, n, c, l) / (Math.sqrt(squaresAt(a, n, l)) + eps(a)) * Math.sqrt(a.C)) > 0.01,
    "eps added to the norm must differ",
  );
  ok(
    miss((a, n, c, l) => at(a, n, c, l) / Math.sqrt(squaresAt(a, n, l) / a.C + eps(a))) > 0.01,
    "eps inside the root of the mean square (RMSNorm's) must differ",
  );
  ok(miss((a, n, c, l) => definition(a, n, c, l) / Math.sqrt(a.C)) > 0.1, "F.normalize without sqrt(C) must differ");
  // Over a channel's positions (instance-norm-like) rather than over the channels of a position.
  const overPositions = (a: ChannelNormArgs, n: number, c: number, l: number) => {
    let s = 0;
    for (let k = 0; k < a.L; k++) s += at(a, n, c, k) ** 2;
    return at(a, n, c, l) / Math.max(Math.sqrt(s), eps(a)) * Math.sqrt(a.L);
  };
  ok(miss(overPositions) > 0.1, "the norm over positions must differ");
  // SiLU before the bias rather than after it.
  const siluFirst = (y: number, a: ChannelNormArgs, c: number) => {
    const z = y * (a.weight?.[c] ?? 1);
    return (a.activation === "silu" ? z / (1 + Math.exp(-z)) : z) + (a.bias?.[c] ?? 0);
  };
  ok(miss(definition, siluFirst) > 0.01, "SiLU before the bias must differ");
});

gpuTest("channel_norm GPU matches the torch goldens", async (gpu) => {
  const golden = await loadChannelNormGolden();
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertClose(await channelNormGpu(gpu, args), fromJson(c.out), kernelTolerance(args), `torch ${c.label}`);
  }
});
