/**
 * Benchmark cases of conv_transpose: vocoder upsampling stages (DAC / BigVGAN style, K = 2 * stride,
 * padding = stride / 2, batch 1): 512 -> 256 channels at stride 8 over 2,048 inputs (the spec's
 * target shape), and 256 -> 128 at stride 4 over 16,384; each entry point times its own tile.
 *
 * @module
 */

import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import type { ConvTranspose1dShape } from "./reference.ts";
import { convTranspose1dPlan, KERNELS } from "./mod.ts";
import type { ConvTransposeVariant } from "./kernels.gen.ts";

function cases(entry: string): BenchCase {
  return defineCase<ConvTranspose1dShape, ConvTransposeVariant>({
    op: "conv_transpose1d",
    entry,
    sources: KERNELS,
    gpu: [
      { N: 1, Cin: 512, Cout: 256, L: 2048, kernelSize: 16, stride: 8, padding: 4 },
      { N: 1, Cin: 256, Cout: 128, L: 16384, kernelSize: 8, stride: 4, padding: 2 },
    ],
    quick: [{ N: 1, Cin: 32, Cout: 16, L: 128, kernelSize: 8, stride: 4, padding: 2 }],
    label: ({ N, Cin, Cout, L, kernelSize, stride }) => `${N}x${Cin}x${L}:${Cout}:k${kernelSize}s${stride}`,
    plan: (gpu, shape, options) =>
      convTranspose1dPlan(gpu, { ...shape, bias: true }, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ N, Cin, Cout, L, kernelSize }, seed) => [
      randomInput(N * Cin * L, seed),
      randomInput(Cin * Cout * kernelSize, seed + 1, 0.01, 0.05),
      randomInput(Cout, seed + 2),
    ],
  });
}

/** conv_transpose's benchmark cases. */
export const BENCH: readonly BenchCase[] = [cases("kernel"), cases("tile64")];
