// snake and snakeBeta on NaN and ±Infinity, held to torch (goldens/nonfinite.py, DAC's Snake1d and
// BigVGAN's SnakeBeta in float64 on float32 inputs, as the reference computes): NaN or ±inf in x gives
// NaN (sin of an infinity is NaN), NaN or ±inf in alpha makes its channel NaN, NaN in beta makes its
// channel NaN and ±inf in beta leaves its channel's x as it is (1 / inf is 0). Both entry points give
// the reference's values, at L 5 (quads straddling channels) and 4 (quads within one).
import {
  KERNELS,
  snake,
  type SnakeArgs,
  snakeBeta,
  type SnakeBetaArgs,
  snakeBetaGpu,
  snakeGpu,
  type SnakeVariant,
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
  entry: "kernel" | "beta";
  nonfinite: "x" | "alpha" | "beta";
  N: number;
  C: number;
  L: number;
  x: GoldenFloat[];
  alpha: GoldenFloat[];
  beta?: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): SnakeBetaArgs => ({
  N: c.N,
  C: c.C,
  L: c.L,
  x: goldenF32(c.x),
  alpha: goldenF32(c.alpha),
  ...(c.beta && { beta: goldenF32(c.beta) }),
} as SnakeBetaArgs);
const label = (c: Case) => `${c.entry}, non-finite ${c.nonfinite}, L ${c.L}`;

Deno.test(`snake reference: NaN and ±Infinity in x, alpha and beta give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ [c.nonfinite]: args[c.nonfinite] });
    const got = c.entry === "kernel" ? snake(args) : snakeBeta(args);
    assertClose(got, goldenF32(c.out), { atol: 1e-12, rtol: 2 ** -22 }, label(c));
  }
});

// f32 sin against f64 (WGSL: 2^-11 absolute on [-pi, pi]); the non-finite values are exact.
const tol = { atol: 1e-5, rtol: 1e-5 };
const casesOf = (entry: Case["entry"]) =>
  golden.cases.filter((c) => c.entry === entry).map((c) => ({ label: label(c), args: argsOf(c) }));
checkAgainstReference<SnakeArgs, SnakeVariant>(
  "snake (non-finite)",
  KERNELS,
  "kernel",
  casesOf("kernel"),
  snake,
  snakeGpu,
  tol,
);
checkAgainstReference<SnakeBetaArgs, SnakeVariant>(
  "snakeBeta (non-finite)",
  KERNELS,
  "beta",
  casesOf("beta"),
  snakeBeta,
  snakeBetaGpu,
  tol,
);
