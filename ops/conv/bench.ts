/**
 * Benchmark cases of conv: the spec's speed targets, one case per rank and entry point (each entry
 * point always times its own tile, whatever the plan's rule would pick, so one run compares them):
 * conv2d 3 x 3, 128 -> 128 channels at 512 x 512 and 512 -> 512 at 128 x 128 (Z-Image / Anima VAE
 * decoder blocks), conv3d 3 x 3 x 3, 64 -> 64 at 16 x 128 x 128 (a video VAE block) and conv1d k = 7,
 * 512 -> 512 over 16,384 samples (a vocoder block); all batch 1, padding keeping the size, with bias.
 * `tile64_pipelined` (tile64 in two stages of workgroup memory, which the plans do not take until it is timed) is
 * timed at every shape tile64 is, so `--all-variants --filter conv` sets it beside the other two; it
 * needs 20 KiB of workgroup memory, more than WebGPU's default 16 KiB.
 *
 * @module
 */

import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import type { Conv1dShape, Conv2dShape, Conv3dShape } from "./reference.ts";
import { conv1dPlan, conv2dPlan, conv3dPlan, KERNELS } from "./mod.ts";
import type { ConvVariant } from "./kernels.gen.ts";

const inputs = (x: number, weight: number, bias: number, seed: number) => [
  randomInput(x, seed),
  randomInput(weight, seed + 1, 0.01, 0.05),
  randomInput(bias, seed + 2),
];

function cases(entry: string): BenchCase[] {
  return [
    defineCase<Conv2dShape, ConvVariant>({
      op: "conv2d",
      entry,
      sources: KERNELS,
      gpu: [
        { N: 1, Cin: 128, Cout: 128, H: 512, W: 512, kernelSize: 3, padding: 1 },
        { N: 1, Cin: 512, Cout: 512, H: 128, W: 128, kernelSize: 3, padding: 1 },
        // The last stage of a VAE decoder at 1024 x 1024 (512 MiB each way).
        { N: 1, Cin: 128, Cout: 128, H: 1024, W: 1024, kernelSize: 3, padding: 1 },
        // A VAE's 1 x 1 projections: the implicit GEMM with a one-tap kernel.
        { N: 1, Cin: 512, Cout: 512, H: 128, W: 128, kernelSize: 1 },
      ],
      quick: [{ N: 1, Cin: 8, Cout: 16, H: 32, W: 32, kernelSize: 3, padding: 1 }],
      label: ({ N, Cin, Cout, H, W, kernelSize }) => `${N}x${Cin}x${H}x${W}:${Cout}:k${kernelSize}`,
      plan: (gpu, shape, options) =>
        conv2dPlan(gpu, { ...shape, bias: true }, entryOptions(gpu, KERNELS, entry, options)),
      inputs: ({ N, Cin, Cout, H, W, kernelSize }, seed) =>
        inputs(N * Cin * H * W, Cout * Cin * (kernelSize as number) ** 2, Cout, seed),
    }),
    defineCase<Conv3dShape, ConvVariant>({
      op: "conv3d",
      entry,
      sources: KERNELS,
      gpu: [{ N: 1, Cin: 64, Cout: 64, D: 16, H: 128, W: 128, kernelSize: 3, padding: 1 }],
      quick: [{ N: 1, Cin: 4, Cout: 8, D: 4, H: 8, W: 8, kernelSize: 3, padding: 1 }],
      label: ({ N, Cin, Cout, D, H, W }) => `${N}x${Cin}x${D}x${H}x${W}:${Cout}:k3`,
      plan: (gpu, shape, options) =>
        conv3dPlan(gpu, { ...shape, bias: true }, entryOptions(gpu, KERNELS, entry, options)),
      inputs: ({ N, Cin, Cout, D, H, W }, seed) => inputs(N * Cin * D * H * W, Cout * Cin * 27, Cout, seed),
    }),
    defineCase<Conv1dShape, ConvVariant>({
      op: "conv1d",
      entry,
      sources: KERNELS,
      gpu: [{ N: 1, Cin: 512, Cout: 512, L: 16384, kernelSize: 7, padding: 3 }],
      quick: [{ N: 1, Cin: 16, Cout: 16, L: 256, kernelSize: 7, padding: 3 }],
      label: ({ N, Cin, Cout, L }) => `${N}x${Cin}x${L}:${Cout}:k7`,
      plan: (gpu, shape, options) =>
        conv1dPlan(gpu, { ...shape, bias: true }, entryOptions(gpu, KERNELS, entry, options)),
      inputs: ({ N, Cin, Cout, L }, seed) => inputs(N * Cin * L, Cout * Cin * 7, Cout, seed),
    }),
  ];
}

/** conv's benchmark cases. */
export const BENCH: readonly BenchCase[] = [...cases("kernel"), ...cases("tile64"), ...cases("tile64_pipelined")];
