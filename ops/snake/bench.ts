/**
 * Benchmark cases of snake: a vocoder-sized activation (512 channels of 16,384 samples, 32 MiB
 * each way) and a larger one past the H200's L2, for both entry points.
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import type { SnakeShape } from "./reference.ts";
import { KERNELS, snakeBetaPlan, snakePlan } from "./mod.ts";
import type { SnakeVariant } from "./kernels.gen.ts";

const gpu: SnakeShape[] = [{ N: 1, C: 512, L: 16384 }, { N: 4, C: 512, L: 32768 }];
const quick: SnakeShape[] = [{ N: 1, C: 16, L: 1027 }, { N: 2, C: 64, L: 4096 }];
const label = ({ N, C, L }: SnakeShape) => `${N}x${C}x${L}`;

/** snake's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<SnakeShape, SnakeVariant>({
    op: "snake",
    entry: "kernel",
    sources: KERNELS,
    gpu,
    quick,
    label,
    plan: (device, shape, options) => snakePlan(device, shape, options),
    inputs: ({ N, C, L }, seed) => [randomInput(N * C * L, seed), randomInput(C, seed + 1, 0.2, 2)],
  }),
  defineCase<SnakeShape, SnakeVariant>({
    op: "snake",
    entry: "beta",
    sources: KERNELS,
    gpu,
    quick,
    label,
    plan: (device, shape, options) => snakeBetaPlan(device, shape, options),
    inputs: ({ N, C, L }, seed) => [
      randomInput(N * C * L, seed),
      randomInput(C, seed + 1, 0.2, 2),
      randomInput(C, seed + 2, 0.2, 2),
    ],
  }),
];
