import { deepStrictEqual, ok } from "node:assert/strict";
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
  KERNELS,
  snake,
  SNAKE_EPS,
  type SnakeArgs,
  snakeBeta,
  type SnakeBetaArgs,
  snakeBetaGpu,
  snakeBetaPlan,
  snakeGpu,
  snakePlan,
} from "./mod.ts";
import type { SnakeVariant } from "./kernels.gen.ts";

/** SnakeBeta's arguments without beta: Snake1d's (which refuses a beta it would ignore). */
const plain = ({ beta: _beta, ...args }: SnakeBetaArgs): SnakeArgs => args;

type JsonF32 = (number | string)[];
interface Golden {
  meta: { torch: string };
  cases: {
    label: string;
    N: number;
    C: number;
    L: number;
    x: JsonF32;
    alpha: JsonF32;
    beta: JsonF32;
    snake: JsonF32;
    snake_beta: JsonF32;
  }[];
}
const loadSnakeGolden = () => loadGolden<Golden>(new URL("./goldens/snake.json", import.meta.url));
const fromJson = (xs: JsonF32) => Float32Array.from(xs, Number);
const f32 = (xs: number[]) => new Float32Array(xs);
/** The reference and the goldens both round an f64 result to f32 once: one f32 ULP apart at most. */
const oneUlp = { atol: 0, rtol: 2 ** -23 };

Deno.test("snake reference: hand-derived values", () => {
  // alpha = 1: pi/2 -> pi/2 + sin(pi/2)^2 / (1 + 1e-9); 0 -> 0.
  const half = Math.fround(Math.PI / 2);
  assertClose(snake({ x: f32([half, 0]), alpha: f32([1]), N: 1, C: 1, L: 2 }), [half + Math.sin(half) ** 2, 0], oneUlp);
  // Channel c of [N, C, L] takes alpha[c]: x = 1 everywhere, alpha = [1, 2] per channel, N = 2.
  const out = snake({ x: f32([1, 1, 1, 1, 1, 1, 1, 1]), alpha: f32([1, 2]), N: 2, C: 2, L: 2 });
  const one = 1 + Math.sin(1) ** 2, two = 1 + Math.sin(2) ** 2 / 2;
  assertClose(out, [one, one, two, two, one, one, two, two], oneUlp, "per channel, not per position");
  // SnakeBeta with beta = alpha is Snake1d.
  const x = randomF32(30, 1, -3, 3), alpha = randomF32(3, 2, 0.1, 2);
  deepStrictEqual(snakeBeta({ x, alpha, beta: alpha, N: 2, C: 3, L: 5 }), snake({ x, alpha, N: 2, C: 3, L: 5 }));
  // beta divides, alpha is the frequency: sin(0.5 * 2)^2 / 4.
  assertClose(
    snakeBeta({ x: f32([2]), alpha: f32([0.5]), beta: f32([4]), N: 1, C: 1, L: 1 }),
    [2 + Math.sin(1) ** 2 / 4],
    oneUlp,
  );
});

Deno.test("snake reference: a beta = 0 channel stays finite, at 1e9 * sin^2", () => {
  const out = snakeBeta({ x: f32([1, 2]), alpha: f32([1]), beta: f32([0]), N: 1, C: 1, L: 2 });
  ok(out.every(Number.isFinite));
  assertClose(out, [1 + Math.sin(1) ** 2 / SNAKE_EPS, 2 + Math.sin(2) ** 2 / SNAKE_EPS], oneUlp);
});

async function rejectsBadInput(run: (args: SnakeBetaArgs) => unknown, readsBeta = true): Promise<void> {
  const x = f32([1, 2, 3, 4, 5, 6]), alpha = f32([1, 2]), beta = f32([1, 1]);
  await assertThrowsMessage(
    () => run({ x, alpha, beta, N: 1, C: 2, L: 4 }),
    "snake: x must have length N * C * L = 8, got 6",
  );
  await assertThrowsMessage(() => run({ x, alpha, beta, N: 0, C: 2, L: 3 }), "snake: N must be an integer >= 1, got 0");
  await assertThrowsMessage(() => run({ x, alpha, beta, N: 1, C: 2.5, L: 3 }), "C must be an integer >= 1, got 2.5");
  await assertThrowsMessage(
    () => run({ x, alpha: f32([1]), beta, N: 1, C: 2, L: 3 }),
    "snake: alpha must have length C = 2, got 1",
  );
  await assertThrowsMessage(
    () => run({ x, alpha: [1, 2] as unknown as Float32Array, beta, N: 1, C: 2, L: 3 }),
    "snake: alpha must be a Float32Array, got Array",
  );
  if (!readsBeta) return;
  await assertThrowsMessage(
    () => run({ x, alpha, beta: f32([1, 2, 3]), N: 1, C: 2, L: 3 }),
    "beta must have length C = 2, got 3",
  );
}

Deno.test("snake reference: bad input throws naming the argument", async () => {
  await rejectsBadInput(snakeBeta);
  await rejectsBadInput((args: SnakeBetaArgs) => snake(plain(args)), false);
  await assertThrowsMessage(
    () => snake({ x: f32([1]), alpha: f32([1]), N: 1, C: 1, L: 1, beta: f32([1]) } as SnakeArgs),
    'snake: unknown argument "beta" (expected x, alpha, N, C, L)',
  );
});

gpuTest("snake GPU: bad input throws before dispatch", async (gpu) => {
  await rejectsBadInput((args) => snakeBetaGpu(gpu, args));
  await rejectsBadInput((args) => snakeGpu(gpu, plain(args)), false);
  await assertThrowsMessage(() => snakePlan(gpu, { N: 1, C: 0, L: 3 }), "snake: C must be an integer >= 1, got 0");
  await assertThrowsMessage(
    () => snakeGpu(gpu, { x: f32([1]), alpha: f32([1]), N: 1, C: 1, L: 1 }, { override: "beta" }),
    'override "beta" is not a variant of entry point "kernel"',
  );
});

gpuTest("snake GPU: plans declare their bindings and an honest cost", (gpu) => {
  const plan = snakeBetaPlan(gpu, { N: 2, C: 3, L: 5 });
  deepStrictEqual(plan.bindings.map((b) => [b.name, b.length]), [["x", 30], ["alpha", 3], ["beta", 3], ["out", 30]]);
  deepStrictEqual(plan.cost, { bytes: 8 * 30 + 4 * 6, flops: 5 * 30 });
  deepStrictEqual(snakePlan(gpu, { N: 2, C: 3, L: 5 }).cost.bytes, 8 * 30 + 4 * 3);
});

// Kernel vs reference: WGSL's sin is accurate to an absolute error, not a relative one (a few 1e-7
// on NVIDIA and llvmpipe for arguments of a few radians; range reduction grows it with |alpha x|), and
// that error is multiplied by 1 / (d + 1e-9), up to 1e9 for a zero divisor; the reciprocal and the
// products round at a few ULP. So atol = 4e-6 * (1 + max |alpha x|) * max 1 / |d + 1e-9| and rtol 1e-6.
function kernelTolerance(args: SnakeArgs, divisor: Float32Array): Tolerance {
  const maxX = args.x.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const maxAlpha = args.alpha.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
  const maxInverse = divisor.reduce((m, v) => Math.max(m, 1 / Math.abs(v + SNAKE_EPS)), 0);
  return { atol: 4e-6 * (1 + maxAlpha * maxX) * maxInverse, rtol: 1e-6 };
}

// [N, C, L]: L = 1, L % 4 != 0 (per-component channels), L % 4 == 0 (a quad in one channel), more
// than one block per workgroup and a partial last block, and fewer than 4 elements in all.
const shapes: [number, number, number][] = [[1, 1, 1], [1, 1, 3], [2, 3, 7], [3, 5, 8], [1, 7, 1025], [2, 4, 4096], [
  1,
  2,
  4099,
]];
const cases = (seed: number) =>
  shapes.map(([N, C, L], i) => ({
    label: `N=${N} C=${C} L=${L}`,
    args: {
      x: randomF32(N * C * L, seed + i, -3, 3),
      alpha: randomF32(C, seed + 100 + i, -2, 2),
      beta: randomF32(C, seed + 200 + i, 0.1, 3),
      N,
      C,
      L,
    },
  }));
checkAgainstReference<SnakeArgs, SnakeVariant>(
  "snake",
  KERNELS,
  "kernel",
  cases(10).map(({ label, args }) => ({ label, args: plain(args) })),
  snake,
  snakeGpu,
  (args) => kernelTolerance(args, args.alpha),
);
checkAgainstReference<SnakeBetaArgs, SnakeVariant>(
  "snake",
  KERNELS,
  "beta",
  [
    ...cases(20),
    { label: "beta = 0", args: { x: randomF32(9, 3, -3, 3), alpha: f32([1.5]), beta: f32([0]), N: 1, C: 1, L: 9 } },
  ],
  snakeBeta,
  snakeBetaGpu,
  (args) => kernelTolerance(args, args.beta),
);

Deno.test("snake reference matches the torch goldens (DAC's Snake1d and BigVGAN's SnakeBeta)", async () => {
  const golden = await loadSnakeGolden();
  ok(golden.cases.length > 0 && golden.meta.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    const args = { x: fromJson(c.x), alpha: fromJson(c.alpha), beta: fromJson(c.beta), N: c.N, C: c.C, L: c.L };
    assertClose(snake(plain(args)), fromJson(c.snake), oneUlp, `Snake1d ${c.label}`);
    assertClose(snakeBeta(args), fromJson(c.snake_beta), oneUlp, `SnakeBeta ${c.label}`);
  }
});

Deno.test("snake goldens pin the conventions: eps inside the reciprocal, parameters not exponentiated, sin squared", async () => {
  const c = (await loadSnakeGolden()).cases.find((c) => c.label.includes("beta 0 and 1e-6"));
  ok(c, "the golden has the beta = 0 and 1e-6 case");
  const x = fromJson(c.x), alpha = fromJson(c.alpha), beta = fromJson(c.beta), expected = fromJson(c.snake_beta);
  ok(beta[0] === 0 && expected.subarray(0, c.L).every(Number.isFinite), "torch's beta = 0 channel is finite");
  // The alternatives, each computed on the same inputs, must miss torch by far more than one ULP.
  const worstMiss = (f: (v: number, a: number, b: number) => number) => {
    let worst = 0;
    for (let ch = 0; ch < c.C; ch++) {
      for (let l = 0; l < c.L; l++) {
        const i = ch * c.L + l;
        worst = Math.max(worst, Math.abs(f(x[i], alpha[ch], beta[ch]) - expected[i]) / Math.abs(expected[i]));
      }
    }
    return worst;
  };
  const beside = (v: number, a: number, b: number) =>
    v + Math.sin(a * v) ** 2 * (b === 0 ? Infinity : 1 / b + SNAKE_EPS);
  ok(!(worstMiss(beside) < 1e-4), "eps outside the reciprocal (1 / beta + 1e-9) must differ");
  const clamped = (v: number, a: number, b: number) => v + Math.sin(a * v) ** 2 / Math.max(b, SNAKE_EPS);
  ok(worstMiss(clamped) > 1e-4, "1 / max(beta, 1e-9) must differ");
  const exponentiated = (v: number, a: number, b: number) =>
    v + Math.sin(Math.exp(a) * v) ** 2 / (Math.exp(b) + SNAKE_EPS);
  ok(worstMiss(exponentiated) > 1e-2, "exp of the stored parameters must differ");
  const sineOfSquare = (v: number, a: number, b: number) => v + Math.sin((a * v) ** 2) / (b + SNAKE_EPS);
  ok(worstMiss(sineOfSquare) > 1e-2, "sin((alpha x)^2) must differ");
  assertClose(snakeBeta({ x, alpha, beta, N: c.N, C: c.C, L: c.L }), expected, oneUlp, "the reference itself");
});

gpuTest("snake GPU matches the torch goldens", async (gpu) => {
  const golden = await loadSnakeGolden();
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const args = { x: fromJson(c.x), alpha: fromJson(c.alpha), beta: fromJson(c.beta), N: c.N, C: c.C, L: c.L };
    assertClose(
      await snakeGpu(gpu, plain(args)),
      fromJson(c.snake),
      kernelTolerance(args, args.alpha),
      `Snake1d ${c.label}`,
    );
    const got = await snakeBetaGpu(gpu, args);
    ok(got.every(Number.isFinite), `SnakeBeta ${c.label}: finite`);
    assertClose(got, fromJson(c.snake_beta), kernelTolerance(args, args.beta), `SnakeBeta ${c.label}`);
  }
});
