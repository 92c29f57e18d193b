import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  type Tolerance,
} from "../../harness/testing.ts";
import { packQ4, packQ8, quantizeQ4G128 } from "../matvec/reference.ts";
import {
  denseCase,
  epilogueLabel,
  type EpilogueSteps,
  epilogueTolerance,
  type GemmArgs,
  type GemmCase,
  linearCase,
  pattern,
  q4Case,
  q8Case,
  withEpilogue,
} from "./cases.ts";
import {
  KERNELS,
  matmul,
  type MatmulActivation,
  type MatmulEpilogueArgs,
  matmulF16,
  matmulF16Plan,
  matmulGpu,
  matmulLinear,
  matmulLinearGpu,
  matmulLinearPlan,
  matmulPlan,
  matmulQ4G128,
  matmulQ4G128Gpu,
  matmulQ4G128Plan,
  matmulQ8,
  matmulQ8Gpu,
  matmulQ8Plan,
  packF16,
} from "./mod.ts";

// The fused epilogues: what the reference defines (pinned against the alternatives and torch's
// goldens), every fused kernel against the reference, the plans' bindings, and the refusals.

const f32 = (xs: number[]) => new Float32Array(xs);
// Two f64 evaluations of the same chain, each rounded once to f32: one f32 rounding apart.
const oneRounding = { atol: 1e-12, rtol: 2 ** -23 };

/** `[N, K]` from `[K, N]` and back: element (n, k) of the weight is element (k, n) of b. */
function transpose(x: Float32Array, rows: number, cols: number): Float32Array {
  return x.map((_, i) => x[(i % rows) * cols + Math.floor(i / rows)]);
}

// ---- reference facts --------------------------------------------------------------------------

Deno.test("matmulLinear reference: the weight is a Linear layer's [N, K], a @ weight^T, not [K, N]", () => {
  const a = f32([1, 2, 3, 4]);
  const weight = f32([5, 6, 7, 8]); // rows (5, 6) and (7, 8)
  deepStrictEqual([...matmulLinear({ a, weight, M: 2, N: 2, K: 2 })], [17, 23, 39, 53]);
  // Read as [K, N], as torch.mm reads b, the same numbers give [19, 22, 43, 50].
  deepStrictEqual([...matmul({ a, b: weight, M: 2, N: 2, K: 2 })], [19, 22, 43, 50]);
  deepStrictEqual([...matmul({ a, b: transpose(weight, 2, 2), M: 2, N: 2, K: 2 })], [17, 23, 39, 53]);
  // N != K: three output features from two inputs.
  deepStrictEqual([...matmulLinear({ a: f32([1, 2]), weight: f32([1, 0, 0, 1, 1, 1]), M: 1, N: 3, K: 2 })], [1, 2, 3]);
});

Deno.test("epilogue reference: the bias before the activation, the gate after it, the accumulation last", () => {
  const one = { a: f32([1]), weight: f32([1]), M: 1, N: 1, K: 1 }; // y = 1
  // silu(1 + 1) = 2 sigmoid(2); silu(1) + 1 would be 1.7310585786300049.
  strictEqual(matmulLinear({ ...one, bias: f32([1]), activation: "silu" })[0], Math.fround(2 / (1 + Math.exp(-2))));
  // gelu(1) * 2 = 2 Phi(1), Phi(1) = 0.8413447460685429; gelu(1 * 2) would be 1.9544997361036416.
  const gated = matmulLinear({ ...one, activation: "gelu", gate: f32([2]), gateRows: 1 });
  strictEqual(gated[0], Math.fround(2 * 0.8413447460685429));
  // c + gate * y = 10 + 2 * 1; (c + y) * gate would be 22, and c = y (no accumulation) 2.
  strictEqual(matmulLinear({ ...one, gate: f32([2]), gateRows: 1, accumulate: true, c: f32([10]) })[0], 12);
  // All four: 0.5 + silu(1 + 1) * -3.
  const all = { bias: f32([1]), activation: "silu" as const, gate: f32([-3]), gateRows: 1, accumulate: true };
  strictEqual(matmulLinear({ ...one, ...all, c: f32([0.5]) })[0], Math.fround(0.5 - 6 / (1 + Math.exp(-2))));
});

Deno.test("epilogue reference: row m takes gate row floor(m / gateRows) (a batch item's tokens are consecutive)", () => {
  // M = 6 rows: 2 batch items of gateRows = 3 tokens; N = 2, y[m, n] = a[m].
  const args = { a: f32([1, 2, 3, 4, 5, 6]), weight: f32([1, 1]), M: 6, N: 2, K: 1 };
  const got = matmulLinear({ ...args, gate: f32([1, 2, 3, 4]), gateRows: 3 });
  deepStrictEqual([...got], [1, 2, 2, 4, 3, 6, 12, 16, 15, 20, 18, 24]);
  // Gate row m % 2 (items interleaved) would give [1, 2, 6, 8, 3, 6, 12, 16, 5, 10, 18, 24].
  const interleaved = matmulLinear({ ...args, gate: f32([1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4]), gateRows: 1 });
  deepStrictEqual([...interleaved], [1, 2, 6, 8, 3, 6, 12, 16, 5, 10, 18, 24]);
  // gateRows = M: one gate row for every row; gateRows = 1: a gate row per row.
  deepStrictEqual([...matmulLinear({ ...args, gate: f32([2, -1]), gateRows: 6 })], [
    2,
    -1,
    4,
    -2,
    6,
    -3,
    8,
    -4,
    10,
    -5,
    12,
    -6,
  ]);
});

Deno.test("epilogue reference: accumulate adds the result to c's prior content", () => {
  const args = { a: f32([1, 2]), weight: f32([3]), M: 2, N: 1, K: 1 }; // y = [3, 6]
  deepStrictEqual([...matmulLinear({ ...args, accumulate: true, c: f32([100, -100]) })], [103, -94]);
  deepStrictEqual([...matmulLinear(args)], [3, 6]);
});

Deno.test("epilogue reference: every product applies the same epilogue to the same product", () => {
  const [M, N, K] = [4, 3, 5];
  const codes = Int32Array.from({ length: N * K }, (_, i) => ((i * 5) % 15) - 7); // [-7, 7]
  const weight = Float32Array.from(codes, (code) => code * 0.5);
  const scales = f32([0.5, 0.5, 0.5]);
  const steps: EpilogueSteps = { bias: true, activation: "gelu_tanh", gateRows: 2, accumulate: true };
  const args = withEpilogue({ a: randomF32(M * K, 1), M, N, K }, steps, 5);
  const linear = matmulLinear({ ...args, weight });
  deepStrictEqual(matmul({ ...args, b: transpose(weight, N, K) }), linear);
  deepStrictEqual(matmulQ8({ ...args, weight: packQ8(codes, N, K), scales }), linear);
  deepStrictEqual(matmulQ4G128({ ...args, weight: packQ4(codes, N, K), scales }), linear);
});

Deno.test("epilogue reference: bad input throws naming the argument", async () => {
  const args = { a: f32([1, 2, 3, 4, 5, 6]), weight: f32([1, 1]), M: 6, N: 2, K: 1 };
  const refused: [MatmulEpilogueArgs | Record<string, unknown>, string][] = [
    [{ gateRows: 4, gate: f32([1, 2]) }, "matmulLinear: gateRows (tokens per batch item) must divide M = 6, got 4"],
    [{ gateRows: 0, gate: f32([1, 2]) }, "matmulLinear: gateRows must be an integer >= 1, got 0"],
    [{ gateRows: 1.5 }, "matmulLinear: gateRows must be an integer >= 1, got 1.5"],
    [{ gateRows: 3 }, "matmulLinear: gate must be a Float32Array, got undefined"],
    [{ gateRows: 3, gate: f32([1, 2, 3]) }, "matmulLinear: gate must have length M / gateRows * N = 4, got 3"],
    [{ gate: f32([1, 2]) }, "matmulLinear: gate needs gateRows (tokens per batch item"],
    [{ accumulate: true }, "matmulLinear: c must be a Float32Array, got undefined"],
    [{ accumulate: true, c: f32([1]) }, "matmulLinear: c must have length M * N = 12, got 1"],
    [{ c: new Float32Array(12) }, "matmulLinear: c (the prior output) is read only with accumulate: true"],
    [{ accumulate: "yes", c: new Float32Array(12) }, 'matmulLinear: accumulate must be a boolean, got "yes"'],
    [{ activation: "relu" }, 'matmulLinear: activation must be one of "gelu", "gelu_tanh", "silu", got "relu"'],
    [{ activation: "tanh" }, "matmulLinear: activation must be one of"],
    [{ bias: f32([1, 2, 3]) }, "matmulLinear: bias must have length N = 2, got 3"],
    [{ bias: [1, 2] }, "matmulLinear: bias must be a Float32Array, got Array"],
    // A plan's `bias: true` given to a call, which needs the tensor itself.
    [{ bias: true }, "matmulLinear: bias must be a Float32Array, got true"],
  ];
  for (const [epilogue, message] of refused) {
    await assertThrowsMessage(() => matmulLinear({ ...args, ...epilogue } as typeof args), message);
  }
  // Each product names itself.
  const q = { a: f32([1, 2]), M: 2, N: 1, K: 1, gateRows: 3, gate: f32([1]) };
  await assertThrowsMessage(
    () => matmul({ ...q, b: f32([1]) }),
    "matmul: gateRows (tokens per batch item) must divide M = 2",
  );
  await assertThrowsMessage(
    () => matmulQ8({ ...q, weight: packQ8(new Int32Array([1]), 1, 1), scales: f32([1]) }),
    "matmulQ8: gateRows (tokens per batch item) must divide M = 2",
  );
  await assertThrowsMessage(
    () => matmulQ4G128({ ...q, weight: packQ4(new Int32Array([1]), 1, 1), scales: f32([1]) }),
    "matmulQ4G128: gateRows (tokens per batch item) must divide M = 2",
  );
  // matmulF16 has no epilogue, and says so rather than ignoring one.
  const half = { a: packF16(f32([1])), b: packF16(f32([1])), M: 1, N: 1, K: 1 };
  await assertThrowsMessage(
    () => matmulF16({ ...half, activation: "gelu" } as typeof half),
    "matmulF16: activation is not supported (matmulF16 has no fused epilogue)",
  );
});

// ---- goldens from torch (goldens/epilogue.py) --------------------------------------------------

interface EpilogueGolden {
  meta: { torch: string };
  special: { x: number[]; cases: { activation: MatmulActivation; out: number[] }[] };
  cases: {
    label: string;
    M: number;
    N: number;
    K: number;
    seed: number;
    scale: number;
    bias: boolean;
    activation: MatmulActivation | null;
    gateRows: number | null;
    accumulate: boolean;
    out: number[];
  }[];
}

const loadEpilogueGolden = () => loadGolden<EpilogueGolden>(new URL("./goldens/epilogue.json", import.meta.url));

/** epilogue.py's operands for a case: a Linear layer's arguments with its epilogue. */
function goldenArgs(c: EpilogueGolden["cases"][number]) {
  const { M, N, K, seed } = c;
  return {
    a: pattern(M * K, seed).map((v) => v * c.scale),
    weight: pattern(N * K, seed + 1),
    M,
    N,
    K,
    ...(c.bias ? { bias: pattern(N, seed + 2) } : {}),
    ...(c.activation ? { activation: c.activation } : {}),
    ...(c.gateRows ? { gateRows: c.gateRows, gate: pattern((M / c.gateRows) * N, seed + 3).map((v) => 2 * v) } : {}),
    ...(c.accumulate ? { accumulate: true, c: pattern(M * N, seed + 4) } : {}),
  };
}

/** A golden case's operands in torch.mm's orientation: `b` `[K, N]` in place of the weight. */
function denseArgs({ weight, ...epilogue }: ReturnType<typeof goldenArgs>, N: number, K: number) {
  return { ...epilogue, b: transpose(weight, N, K) };
}

/** The special points through a product: K = 1, weight 1, no bias, so the product is x itself. */
const specialArgs = (x: Float32Array, activation: MatmulActivation) => ({
  a: x,
  weight: f32([1]),
  M: x.length,
  N: 1,
  K: 1,
  activation,
});

// The activation kernels' tolerance (ops/activation's): the product is exact at K = 1.
const activationTolerance: Tolerance = { atol: 1e-7, rtol: 1e-6 };

Deno.test("epilogue reference matches the torch goldens; gelu is erf's, not the tanh approximation", async () => {
  const golden = await loadEpilogueGolden();
  ok(golden.meta.torch && golden.cases.length > 0 && golden.special.cases.length === 3, "the golden has cases");
  for (const c of golden.cases) {
    const args = goldenArgs(c);
    assertClose(matmulLinear(args), f32(c.out), oneRounding, c.label);
    // The same through torch.mm's orientation.
    assertClose(matmul(denseArgs(args, c.N, c.K)), f32(c.out), oneRounding, `mm ${c.label}`);
  }
  const x = f32(golden.special.x);
  for (const { activation, out } of golden.special.cases) {
    assertClose(matmulLinear(specialArgs(x, activation)), f32(out), oneRounding, `special ${activation}`);
  }
  // At x = 2.699 gelu and gelu_tanh are 4.7e-4 apart (torch's values), far beyond the kernels'
  // tolerance, so a kernel computing one for the other cannot pass.
  const at = golden.special.x.indexOf(2.699);
  const [gelu, tanh] = ["gelu", "gelu_tanh"].map((k) => golden.special.cases.find((c) => c.activation === k)!.out[at]);
  ok(Math.abs(gelu - tanh) > 100 * (activationTolerance.atol + activationTolerance.rtol * 3), `${gelu} ${tanh}`);
});

gpuTest("epilogue GPU: every fused f32 kernel matches the torch goldens", async (gpu) => {
  const golden = await loadEpilogueGolden();
  for (const c of golden.cases) {
    const args = goldenArgs(c);
    const linearTol = epilogueTolerance(linearCase(c.label, args), matmulLinear);
    for (const override of ["linear_fused", "linear_tile64_fused", "linear_fused_pipelined"] as const) {
      assertClose(await matmulLinearGpu(gpu, args, { override }), f32(c.out), linearTol, `${override} ${c.label}`);
    }
    const dense = denseArgs(args, c.N, c.K);
    const denseTol = epilogueTolerance(denseCase(c.label, dense), matmul);
    for (const override of ["kernel_fused", "tile64_fused"] as const) {
      assertClose(await matmulGpu(gpu, dense, { override }), f32(c.out), denseTol, `${override} ${c.label}`);
    }
  }
  const x = f32(golden.special.x);
  for (const { activation, out } of golden.special.cases) {
    for (const override of ["linear_fused", "linear_tile64_fused", "linear_fused_pipelined"] as const) {
      const got = await matmulLinearGpu(gpu, specialArgs(x, activation), { override });
      assertClose(got, f32(out), activationTolerance, `${override} special ${activation}`);
    }
  }
});

// ---- every fused kernel against the reference ------------------------------------------------

// Awkward sizes with an epilogue each: M = 1, sizes not multiples of 4 or of either tile (the
// element-by-element paths of a, b, c, bias and gate), K of 129 (a ragged last block), and
// 136x132x72 and 256x132x48, which have interior 128 x 128 tiles (their unchecked stores) beside
// edge tiles. Gates of one row per item (gateRows = M) and of many.
const EPILOGUE_SHAPES: [number, number, number, EpilogueSteps][] = [
  [1, 1, 1, { bias: true, activation: "gelu" }],
  [7, 13, 5, { activation: "gelu_tanh", gateRows: 7 }],
  [33, 65, 129, { bias: true, activation: "silu", gateRows: 11, accumulate: true }],
  [130, 3, 17, { accumulate: true }],
  [136, 132, 72, { bias: true, activation: "gelu", gateRows: 68, accumulate: true }],
  [20, 130, 44, { gateRows: 5, accumulate: true }],
  [9, 132, 37, { activation: "silu" }],
  [256, 132, 48, { bias: true, activation: "gelu_tanh", gateRows: 128 }],
];

/** The cases of one product, each with its own tolerance (cases.ts's epilogueTolerance). */
function fusedCases<A extends GemmArgs & MatmulEpilogueArgs>(
  make: (M: number, N: number, K: number, seed: number) => GemmCase<A>,
  reference: (args: A) => Float32Array,
  seed: number,
) {
  const cases = EPILOGUE_SHAPES.map(([M, N, K, steps], i) => {
    const plain = make(M, N, K, seed + 10 * i);
    const args = withEpilogue(plain.args, steps, seed + 10 * i + 5);
    return { ...plain, label: `${plain.label} ${epilogueLabel(steps)}`, args };
  });
  const tolerances = new Map(cases.map((c) => [c.args, epilogueTolerance(c, reference)]));
  return { cases, tol: (args: A) => tolerances.get(args)! };
}

const label = (M: number, N: number, K: number) => `${M}x${N}x${K}`;
const dense = fusedCases(
  (M, N, K, s) => denseCase(label(M, N, K), { a: randomF32(M * K, s), b: randomF32(K * N, s + 1), M, N, K }),
  matmul,
  1100,
);
const linear = fusedCases(
  (M, N, K, s) => linearCase(label(M, N, K), { a: randomF32(M * K, s), weight: randomF32(N * K, s + 1), M, N, K }),
  matmulLinear,
  1200,
);
const q8 = fusedCases(
  (M, N, K, s) => {
    const codes = Int32Array.from(randomF32(N * K, s + 1), (v) => Math.round(127 * v));
    const args = { a: randomF32(M * K, s), weight: packQ8(codes, N, K), scales: randomF32(N, s + 2, 0.001, 0.02) };
    return q8Case(label(M, N, K), { ...args, M, N, K });
  },
  matmulQ8,
  1300,
);
const q4 = fusedCases(
  (M, N, K, s) => {
    const { codes, scales } = quantizeQ4G128({ x: randomF32(N * K, s + 1), rows: N, cols: K });
    return q4Case(label(M, N, K), { a: randomF32(M * K, s), weight: packQ4(codes, N, K), scales, M, N, K });
  },
  matmulQ4G128,
  1400,
);

for (const entry of ["kernel_fused", "tile64_fused"]) {
  checkAgainstReference("matmul, fused", KERNELS, entry, dense.cases, matmul, matmulGpu, dense.tol);
}
for (const entry of ["linear_fused", "linear_tile64_fused", "linear_fused_pipelined"]) {
  checkAgainstReference("matmulLinear, fused", KERNELS, entry, linear.cases, matmulLinear, matmulLinearGpu, linear.tol);
}
for (const entry of ["q8row_fused", "q8row_tile64_fused"]) {
  checkAgainstReference("matmulQ8, fused", KERNELS, entry, q8.cases, matmulQ8, matmulQ8Gpu, q8.tol);
}
for (const entry of ["q4g128_fused", "q4g128_tile64_fused"]) {
  checkAgainstReference("matmulQ4G128, fused", KERNELS, entry, q4.cases, matmulQ4G128, matmulQ4G128Gpu, q4.tol);
}

Deno.test("epilogue tolerance: tight enough that each convention's alternative fails it", async () => {
  const fails = (actual: Float32Array, args: typeof dense.cases[number]["args"], what: string) =>
    assertThrowsMessage(() => assertClose(actual, matmul(args), dense.tol(args), what), "atol");
  let checked = 0;
  for (const { args, label } of dense.cases) {
    if (args.activation === "gelu" || args.activation === "gelu_tanh") {
      const other = args.activation === "gelu" ? "gelu_tanh" : "gelu";
      await fails(matmul({ ...args, activation: other }), args, `${label}: ${other} for ${args.activation}`);
      checked++;
    }
    if (args.bias) {
      await fails(matmul({ ...args, bias: undefined }), args, `${label}: no bias`);
      checked++;
    }
    if (args.gate && args.gateRows && args.gateRows < args.M) {
      // Gate row m % items for row m, written as one gate row per row of the result.
      const items = args.M / args.gateRows;
      const gate = new Float32Array(args.M * args.N).map((_, i) => {
        const [m, n] = [Math.floor(i / args.N), i % args.N];
        return args.gate![(m % items) * args.N + n];
      });
      await fails(matmul({ ...args, gate, gateRows: 1 }), args, `${label}: gate row m % items`);
      checked++;
    }
    if (args.accumulate) {
      await fails(matmul({ ...args, accumulate: undefined, c: undefined }), args, `${label}: c overwritten`);
      checked++;
    }
  }
  ok(checked >= 10, `${checked} alternatives checked`);
});

// ---- plans, bindings, refusals -----------------------------------------------------------------

gpuTest("epilogue plans: the fused kernels, their bindings in order with lengths and roles, params, costs", (gpu) => {
  const describe = (plan: ReturnType<typeof matmulPlan>) =>
    plan.bindings.map((b) => [b.name, b.dtype, b.length, b.role]);
  const full = matmulLinearPlan(gpu, {
    M: 6,
    N: 5,
    K: 7,
    bias: true,
    activation: "silu",
    gateRows: 3,
    accumulate: true,
  });
  strictEqual(full.kernel.variant, "linear_tile64_fused");
  deepStrictEqual(describe(full), [
    ["a", "f32", 42, "input"],
    ["weight", "f32", 35, "input"],
    ["bias", "f32", 5, "input"],
    ["gate", "f32", 10, "input"],
    ["c", "f32", 30, "inout"],
  ]);
  // m, n, k, bias, activation (silu = 3), gate_rows, accumulate, and padding to 32 bytes.
  deepStrictEqual([...new Uint32Array(full.params!)], [6, 5, 7, 1, 3, 3, 1, 0]);
  // a, weight, bias and gate read, c read and written; the bias, the gate and the accumulation one
  // operation per output each.
  deepStrictEqual(full.cost, { bytes: 4 * (42 + 35 + 5 + 10 + 2 * 30), flops: 2 * 6 * 5 * 7 + 3 * 30 });
  // An activation alone: the fused kernel, bias and gate of length 0, c written only.
  const gelu = matmulPlan(gpu, { M: 6, N: 5, K: 7, activation: "gelu" });
  strictEqual(gelu.kernel.variant, "tile64_fused");
  deepStrictEqual(describe(gelu), [
    ["a", "f32", 42, "input"],
    ["b", "f32", 35, "input"],
    ["bias", "f32", 0, "input"],
    ["gate", "f32", 0, "input"],
    ["c", "f32", 30, "output"],
  ]);
  deepStrictEqual([...new Uint32Array(gelu.params!)], [6, 5, 7, 0, 1, 0, 0, 0]);
  deepStrictEqual([...new Uint32Array(matmulPlan(gpu, { M: 6, N: 5, K: 7, activation: "gelu_tanh" }).params!)], [
    6,
    5,
    7,
    0,
    2,
    0,
    0,
    0,
  ]);
  const q8 = matmulQ8Plan(gpu, { M: 4, N: 3, K: 9, gateRows: 2 });
  deepStrictEqual(describe(q8).map(([name, , length]) => [name, length]), [
    ["a", 36],
    ["weight", 9],
    ["scales", 3],
    ["bias", 0],
    ["gate", 6],
    ["c", 12],
  ]);
  strictEqual(matmulQ4G128Plan(gpu, { M: 4, N: 3, K: 9, bias: true }).bindings[3].length, 3);
  // Steps that are off (false) ask for no epilogue: the plain kernel and its bindings.
  const plain = matmulLinearPlan(gpu, { M: 6, N: 5, K: 7, bias: false, accumulate: false });
  strictEqual(plain.kernel.variant, "linear_tile64");
  deepStrictEqual(plain.bindings.map((b) => b.name), ["a", "weight", "c"]);
  // The tile by size, as for the plain products.
  const large = { M: 2048, N: 2048, K: 16, accumulate: true };
  strictEqual(matmulPlan(gpu, large).kernel.variant, "kernel_fused");
  const pipelined = gpu.adapter.target === "nvidia" ? "_pipelined" : ""; // NVIDIA's f32 128 x 128 linear tiles (mod.ts)
  strictEqual(matmulLinearPlan(gpu, large).kernel.variant, `linear_fused${pipelined}`);
  strictEqual(matmulQ8Plan(gpu, large).kernel.variant, "q8row_fused");
  strictEqual(matmulQ4G128Plan(gpu, large).kernel.variant, "q4g128_fused");
  strictEqual(matmulQ4G128Plan(gpu, { ...large, M: 64 }).kernel.variant, "q4g128_tile64_fused");
  deepStrictEqual(matmulLinearPlan(gpu, large).workgroups, [256, 1, 1]);
  strictEqual(matmulLinearPlan(gpu, { M: 2048, N: 2048, K: 16 }).kernel.variant, `linear${pipelined}`);
});

gpuTest("epilogue GPU: bad input is refused, naming it, before any GPU work", async (gpu) => {
  const args = { a: f32([1, 2, 3, 4, 5, 6]), weight: f32([1, 1]), M: 6, N: 2, K: 1 };
  await assertThrowsMessage(
    () => matmulLinearGpu(gpu, { ...args, gateRows: 4, gate: f32([1, 2]) }),
    "matmulLinear: gateRows (tokens per batch item) must divide M = 6, got 4",
  );
  await assertThrowsMessage(
    () => matmulLinearGpu(gpu, { ...args, activation: "relu" as MatmulActivation }),
    'matmulLinear: activation must be one of "gelu", "gelu_tanh", "silu", got "relu"',
  );
  await assertThrowsMessage(
    () => matmulGpu(gpu, { a: args.a, b: f32([1, 1]), M: 6, N: 2, K: 1, gateRows: 2 }),
    "matmul: gate must be a Float32Array, got undefined",
  );
  await assertThrowsMessage(
    () => matmulLinearPlan(gpu, { M: 6, N: 2, K: 1, bias: 1 as unknown as boolean }),
    "matmulLinear: bias must be a boolean, got 1",
  );
  await assertThrowsMessage(
    () => matmulQ8Plan(gpu, { M: 6, N: 2, K: 1, gateRows: 5 }),
    "matmulQ8: gateRows (tokens per batch item) must divide M = 6, got 5",
  );
  await assertThrowsMessage(
    () => matmulF16Plan(gpu, { M: 1, N: 1, K: 1, accumulate: true } as { M: number; N: number; K: number }),
    "matmulF16: accumulate is not supported",
  );
  // The override must be a kernel of the plan's kind: fused with an epilogue, plain without.
  await assertThrowsMessage(
    () => matmulLinearPlan(gpu, { M: 6, N: 2, K: 1, activation: "gelu" }, { override: "linear" }),
    'matmulLinear: override "linear" is not a variant of entry point "linear_fused" or "linear_tile64_fused" or "linear_fused_pipelined"',
  );
  await assertThrowsMessage(
    () => matmulLinearPlan(gpu, { M: 6, N: 2, K: 1 }, { override: "linear_fused" }),
    'matmulLinear: override "linear_fused" is not a variant of entry point "linear" or "linear_tile64"',
  );
  // A resident submit missing the bias tensor of a fused plan is refused before encoding.
  const plan = matmulLinearPlan(gpu, { M: 6, N: 2, K: 1, bias: true });
  const [a, weight, bias, c] = [args.a, args.weight, f32([1, 2]), new Float32Array(12)].map((x) => gpu.upload(x));
  await assertThrowsMessage(() => gpu.submit([plan, [a, weight, bias, c]]), "expected 5 tensors, got 4");
});

gpuTest("epilogue GPU: accumulate updates c in place, as a residual stream through two gated layers", async (gpu) => {
  const [M, N, K, gateRows] = [6, 5, 8, 3];
  const x = randomF32(M * N, 1);
  const layers = [0, 1].map((i) => ({
    weight: randomF32(N * K, 10 + i),
    gate: randomF32((M / gateRows) * N, 20 + i, -2, 2),
  }));
  const h = randomF32(M * K, 30);
  const plan = matmulLinearPlan(gpu, { M, N, K, gateRows, accumulate: true });
  const residual = gpu.upload(x);
  const input = gpu.upload(h);
  for (const layer of layers) {
    const [weight, gate] = [gpu.upload(layer.weight), gpu.upload(layer.gate)];
    // The bias is off: its binding (length 0) takes any tensor, here the gate.
    await gpu.submit([plan, [input, weight, gate, gate, residual]]);
  }
  let expected = x;
  for (const layer of layers) {
    expected = matmulLinear({ a: h, ...layer, M, N, K, gateRows, accumulate: true, c: expected });
  }
  const got = await gpu.read(residual);
  // Each layer: 8 terms of |a|, |w| <= 1, gate <= 2 and one f32 rounding of the sum into c.
  assertClose(got, expected, { atol: 1e-5, rtol: 2 ** -21 }, "two layers");
  // Overwriting instead (no accumulation) would leave only the last layer's output.
  const last = matmulLinear({ a: h, ...layers[1], M, N, K, gateRows });
  ok(got.some((v, i) => Math.abs(v - last[i]) > 1e-3), "the prior content was added");
});
