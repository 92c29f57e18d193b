/**
 * Benchmark cases of flash_attention: the causal prefill (B = 1, H = 32, L = S = 4096, D = 128;
 * FLOPs 2·B·H·L·S·D, the visible half of the pairs), the same without causal at 2048, and one decode
 * step (L = 1) over 8,192 keys, which this kernel runs with 127 of its 128 rows idle (ops/gqa's decode
 * path is the one for decode). Shapes are `B x H x L x S x D` and `causal` where it applies.
 *
 * @module
 */

import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import { flashAttentionPlan, KERNELS } from "./mod.ts";

interface Shape {
  B: number;
  H: number;
  L: number;
  S: number;
  D: number;
  causal: boolean;
}
const label = ({ B, H, L, S, D, causal }: Shape) => `${B}x${H}x${L}x${S}x${D}${causal ? "-causal" : ""}`;

/**
 * One case per entry point: `tiled` (47,104 bytes of workgroup memory, what the plan takes on the H200),
 * `staged` (32 KiB) and `kernel` (16 KiB).
 */
function flashCase(entry: string): BenchCase {
  return defineCase<Shape>({
    op: "flashAttention",
    entry,
    sources: KERNELS,
    gpu: [
      { B: 1, H: 32, L: 1, S: 8192, D: 128, causal: false },
      { B: 1, H: 32, L: 2048, S: 2048, D: 128, causal: false },
      { B: 1, H: 32, L: 4096, S: 4096, D: 128, causal: true },
    ],
    quick: [{ B: 1, H: 2, L: 64, S: 64, D: 64, causal: true }, { B: 1, H: 4, L: 200, S: 200, D: 128, causal: true }],
    label,
    plan: (gpu, shape, options) => flashAttentionPlan(gpu, shape, entryOptions(gpu, KERNELS, entry, options)),
    inputs: ({ B, H, L, S, D }, seed) => [
      randomInput(B * H * L * D, seed),
      randomInput(B * H * S * D, seed + 1),
      randomInput(B * H * S * D, seed + 2),
      new Float32Array(1),
    ],
  });
}

/** flash_attention's benchmark cases. */
export const BENCH: readonly BenchCase[] = [flashCase("tiled"), flashCase("staged"), flashCase("kernel")];
