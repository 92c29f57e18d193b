// matvec on NaN and ±Infinity, held to torch (goldens/nonfinite.py): torch.mv(W, x) with W the f32
// weight or the dequantized one (codes * scale), in float64 on float32 inputs as the reference
// computes. NaN in x makes every output NaN; ±inf in x gives ±inf by the sign of its weight, NaN where
// that weight is 0; NaN in a weight row or scale gives NaN; an infinite scale times a zero code is
// NaN, and a row whose terms are infinities of both signs is NaN (the quantized products scale the
// finished sum, which would give ±inf there: where that sum is ±inf, they sum again term by term).
// Every variant gives the reference's values, at K 9 and 32 (single words and whole 16-code chunks)
// and, for q4, two groups.
import {
  KERNELS,
  matvec,
  type MatvecArgs,
  matvecGpu,
  matvecQ4G128,
  type MatvecQ4G128Args,
  matvecQ4G128Gpu,
  matvecQ8,
  type MatvecQ8Args,
  matvecQ8Gpu,
  packQ4,
  packQ8,
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
  format: "f32" | "q8" | "q4";
  N: number;
  K: number;
  nonfinite: string;
  weight?: GoldenFloat[];
  codes?: number[];
  scales?: GoldenFloat[];
  x: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const f32Args = (c: Case): MatvecArgs => ({ weight: goldenF32(c.weight!), x: goldenF32(c.x), N: c.N, K: c.K });
function quantArgs(c: Case): MatvecQ8Args {
  const codes = Int32Array.from(c.codes!);
  const weight = c.format === "q8" ? packQ8(codes, c.N, c.K) : packQ4(codes, c.N, c.K);
  return { weight, scales: goldenF32(c.scales!), x: goldenF32(c.x), N: c.N, K: c.K };
}
const label = (c: Case) => `${c.format} K ${c.K}, non-finite ${c.nonfinite}`;

Deno.test(`matvec reference: NaN and ±Infinity in x, the weight and the scales give torch ${golden.torch}'s values`, () => {
  const xs: number[] = [];
  for (const c of golden.cases) {
    const args = c.format === "f32" ? f32Args(c) : quantArgs(c);
    xs.push(...args.x);
    if (c.nonfinite === "weight") assertNonFiniteOperands({ weight: (args as MatvecArgs).weight });
    if (c.nonfinite.startsWith("scales")) assertNonFiniteOperands({ scales: (args as MatvecQ8Args).scales });
    const got = c.format === "f32"
      ? matvec(args as MatvecArgs)
      : c.format === "q8"
      ? matvecQ8(args as MatvecQ8Args)
      : matvecQ4G128(args as MatvecQ4G128Args);
    // f64 sums against torch's f64 sums of dequantized terms, each rounded to f32 once.
    assertClose(got, goldenF32(c.out), { atol: 1e-12, rtol: 2 ** -22 }, label(c));
  }
  assertNonFiniteOperands({ x: xs });
});

// The kernels' f32 sums in their own order: K 2^-24 of the sum of |terms|, well under 1e-5 here.
const tol = { atol: 1e-5, rtol: 1e-5 };
const casesOf = <A>(format: Case["format"], args: (c: Case) => A) =>
  golden.cases.filter((c) => c.format === format).map((c) => ({ label: label(c), args: args(c) }));
checkAgainstReference("matvec (non-finite)", KERNELS, "kernel", casesOf("f32", f32Args), matvec, matvecGpu, tol);
for (const entry of ["q8row", "q8row_rows64"]) {
  checkAgainstReference("matvecQ8 (non-finite)", KERNELS, entry, casesOf("q8", quantArgs), matvecQ8, matvecQ8Gpu, tol);
}
for (const entry of ["q4g128", "q4g128_rows64"]) {
  const cases = casesOf<MatvecQ4G128Args>("q4", quantArgs);
  checkAgainstReference("matvecQ4G128 (non-finite)", KERNELS, entry, cases, matvecQ4G128, matvecQ4G128Gpu, tol);
}
