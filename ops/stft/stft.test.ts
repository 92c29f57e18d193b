import { deepStrictEqual, ok } from "node:assert/strict";
import { parseVariantName } from "../../harness/variants.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import {
  hannWindow,
  istft,
  type IstftArgs,
  istftGpu,
  type IstftPadding,
  KERNELS,
  stft,
  type StftArgs,
  stftBins,
  stftFftPlan,
  stftFrames,
  stftGpu,
  stftKernel,
  stftUsesFft,
} from "./mod.ts";
import type { StftVariant } from "./kernels.gen.ts";

/** What goldens/gen.py writes (spectra frame-major, [batch, frames, bins, 2]). */
interface Golden {
  meta: { torch: string };
  stft: {
    label: string;
    batch: number;
    length: number;
    nFft: number;
    hopLength: number;
    frames: number;
    x: number[];
    out: number[];
    out_stride: number;
  }[];
  frames: { length: number; nFft: number; hopLength: number; frames: number }[];
  too_short: { length: number; nFft: number; raised: boolean }[];
  istft: {
    label: string;
    batch: number;
    frames: number;
    nFft: number;
    hopLength: number;
    padding: IstftPadding;
    length: number | null;
    x: number[];
    out: number[];
  }[];
  nola: { nFft: number; hopLength: number; raised: boolean; message: string }[];
  beyond: {
    default: number;
    to_end: number;
    x: number[];
    tail: number[];
    past_zero: boolean;
    before_past_nonzero: boolean;
  };
}
const loadStftGolden = () => loadGolden<Golden>(new URL("./goldens/stft.json", import.meta.url));
const strided = (xs: Float32Array, stride: number) => xs.filter((_, i) => i % stride === 0);
const maxAbs = (xs: ArrayLike<number>) => {
  let m = 0;
  for (let i = 0; i < xs.length; i++) m = Math.max(m, Math.abs(xs[i]));
  return m;
};
const goldenIstftArgs = (c: Golden["istft"][number]): IstftArgs => ({
  x: Float32Array.from(c.x),
  batch: c.batch,
  frames: c.frames,
  nFft: c.nFft,
  hopLength: c.hopLength,
  padding: c.padding,
  length: c.length ?? undefined,
});

// Tolerances. The forward GEMM sums nFft products of |x| * |w * cos| <= max|x| in f32: observed
// errors on llvmpipe are 0.25-0.65 nFft * 2^-24 * max|x|; 4x that is admitted. The inverse sums
// reach * 2 * bins products scaled by 1 / nFft and divides by the envelope; its error is measured
// relative to the output's size: 2^-24 * nFft * max|out| * 2.
const U = 2 ** -24;
const stftTol = (a: StftArgs) => ({ atol: 4 * a.nFft * U * Math.max(1, maxAbs(a.x)), rtol: 0 });
const istftTol = (a: IstftArgs, expected: ArrayLike<number>) => ({
  atol: 2 * a.nFft * U * Math.max(1, maxAbs(expected)),
  rtol: 0,
});

Deno.test("stft reference: a constant signal gives the periodic Hann window's own spectrum in every frame", () => {
  // Reflect padding of a constant is the constant, so every frame is w: X[0] = sum w = N/2 for the
  // periodic Hann window ((N - 1)/2 for numpy's symmetric one), X[1] = -N/4, nothing above, and no
  // 1/N or 1/sqrt(N) scaling (normalized=False).
  const N = 16;
  const spec = stft({ x: new Float32Array(40).fill(1), batch: 1, length: 40, nFft: N, hopLength: 4 });
  deepStrictEqual(spec.length, 11 * 9 * 2);
  for (let f = 0; f < 11; f++) {
    const frame = spec.subarray(f * 18, (f + 1) * 18);
    assertClose(frame, [8, 0, -4, 0, ...Array(14).fill(0)], { atol: 2e-6, rtol: 0 }, `frame ${f}`);
  }
  // The periodic window differs from the symmetric one (np.hanning).
  const symmetric = Array.from({ length: N }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / (N - 1)));
  ok(Math.abs(symmetric.reduce((s, v) => s + v, 0) - 8) > 0.4);
  assertClose(hannWindow(4), [0, 0.5, 1, 0.5], { atol: 1e-7, rtol: 0 }, "periodic Hann of 4");
});

Deno.test("stft reference: frames reflect about the edge sample without repeating it", () => {
  // x = [0, 1, 2, ..., 9], nFft 4, pad 2: frame 0 is the padded [2, 1, 0, 1] (reflect), where zero
  // padding and replicate padding both give [0, 0, 0, 1]; with a rectangular window X[0] of frame 0
  // is the frame's sum, 4 (not 1).
  const x = Float32Array.from({ length: 10 }, (_, n) => n);
  const spec = stft({ x, batch: 1, length: 10, nFft: 4, hopLength: 2, window: new Float32Array([1, 1, 1, 1]) });
  deepStrictEqual(spec[0], 4); // 2 + 1 + 0 + 1
  // Last frame (f = 5): samples 8..11 of the padded signal = x[8], x[9], x[8], x[7] = 32 in total.
  deepStrictEqual(spec[5 * 3 * 2], 8 + 9 + 8 + 7);
});

Deno.test("stft reference: istft(stft(x)) gives x back, centred and same-padded", () => {
  const x = randomF32(2 * 200, 3);
  const spec = stft({ x, batch: 2, length: 200, nFft: 32, hopLength: 8 });
  const frames = stftFrames(200, 32, 8);
  assertClose(istft({ x: spec, batch: 2, frames, nFft: 32, hopLength: 8, length: 200 }), x, { atol: 1e-6, rtol: 0 });
  // "same" returns frames * hopLength samples.
  deepStrictEqual(istft({ x: spec, batch: 2, frames, nFft: 32, hopLength: 8, padding: "same" }).length, 2 * frames * 8);
});

Deno.test("stft reference: istft counts the Nyquist bin once and drops the imaginary parts of DC and Nyquist", () => {
  // Rectangular window, hopLength = nFft: every frame stands alone and the envelope is 1. A spectrum with
  // only Nyquist = 1 inverts to (-1)^n / N (counted twice, as an ordinary bin, it would be 2 (-1)^n / N);
  // imaginary parts 5 on DC and Nyquist change nothing.
  const N = 8;
  const bins = stftBins(N);
  const spectrum = new Float32Array(2 * bins * 2);
  for (let f = 0; f < 2; f++) {
    spectrum[f * bins * 2 + 2 * (bins - 1)] = 1;
    spectrum[f * bins * 2 + 1] = 5;
    spectrum[f * bins * 2 + 2 * (bins - 1) + 1] = 5;
  }
  const y = istft({ x: spectrum, batch: 1, frames: 2, nFft: N, hopLength: N, window: new Float32Array(N).fill(1) });
  // Centre crop: samples 4 .. 11 of the overlap-added signal, i.e. n = 4..7 of frame 0 and 0..3 of frame 1.
  assertClose(y, [4, 5, 6, 7, 0, 1, 2, 3].map((n) => (n % 2 ? -1 : 1) / N), { atol: 1e-7, rtol: 0 });
});

Deno.test("stft reference: torch's frame count, odd nFft included; short signals refused as torch refuses them", async () => {
  const golden = await loadStftGolden();
  ok(golden.frames.length > 0);
  for (const c of golden.frames) {
    deepStrictEqual(stftFrames(c.length, c.nFft, c.hopLength), c.frames, JSON.stringify(c));
  }
  // The spec's 1 + floor(length / hopLength) is wrong for odd nFft at some lengths (torch: 4 frames here).
  const odd = golden.frames.find((c) => c.nFft === 1025 && c.length === 1024)!;
  ok(odd.frames !== 1 + Math.floor(1024 / 256), "odd nFft: 1 + floor(length / hopLength) is not torch's count");
  for (const c of golden.too_short) {
    let raised = false;
    try {
      stft({ x: new Float32Array(c.length), batch: 1, length: c.length, nFft: c.nFft, hopLength: 4 });
    } catch {
      raised = true;
    }
    deepStrictEqual(raised, c.raised, `length ${c.length}, nFft ${c.nFft}`);
  }
});

Deno.test("stft reference matches the torch goldens (stft and istft, center and same)", async () => {
  const golden = await loadStftGolden();
  ok(golden.stft.length > 0 && golden.istft.length > 0 && golden.meta.torch);
  for (const c of golden.stft) {
    deepStrictEqual(stftFrames(c.length, c.nFft, c.hopLength), c.frames, `${c.label}: frames`);
    const got = stft({
      x: Float32Array.from(c.x),
      batch: c.batch,
      length: c.length,
      nFft: c.nFft,
      hopLength: c.hopLength,
    });
    // torch in f64 rounded once, the reference in f64 rounded once: they differ by the f32 rounding
    // of the window (torch's f64 Hann vs ours rounded to f32): ~2^-24 of the sum of |terms|.
    const tol = { atol: c.nFft * 8 * U * 2, rtol: 2 ** -22 };
    assertClose(strided(got, c.out_stride), c.out, tol, `torch ${c.label}`);
  }
  for (const c of golden.istft) {
    // Both in f64, ours with the window rounded to f32: each product and the envelope it is divided
    // by move by 2^-24 relative, a few ULPs of the largest output (2.3 at most in these cases).
    const got = istft(goldenIstftArgs(c));
    assertClose(got, c.out, { atol: 8 * U * maxAbs(c.out), rtol: 0 }, `torch ${c.label}`);
  }
});

Deno.test("stft reference: NOLA as torch checks it; asking for more samples than the frames reach throws", async () => {
  const golden = await loadStftGolden();
  for (const c of golden.nola) {
    const args = {
      x: new Float32Array(5 * stftBins(c.nFft) * 2).fill(1),
      batch: 1,
      frames: 5,
      nFft: c.nFft,
      hopLength: c.hopLength,
    };
    let raised = false;
    try {
      istft(args);
    } catch (e) {
      raised = true;
      ok((e as Error).message.includes("NOLA"), (e as Error).message);
    }
    deepStrictEqual(raised, c.raised, `Hann, nFft ${c.nFft}, hopLength ${c.hopLength}: torch ${c.message}`);
  }
  // Past its default length torch returns overlap-added samples up to the last frame's end (so does
  // this op), and zeros beyond it (this op throws).
  const { beyond } = golden;
  ok(beyond.past_zero && beyond.before_past_nonzero, "torch: real samples to the last frame's end, zeros after");
  const args = { x: Float32Array.from(beyond.x), batch: 1, frames: 9, nFft: 16, hopLength: 4 };
  deepStrictEqual(istft(args).length, beyond.default);
  assertClose(
    istft({ ...args, length: beyond.to_end }),
    beyond.tail,
    { atol: 8 * U * maxAbs(beyond.tail), rtol: 0 },
    "to the last frame's end",
  );
  await assertThrowsMessage(
    () => istft({ ...args, length: beyond.to_end + 1 }),
    `istft: length must be <= ${beyond.to_end}, the samples 9 frames reach, got ${beyond.to_end + 1}`,
  );
});

Deno.test("stft reference: bad input throws naming the argument", async () => {
  const x = new Float32Array(20);
  await assertThrowsMessage(
    () => stft({ x, batch: 1, length: 20, nFft: 40, hopLength: 4 }),
    "stft: length must be > floor(nFft / 2) = 20",
  );
  await assertThrowsMessage(
    () => stft({ x, batch: 2, length: 20, nFft: 8, hopLength: 4 }),
    "x must have length batch * length = 40",
  );
  await assertThrowsMessage(
    () => stft({ x, batch: 1, length: 20, nFft: 8, hopLength: 0 }),
    "stft: hopLength must be an integer in [1,",
  );
  await assertThrowsMessage(
    () => stft({ x, batch: 1, length: 20, nFft: 8, hopLength: 2, window: new Float32Array(7) }),
    "window must have length nFft = 8, got 7",
  );
  const spec = new Float32Array(5 * 9 * 2);
  await assertThrowsMessage(
    () => istft({ x: spec, batch: 1, frames: 5, nFft: 16, hopLength: 5, padding: "same" }),
    "nFft - hopLength must be even",
  );
  await assertThrowsMessage(
    () => istft({ x: spec, batch: 1, frames: 5, nFft: 16, hopLength: 4, padding: "valid" as IstftPadding }),
    'padding must be one of "center", "same"',
  );
  await assertThrowsMessage(
    () => istft({ x: spec, batch: 2, frames: 5, nFft: 16, hopLength: 4 }),
    "batch * frames * bins * 2 = 180",
  );
});

gpuTest("stft GPU: bad input throws before dispatch", async (gpu) => {
  const x = new Float32Array(20);
  await assertThrowsMessage(
    () => stftGpu(gpu, { x, batch: 1, length: 20, nFft: 40, hopLength: 4 }),
    "length must be > floor(nFft / 2)",
  );
  const spec = new Float32Array(5 * 9 * 2);
  await assertThrowsMessage(
    () => istftGpu(gpu, { x: spec, batch: 1, frames: 5, nFft: 16, hopLength: 16 }),
    "istft: window must satisfy NOLA",
  );
  await assertThrowsMessage(
    () => istftGpu(gpu, { x: spec, batch: 1, frames: 5, nFft: 16, hopLength: 4, length: 25 }),
    "length must be <= 24",
  );
  await assertThrowsMessage(
    () => stftGpu(gpu, { x, batch: 1, length: 20, nFft: 8, hopLength: 4 }, { override: "inverse" }),
    'override "inverse"',
  );
});

gpuTest("stft GPU matches the torch goldens (stft and istft, center and same)", async (gpu) => {
  const golden = await loadStftGolden();
  ok(golden.stft.length > 0 && golden.istft.length > 0);
  for (const c of golden.stft) {
    const args = { x: Float32Array.from(c.x), batch: c.batch, length: c.length, nFft: c.nFft, hopLength: c.hopLength };
    const got = await stftGpu(gpu, args);
    assertClose(strided(got, c.out_stride), c.out, stftTol(args), `torch ${c.label}`);
  }
  for (const c of golden.istft) {
    const args = goldenIstftArgs(c);
    assertClose(await istftGpu(gpu, args), c.out, istftTol(args, c.out), `torch ${c.label}`);
  }
});

// Awkward sizes: nFft 1920 = 2^7 * 15 and odd 1025, odd lengths, the shortest signal allowed, a hopLength
// that does not divide nFft, hopLength > nFft, a batch of 3, rows past a 64-row tile.
const stftShapes: [number, number, number, number][] = [
  [1, 9, 16, 5],
  [3, 37, 16, 4],
  [2, 1001, 64, 16],
  [1, 333, 30, 7],
  [1, 100, 8, 11],
  [1, 1024, 1025, 256],
  [1, 1201, 1920, 480],
];
checkAgainstReference<StftArgs, StftVariant>(
  "stft",
  KERNELS,
  "kernel",
  stftShapes.map(([batch, length, nFft, hopLength], i) => ({
    label: `batch ${batch}, length ${length}, nFft ${nFft}, hopLength ${hopLength}`,
    args: { x: randomF32(batch * length, 100 + i, -1, 1), batch, length, nFft, hopLength },
  })),
  stft,
  stftGpu,
  stftTol,
);

// The FFT kernel: every power of two it takes (2 and 2,048 included), a hopLength that does not
// divide nFft and one past it, a batch of 3, a caller's window, and a signal long enough for 94 frames.
const fftShapes: [number, number, number, number][] = [
  [1, 5, 2, 1],
  [1, 9, 16, 5],
  [3, 37, 16, 4],
  [2, 1001, 64, 16],
  [1, 100, 8, 11],
  [1, 24_000, 1024, 256],
  [1, 5000, 2048, 512],
];
const fftCases = fftShapes.map(([batch, length, nFft, hopLength], i) => ({
  label: `batch ${batch}, length ${length}, nFft ${nFft}, hopLength ${hopLength}`,
  args: { x: randomF32(batch * length, 400 + i, -1, 1), batch, length, nFft, hopLength } as StftArgs,
}));
fftCases.push({
  label: "a caller's window",
  args: {
    x: randomF32(300, 450, -1, 1),
    batch: 1,
    length: 300,
    nFft: 32,
    hopLength: 8,
    window: randomF32(32, 451, 0, 1),
  },
});
checkAgainstReference<StftArgs, StftVariant>("stft", KERNELS, "fft", fftCases, stft, stftGpu, stftTol);

gpuTest("stft GPU: the FFT runs for powers of two up to 2,048, the GEMM for every other nFft", (gpu) => {
  deepStrictEqual([2, 8, 1024, 2048].map(stftUsesFft), [true, true, true, true]);
  deepStrictEqual([1, 6, 1025, 1920, 4096].map(stftUsesFft), [false, false, false, false, false]);
  const shape = (nFft: number) => ({ batch: 1, length: 5000, nFft, hopLength: 256 });
  deepStrictEqual(parseVariantName(stftKernel(gpu, shape(1024)).plan.kernel.variant).entry, "fft");
  deepStrictEqual(parseVariantName(stftKernel(gpu, shape(1920)).plan.kernel.variant).entry, "kernel");
  deepStrictEqual(parseVariantName(stftKernel(gpu, shape(4096)).plan.kernel.variant).entry, "kernel");
  deepStrictEqual(stftKernel(gpu, shape(1024), { override: "kernel" }).plan.kernel.variant, "kernel");
  assertThrowsMessage(
    () => stftFftPlan(gpu, shape(1920)),
    "stft: nFft must be a power of two from 2 to 2048 for the FFT kernel, got 1920",
  );
});

// istft of random spectra, center and same, with and without length (shorter, and up to the last
// frame's end),
// and a rectangular window (Nyquist once, imaginary DC/Nyquist dropped: the random spectra have them).
const istftShapes: [number, number, number, number, IstftPadding, number | undefined][] = [
  [2, 9, 16, 4, "center", undefined],
  [1, 9, 16, 4, "center", 29],
  [3, 7, 16, 4, "same", undefined],
  [1, 70, 64, 16, "center", 1000],
  [2, 9, 16, 4, "center", 40],
  [1, 6, 1025, 256, "center", 1793], // to the last frame's end: 1025 + 5 * 256 - 512
  [1, 12, 30, 7, "center", undefined],
  [1, 4, 1025, 256, "center", undefined],
  [1, 3, 1920, 480, "same", undefined],
];
const istftCases = istftShapes.map(([batch, frames, nFft, hopLength, padding, length], i) => ({
  label: `batch ${batch}, frames ${frames}, nFft ${nFft}, hopLength ${hopLength}, ${padding}${
    length ? `, length ${length}` : ""
  }`,
  args: {
    x: randomF32(batch * frames * stftBins(nFft) * 2, 200 + i, -4, 4),
    batch,
    frames,
    nFft,
    hopLength,
    padding,
    length,
  },
}));
istftCases.push({
  label: "rectangular window, hopLength = nFft",
  args: {
    x: randomF32(5 * stftBins(8) * 2, 300, -4, 4),
    batch: 1,
    frames: 5,
    nFft: 8,
    hopLength: 8,
    padding: "center",
    length: undefined,
    window: new Float32Array(8).fill(1),
  } as IstftArgs & { padding: IstftPadding; length: undefined },
});
checkAgainstReference<IstftArgs, StftVariant>(
  "stft",
  KERNELS,
  "inverse",
  istftCases,
  istft,
  istftGpu,
  (a) => istftTol(a, istft(a)),
);
