/**
 * Test helpers shared by the attention family's tests (attention, flash_attention, gqa): reading the
 * torch goldens that `goldens/sdpa_goldens.py` writes, random cases, the GPU tolerance, and the bytes a
 * list of plans binds. Deno-only (reads files).
 *
 * @module
 */

import type { KernelPlan } from "../../harness/device.ts";
import {
  assertClose,
  goldenF32,
  type GoldenFloat,
  loadGolden,
  randomF32,
  type Tolerance,
} from "../../harness/testing.ts";
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

/** Which of torch's answers a non-finite case follows (`goldens/sdpa_nonfinite.py` says why). */
export type NonfiniteExpectation = "both" | "math" | "default" | "hidden";

/** A case of the family's non-finite goldens, read. */
export interface NonfiniteSdpaCase {
  /** What the case holds. */
  label: string;
  /** Which answer the op follows. */
  expect: NonfiniteExpectation;
  /** The arguments (kvHeads included). */
  args: AttentionArgs & { kvHeads: number };
  /** The math backend's output, in float64 rounded to f32. */
  math: Float32Array;
  /** The default CPU call's output (its fused kernel), in f32. */
  fused: Float32Array;
  /** The math backend's output with the v of keys hidden by `causal` zeroed: no part of the row for the op. */
  hidden?: Float32Array;
}

/**
 * Reads a non-finite golden file of the attention family (`goldens/nonfinite.json`, written by the
 * op's `nonfinite.py` through `ops/attention/goldens/sdpa_nonfinite.py`).
 *
 * @param url the JSON file
 * @returns the torch version and the cases
 */
export async function loadNonfiniteSdpa(url: URL): Promise<{ torch: string; cases: NonfiniteSdpaCase[] }> {
  interface Raw {
    label: string;
    expect: NonfiniteExpectation;
    B: number;
    H: number;
    kvHeads: number;
    L: number;
    S: number;
    D: number;
    Dv: number;
    causal: boolean;
    maskShape?: [number, number, number, number];
    mask?: GoldenFloat[];
    q: GoldenFloat[];
    k: GoldenFloat[];
    v: GoldenFloat[];
    out_math: GoldenFloat[];
    out_default: GoldenFloat[];
    out_hidden?: GoldenFloat[];
  }
  const golden = await loadGolden<{ torch: string; cases: Raw[] }>(url);
  return {
    torch: golden.torch,
    cases: golden.cases.map((c) => ({
      label: c.label,
      expect: c.expect,
      args: {
        B: c.B,
        H: c.H,
        kvHeads: c.kvHeads,
        L: c.L,
        S: c.S,
        D: c.D,
        Dv: c.Dv,
        ...(c.causal ? { causal: true } : {}),
        ...(c.mask ? { maskShape: c.maskShape, mask: goldenF32(c.mask) } : {}),
        q: goldenF32(c.q),
        k: goldenF32(c.k),
        v: goldenF32(c.v),
      },
      math: goldenF32(c.out_math),
      fused: goldenF32(c.out_default),
      ...(c.out_hidden ? { hidden: goldenF32(c.out_hidden) } : {}),
    })),
  };
}

/**
 * Holds a reference's output on a non-finite case to torch: to the math backend and the fused kernel
 * both where they agree, else to the one the case follows, and pins the other's difference (so a
 * change in torch, or in the op, that removes the difference is seen).
 *
 * @param got the reference's output
 * @param c the case
 */
export function assertNonfiniteSdpa(got: Float32Array, c: NonfiniteSdpaCase): void {
  // f64 against torch's f64 math path; the fused kernel computes in f32.
  const math = { atol: 1e-12, rtol: 2 ** -22 }, fused = { atol: 1e-6, rtol: 1e-5 };
  const nanWhereNot = (torch: Float32Array) =>
    [...got.keys()].some((i) => Number.isNaN(torch[i]) && !Number.isNaN(got[i]));
  switch (c.expect) {
    case "both":
      assertClose(got, c.math, math, `${c.label}: torch's math backend`);
      assertClose(got, c.fused, fused, `${c.label}: torch's fused kernel`);
      return;
    case "math":
      assertClose(got, c.math, math, `${c.label}: torch's math backend`);
      if (!got.some((v, i) => Number.isNaN(v) && c.fused[i] === 0)) {
        throw new Error(`${c.label}: the fused kernel's 0 for a NaN row is gone; the case should be "both"`);
      }
      return;
    case "default":
      assertClose(got, c.fused, fused, `${c.label}: torch's fused kernel`);
      if (!nanWhereNot(c.math)) {
        throw new Error(`${c.label}: the math backend's NaN is gone; the case should be "both"`);
      }
      return;
    case "hidden":
      assertClose(got, c.hidden!, math, `${c.label}: torch with the hidden keys' v unread`);
      if (!nanWhereNot(c.math) || !nanWhereNot(c.fused)) {
        throw new Error(`${c.label}: torch no longer reads a hidden key's v; the case should be "both"`);
      }
  }
}
