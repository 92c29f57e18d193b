/**
 * The cases the flash_attention kernels are held to the reference on (flash_attention.test.ts,
 * portable.test.ts and tiled.test.ts). Deno-only test data.
 *
 * @module
 */

import type { ReferenceCase } from "../../harness/testing.ts";
import type { AttentionLayout, FlashAttentionArgs } from "./reference.ts";
import { mha, type RandomCase, randomCase } from "../attention/testing_helpers.ts";

// Sizes not multiples of the kernels' tiles (128 rows; 31-key blocks, 32 quads of D staged at a time;
// tiled's 64-key blocks, 16 columns of q and k and 16 keys of v staged at a time; 128 output columns):
// row tiles with surplus rows, key blocks cut short by S or by causal, D and Dv over one tile, L = 1
// (decode), rows that see no key (zeros), masks that broadcast, and a score matrix long enough for 5
// blocks. Then the diffusion models' shapes, small: head dims up to 512 (q/k and v apart, the VAE's
// 512 and 512), no mask, and the token-major layout ("BLHD") with several batches, heads and row
// tiles, with causal and with a mask (whose shape stays logical).
const mask = (s: [number, number, number, number]) => s;
const tokenMajor = { layout: "BLHD" } as const;
/** Awkward shapes, masks, offsets and layouts, with random inputs. */
export const cases: ReferenceCase<FlashAttentionArgs>[] = ([
  { B: 1, H: 1, L: 1, S: 1, D: 4 },
  { B: 1, H: 2, L: 1, S: 200, D: 64 },
  { B: 1, H: 1, L: 130, S: 70, D: 8, causal: true },
  { B: 2, H: 1, L: 33, S: 31, D: 12, Dv: 4 },
  { B: 1, H: 1, L: 5, S: 32, D: 80, Dv: 136 },
  { B: 1, H: 1, L: 7, S: 40, D: 8, causal: true, queryOffset: 33 },
  { B: 1, H: 1, L: 9, S: 4, D: 4, causal: true, queryOffset: -3 },
  { B: 2, H: 2, L: 3, S: 63, D: 8, maskShape: mask([2, 1, 1, 63]) },
  { B: 1, H: 3, L: 4, S: 9, D: 16, Dv: 8, maskShape: mask([1, 3, 4, 9]) },
  { B: 1, H: 1, L: 3, S: 155, D: 128 },
  { B: 1, H: 2, L: 5, S: 40, D: 136, Dv: 132, causal: true, queryOffset: 35 },
  { B: 1, H: 1, L: 6, S: 70, D: 512 },
  { B: 1, H: 2, L: 3, S: 37, D: 512, Dv: 132 },
  { B: 1, H: 1, L: 4, S: 65, D: 132, Dv: 512 },
  { B: 2, H: 3, L: 130, S: 70, D: 8, causal: true, ...tokenMajor },
  { B: 1, H: 2, L: 5, S: 333, D: 20, Dv: 12, ...tokenMajor },
  { B: 2, H: 2, L: 3, S: 63, D: 8, maskShape: mask([2, 2, 3, 63]), ...tokenMajor },
  { B: 1, H: 2, L: 3, S: 40, D: 512, Dv: 260, ...tokenMajor },
] as (RandomCase & { layout?: AttentionLayout })[]).map(({ layout, ...c }, i) => ({
  label: JSON.stringify({ ...c, layout }),
  args: { ...mha(randomCase(c, 200 + 10 * i)), ...(layout ? { layout } : {}) },
}));
