import { deepStrictEqual, ok } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import {
  hzToMel,
  KERNELS,
  mel,
  type MelArgs,
  melFilterbank,
  type MelFilterbankOptions,
  melGpu,
  type MelScale,
  melSpectrogram,
  melSpectrogramGpu,
  melToHz,
  powerSpectrum,
  type PowerSpectrumArgs,
  powerSpectrumGpu,
} from "./mod.ts";
import type { MelVariant } from "./kernels.gen.ts";

/** What goldens/gen.py writes. */
interface Golden {
  meta: { torch: string; torchaudio: string };
  x: number[];
  filterbanks: (Required<MelFilterbankOptions> & { label: string; fb: number[] })[];
  spectrograms: {
    label: string;
    sampleRate: number;
    nFft: number;
    hopLength: number;
    nMels: number;
    melScale: MelScale;
    norm: "slaney" | null;
    frames: number;
    out: number[];
  }[];
}
const loadMelGolden = () => loadGolden<Golden>(new URL("./goldens/mel.json", import.meta.url));
const spectrogramArgs = (g: Golden, s: Golden["spectrograms"][number]) => ({
  x: Float32Array.from(g.x),
  batch: 1,
  length: g.x.length,
  nFft: s.nFft,
  hopLength: s.hopLength,
  nMels: s.nMels,
  sampleRate: s.sampleRate,
  melScale: s.melScale,
  norm: s.norm,
});

/**
 * Compares log-mel spectrograms in the power domain: rtol on power (rtol 1e-4 is 4.3e-4 dB) plus an
 * atol of `floor` times the loudest band's power. Below that floor a band's power is the size of the
 * f32 stft's rounding noise (its absolute error scales with the loudest bins, not the band's own),
 * so its decibels there are noise too; the floor is stated per comparison.
 */
function assertDbClose(actual: ArrayLike<number>, expected: ArrayLike<number>, floor: number, label: string): void {
  const power = (db: ArrayLike<number>) => Float64Array.from(db as ArrayLike<number>, (v) => 10 ** (v / 10));
  const expectedPower = power(expected);
  const loudest = expectedPower.reduce((m, v) => Math.max(m, v), 0);
  assertClose(power(actual), expectedPower, { atol: floor * loudest, rtol: 1e-4 }, label);
}

Deno.test("mel reference: the HTK and Slaney scales at known points", () => {
  assertClose([hzToMel(700, "htk")], [2595 * Math.log10(2)], { atol: 1e-9, rtol: 0 });
  assertClose([hzToMel(1000, "slaney"), hzToMel(500, "slaney")], [15, 7.5], { atol: 1e-12, rtol: 0 });
  assertClose([melToHz(hzToMel(3456, "slaney"), "slaney"), melToHz(hzToMel(3456, "htk"), "htk")], [3456, 3456], {
    atol: 1e-9,
    rtol: 0,
  });
});

Deno.test("mel reference: power, dB as 10 log10 with the argument floored at 1e-10, no top_db", () => {
  deepStrictEqual([...powerSpectrum({ x: new Float32Array([3, 4, 1, -1]), rows: 1, bins: 2 })], [25, 2]);
  const identity = new Float32Array([1, 0, 0, 1]);
  const db = mel({
    x: new Float32Array([100, 0, 1e-12, 1e4]),
    filterbank: identity,
    rows: 2,
    nFreqs: 2,
    nMels: 2,
    db: true,
  });
  // 10 log10 (not 20 log10: 40); 0 and 1e-12 both clamp to 1e-10 (-100 dB, not -inf or -120, nor
  // log(x + 1e-10)'s -99.96 for 1e-12); 80 dB apart with nothing clipped (no top_db).
  deepStrictEqual([...db], [20, -100, -100, 40]);
});

Deno.test("mel reference: filterbanks match torchaudio (HTK default, Slaney/Slaney) and librosa", async () => {
  const golden = await loadMelGolden();
  ok(golden.filterbanks.length === 4 && golden.meta.torch, `torchaudio: ${golden.meta.torchaudio}`);
  for (const g of golden.filterbanks) {
    // torchaudio computes in f32 (linspace, the mel points): 1e-6 relative, plus ~2^-24 of the peak.
    const { label: _label, fb: _fb, ...options } = g;
    const fb = melFilterbank(options);
    assertClose(fb, g.fb, { atol: 1e-6 * Math.max(...g.fb), rtol: 1e-5 }, g.label);
  }
  // The alternatives differ: HTK vs Slaney scale, and norm vs none, by far more than the tolerance.
  const [htk, , slaney] = golden.filterbanks;
  const options = ({ label: _label, fb: _fb, ...rest }: typeof slaney) => rest;
  const slaneyNoNorm = melFilterbank({ ...options(slaney), norm: null });
  ok(Math.max(...slaneyNoNorm.map((v, i) => Math.abs(v - slaney.fb[i]))) > 0.5, "Slaney's norm changes the triangles");
  const htkAsSlaney = melFilterbank({ ...options(htk), melScale: "slaney" });
  ok(Math.max(...htkAsSlaney.map((v, i) => Math.abs(v - htk.fb[i]))) > 0.1, "the Slaney scale moves the triangles");
});

Deno.test("mel reference: melSpectrogram matches torchaudio's MelSpectrogram + AmplitudeToDB on a sine sweep", async () => {
  const golden = await loadMelGolden();
  ok(golden.spectrograms.length === 2);
  for (const s of golden.spectrograms) {
    const got = melSpectrogram(spectrogramArgs(golden, s));
    deepStrictEqual(got.length, s.frames * s.nMels, `${s.label}: frames x nMels`);
    // The reference rounds the window, the spectrum and the power to f32 once each; torchaudio ran in
    // f64. Bands more than 100 dB below the loudest are compared as noise (see assertDbClose).
    assertDbClose(got, s.out, 1e-10, `torchaudio ${s.label}`);
  }
  // HTK without norm and Slaney with its area norm differ by two orders of magnitude in total power
  // on this audio (the spec's "200x"), so neither can stand in for the other unnoticed.
  const [htk, slaney] = golden.spectrograms.map((s) => s.out.reduce((sum, v) => sum + 10 ** (v / 10), 0));
  ok(htk / slaney > 100, `HTK/none has ${(htk / slaney).toFixed(0)}x the power of Slaney/Slaney`);
});

gpuTest("mel GPU: melSpectrogramGpu matches torchaudio on a sine sweep", async (gpu) => {
  const golden = await loadMelGolden();
  ok(golden.spectrograms.length === 2);
  for (const s of golden.spectrograms) {
    const got = await melSpectrogramGpu(gpu, spectrogramArgs(golden, s));
    // The GPU stft's f32 GEMM: its absolute error (~nFft 2^-24 max|x|, tested in ops/stft) makes bands
    // more than 70 dB below the loudest noise; louder ones agree to rtol 1e-4 in power (4e-4 dB).
    assertDbClose(got, s.out, 1e-7, `torchaudio ${s.label}`);
  }
});

Deno.test("mel reference: bad input throws naming the argument", async () => {
  const base = { nFreqs: 65, nMels: 10, sampleRate: 16000 };
  await assertThrowsMessage(
    () => melFilterbank({ ...base, fMax: 9000 }),
    "melFilterbank: 0 <= fMin < fMax <= sampleRate / 2 expected",
  );
  await assertThrowsMessage(
    () => melFilterbank({ ...base, melScale: "mel" as MelScale }),
    'melScale must be one of "htk", "slaney"',
  );
  await assertThrowsMessage(() => melFilterbank({ ...base, norm: "area" as "slaney" }), 'norm must be one of "slaney"');
  await assertThrowsMessage(() => melFilterbank({ ...base, nMels: 0 }), "nMels must be an integer >= 1");
  await assertThrowsMessage(
    () => powerSpectrum({ x: new Float32Array(3), rows: 1, bins: 2 }),
    "x must have length rows * bins * 2 = 4",
  );
  await assertThrowsMessage(
    () => mel({ x: new Float32Array(6), filterbank: new Float32Array(5), rows: 2, nFreqs: 3, nMels: 2 }),
    "filterbank must have length nFreqs * nMels = 6, got 5",
  );
});

gpuTest("mel GPU: bad input throws before dispatch", async (gpu) => {
  await assertThrowsMessage(
    () => powerSpectrumGpu(gpu, { x: new Float32Array(3), rows: 1, bins: 2 }),
    "rows * bins * 2",
  );
  await assertThrowsMessage(
    () =>
      melGpu(gpu, { x: new Float32Array(6), filterbank: new Float32Array(6), rows: 2, nFreqs: 3, nMels: 2 }, {
        override: "power",
      }),
    'override "power"',
  );
  await assertThrowsMessage(
    () =>
      melSpectrogramGpu(gpu, {
        x: new Float32Array(100),
        batch: 1,
        length: 100,
        nFft: 64,
        hopLength: 16,
        nMels: 8,
        sampleRate: 8000,
        fMin: 5000,
      }),
    "fMin < fMax",
  );
});

// Power: odd and even pair counts (the last pair alone), and a single bin.
checkAgainstReference<PowerSpectrumArgs, MelVariant>(
  "mel",
  KERNELS,
  "power",
  [[1, 1], [3, 513], [2, 16], [5, 7]].map(([rows, bins], i) => ({
    label: `rows ${rows}, bins ${bins}`,
    args: { x: randomF32(rows * bins * 2, 10 + i, -3, 3), rows, bins },
  })),
  powerSpectrum,
  powerSpectrumGpu,
  // re^2 + im^2 in f32: two roundings, and the GPU may fuse one multiply into an FMA.
  { atol: 0, rtol: 3 * 2 ** -24 },
);

// Projection with and without dB: tiles' edges in both directions, 513 bins, 1 band, real filterbanks.
const fb = (nFreqs: number, nMels: number, scale: MelScale = "htk") =>
  melFilterbank({ nFreqs, nMels, sampleRate: 24000, melScale: scale, norm: scale === "slaney" ? "slaney" : null });
const melCases = ([[70, 513, 80, "htk"], [1, 65, 1, "htk"], [130, 257, 100, "slaney"], [3, 9, 5, "htk"]] as const)
  .flatMap(([rows, nFreqs, nMels, scale], i) =>
    [false, true].map((db) => ({
      label: `rows ${rows}, nFreqs ${nFreqs}, nMels ${nMels}, ${scale}${db ? ", dB" : ""}`,
      args: {
        x: randomF32(rows * nFreqs, 20 + i, 0, 10),
        filterbank: fb(nFreqs, nMels, scale),
        rows,
        nFreqs,
        nMels,
        db,
      } as MelArgs,
    }))
  );
// Tolerance: nFreqs non-negative products summed in f32 (relative error <= nFreqs 2^-24 of the sum, so
// rtol 2^-24 * nFreqs) and, in dB, log2's error (WGSL: 2^-21 absolute near 1, 3 ULP elsewhere) times
// 10 log10(2), plus the relative error of the sum times 4.35 dB.
checkAgainstReference<MelArgs, MelVariant>(
  "mel",
  KERNELS,
  "kernel",
  melCases,
  mel,
  melGpu,
  (a) =>
    a.db ? { atol: 1e-5 + 4.35 * a.nFreqs * 2 ** -24, rtol: 2 ** -20 } : { atol: 1e-30, rtol: a.nFreqs * 2 ** -24 },
);
