// rope and ropeAxes on NaN and ±Infinity, held to torch (goldens/nonfinite.py, the rotation of adjacent
// pairs in float64 torch on float32 inputs, as the reference computes): a NaN channel makes its pair
// NaN; an infinite channel gives ±inf in its pair's outputs, except where its cos or sin is exactly 0
// (position 0: sin 0), where inf * 0 is NaN; a NaN or infinite angle in ropeCache makes its pair's
// outputs NaN (cos and sin of an infinity are NaN). Positions are refused unless finite (rope) or are
// integers (ropeAxes). Both entry points give the reference's values.
import {
  KERNELS,
  rope,
  type RopeArgs,
  ropeAxes,
  type RopeAxesArgs,
  ropeAxesGpu,
  ropeGpu,
  type RopeVariant,
} from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  entry: "kernel" | "axes";
  tokens: number;
  heads: number;
  headDim: number;
  x: GoldenFloat[];
  ropeCache?: GoldenFloat[];
  axesDims?: number[];
  theta?: number;
  positions?: number[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const ropeArgs = (c: Case): RopeArgs => ({
  x: goldenF32(c.x),
  tokens: c.tokens,
  heads: c.heads,
  headDim: c.headDim,
  ...(c.ropeCache && { ropeCache: goldenF32(c.ropeCache) }),
});
const axesArgs = (c: Case): RopeAxesArgs => ({
  x: goldenF32(c.x),
  tokens: c.tokens,
  heads: c.heads,
  headDim: c.headDim,
  axesDims: c.axesDims!,
  theta: c.theta!,
  positions: Int32Array.from(c.positions!),
});
const label = (c: Case) => `${c.entry}${c.ropeCache ? ", non-finite ropeCache" : ", non-finite x"}`;
// f64 cos and sin of f32 angles against torch's f64: one f32 rounding of each output.
const torchTol = { atol: 1e-12, rtol: 2 ** -22 };

Deno.test(`rope and ropeAxes reference: NaN and ±Infinity in x and ropeCache give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    if (c.entry === "kernel") {
      const args = ropeArgs(c);
      assertNonFiniteOperands(c.ropeCache ? { ropeCache: args.ropeCache! } : { x: args.x });
      assertClose(rope(args), goldenF32(c.out), torchTol, label(c));
    } else {
      const args = axesArgs(c);
      assertNonFiniteOperands({ x: args.x });
      assertClose(ropeAxes(args), goldenF32(c.out), torchTol, label(c));
    }
  }
});

// f32 angles, cos and sin in the kernel (the tables are the reference's inverse frequencies).
const tol = { atol: 1e-5, rtol: 1e-5 };
const ropeCases = golden.cases.filter((c) => c.entry === "kernel").map((c) => ({ label: label(c), args: ropeArgs(c) }));
checkAgainstReference<RopeArgs, RopeVariant>("rope (non-finite)", KERNELS, "kernel", ropeCases, rope, ropeGpu, tol);
const axesCases = golden.cases.filter((c) => c.entry === "axes").map((c) => ({ label: label(c), args: axesArgs(c) }));
checkAgainstReference<RopeAxesArgs, RopeVariant>(
  "ropeAxes (non-finite)",
  KERNELS,
  "axes",
  axesCases,
  ropeAxes,
  ropeAxesGpu,
  tol,
);
