import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  planningDevice,
  randomF32,
  type Tolerance,
} from "../../harness/testing.ts";
import { packQ4, packQ8, quantizeQ4G128 } from "../matvec/reference.ts";
import { quantizePacked, quantizePackedPlan } from "../quantize/mod.ts";
import {
  DP4A_Q8_TOL,
  dp4aQ4Case,
  dp4aQ4Tolerance,
  dp4aQ8Case,
  epilogueLabel,
  type EpilogueSteps,
  fusedTolerance,
  largest,
  withEpilogue,
} from "./cases.ts";
import {
  applyEpilogue,
  KERNELS,
  type MatmulEpilogueArgs,
  matmulQ4G128,
  matmulQ4G128Dp4a,
  type MatmulQ4G128Dp4aArgs,
  matmulQ4G128Dp4aGpu,
  matmulQ4G128Dp4aPlan,
  matmulQ8,
  matmulQ8Dp4a,
  type MatmulQ8Dp4aArgs,
  matmulQ8Dp4aGpu,
  matmulQ8Dp4aPlan,
  type MatmulVariant,
} from "./mod.ts";

// The dp4a products' fused epilogue: where the reference applies it (to the finished value, after
// the weight's and the activations' scales), every fused kernel against the reference with each step
// alone and together, tolerances that each alternative convention fails, the plans' bindings and
// params, the plain path left as it was (its plan, and its outputs bit for bit through the fused
// kernels' identical product), and a model's FFN on resident tensors.

const f32 = (xs: number[]) => new Float32Array(xs);
const u32 = (xs: number[]) => new Uint32Array(xs);
type Dp4aArgs = MatmulQ8Dp4aArgs | MatmulQ4G128Dp4aArgs;

/** The arguments without their epilogue: the plain product. */
function plainOf<A extends Dp4aArgs>(args: A): A {
  const { bias: _b, activation: _a, gate: _g, gateRows: _r, accumulate: _u, c: _c, ...plain } = args;
  return plain as A;
}

// ---- reference facts --------------------------------------------------------------------------

Deno.test("dp4a epilogue reference: applied to the finished value, after the weight's and the activations' scales", () => {
  // a's codes [1, 2, 3, 4] at 0.25; the weight's [1, 1, 1, -1] at 2: y = (1 + 2 + 3 - 4) 0.25 2 = 1.
  const q8 = {
    a: u32([0x04030201]),
    aScales: f32([0.25]),
    weight: u32([0xff010101]),
    scales: f32([2]),
    M: 1,
    N: 1,
    K: 4,
  };
  deepStrictEqual([...matmulQ8Dp4a(q8)], [1]);
  // silu(1 + 1) = 2 sigmoid(2). The bias added to the integer sum before the scales would give
  // silu((2 + 1) 0.5) = silu(1.5), and before the activation scale only silu((4 + 1) 0.25).
  const silu = (v: number) => v / (1 + Math.exp(-v));
  strictEqual(matmulQ8Dp4a({ ...q8, bias: f32([1]), activation: "silu" })[0], Math.fround(silu(2)));
  // All four steps: 10 + silu(1 + 1) * -3.
  const all = { bias: f32([1]), activation: "silu" as const, gate: f32([-3]), gateRows: 1, accumulate: true };
  strictEqual(matmulQ8Dp4a({ ...q8, ...all, c: f32([10]) })[0], Math.fround(10 - 3 * silu(2)));
  // q4: two rows of a, codes [3, 1] at 0.5 and [1, 1] at 0.25; nibbles [1, -1] at scale 2; y = [2, 0].
  // One batch item of two tokens (gateRows 2): both rows take gate row 0, then the prior c is added.
  const q4 = {
    a: u32([0x0103, 0x0101]),
    aScales: f32([0.5, 0.25]),
    weight: u32([0xf1]),
    scales: f32([2]),
    M: 2,
    N: 1,
    K: 2,
  };
  deepStrictEqual([...matmulQ4G128Dp4a(q4)], [2, 0]);
  const gated = { gate: f32([-1.5]), gateRows: 2, accumulate: true, c: f32([100, 200]) };
  deepStrictEqual([...matmulQ4G128Dp4a({ ...q4, bias: f32([1]), ...gated })], [100 - 4.5, 200 - 1.5]);
});

Deno.test("dp4a epilogue reference: the f32-activation products' epilogue on the same product (one definition)", () => {
  // As dp4a.test.ts's equivalence of the plain products, with every step on: activation scales that
  // are powers of two make the dequantised activations exact in f32, so matmulQ8 and matmulQ4G128 see
  // the same product and apply the same epilogue (q8 bit for bit, q4 within one f32 rounding).
  const M = 4, N = 5, K = 300;
  const codes = new Int32Array(M * K).map((_, i) => ((i * 53) % 255) - 127);
  const aScales = f32([2 ** -9, 2 ** -7, 2 ** -12, 2 ** -8]);
  const a = packQ8(codes, M, K);
  const dequantized = Float32Array.from(codes, (c, i) => c * aScales[Math.floor(i / K)]);
  const steps: EpilogueSteps = { bias: true, activation: "gelu_tanh", gateRows: 2, accumulate: true };
  const epilogue = withEpilogue({ M, N }, steps, 70);
  const w8 = {
    weight: packQ8(new Int32Array(N * K).map((_, i) => ((i * 37) % 255) - 127), N, K),
    scales: randomF32(N, 2, 0.0005, 0.002),
  };
  const q8 = matmulQ8Dp4a({ ...epilogue, a, aScales, ...w8, M, N, K });
  deepStrictEqual(q8, matmulQ8({ ...epilogue, a: dequantized, ...w8, M, N, K }));
  // The epilogue did something: the plain product differs.
  ok(q8.some((v, i) => v !== matmulQ8Dp4a({ a, aScales, ...w8, M, N, K })[i]));
  const q4 = quantizeQ4G128({ x: randomF32(N * K, 3, -0.2, 0.2), rows: N, cols: K });
  const w4 = { weight: packQ4(q4.codes, N, K), scales: q4.scales };
  assertClose(
    matmulQ4G128Dp4a({ ...epilogue, a, aScales, ...w4, M, N, K }),
    matmulQ4G128({ ...epilogue, a: dequantized, ...w4, M, N, K }),
    { atol: 1e-12, rtol: 2 ** -23 },
    "q4g128",
  );
});

Deno.test("dp4a epilogue reference: bad epilogue arguments throw naming the product and the argument", async () => {
  const q8 = { a: u32([0, 0]), aScales: f32([1, 1]), weight: u32([0, 0, 0]), scales: f32([1, 1, 1]), M: 2, N: 3, K: 4 };
  const refused: [MatmulEpilogueArgs | Record<string, unknown>, string][] = [
    [{ bias: f32([1, 2]) }, "matmulQ8Dp4a: bias must have length N = 3, got 2"],
    [{ activation: "relu" }, 'matmulQ8Dp4a: activation must be one of "gelu", "gelu_tanh", "silu", got "relu"'],
    [{ gateRows: 3, gate: f32([1, 2, 3]) }, "matmulQ8Dp4a: gateRows (tokens per batch item) must divide M = 2, got 3"],
    [{ gateRows: 1 }, "matmulQ8Dp4a: gate must be a Float32Array, got undefined"],
    [{ gate: f32([1, 2, 3]) }, "matmulQ8Dp4a: gate needs gateRows"],
    [{ accumulate: true }, "matmulQ8Dp4a: c must be a Float32Array, got undefined"],
    [{ c: new Float32Array(6) }, "matmulQ8Dp4a: c (the prior output) is read only with accumulate: true"],
    [{ bias: true }, "matmulQ8Dp4a: bias must be a Float32Array, got true"],
  ];
  for (const [epilogue, message] of refused) {
    await assertThrowsMessage(() => matmulQ8Dp4a({ ...q8, ...epilogue } as MatmulQ8Dp4aArgs), message);
  }
  await assertThrowsMessage(
    () => matmulQ4G128Dp4a({ ...q8, gateRows: 2, gate: f32([1, 2]) }),
    "matmulQ4G128Dp4a: gate must have length M / gateRows * N = 3, got 2",
  );
  await assertThrowsMessage(
    () => applyEpilogue(new Float64Array(5), { M: 2, N: 3 }),
    "applyEpilogue: y must be a Float64Array of length M * N = 6, got length 5",
  );
});

// ---- every fused kernel against the reference ------------------------------------------------

// Each step alone, then together; gates of one row per token (gateRows 1), of many tokens and of all
// of them (gateRows = M). Sizes: M = N = K = 1; M and N below, past and not multiples of either tile
// (the 128 x 128 tiles' edges at 129 to 136); K not a multiple of 4, of the 64 x 64 tiles' step and
// q4's group (128) or the 128 x 128 tiles' (64), one group plus one column, a last group ending after
// one step of the 128 x 128 tiles (260), several groups (1029); and arbitrary words (codes down to
// -128, non-zero padding).
const SHAPES: [number, number, number, EpilogueSteps, boolean?][] = [
  [1, 1, 1, { bias: true }],
  [7, 13, 5, { activation: "gelu_tanh" }],
  [9, 132, 37, { activation: "silu" }],
  [65, 67, 130, { activation: "gelu" }],
  [20, 130, 44, { gateRows: 5 }],
  [130, 3, 17, { accumulate: true }],
  [33, 65, 129, { bias: true, activation: "silu", gateRows: 11, accumulate: true }],
  [136, 132, 72, { bias: true, activation: "gelu", gateRows: 68, accumulate: true }],
  [129, 131, 260, { bias: true, activation: "gelu_tanh", gateRows: 129 }],
  [2, 3, 1029, { activation: "silu", gateRows: 1, accumulate: true }],
  [5, 9, 37, { bias: true, activation: "gelu", gateRows: 5, accumulate: true }, true],
];

/**
 * The product's own error bound over a case's outputs (E of cases.ts's fusedTolerance): the plain
 * kernels' tolerance (dp4a.test.ts) at the largest |y|.
 */
function productError(args: Dp4aArgs, q4: boolean): number {
  const plain = plainOf(args);
  const peak = largest((q4 ? matmulQ4G128Dp4a : matmulQ8Dp4a)(plain).map(Math.abs));
  const tol: Tolerance = q4 ? dp4aQ4Tolerance(plain as MatmulQ4G128Dp4aArgs) : DP4A_Q8_TOL;
  return tol.atol + tol.rtol * peak;
}

/**
 * A product's fused cases: the weight's scales rescaled so that the largest |y| is about 2, where
 * the activations bend (a product of hundreds would make SiLU and GELU the identity or zero), each
 * with its epilogue and its tolerance.
 */
function fusedCases<A extends Dp4aArgs>(
  make: (M: number, N: number, K: number, seed: number, raw: boolean) => { label: string; args: A },
  reference: (args: A) => Float32Array,
  q4: boolean,
  seed: number,
) {
  const cases = SHAPES.map(([M, N, K, steps, raw = false], i) => {
    const plain = make(M, N, K, seed + 10 * i, raw).args;
    const peak = largest(reference(plain).map(Math.abs)) || 1;
    const rescaled = { ...plain, scales: plain.scales.map((s) => (2 * s) / peak) };
    const label = `${raw ? "raw words " : ""}${M}x${N}x${K} ${epilogueLabel(steps)}`;
    return { label, args: withEpilogue(rescaled, steps, seed + 10 * i + 5) as A };
  });
  const tolerances = new Map(cases.map(({ args }) => [args, fusedTolerance(args, reference, productError(args, q4))]));
  return { cases, tol: (args: A) => tolerances.get(args)! };
}

const q8 = fusedCases(dp4aQ8Case, matmulQ8Dp4a, false, 2100);
const q4 = fusedCases(dp4aQ4Case, matmulQ4G128Dp4a, true, 2200);
for (const entry of ["q8row_dp4a_fused", "q8row_dp4a_tile64_fused", "q8row_dp4a_fused_pipelined"]) {
  checkAgainstReference("matmulQ8Dp4a, fused", KERNELS, entry, q8.cases, matmulQ8Dp4a, matmulQ8Dp4aGpu, q8.tol);
}
for (const entry of ["q4g128_dp4a_fused", "q4g128_dp4a_tile64_fused", "q4g128_dp4a_fused_pipelined"]) {
  const [reference, kernel] = [matmulQ4G128Dp4a, matmulQ4G128Dp4aGpu];
  checkAgainstReference("matmulQ4G128Dp4a, fused", KERNELS, entry, q4.cases, reference, kernel, q4.tol);
}

/**
 * Asserts that each alternative to the reference's conventions that a case's steps allow fails the
 * case's tolerance, and returns how many were checked.
 */
async function alternativesFail<A extends Dp4aArgs>(
  name: string,
  { cases, tol }: { cases: { label: string; args: A }[]; tol: (args: A) => Tolerance },
  reference: (args: A) => Float32Array,
): Promise<number> {
  let checked = 0;
  for (const { args, label } of cases) {
    const { M, N, bias, activation, gate, gateRows, accumulate, c } = args;
    const expected = reference(args);
    const y = Float64Array.from(reference(plainOf(args)));
    const what = `${name} ${label}`;
    const fails = (actual: Float32Array, alternative: string) =>
      assertThrowsMessage(() => assertClose(actual, expected, tol(args), `${what}: ${alternative}`), "atol");
    const epilogue = (v: Float64Array | Float32Array, steps: MatmulEpilogueArgs) =>
      applyEpilogue(Float64Array.from(v), { ...steps, M, N });
    const before = checked;
    if (activation === "gelu" || activation === "gelu_tanh") {
      const other = activation === "gelu" ? "gelu_tanh" : "gelu";
      await fails(epilogue(y, { ...args, activation: other }), `${other} for ${activation}`);
      checked++;
    }
    if (bias) {
      await fails(epilogue(y, { ...args, bias: undefined }), "no bias");
      checked++;
    }
    if (bias && activation) {
      await fails(
        epilogue(epilogue(y, { activation }), { ...args, activation: undefined }),
        "the bias after the activation",
      );
      checked++;
    }
    if (gate && activation) {
      await fails(epilogue(epilogue(y, { bias, gate, gateRows }), { activation, accumulate, c }), "the gate first");
      checked++;
    }
    // (With one gate row per token, gateRows 1, or one for all, gateRows M, the two agree.)
    if (gate && gateRows && gateRows > 1 && gateRows < M) {
      const items = M / gateRows;
      const byRow = new Float32Array(M * N).map((_, i) => gate[(Math.floor(i / N) % items) * N + (i % N)]);
      await fails(epilogue(y, { ...args, gate: byRow, gateRows: 1 }), "gate row m % items");
      checked++;
    }
    if (accumulate) {
      await fails(epilogue(y, { ...args, accumulate: undefined, c: undefined }), "c overwritten");
      checked++;
    }
    // The epilogue run before the activation scale (on the sum times the weight's scales) or, for q8,
    // before both scales (on the integer sum), the scales applied after it: what a kernel that ran it
    // on its sums instead of its finished outputs would give. (A gate alone commutes with them.)
    if (bias || activation || accumulate) {
      const scaledAfter = (scale: (m: number, n: number) => number) => {
        const at = (i: number) => scale(Math.floor(i / N), i % N);
        return epilogue(y.map((v, i) => v / at(i)), args).map((v, i) => v * at(i));
      };
      await fails(scaledAfter((m) => args.aScales[m]), "before the activation scale");
      checked++;
      if (name === "q8") {
        await fails(scaledAfter((m, n) => args.aScales[m] * args.scales[n]), "before both scales");
        checked++;
      }
    }
    ok(checked > before, `${what}: no alternative checked`);
  }
  return checked;
}

Deno.test("dp4a epilogue tolerance: tight enough that each convention's alternative fails it", async () => {
  const checked = await alternativesFail("q8", q8, matmulQ8Dp4a) + await alternativesFail("q4", q4, matmulQ4G128Dp4a);
  ok(checked >= 40, `${checked} alternatives checked`);
});

// ---- plans ------------------------------------------------------------------------------------

const describe = (plan: ReturnType<typeof matmulQ8Dp4aPlan>) =>
  plan.bindings.map((b) => [b.name, b.dtype, b.length, b.role]);

gpuTest(
  "dp4a epilogue plans: the fused kernels, their bindings in order with lengths and roles, params, costs",
  (gpu) => {
    const full = matmulQ8Dp4aPlan(gpu, {
      M: 6,
      N: 5,
      K: 7,
      bias: true,
      activation: "silu",
      gateRows: 3,
      accumulate: true,
    });
    strictEqual(full.kernel.variant, "q8row_dp4a_tile64_fused");
    deepStrictEqual(describe(full), [
      ["a", "u32", 6 * 2, "input"],
      ["aScales", "f32", 6, "input"],
      ["weight", "u32", 5 * 2, "input"],
      ["scales", "f32", 5, "input"],
      ["bias", "f32", 5, "input"],
      ["gate", "f32", 2 * 5, "input"],
      ["c", "f32", 30, "inout"],
    ]);
    // m, n, k, bias, activation (silu = 3), gate_rows, accumulate, and padding to 32 bytes.
    deepStrictEqual([...new Uint32Array(full.params!)], [6, 5, 7, 1, 3, 3, 1, 0]);
    // The operands read once, bias and gate read, c read and written; one operation per output each
    // for the bias, the gate and the accumulation.
    deepStrictEqual(full.cost, { bytes: 4 * (12 + 6 + 10 + 5 + 5 + 10 + 2 * 30), flops: 2 * 6 * 5 * 7 + 3 * 30 });
    // An activation alone: bias and gate of length 0, c written only; gelu = 1, gelu_tanh = 2.
    const gelu = matmulQ4G128Dp4aPlan(gpu, { M: 6, N: 5, K: 300, activation: "gelu" });
    strictEqual(gelu.kernel.variant, "q4g128_dp4a_tile64_fused");
    deepStrictEqual(describe(gelu), [
      ["a", "u32", 6 * 75, "input"],
      ["aScales", "f32", 6, "input"],
      ["weight", "u32", 5 * 38, "input"],
      ["scales", "f32", 5 * 3, "input"],
      ["bias", "f32", 0, "input"],
      ["gate", "f32", 0, "input"],
      ["c", "f32", 30, "output"],
    ]);
    deepStrictEqual([...new Uint32Array(gelu.params!)], [6, 5, 300, 0, 1, 0, 0, 0]);
    const tanh = matmulQ8Dp4aPlan(gpu, { M: 6, N: 5, K: 7, activation: "gelu_tanh" });
    deepStrictEqual([...new Uint32Array(tanh.params!)], [6, 5, 7, 0, 2, 0, 0, 0]);
    // A gate of one row per token (the FFN's (x W3^T) * silu(x W1^T)): gate [M, N].
    strictEqual(matmulQ4G128Dp4aPlan(gpu, { M: 6, N: 5, K: 7, gateRows: 1 }).bindings[5].length, 30);
    // The tile by size, as for the plain products; an override among the fused kernels picks it.
    // (The pipelined tiles, not yet timed, by override only.)
    const large = { M: 2048, N: 2048, K: 16, accumulate: true };
    strictEqual(matmulQ8Dp4aPlan(gpu, large).kernel.variant, "q8row_dp4a_fused");
    strictEqual(matmulQ4G128Dp4aPlan(gpu, large).kernel.variant, "q4g128_dp4a_fused");
    deepStrictEqual(matmulQ4G128Dp4aPlan(gpu, large).workgroups, [256, 1, 1]);
    strictEqual(matmulQ4G128Dp4aPlan(gpu, { ...large, M: 64 }).kernel.variant, "q4g128_dp4a_tile64_fused");
    const forced = matmulQ8Dp4aPlan(gpu, large, { override: "q8row_dp4a_tile64_fused" });
    deepStrictEqual(forced.workgroups, [32 * 32, 1, 1]);
    // The pipelined fused kernels: the fused bindings and params, the 128 x 128 tile's grid.
    const two = matmulQ4G128Dp4aPlan(gpu, { M: 6, N: 5, K: 300, activation: "gelu" }, {
      override: "q4g128_dp4a_fused_pipelined",
    });
    deepStrictEqual(describe(two), describe(gelu));
    deepStrictEqual([...new Uint32Array(two.params!)], [6, 5, 300, 0, 1, 0, 0, 0]);
    deepStrictEqual(matmulQ8Dp4aPlan(gpu, large, { override: "q8row_dp4a_fused_pipelined" }).workgroups, [256, 1, 1]);
  },
);

gpuTest("dp4a epilogue plans: without a step, the plain kernels, bindings, params and cost as before", (gpu) => {
  // What the LLM engine's prefill plans (models/llama) get: unchanged by the epilogue's existence.
  for (const shape of [{ M: 6, N: 5, K: 7 }, { M: 6, N: 5, K: 7, bias: false, accumulate: false }]) {
    const plain = matmulQ8Dp4aPlan(gpu, shape);
    strictEqual(plain.kernel.variant, "q8row_dp4a_tile64");
    deepStrictEqual(describe(plain), [
      ["a", "u32", 12, "input"],
      ["aScales", "f32", 6, "input"],
      ["weight", "u32", 10, "input"],
      ["scales", "f32", 5, "input"],
      ["c", "f32", 30, "output"],
    ]);
    deepStrictEqual([...new Uint32Array(plain.params!)], [6, 5, 7, 0]);
    deepStrictEqual(plain.cost, { bytes: 4 * (12 + 6 + 10 + 5 + 30), flops: 2 * 6 * 5 * 7 });
    strictEqual(matmulQ4G128Dp4aPlan(gpu, shape).kernel.variant, "q4g128_dp4a_tile64");
  }
  strictEqual(matmulQ8Dp4aPlan(gpu, { M: 2048, N: 2048, K: 16 }).kernel.variant, "q8row_dp4a");
  strictEqual(matmulQ4G128Dp4aPlan(gpu, { M: 2048, N: 2048, K: 16 }).kernel.variant, "q4g128_dp4a");
  // The pipelined tiles by override on an NVIDIA device that grants their 32 KiB: without a step, the
  // plain pipelined kernel, its bindings and params the plain ones; with one, the fused pipelined one.
  const nvidia = planningDevice(32768, "nvidia");
  strictEqual(matmulQ8Dp4aPlan(nvidia, { M: 2048, N: 2048, K: 16 }).kernel.variant, "q8row_dp4a");
  const planned = matmulQ8Dp4aPlan(nvidia, { M: 2048, N: 2048, K: 16, bias: false }, {
    override: "q8row_dp4a_pipelined",
  });
  strictEqual(planned.kernel.variant, "q8row_dp4a_pipelined");
  deepStrictEqual(describe(planned).map(([name]) => name), ["a", "aScales", "weight", "scales", "c"]);
  deepStrictEqual([...new Uint32Array(planned.params!)], [2048, 2048, 16, 0]);
  strictEqual(
    matmulQ4G128Dp4aPlan(nvidia, { M: 2048, N: 2048, K: 16, gateRows: 2048 }, {
      override: "q4g128_dp4a_fused_pipelined",
    }).kernel.variant,
    "q4g128_dp4a_fused_pipelined",
  );
});

gpuTest(
  "dp4a epilogue plans: bad steps and mismatched overrides are refused, naming them, before any GPU work",
  async (gpu) => {
    await assertThrowsMessage(
      () => matmulQ8Dp4aPlan(gpu, { M: 6, N: 2, K: 4, gateRows: 4 }),
      "matmulQ8Dp4a: gateRows (tokens per batch item) must divide M = 6, got 4",
    );
    await assertThrowsMessage(
      () => matmulQ4G128Dp4aPlan(gpu, { M: 6, N: 2, K: 4, bias: 1 as unknown as boolean }),
      "matmulQ4G128Dp4a: bias must be a boolean, got 1",
    );
    await assertThrowsMessage(
      () => matmulQ4G128Dp4aPlan(gpu, { M: 6, N: 2, K: 4, activation: "relu" as "gelu" }),
      'matmulQ4G128Dp4a: activation must be one of "gelu", "gelu_tanh", "silu", got "relu"',
    );
    // The override must be a kernel of the plan's kind: fused with an epilogue, plain without.
    await assertThrowsMessage(
      () => matmulQ8Dp4aPlan(gpu, { M: 6, N: 2, K: 4, activation: "silu" }, { override: "q8row_dp4a" }),
      'matmulQ8Dp4a: override "q8row_dp4a" is not a variant of entry point "q8row_dp4a_fused" or "q8row_dp4a_tile64_fused" or "q8row_dp4a_fused_pipelined"',
    );
    await assertThrowsMessage(
      () => matmulQ4G128Dp4aPlan(gpu, { M: 6, N: 2, K: 4 }, { override: "q4g128_dp4a_fused" }),
      'matmulQ4G128Dp4a: override "q4g128_dp4a_fused" is not a variant of entry point "q4g128_dp4a" or "q4g128_dp4a_tile64" or "q4g128_dp4a_pipelined"',
    );
    await assertThrowsMessage(
      () => matmulQ8Dp4aPlan(gpu, { M: 6, N: 2, K: 4, bias: true }, { override: "q8row_dp4a_pipelined" }),
      'matmulQ8Dp4a: override "q8row_dp4a_pipelined" is not a variant of entry point "q8row_dp4a_fused"',
    );
    await assertThrowsMessage(
      () => matmulQ4G128Dp4aPlan(gpu, { M: 6, N: 2, K: 4 }, { override: "q4g128_dp4a_fused_pipelined" }),
      'matmulQ4G128Dp4a: override "q4g128_dp4a_fused_pipelined" is not a variant of entry point "q4g128_dp4a"',
    );
    // A resident submit missing the gate of a fused plan is refused before encoding.
    const plan = matmulQ8Dp4aPlan(gpu, { M: 2, N: 1, K: 4, gateRows: 1 });
    const [a, aScales, weight, scales, gate, c] = [
      u32([0, 0]),
      f32([1, 1]),
      u32([0]),
      f32([1]),
      f32([1, 1]),
      f32([0, 0]),
    ]
      .map((x) => gpu.upload(x));
    await assertThrowsMessage(
      () => gpu.submit([plan, [a, aScales, weight, scales, gate, c]]),
      "expected 7 tensors, got 6",
    );
  },
);

// ---- the plain path, and fusing changes nothing but the store ----------------------------------

gpuTest(
  "dp4a epilogue: a fused kernel's product is its plain kernel's, bit for bit (an identity gate)",
  async (gpu) => {
    // Multiplying by 1 is exact, so a gate of ones (one row for all of M) leaves each output as the
    // product computed it: any change to the product's text or order in a fused kernel shows here.
    const shapes: [number, number, number][] = [[3, 5, 7], [65, 67, 130], [129, 131, 260], [7, 130, 1029]];
    const pairs = [
      ["q8row_dp4a", "q8row_dp4a_fused", false],
      ["q8row_dp4a_tile64", "q8row_dp4a_tile64_fused", false],
      ["q8row_dp4a_pipelined", "q8row_dp4a_fused_pipelined", false],
      ["q4g128_dp4a", "q4g128_dp4a_fused", true],
      ["q4g128_dp4a_tile64", "q4g128_dp4a_tile64_fused", true],
      ["q4g128_dp4a_pipelined", "q4g128_dp4a_fused_pipelined", true],
    ] as const;
    for (const [plain, fused, isQ4] of pairs) {
      for (const [i, [M, N, K]] of shapes.entries()) {
        const { args } = (isQ4 ? dp4aQ4Case : dp4aQ8Case)(M, N, K, 3000 + i, i % 2 === 1);
        const run = (args: Dp4aArgs, override: MatmulVariant) =>
          isQ4 ? matmulQ4G128Dp4aGpu(gpu, args, { override }) : matmulQ8Dp4aGpu(gpu, args, { override });
        const product = await run(args, plain);
        const gated = await run({ ...args, gate: new Float32Array(N).fill(1), gateRows: M }, fused);
        deepStrictEqual(gated, product, `${fused} against ${plain} at ${M}x${N}x${K}`);
        ok(product.some((v) => v !== 0), `${plain} ${M}x${N}x${K}: a product to compare`);
      }
    }
  },
);

gpuTest(
  "dp4a epilogue: each pipelined fused kernel's outputs are its single-stage fused kernel's, bit for bit",
  async (gpu) => {
    // The same product, bit for bit (dp4a.test.ts), then the same epilogue text on it: every step on,
    // at edge shapes, interior tiles with and without a K tail, and many q4 groups.
    const shapes: [number, number, number, EpilogueSteps][] = [
      [3, 5, 7, { bias: true, activation: "gelu", accumulate: true }],
      [130, 129, 259, { bias: true, activation: "silu", gateRows: 13, accumulate: true }],
      [256, 136, 256, { activation: "gelu_tanh", gateRows: 1 }],
      [9, 132, 1029, { bias: true, activation: "gelu", gateRows: 9, accumulate: true }],
    ];
    const pairs = [
      ["q8row_dp4a_fused", "q8row_dp4a_fused_pipelined", false],
      ["q4g128_dp4a_fused", "q4g128_dp4a_fused_pipelined", true],
    ] as const;
    for (const [single, pipelined, isQ4] of pairs) {
      for (const [i, [M, N, K, steps]] of shapes.entries()) {
        const plain = (isQ4 ? dp4aQ4Case : dp4aQ8Case)(M, N, K, 3100 + i, i % 2 === 1).args;
        const args = withEpilogue(plain, steps, 3150 + i) as Dp4aArgs;
        const run = (override: MatmulVariant) =>
          isQ4 ? matmulQ4G128Dp4aGpu(gpu, args, { override }) : matmulQ8Dp4aGpu(gpu, args, { override });
        const expected = await run(single);
        deepStrictEqual(await run(pipelined), expected, `${pipelined} against ${single} at ${M}x${N}x${K}`);
        ok(expected.some((v) => v !== 0), `${single} ${M}x${N}x${K}: outputs to compare`);
      }
    }
  },
);

// ---- resident tensors: a model's FFN on int8 activations -----------------------------------------

gpuTest(
  "dp4a epilogue GPU: silu(x W1^T), then (x W3^T) * that, then a residual += through accumulate, on int8 activations",
  async (gpu) => {
    // One quantisation of x feeds both up-projections (q8 W1 with SiLU; q4 W3 gated by the first's
    // output, one gate row per token); their product is quantised again for the down-projection, whose
    // output is added to the residual stream in place, twice (c read, not overwritten).
    const [M, K, F] = [6, 40, 24];
    const x = randomF32(M * K, 1, -2, 2);
    const w1 = {
      weight: packQ8(Int32Array.from(randomF32(F * K, 2), (v) => Math.round(127 * v)), F, K),
      scales: randomF32(F, 3, 0.002, 0.004),
    };
    const q3 = quantizeQ4G128({ x: randomF32(F * K, 4, -0.1, 0.1), rows: F, cols: K });
    const w3 = { weight: packQ4(q3.codes, F, K), scales: q3.scales };
    const w2 = {
      weight: packQ8(Int32Array.from(randomF32(K * F, 5), (v) => Math.round(127 * v)), K, F),
      scales: randomF32(K, 6, 0.002, 0.004),
    };
    const residual0 = randomF32(M * K, 7);
    const t = {
      x: gpu.upload(x),
      a: gpu.alloc("u32", M * Math.ceil(K / 4)),
      aScales: gpu.alloc("f32", M),
      h1: gpu.alloc("f32", M * F),
      h3: gpu.alloc("f32", M * F),
      a2: gpu.alloc("u32", M * Math.ceil(F / 4)),
      a2Scales: gpu.alloc("f32", M),
      residual: gpu.upload(residual0),
      w1: gpu.upload(w1.weight),
      w1s: gpu.upload(w1.scales),
      w3: gpu.upload(w3.weight),
      w3s: gpu.upload(w3.scales),
      w2: gpu.upload(w2.weight),
      w2s: gpu.upload(w2.scales),
    };
    const down = matmulQ8Dp4aPlan(gpu, { M, N: K, K: F, accumulate: true });
    await gpu.submit(
      [quantizePackedPlan(gpu, { rows: M, cols: K }), [t.x, t.a, t.aScales]],
      [matmulQ8Dp4aPlan(gpu, { M, N: F, K, activation: "silu" }), [t.a, t.aScales, t.w1, t.w1s, t.x, t.x, t.h1]],
      [matmulQ4G128Dp4aPlan(gpu, { M, N: F, K, gateRows: 1 }), [t.a, t.aScales, t.w3, t.w3s, t.x, t.h1, t.h3]],
      [quantizePackedPlan(gpu, { rows: M, cols: F }), [t.h3, t.a2, t.a2Scales]],
      [down, [t.a2, t.a2Scales, t.w2, t.w2s, t.x, t.x, t.residual]],
      [down, [t.a2, t.a2Scales, t.w2, t.w2s, t.x, t.x, t.residual]],
    );
    // Each stage against the reference on the stage's own inputs as the GPU left them.
    const { packed: a, scales: aScales } = quantizePacked({ x, rows: M, cols: K });
    const h1 = await gpu.read(t.h1) as Float32Array;
    const up1 = { a, aScales, ...w1, M, N: F, K, activation: "silu" as const };
    assertClose(h1, matmulQ8Dp4a(up1), fusedTolerance(up1, matmulQ8Dp4a, productError(up1, false)), "silu(x W1^T)");
    const up3 = { a, aScales, ...w3, M, N: F, K, gate: h1, gateRows: 1 };
    const h3 = await gpu.read(t.h3);
    assertClose(
      h3,
      matmulQ4G128Dp4a(up3),
      fusedTolerance(up3, matmulQ4G128Dp4a, productError(up3, true)),
      "(x W3^T) * h1",
    );
    const [a2, a2Scales] = [await gpu.read(t.a2), await gpu.read(t.a2Scales)] as [Uint32Array, Float32Array];
    const once = { a: a2, aScales: a2Scales, ...w2, M, N: K, K: F, accumulate: true, c: residual0 };
    const twice = { ...once, c: matmulQ8Dp4a(once) };
    const got = await gpu.read(t.residual);
    assertClose(
      got,
      matmulQ8Dp4a(twice),
      fusedTolerance(twice, matmulQ8Dp4a, 2 * productError(twice, false)),
      "residual",
    );
    // Overwriting instead would leave one product; accumulating once, residual0 plus one.
    const product = matmulQ8Dp4a(plainOf(once));
    ok(got.some((v, i) => Math.abs(v - product[i]) > 1e-3), "the prior content was added");
    ok(got.some((v, i) => Math.abs(v - once.c[i] - product[i]) > 1e-3), "added twice");
  },
);
