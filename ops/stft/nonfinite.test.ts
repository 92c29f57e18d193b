// stft on NaN and ±Infinity, held to torch (goldens/nonfinite.py, torch.stft in float32 on the CPU):
// the windowed frame is w[n] x[n] (an infinity on a zero of the window is NaN), and each component of
// a bin sums the terms whose basis value is not exactly 0, a quarter-turn term being absent rather than
// 0 * inf (reference.ts says why); so a non-finite sample gives ±inf in the components it reaches, NaN
// where infinities of both signs or a NaN meet, and leaves the others finite. At nFft 6, 8, 12 and 16
// that is torch's (pocketfft's) result bin for bin; at nFft 32 pocketfft gives NaN in bins this
// leaves finite or infinite, and agrees everywhere else (pinned below). Both entry points give the
// reference's values: the FFT (nFft a power of two) and the DFT GEMM.
import { ok } from "node:assert/strict";
import { KERNELS, stft, type StftArgs, stftGpu, type StftVariant } from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  batch: number;
  length: number;
  nFft: number;
  hopLength: number;
  pinned_difference: boolean;
  x: GoldenFloat[];
  out: GoldenFloat[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): StftArgs => ({
  batch: c.batch,
  length: c.length,
  nFft: c.nFft,
  hopLength: c.hopLength,
  x: goldenF32(c.x),
});
// f64 sums against pocketfft's f32 transform: a few f32 ulps of the largest term.
const torchTol = { atol: 1e-5, rtol: 1e-5 };

Deno.test(`stft reference: NaN and ±Infinity give torch ${golden.torch}'s bins (nFft <= 16)`, () => {
  for (const c of golden.cases.filter((c) => !c.pinned_difference)) {
    const args = argsOf(c);
    assertNonFiniteOperands({ x: args.x });
    assertClose(stft(args), goldenF32(c.out), torchTol, `nFft ${c.nFft}`);
  }
});

Deno.test("stft reference: at nFft 32 pocketfft's NaN covers bins the transform leaves finite or infinite; elsewhere they agree", () => {
  for (const c of golden.cases.filter((c) => c.pinned_difference)) {
    const got = stft(argsOf(c)), torch = goldenF32(c.out);
    const agreeing = [...got.keys()].filter((i) => !Number.isNaN(torch[i]));
    const pick = (xs: Float32Array) => agreeing.map((i) => xs[i]);
    assertClose(pick(got), pick(torch), torchTol, `nFft ${c.nFft}, where torch is not NaN`);
    ok(got.some((v, i) => Number.isNaN(torch[i]) && !Number.isNaN(v)), `nFft ${c.nFft}: torch's extra NaN`);
  }
});

// The kernels' f32 sums (the FFT's stages, the GEMM's order) against f64.
const tol = { atol: 1e-5, rtol: 1e-5 };
const cases = golden.cases.map((c) => ({ label: `nFft ${c.nFft}, hop ${c.hopLength}`, args: argsOf(c) }));
const powersOfTwo = cases.filter(({ args }) => (args.nFft & (args.nFft - 1)) === 0);
checkAgainstReference<StftArgs, StftVariant>("stft (non-finite)", KERNELS, "fft", powersOfTwo, stft, stftGpu, tol);
checkAgainstReference<StftArgs, StftVariant>("stft (non-finite)", KERNELS, "kernel", cases, stft, stftGpu, tol);
