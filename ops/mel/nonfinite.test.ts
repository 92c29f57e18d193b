// mel on NaN and ±Infinity, held to torch (goldens/nonfinite.py): the power spectrum is torch's
// `abs().pow(2)`, whose |z| is hypot's (an infinite part gives inf even beside a NaN); the projection is
// a dense product, so a non-finite power or filterbank entry meets zeros as inf * 0, NaN; the decibels
// keep NaN (torch's clamp does; WGSL's max may not, which read -100 dB) and clamp -inf to -100 dB; and
// melSpectrogram composes them after stft (whose non-finite bins are stft's, see ops/stft). Each entry
// point gives the reference's values, and melSpectrogramGpu the reference's spectrogram.
import {
  KERNELS,
  mel,
  type MelArgs,
  melGpu,
  melSpectrogram,
  type MelSpectrogramArgs,
  melSpectrogramGpu,
  type MelVariant,
  powerSpectrum,
  type PowerSpectrumArgs,
  powerSpectrumGpu,
} from "./mod.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  gpuTest,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  entry: "power" | "kernel" | "melSpectrogram";
  nonfinite?: "x" | "filterbank";
  x: GoldenFloat[];
  filterbank?: GoldenFloat[];
  out: GoldenFloat[];
  [size: string]: unknown;
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const casesOf = (entry: Case["entry"]) => golden.cases.filter((c) => c.entry === entry);
const powerArgs = (c: Case): PowerSpectrumArgs => ({
  x: goldenF32(c.x),
  rows: c.rows as number,
  bins: c.bins as number,
});
const melArgs = (c: Case): MelArgs => ({
  x: goldenF32(c.x),
  filterbank: goldenF32(c.filterbank!),
  rows: c.rows as number,
  nFreqs: c.nFreqs as number,
  nMels: c.nMels as number,
  db: c.db as boolean,
});
const spectrogramArgs = (c: Case): MelSpectrogramArgs => ({
  x: goldenF32(c.x),
  batch: c.batch as number,
  length: c.length as number,
  nFft: c.nFft as number,
  hopLength: c.hopLength as number,
  nMels: c.nMels as number,
  sampleRate: c.sampleRate as number,
});
const melLabel = (c: Case) => `non-finite ${c.nonfinite}${c.db ? ", dB" : ""}`;

Deno.test(`powerSpectrum reference: NaN and ±Infinity parts give torch ${golden.torch}'s |z|^2`, () => {
  for (const c of casesOf("power")) {
    const args = powerArgs(c);
    assertNonFiniteOperands({ x: args.x });
    assertClose(powerSpectrum(args), goldenF32(c.out), { atol: 0, rtol: 2 ** -22 }, "power");
  }
});

Deno.test(`mel reference: NaN and ±Infinity in the power and the filterbank give torch ${golden.torch}'s values`, () => {
  for (const c of casesOf("kernel")) {
    const args = melArgs(c);
    assertNonFiniteOperands({ [c.nonfinite!]: args[c.nonfinite!] });
    assertClose(mel(args), goldenF32(c.out), { atol: 1e-12, rtol: 2 ** -22 }, melLabel(c));
  }
});

Deno.test(`melSpectrogram reference: NaN and ±Infinity in the signal give torch ${golden.torch}'s dB`, () => {
  for (const c of casesOf("melSpectrogram")) {
    const args = spectrogramArgs(c);
    assertNonFiniteOperands({ x: args.x });
    // The filterbank here and in the generator are f32 roundings of the same f64 triangles; stft's f32
    // spectrum against pocketfft's, in dB.
    assertClose(melSpectrogram(args), goldenF32(c.out), { atol: 1e-4, rtol: 1e-4 }, "melSpectrogram");
  }
});

const tol = { atol: 1e-5, rtol: 1e-5 }; // f32 sums and log2 against f64
const power = casesOf("power").map((c) => ({ label: "power", args: powerArgs(c) }));
checkAgainstReference<PowerSpectrumArgs, MelVariant>(
  "powerSpectrum (non-finite)",
  KERNELS,
  "power",
  power,
  powerSpectrum,
  powerSpectrumGpu,
  tol,
);
const mels = casesOf("kernel").map((c) => ({ label: melLabel(c), args: melArgs(c) }));
checkAgainstReference<MelArgs, MelVariant>("mel (non-finite)", KERNELS, "kernel", mels, mel, melGpu, tol);

gpuTest("melSpectrogramGpu: NaN and ±Infinity in the signal give the reference's spectrogram", async (gpu) => {
  for (const c of casesOf("melSpectrogram")) {
    const args = spectrogramArgs(c);
    assertClose(await melSpectrogramGpu(gpu, args), melSpectrogram(args), { atol: 1e-4, rtol: 1e-5 }, "melSpectrogram");
  }
});
