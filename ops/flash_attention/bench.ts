/**
 * Benchmark cases of flash_attention: the issue's causal prefill (B = 1, H = 32, L = S = 4096, D = 128;
 * FLOPs 2·B·H·L·S·D, the visible half of the pairs), the same without causal at 2048, and one decode
 * step (L = 1) over 8,192 keys, which this kernel runs with 127 of its 128 rows idle (ops/gqa's decode
 * path is the one for decode), all heads-first; and the diffusion models' attention, token-major
 * (`BLHD`, as their Linear layers write q, k and v), no mask, not causal: Z-Image's self-attention
 * (30 heads over 4,608 tokens), Anima's self-attention (16 heads, 4,096 tokens) and cross-attention
 * (512 context rows), and a VAE's mid-block attention at 1024² (one head of 512 over 16,384 positions;
 * FLOPs 4·L·S·D). Shapes are `B x H x L x S x D` (D = Dv), `-causal` where it applies.
 *
 * @module
 */

import type { FlashAttentionVariant } from "./kernels.gen.ts";
import { type BenchCase, defineCase, entryOptions, randomInput } from "../../harness/bench_case.ts";
import { type AttentionLayout, flashAttentionPlan, KERNELS } from "./mod.ts";

interface Shape {
  B: number;
  H: number;
  L: number;
  S: number;
  D: number;
  causal: boolean;
  layout?: AttentionLayout;
}
const label = ({ B, H, L, S, D, causal }: Shape) => `${B}x${H}x${L}x${S}x${D}${causal ? "-causal" : ""}`;

/** The rows, heads-first. */
const LLM: Shape[] = [
  { B: 1, H: 32, L: 1, S: 8192, D: 128, causal: false },
  { B: 1, H: 32, L: 2048, S: 2048, D: 128, causal: false },
  { B: 1, H: 32, L: 4096, S: 4096, D: 128, causal: true },
];
/** The diffusion models' rows at head dim 128, token-major. */
const DIFFUSION: Shape[] = [
  { B: 1, H: 30, L: 4608, S: 4608, D: 128, causal: false, layout: "BLHD" },
  { B: 1, H: 16, L: 4096, S: 4096, D: 128, causal: false, layout: "BLHD" },
  { B: 1, H: 16, L: 4096, S: 512, D: 128, causal: false, layout: "BLHD" },
];
/** A VAE's mid-block attention at 1024², token-major (one head, so the same bytes either way). */
const VAE: Shape = { B: 1, H: 1, L: 16384, S: 16384, D: 512, causal: false, layout: "BLHD" };
/** Where `wide` and the 128-column kernels meet: Dv = 256 (two column tiles for them, half a tile for wide). */
const DV256: Shape = { B: 1, H: 4, L: 4096, S: 4096, D: 256, causal: false, layout: "BLHD" };

/**
 * One case per entry point: `tiled` (47,104 bytes of workgroup memory, what the plan takes on the H200
 * for Dv up to 256), `buffered` (41,984; `tiled` with double-buffered q and k chunks, to be compared
 * with it row by row), `wide` (25,600; what the plan takes above Dv = 256), `staged` (32 KiB) and
 * `kernel` (16 KiB). The diffusion rows run on the first three only.
 */
function flashCase(entry: string, gpu: readonly Shape[]): BenchCase {
  return defineCase<Shape, FlashAttentionVariant>({
    op: "flashAttention",
    entry,
    sources: KERNELS,
    gpu,
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
export const BENCH: readonly BenchCase[] = [
  flashCase("tiled", [...LLM, ...DIFFUSION, DV256, VAE]),
  flashCase("buffered", [...LLM, ...DIFFUSION]),
  flashCase("wide", [DV256, VAE]),
  flashCase("staged", LLM),
  flashCase("kernel", LLM),
];
