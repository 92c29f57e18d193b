/**
 * Test helpers shared by the attention family's tests (attention, flash_attention, gqa): reading the
 * torch goldens that `goldens/sdpa_goldens.py` writes, random cases, the GPU tolerance, and the bytes a
 * list of plans binds. Deno-only (reads files).
 *
 * @module
 */

import type { KernelPlan } from "../../harness/device.ts";
import { loadGolden, randomF32, type Tolerance } from "../../harness/testing.ts";
import { type AttentionArgs, keyPaddingBias } from "./reference.ts";

/** One case of a golden file, as sdpa_goldens.py writes it; non-finite values arrive as strings. */
export interface SdpaGoldenCase {
  label: string;
  B: number;
  H: number;
  kvHeads: number;
  L: number;
  S: number;
  D: number;
  Dv: number;
  scale?: number;
  causal?: boolean;
  queryOffset?: number;
  maskShape?: [number, number, number, number];
  bool?: boolean;
  mask?: (number | string)[];
  q: (number | string)[];
  k: (number | string)[];
  v: (number | string)[];
  out: (number | string)[];
}

/** A golden file: the torch version and its cases. */
export interface SdpaGolden {
  meta: { torch: string };
  cases: SdpaGoldenCase[];
}

const fromJson = (xs: (number | string)[]) => Float32Array.from(xs, Number);

/**
 * Reads a golden file of the attention family.
 *
 * @param url the JSON file
 * @returns its cases, each turned into arguments (a boolean mask through keyPaddingBias) and torch's output
 */
export async function loadSdpaGolden(
  url: URL,
): Promise<
  { torch: string; cases: { label: string; args: AttentionArgs & { kvHeads: number }; out: Float32Array }[] }
> {
  const golden = await loadGolden<SdpaGolden>(url);
  return {
    torch: golden.meta.torch,
    cases: golden.cases.map((c) => ({
      label: c.label,
      out: fromJson(c.out),
      args: {
        B: c.B,
        H: c.H,
        kvHeads: c.kvHeads,
        L: c.L,
        S: c.S,
        D: c.D,
        Dv: c.Dv,
        ...(c.scale !== undefined ? { scale: c.scale } : {}),
        ...(c.causal ? { causal: true, queryOffset: c.queryOffset ?? 0 } : {}),
        ...(c.mask
          ? {
            maskShape: c.maskShape,
            mask: c.bool ? keyPaddingBias(c.mask.map((m) => Number(m))) : fromJson(c.mask),
          }
          : {}),
        q: fromJson(c.q),
        k: fromJson(c.k),
        v: fromJson(c.v),
      },
    })),
  };
}

/** Sizes of a random case. */
export interface RandomCase {
  B: number;
  H: number;
  kvHeads?: number;
  L: number;
  S: number;
  D: number;
  Dv?: number;
  causal?: boolean;
  queryOffset?: number;
  scale?: number;
  maskShape?: [number, number, number, number];
}

/**
 * Random arguments for a shape: q, k, v in [-1, 1), and a mask in [-2, 2) with every seventh element
 * -Infinity when maskShape is given.
 *
 * @param c the sizes
 * @param seed generator seed
 * @returns arguments (kvHeads defaults to H)
 */
export function randomCase(c: RandomCase, seed: number): AttentionArgs & { kvHeads: number } {
  const kvHeads = c.kvHeads ?? c.H;
  const Dv = c.Dv ?? c.D;
  const args: AttentionArgs & { kvHeads: number } = {
    ...c,
    kvHeads,
    Dv,
    q: randomF32(c.B * c.H * c.L * c.D, seed),
    k: randomF32(c.B * kvHeads * c.S * c.D, seed + 1),
    v: randomF32(c.B * kvHeads * c.S * Dv, seed + 2),
  };
  if (c.maskShape) {
    const mask = randomF32(c.maskShape.reduce((p, d) => p * d, 1), seed + 3, -2, 2);
    for (let i = 0; i < mask.length; i += 7) mask[i] = -Infinity;
    args.mask = mask;
  }
  return args;
}

/**
 * Arguments without gqa's `kvHeads`, for attention and flashAttention, which refuse the key: the
 * goldens and random cases above carry it for the whole family.
 *
 * @param args the arguments, kvHeads included or not
 * @returns the same without kvHeads
 */
export function mha<A extends { kvHeads?: number }>({ kvHeads: _kvHeads, ...args }: A): Omit<A, "kvHeads"> {
  return args;
}

const maxAbs = (xs: Float32Array) => xs.reduce((m, x) => (Number.isFinite(x) ? Math.max(m, Math.abs(x)) : m), 0);

/**
 * The GPU tolerance of a case. A score's f32 error is at most about 2^-23 · D · scale · max|q| · max|k|
 * (D products summed in f32) plus the mask's rounding; a probability exp(s - max) carries that error
 * relative to itself, plus exp's own (WGSL allows 3 + 2|x| ULP, and only |x| below ~100 matters, so
 * ~2.4e-5), and the output, a weighted average of v, is off by at most those times max|v|, plus the
 * f32 summation of Dv products. Measured on llvmpipe: a few 1e-7 at |v| < 1 for ordinary logits.
 *
 * @param args the case
 * @returns the tolerance
 */
export function gpuTolerance(args: AttentionArgs): Tolerance {
  const scale = Math.abs(args.scale ?? 1 / Math.sqrt(args.D));
  const scoreError = 2 ** -23 *
    (args.D * scale * maxAbs(args.q) * maxAbs(args.k) + (args.mask ? maxAbs(args.mask) : 0));
  return { atol: maxAbs(args.v) * (4e-5 + 4 * scoreError), rtol: 0 };
}

/**
 * Bytes the plans bind: every distinct binding (by name: the scores the first of attention's plans
 * writes and the second reads count once) at 4 bytes an element, and every params uniform.
 *
 * @param plans the dispatches of one call
 * @returns the bytes
 */
export function boundBytes(plans: readonly KernelPlan[]): number {
  const tensors = new Map<string, number>();
  let params = 0;
  for (const plan of plans) {
    for (const b of plan.bindings) tensors.set(b.name, 4 * b.length);
    params += plan.params?.byteLength ?? 0;
  }
  return [...tensors.values()].reduce((s, b) => s + b, params);
}
