// matmul on NaN and ±Infinity, held to torch (goldens/nonfinite.py, float64 on float32 inputs, as the
// reference computes): every product is torch's sum of a[m, k] * w[n, k], so NaN in a row of a or a
// column of the weight gives NaN there, inf * 0 is NaN, inf + -inf is NaN; a quantized weight's element
// is code * scale, so an infinite scale times a zero code is NaN, and an output with an infinite scale
// is NaN unless every term of its sum is an infinity of one sign. The epilogue (bias, activation, gate,
// accumulate) applies IEEE arithmetic to NaN and ±inf (F.gelu(+inf) is the limit, +inf: float32 torch's
// nan there is ops/activation's one exception). f16storage packs NaN and ±inf as halves and a finite
// value past 65504 as inf, as `.half()`. Every entry point gives the reference's values: the goldens'
// small shapes (edge tiles, scalar loads) and, below, whole interior tiles with NaN and ±inf.
import { packQ4, packQ8 } from "../matvec/reference.ts";
import {
  KERNELS,
  matmul,
  type MatmulActivation,
  type MatmulArgs,
  type MatmulEpilogueArgs,
  matmulF16,
  type MatmulF16Args,
  matmulF16Gpu,
  matmulGpu,
  matmulLinear,
  type MatmulLinearArgs,
  matmulLinearGpu,
  matmulQ4G128,
  type MatmulQ4G128Args,
  matmulQ4G128Gpu,
  matmulQ8,
  type MatmulQ8Args,
  matmulQ8Gpu,
  packF16,
} from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
  randomF32,
  type ReferenceCase,
} from "../../harness/testing.ts";

type Product = "matmul" | "matmulLinear" | "matmulQ8" | "matmulQ4G128" | "matmulF16";
interface Case {
  product: Product;
  M: number;
  N: number;
  K: number;
  a: string;
  b?: string;
  weight?: string;
  codes?: string;
  scales?: string;
  bias?: string;
  activation?: MatmulActivation;
  gate?: string;
  gateRows?: number;
  c?: string;
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; inputs: Record<string, GoldenFloat[]>; cases: Case[] }>(
  new URL("./goldens/nonfinite.json", import.meta.url),
);
const input = (name: string) => goldenF32(golden.inputs[name]);
const codes = (name: string) => Int32Array.from(golden.inputs[name] as number[]);

function epilogueOf(c: Case): MatmulEpilogueArgs {
  if (!c.activation) return {};
  return {
    bias: input(c.bias!),
    activation: c.activation,
    gate: input(c.gate!),
    gateRows: c.gateRows,
    accumulate: true,
    c: input(c.c!),
  };
}

/** Each case's arguments and the reference and GPU entry point of its product. */
function run(
  c: Case,
): { args: unknown; reference: (args: never) => Float32Array; operands: Record<string, Float32Array> } {
  const { M, N, K } = c;
  const epilogue = epilogueOf(c);
  const extra: Record<string, Float32Array> = epilogue.bias
    ? { bias: epilogue.bias, gate: epilogue.gate!, c: epilogue.c! }
    : {};
  switch (c.product) {
    case "matmul": {
      const args = { a: input(c.a), b: input(c.b!), M, N, K, ...epilogue };
      return { args, reference: matmul, operands: { a: args.a, b: args.b, ...extra } };
    }
    case "matmulLinear": {
      const args = { a: input(c.a), weight: input(c.weight!), M, N, K, ...epilogue };
      return { args, reference: matmulLinear, operands: { a: args.a, weight: args.weight, ...extra } };
    }
    case "matmulQ8": {
      const args = {
        a: input(c.a),
        weight: packQ8(codes(c.codes!), N, K),
        scales: input(c.scales!),
        M,
        N,
        K,
        ...epilogue,
      };
      return { args, reference: matmulQ8, operands: { a: args.a, scales: args.scales, ...extra } };
    }
    case "matmulQ4G128": {
      const args = {
        a: input(c.a),
        weight: packQ4(codes(c.codes!), N, K),
        scales: input(c.scales!),
        M,
        N,
        K,
        ...epilogue,
      };
      return { args, reference: matmulQ4G128, operands: { a: args.a, scales: args.scales, ...extra } };
    }
    case "matmulF16": {
      const [a, b] = [input(c.a), input(c.b!)];
      return { args: { a: packF16(a), b: packF16(b), M, N, K }, reference: matmulF16, operands: { a, b } };
    }
  }
}

const label = (c: Case) => `${c.product}${c.activation ? ` + bias, ${c.activation}, gate, accumulate` : ""} on ${c.a}`;

Deno.test(`matmul reference: NaN and ±Infinity in every operand give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const { args, reference, operands } = run(c);
    // The epilogue's operands hold their NaN and infinities; a finite product's a and weight do not.
    const checked = Object.fromEntries(
      Object.entries(operands).filter(([name]) =>
        !(c.a.endsWith("_finite") && ["a", "b", "weight", "scales"].includes(name))
      ),
    );
    assertNonFiniteOperands(checked);
    // f64 sums of a few terms against torch's f64 sums, each rounded to f32 once.
    assertClose(reference(args as never), goldenF32(c.out), { atol: 1e-12, rtol: 2 ** -22 }, label(c));
  }
});

/** A 128 x 128 output over K = 16: every tile interior, NaN and ±inf in a and in the weight. */
function interior(): { a: Float32Array; w: Float32Array; M: number; N: number; K: number } {
  const [M, N, K] = [128, 128, 16];
  const a = randomF32(M * K, 31), w = randomF32(K * N, 32);
  [a[3 * K + 1], a[70 * K + 15], a[127 * K]] = [NaN, Infinity, -Infinity];
  [w[2 * N + 5], w[15 * N + 64], w[9 * N + 127], w[15 * N + 5]] = [NaN, Infinity, -Infinity, 0];
  return { a, w, M, N, K };
}

// The kernels sum in f32 in their own order: K * 2^-24 of the sum of |terms|, here under 1e-5.
const tol = { atol: 1e-5, rtol: 1e-5 };
const casesOf = <A>(product: Product, fused: boolean): ReferenceCase<A>[] =>
  golden.cases.filter((c) => c.product === product && !!c.activation === fused).map((c) => ({
    label: label(c),
    args: run(c).args as A,
  }));

const big = interior();
const bigQ8 = { codes: Int32Array.from(big.w, (_, i) => (i * 7) % 255 - 127), scales: randomF32(128, 33, 0, 0.01) };
[bigQ8.scales[5], bigQ8.scales[64], bigQ8.scales[127]] = [NaN, Infinity, -Infinity];
const bigCases = {
  matmul: { label: "128 x 128 x 16, interior tiles", args: { a: big.a, b: big.w, M: 128, N: 128, K: 16 } },
  matmulLinear: { label: "128 x 128 x 16, interior tiles", args: { a: big.a, weight: big.w, M: 128, N: 128, K: 16 } },
  matmulQ8: {
    label: "128 x 128 x 16",
    args: { a: big.a, weight: packQ8(bigQ8.codes, 128, 16), scales: bigQ8.scales, M: 128, N: 128, K: 16 },
  },
  matmulF16: {
    label: "128 x 128 x 16, interior tiles",
    args: { a: packF16(big.a), b: packF16(big.w), M: 128, N: 128, K: 16 },
  },
};

for (const entry of ["kernel", "tile64", "kernel_pipelined"]) {
  checkAgainstReference(
    "matmul (non-finite)",
    KERNELS,
    entry,
    [...casesOf<MatmulArgs>("matmul", false), bigCases.matmul],
    matmul,
    matmulGpu,
    tol,
  );
}
for (const entry of ["linear", "linear_tile64", "linear_pipelined"]) {
  const cases = [...casesOf<MatmulLinearArgs>("matmulLinear", false), bigCases.matmulLinear];
  checkAgainstReference("matmulLinear (non-finite)", KERNELS, entry, cases, matmulLinear, matmulLinearGpu, tol);
}
for (const entry of ["q8row", "q8row_tile64"]) {
  const cases = [...casesOf<MatmulQ8Args>("matmulQ8", false), bigCases.matmulQ8];
  checkAgainstReference("matmulQ8 (non-finite)", KERNELS, entry, cases, matmulQ8, matmulQ8Gpu, tol);
}
for (const entry of ["q4g128", "q4g128_tile64"]) {
  const cases = casesOf<MatmulQ4G128Args>("matmulQ4G128", false);
  checkAgainstReference("matmulQ4G128 (non-finite)", KERNELS, entry, cases, matmulQ4G128, matmulQ4G128Gpu, tol);
}
const f16Cases = [...casesOf<MatmulF16Args>("matmulF16", false), bigCases.matmulF16];
checkAgainstReference("matmulF16 (non-finite)", KERNELS, "f16storage", f16Cases, matmulF16, matmulF16Gpu, tol);

// The fused epilogues: f32 activations (a few ulps) on top of the product's f32 sums.
const fusedTol = { atol: 1e-5, rtol: 1e-5 };
for (const entry of ["kernel_fused", "tile64_fused"]) {
  checkAgainstReference(
    "matmul, fused (non-finite)",
    KERNELS,
    entry,
    casesOf<MatmulArgs>("matmul", true),
    matmul,
    matmulGpu,
    fusedTol,
  );
}
for (const entry of ["linear_fused", "linear_tile64_fused"]) {
  const cases = casesOf<MatmulLinearArgs>("matmulLinear", true);
  checkAgainstReference(
    "matmulLinear, fused (non-finite)",
    KERNELS,
    entry,
    cases,
    matmulLinear,
    matmulLinearGpu,
    fusedTol,
  );
}
for (const entry of ["q8row_fused", "q8row_tile64_fused"]) {
  checkAgainstReference(
    "matmulQ8, fused (non-finite)",
    KERNELS,
    entry,
    casesOf<MatmulQ8Args>("matmulQ8", true),
    matmulQ8,
    matmulQ8Gpu,
    fusedTol,
  );
}
for (const entry of ["q4g128_fused", "q4g128_tile64_fused"]) {
  const cases = casesOf<MatmulQ4G128Args>("matmulQ4G128", true);
  checkAgainstReference(
    "matmulQ4G128, fused (non-finite)",
    KERNELS,
    entry,
    cases,
    matmulQ4G128,
    matmulQ4G128Gpu,
    fusedTol,
  );
}
