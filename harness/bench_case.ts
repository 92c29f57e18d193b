/**
 * How an op is benchmarked: which entry point, at which shapes, built how.
 *
 * Each op's `bench.ts` exports `BENCH`, a list of {@link defineCase} results, and
 * `ops/registry.ts` lists every op's (the harness imports no op). A case names the op and entry point, its
 * kernel sources (so `--all-variants` can force each variant), a list of shapes for a real GPU
 * (`gpu`: include one large enough to reach steady state, well past the 50 MB L2 of an H200) and a
 * short list for a fallback adapter or `--quick` (`quick`: each must finish in seconds on a
 * software adapter), a label per shape (dimensions joined by `x`), the op's own plan builder, and
 * an input maker (random values, never all zeros, a different seed per rotated set). The cost the
 * figures are computed from is the plan's own `cost`, declared by the op.
 *
 * @module
 */

import type { HostArray, ResidentDevice } from "./device.ts";
import type { Timed } from "./timing.ts";
import type { KernelOptions } from "./options.ts";
import type { KernelSources } from "./variants.ts";
import { requireSize } from "./limits.ts";

/** Which shape list runs: a real GPU's, or the short one (fallback adapter or `--quick`). */
export type SizeClass = "gpu" | "quick";

/**
 * How an op is benchmarked, with its own shape type `S` and its variant names `V` (the op's
 * `<Op>Variant`, so that its plan's typed `override` is accepted).
 */
export interface CaseSpec<S, V extends string = string> {
  /** The op, e.g. `elementwise`. */
  op: string;
  /** The entry point, e.g. `kernel`. */
  entry: string;
  /** The op's kernel sources (for `--all-variants`). */
  sources: Readonly<Record<V, string>>;
  /** Shapes on a real GPU; the largest should reach steady state. */
  gpu: readonly S[];
  /** Shapes on a fallback adapter or with `--quick`. */
  quick: readonly S[];
  /** A shape's label: dimensions joined by `x`. */
  label: (shape: S) => string;
  /**
   * The op's plan for a shape (its `cost` is what the figures are computed from), or a
   * `KernelSequence` of its dispatches timed as one operation (its entry then names no kernel:
   * `--all-variants` runs it as resolved).
   */
  plan: (gpu: ResidentDevice, shape: S, options: KernelOptions<V>) => Timed;
  /** One host array per input binding of the plan, in binding order; random, never all zeros. */
  inputs: (shape: S, seed: number) => HostArray[];
}

/** One shape of a case, with the shape type erased. */
export interface BenchShape {
  /** The label, e.g. `4096x4096`. */
  label: string;
  /** The shape object the case was defined with (what `harness/peer/bench_map.ts` reads). */
  value: unknown;
  /** Builds the plan (or sequence) on a device, optionally forcing a variant. */
  plan: (gpu: ResidentDevice, options: KernelOptions) => Timed;
  /** Makes the inputs of one rotated set. */
  inputs: (seed: number) => HostArray[];
}

/** A benchmark case, ready to run. */
export interface BenchCase {
  /** The op. */
  op: string;
  /** The entry point. */
  entry: string;
  /** The op's kernel sources. */
  sources: KernelSources;
  /** Shapes per size class. */
  shapes: Record<SizeClass, BenchShape[]>;
  /**
   * The case's plan builder for any shape, unchecked (`harness/`'s robustness tests hand it the
   * shapes a careless caller would: a size that is NaN, negative, a string or past a WGSL type).
   */
  plan: (gpu: ResidentDevice, shape: unknown, options: KernelOptions) => Timed;
}

/**
 * Turns a typed case spec into a {@link BenchCase}.
 *
 * @param spec the op, entry, sources, shapes, label, plan builder and input maker
 * @returns the case
 *
 * @example
 * ```ts
 * import { elementwisePlan } from "@xpu/ops";
 * import { defineCase, randomInput } from "@xpu/ops/harness/bench";
 * import { KERNELS } from "@xpu/ops/ops/elementwise";
 * const add = defineCase({
 *   op: "elementwise",
 *   entry: "kernel",
 *   sources: KERNELS,
 *   gpu: [{ n: 1 << 24 }],
 *   quick: [{ n: 1 << 12 }],
 *   label: ({ n }) => `${n}`,
 *   plan: (gpu, { n }, options) => elementwisePlan(gpu, { op: "add", n }, options),
 *   inputs: ({ n }, seed) => [randomInput(n, seed), randomInput(n, seed + 1)],
 * });
 * add.shapes.quick[0].label; // "4096"
 * ```
 */
export function defineCase<S, V extends string = string>(spec: CaseSpec<S, V>): BenchCase {
  if (spec === null || typeof spec !== "object" || typeof spec.op !== "string" || typeof spec.plan !== "function") {
    throw new Error(
      `defineCase: spec must be a CaseSpec ({ op, entry, shapes, label, plan, inputs, ... }), got ${String(spec)}`,
    );
  }
  // The bench names variants read from the same sources (or none), so the override is one of V.
  const erase = (shapes: readonly S[]): BenchShape[] =>
    shapes.map((s) => ({
      label: spec.label(s),
      value: s,
      plan: (gpu, options) => spec.plan(gpu, s, options as KernelOptions<V>),
      inputs: (seed) => spec.inputs(s, seed),
    }));
  return {
    op: spec.op,
    entry: spec.entry,
    sources: spec.sources,
    shapes: { gpu: erase(spec.gpu), quick: erase(spec.quick) },
    plan: (gpu, shape, options) => spec.plan(gpu, shape as S, options as KernelOptions<V>),
  };
}

/**
 * The kernel options that time one entry point of an op whose plan picks among several by size
 * (a case per entry point, each timed at every shape): the variant asked for, or the one the device
 * resolves for `entry`.
 *
 * @param gpu the device
 * @param sources the op's kernel sources
 * @param entry the entry point the case times
 * @param options the bench's options (an override from `--all-variants` wins)
 * @returns options whose override names a variant of `entry`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { entryOptions } from "@xpu/ops/harness/bench";
 * import { KERNELS } from "@xpu/ops/ops/elementwise";
 * const gpu = await acquireDevice();
 * entryOptions(gpu, KERNELS, "kernel", {}); // { override: <the variant of "kernel" this device resolves> }
 * entryOptions(gpu, KERNELS, "kernel", { override: "kernel" }); // { override: "kernel" }
 * gpu.destroy();
 * ```
 */
export function entryOptions<V extends string>(
  gpu: ResidentDevice,
  sources: Readonly<Record<V, string>>,
  entry: string,
  options: KernelOptions<V>,
): KernelOptions<V> {
  return { override: options.override ?? gpu.resolve(sources, entry).variant as V };
}

/**
 * Random f32 values with magnitudes in [lo, hi) and random signs (never zero when lo > 0); fast
 * enough for hundreds of millions of elements (xorshift32).
 *
 * @param length number of values
 * @param seed any integer
 * @param lo smallest magnitude, default 0.5
 * @param hi magnitude bound, default 1.5
 * @returns the values
 * @throws Error naming the argument when `length` is not a non-negative integer, `seed` not an
 *   integer, or the magnitudes not finite with 0 <= lo <= hi
 *
 * @example
 * ```ts
 * import { randomInput } from "@xpu/ops/harness/bench";
 * const x = randomInput(1024, 7); // magnitudes in [0.5, 1.5), either sign
 * const same = randomInput(1024, 7); // the same values: the seed fixes them
 * ```
 */
export function randomInput(length: number, seed: number, lo?: number, hi?: number): Float32Array {
  lo ??= 0.5;
  hi ??= 1.5;
  requireSize("randomInput", "length", length, 0);
  if (!Number.isSafeInteger(seed)) throw new Error(`randomInput: seed must be an integer, got ${String(seed)}`);
  if (!(Number.isFinite(lo) && Number.isFinite(hi) && lo >= 0 && hi >= lo)) {
    throw new Error(`randomInput: lo and hi must be finite with 0 <= lo <= hi, got lo ${String(lo)}, hi ${String(hi)}`);
  }
  const out = new Float32Array(length);
  let s = (seed ^ 0x9e3779b9) >>> 0 || 1;
  const scale = (hi - lo) / 2 ** 31;
  for (let i = 0; i < length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    const magnitude = lo + (s & 0x7fffffff) * scale;
    out[i] = s & 0x80000000 ? -magnitude : magnitude;
  }
  return out;
}
