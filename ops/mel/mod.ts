/**
 * mel: the mel filterbank (`melFilterbank`, built on the host), its application as two kernels, the
 * power spectrum (`powerSpectrum`, entry point `power`) and the mel projection with optional
 * decibels (`mel`, entry point `kernel`), and their composition with stft, `melSpectrogramGpu`
 * (stft -> power -> mel -> dB, three dispatches in one submit). See `reference.ts` for the
 * definitions.
 *
 * Matches torchaudio (2.11, measured by the goldens): `melscale_fbanks` (layout `[nFreqs, nMels]`,
 * HTK scale and no norm by default), `Spectrogram(power=2)`, `MelScale`,
 * `AmplitudeToDB(stype="power", top_db=None)` and their composition `MelSpectrogram`, on a sine
 * sweep to rtol 1e-4 in power (see the test); `{ melScale: "slaney", norm: "slaney" }` matches
 * `librosa.filters.mel`'s defaults (transposed, for an even sample rate). Conventions, each pinned
 * by a test that the alternative fails: HTK versus Slaney scale and no norm versus Slaney's area
 * norm (both from torch-side goldens); decibels as 10 log10 of power with the argument floored at
 * 1e-10 (not 20 log10, not log(x + eps)), no top_db; the spectrogram frame-major,
 * `[batch, frames, nMels]`, where torchaudio gives `[batch, nMels, frames]`. NaN and ±Infinity as torch
 * (nonfinite.test.ts): the power of a bin with an infinite part is inf (torch's |z| is hypot's), the
 * dense projection makes inf * 0 NaN, and the decibels keep NaN (clamp does; the kernel reads the NaN
 * from the bits, as WGSL's `max` may return the floor) and floor -inf at -100 dB.
 *
 * Refused, with an error naming the argument: fMin/fMax outside 0 <= fMin < fMax <= sampleRate / 2,
 * a melScale or norm not listed, and bad sizes or arrays.
 *
 * How it runs: `power` streams vec4s (two pairs) to two powers; `kernel` is the 64 x 64-tiled GEMM
 * stft uses (`harness/wgsl/gemm64_gathered.wgsl`) with scalar, bounds-checked loads (nFreqs = nFft/2
 * + 1 is odd) and the decibel conversion in its store. The filterbank is dense: most of each column
 * is zero, but at 80-128 bands over 513 bins the GEMM is small (0.2 GFLOP for 30 s of audio) next
 * to the stft before it.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6 over Vulkan, GPU timestamps, median of 5, warm
 * clocks): `power` of 2,813 x 513 bins (30 s at 24 kHz, nFft 1024, hopLength 256) in 0.0111 ms (5.8 MB,
 * 34.6% of the 4,523 GB/s read roofline: too small a transfer to stream at full rate), of 22,504 x
 * 513 in 0.0448 ms (68.4%); `kernel` (100 bands, dB) of 2,813 rows in 0.0840 ms, 3.4 TFLOP/s as a
 * dense GEMM. That projection is latency-bound: 88 workgroups of 128 invocations on 132 SMs, each
 * walking nFreqs = 513 in 33 dependent blocks of scalar loads. Beside matmul at the same shape, in one
 * run (harness/baselines/nvidia-h200-log/34-pending-bench.json, 2026-12-02, median of 10): `kernel`
 * took 2,813 x 513 to 100 bands in 0.0827 ms and to 128 in 0.0833 ms, where matmul's best entry point
 * took 2,813 x 128 x 513 in 0.154 ms (`tile64`; `kernel` 0.195), with no decibels to compute: the
 * projection runs at 1.8x the GEMM rate of its shape. Not tuned further; a kernel that sums only each
 * band's nonzero bins would do a tenth of the work.
 *
 * @module
 */

import { streamWorkgroups } from "../../harness/grid.ts";
import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import { type GpuTensor, type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { stftKernel } from "../stft/mod.ts";
import { stftBins, stftFrames } from "../stft/reference.ts";
import { KERNELS, type MelVariant } from "./kernels.gen.ts";
import {
  type MelArgs,
  melFilterbank,
  type MelShape,
  type MelSpectrogramArgs,
  type PowerSpectrumArgs,
  validateMel,
  validateMelShape,
  validateMelSpectrogram,
  validatePowerSpectrum,
  validatePowerSpectrumShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type MelVariant };

/**
 * Plans `powerSpectrum` on the GPU.
 *
 * @param gpu the device
 * @param shape `rows` and `bins`
 * @param options kernel override
 * @returns the plan; bindings `x` (`[rows, bins, 2]`) and `out` (`[rows, bins]`)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { powerSpectrumPlan } from "@xpu/ops/ops/mel";
 * const gpu = await acquireDevice();
 * const plan = powerSpectrumPlan(gpu, { rows: 2813, bins: 513 });
 * ```
 */
export function powerSpectrumPlan(
  gpu: ResidentDevice,
  shape: { rows: number; bins: number },
  options?: KernelOptions<MelVariant>,
): KernelPlan {
  requireDevice("powerSpectrum", gpu);
  checkOptions("powerSpectrum", options);
  validatePowerSpectrumShape(shape);
  const n = shape.rows * shape.bins;
  return {
    op: "powerSpectrum",
    kernel: gpu.resolve(KERNELS, "power", options),
    bindings: [
      { name: "x", dtype: "f32", length: 2 * n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams([{ name: "n", type: "u32", of: "rows * bins" }], { n }, "powerSpectrum"),
    workgroups: streamWorkgroups(n, 256 * 2, gpu.limits.maxComputeWorkgroupsPerDimension),
    // Two values read and one written per bin; two multiplies and an add.
    cost: { bytes: 12 * n, flops: 3 * n },
  };
}

/**
 * The power spectrum on the GPU.
 *
 * @param gpu the device
 * @param args as {@link powerSpectrum}
 * @param options kernel override
 * @returns `[rows, bins]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { powerSpectrumGpu } from "@xpu/ops/ops/mel";
 * const gpu = await acquireDevice();
 * await powerSpectrumGpu(gpu, { x: new Float32Array([3, 4, 1, -1]), rows: 1, bins: 2 }); // [25, 2]
 * ```
 */
export async function powerSpectrumGpu(
  gpu: ResidentDevice,
  args: PowerSpectrumArgs,
  options?: KernelOptions<MelVariant>,
): Promise<Float32Array> {
  requireDevice("powerSpectrum", gpu);
  checkOptions("powerSpectrum", options);
  validatePowerSpectrum(args);
  const [out] = await gpu.run(powerSpectrumPlan(gpu, args, options), [args.x]);
  return out as Float32Array;
}

/**
 * Plans `mel` on the GPU.
 *
 * @param gpu the device
 * @param shape `rows`, `nFreqs`, `nMels`, `db`
 * @param options kernel override
 * @returns the plan; bindings `x` (`[rows, nFreqs]`), `filterbank` (`[nFreqs, nMels]`) and `out`
 *   (`[rows, nMels]`)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { melPlan } from "@xpu/ops/ops/mel";
 * const gpu = await acquireDevice();
 * const plan = melPlan(gpu, { rows: 2813, nFreqs: 513, nMels: 100, db: true });
 * ```
 */
export function melPlan(gpu: ResidentDevice, shape: MelShape, options?: KernelOptions<MelVariant>): KernelPlan {
  requireDevice("mel", gpu);
  checkOptions("mel", options);
  validateMelShape(shape);
  const { rows, nFreqs, nMels } = shape;
  return {
    op: "mel",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: rows * nFreqs, role: "input" },
      { name: "filterbank", dtype: "f32", length: nFreqs * nMels, role: "input" },
      { name: "out", dtype: "f32", length: rows * nMels, role: "output" },
    ],
    params: packParams(
      [{ name: "m", type: "u32" }, { name: "n", type: "u32" }, { name: "k", type: "u32" }, { name: "db", type: "u32" }],
      { m: rows, n: nMels, k: nFreqs, db: Number(shape.db ?? false) },
      "mel",
    ),
    workgroups: foldWorkgroups(
      Math.ceil(rows / 64) * Math.ceil(nMels / 64),
      gpu.limits.maxComputeWorkgroupsPerDimension,
    ),
    // Each operand read once and the output written once; a multiply-add per (row, bin, band).
    cost: { bytes: 4 * (rows * nFreqs + nFreqs * nMels + rows * nMels), flops: 2 * rows * nFreqs * nMels },
  };
}

/**
 * The mel projection (and optionally decibels) on the GPU.
 *
 * @param gpu the device
 * @param args as {@link mel}
 * @param options kernel override
 * @returns `[rows, nMels]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { melFilterbank, melGpu } from "@xpu/ops/ops/mel";
 * const gpu = await acquireDevice();
 * const filterbank = melFilterbank({ nFreqs: 3, nMels: 2, sampleRate: 8000 });
 * await melGpu(gpu, { x: new Float32Array([10, 20, 30]), filterbank, rows: 1, nFreqs: 3, nMels: 2, db: true });
 * ```
 */
export async function melGpu(
  gpu: ResidentDevice,
  args: MelArgs,
  options?: KernelOptions<MelVariant>,
): Promise<Float32Array> {
  requireDevice("mel", gpu);
  checkOptions("mel", options);
  validateMel(args);
  const [out] = await gpu.run(melPlan(gpu, args, options), [args.x, args.filterbank]);
  return out as Float32Array;
}

/**
 * The log-mel spectrogram on the GPU: stft, power and mel-with-dB as three dispatches in one submit,
 * the intermediates resident.
 *
 * @param gpu the device
 * @param args as {@link melSpectrogram}
 * @returns `[batch, frames, nMels]` in dB
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { melSpectrogramGpu } from "@xpu/ops/ops/mel";
 * const gpu = await acquireDevice();
 * const x = Float32Array.from({ length: 24_000 }, (_, n) => Math.sin(n / 5));
 * await melSpectrogramGpu(gpu, { x, batch: 1, length: 24_000, nFft: 1024, hopLength: 256, nMels: 100, sampleRate: 24_000 });
 * ```
 */
export async function melSpectrogramGpu(gpu: ResidentDevice, args: MelSpectrogramArgs): Promise<Float32Array> {
  requireDevice("melSpectrogram", gpu);
  validateMelSpectrogram(args);
  const bins = stftBins(args.nFft);
  const rows = args.batch * stftFrames(args.length, args.nFft, args.hopLength);
  const { batch, length, nFft, hopLength } = args;
  const { plan: spectrumPlan, tables } = stftKernel(gpu, { batch, length, nFft, hopLength });
  const powerPlan = powerSpectrumPlan(gpu, { rows, bins });
  const projectPlan = melPlan(gpu, { rows, nFreqs: bins, nMels: args.nMels, db: true });
  const tensors: GpuTensor[] = [];
  const keep = (t: GpuTensor) => (tensors.push(t), t);
  try {
    const x = keep(gpu.upload(args.x, "x"));
    const spectrumTables = tables.map((t, i) => keep(gpu.upload(t, `stft table ${i}`)));
    const { nMels, sampleRate, fMin, fMax, melScale, norm } = args;
    const bank = melFilterbank({ nFreqs: bins, nMels, sampleRate, fMin, fMax, melScale, norm });
    const filterbank = keep(gpu.upload(bank, "filterbank"));
    const spectrum = keep(gpu.alloc("f32", rows * bins * 2, "spectrum"));
    const power = keep(gpu.alloc("f32", rows * bins, "power"));
    const out = keep(gpu.alloc("f32", rows * args.nMels, "out"));
    await gpu.submit(
      [spectrumPlan, [x, ...spectrumTables, spectrum]],
      [powerPlan, [spectrum, power]],
      [projectPlan, [power, filterbank, out]],
    );
    return (await gpu.read(out)) as Float32Array;
  } finally {
    for (const t of tensors) t.buffer.destroy();
  }
}
