// layernorm on NaN and ±Infinity, held to torch (goldens/nonfinite.py, float32 on the CPU): NaN or ±inf
// anywhere in a row makes the whole row NaN (its mean is NaN or infinite, so x - mean or the variance
// is NaN); NaN and ±inf in the weight, the bias, the modulation's scale and its shift act on their
// column alone (inf * 0 is NaN, inf - inf is NaN). Each operand holds NaN, +inf and -inf; both entry
// points give the reference's values, on rows held in registers (the goldens) and streamed rows (cols
// past 8192, below).
import { KERNELS, layernorm, type LayernormArgs, layernormGpu } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  eachVariant,
  goldenF32,
  type GoldenFloat,
  gpuTest,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  rows: number;
  cols: number;
  eps: number;
  x: GoldenFloat[];
  weight?: GoldenFloat[];
  bias?: GoldenFloat[];
  rowsPerItem?: number;
  scale?: GoldenFloat[];
  shift?: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
function argsOf(c: Case): LayernormArgs {
  const args: LayernormArgs = { x: goldenF32(c.x), rows: c.rows, cols: c.cols, eps: c.eps };
  if (c.weight) args.weight = goldenF32(c.weight);
  if (c.bias) args.bias = goldenF32(c.bias);
  if (c.scale) args.modulation = { rowsPerItem: c.rowsPerItem!, scale: goldenF32(c.scale), shift: goldenF32(c.shift!) };
  return args;
}
// f32 mean, variance and inverseSqrt against f64; the non-finite values are exact.
const tol = { atol: 1e-6, rtol: 1e-5 };

Deno.test(`layernorm reference: NaN and ±Infinity in x, weight, bias, scale and shift give torch ${golden.torch}'s values`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({
      x: args.x,
      ...(args.weight && { weight: args.weight, bias: args.bias! }),
      ...(args.modulation && { scale: args.modulation.scale, shift: args.modulation.shift! }),
    });
    assertClose(layernorm(args), goldenF32(c.out), tol, `cols ${c.cols} weight ${!!c.weight} modulated ${!!c.scale}`);
  }
});

/** Streamed rows (one per workgroup, in chunks): a NaN in row 0's last chunk, +inf in row 1, -inf in row 2, row 3 finite; the weight's and bias's specials show in row 3. */
function streamed(cols: number): LayernormArgs {
  const x = new Float32Array(4 * cols).map((_, i) => Math.sin(i));
  [x[cols - 1], x[cols + 3], x[2 * cols + 5000]] = [NaN, Infinity, -Infinity];
  const weight = new Float32Array(cols).fill(0.5);
  [weight[0], weight[cols - 2], weight[9000]] = [NaN, Infinity, -Infinity];
  const bias = new Float32Array(cols).fill(0.25);
  [bias[1], bias[cols - 1], bias[8999]] = [NaN, Infinity, -Infinity];
  return { x, rows: 4, cols, weight, bias };
}

for (const entry of ["kernel", "modulated"] as const) {
  eachVariant(KERNELS, entry, (variant) => {
    gpuTest(`layernorm GPU: ${variant} gives the reference's NaN and ±Infinity`, async (gpu) => {
      const cases = golden.cases.map(argsOf).filter((a) => (a.modulation !== undefined) === (entry === "modulated"));
      for (const args of entry === "kernel" ? [...cases, streamed(9001), streamed(9004)] : cases) {
        const got = await layernormGpu(gpu, args, { override: variant });
        assertClose(got, layernorm(args), tol, `${variant} cols ${args.cols} weight ${!!args.weight}`);
      }
    });
  });
}
