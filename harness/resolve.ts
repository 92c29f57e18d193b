/**
 * Kernel resolution: explicit override → target + dtype → target → dtype → portable.
 *
 * First hit wins, and the result says which rung hit and every candidate tried, so a tuned kernel
 * is never picked invisibly. Resolution never leaves the entry point it was asked about, and an
 * override naming a variant that does not exist throws rather than falling back.
 *
 * @module
 */

import { type Dtype, type KernelSources, parseVariantName, type Target, variantsOf } from "./variants.ts";

/** Which rung of the resolution chain produced the kernel. */
export type Rung = "override" | "target+dtype" | "target" | "dtype" | "portable";

/** What to resolve for. */
export interface ResolveRequest {
  /** The entry point, e.g. `kernel`. */
  entry: string;
  /** The detected target, if any. */
  target?: Target;
  /** The dtype wanted beyond f32, if any (only when the device supports it). */
  dtype?: Dtype;
  /** A variant name the caller insists on, e.g. `kernel.nvidia`. */
  override?: string;
}

/** The kernel chosen and how. */
export interface Resolution {
  /** The variant name chosen, e.g. `kernel.nvidia`. */
  variant: string;
  /** Its WGSL source. */
  source: string;
  /** The rung that hit. */
  rung: Rung;
  /** Every candidate name tried, in order, including the one that hit. */
  tried: string[];
}

/**
 * Resolves an entry point to a variant.
 *
 * @param sources the op's kernel sources (variant name to WGSL)
 * @param request entry point, target, dtype and optional override
 * @returns the variant chosen, its source, the rung that hit and the candidates tried
 * @throws Error when the entry point has no portable kernel, or the override names a missing
 *   variant or a variant of another entry point
 *
 * @example
 * ```ts
 * import { resolve } from "@xpu/ops/harness";
 * const r = resolve({ kernel: "/* portable *\/", "kernel.nvidia": "/* tuned *\/" }, { entry: "kernel", target: "nvidia" });
 * r.rung; // "target"
 * ```
 */
export function resolve(sources: KernelSources, request: ResolveRequest): Resolution {
  if (typeof sources !== "object" || sources === null || Array.isArray(sources) || Object.keys(sources).length === 0) {
    throw new Error(
      `resolve: sources must be an op's kernel sources (its KERNELS), got ${
        Array.isArray(sources)
          ? "an array"
          : typeof sources === "object" && sources !== null
          ? "no kernels"
          : String(sources)
      }`,
    );
  }
  if (typeof request !== "object" || request === null || typeof request.entry !== "string") {
    throw new Error(`resolve: request must name an entry point ({ entry, target?, dtype?, override? })`);
  }
  const { entry, target, dtype, override } = request;
  const available = variantsOf(sources, entry);
  if (override !== undefined) {
    const name = checkOverride(override).endsWith(".wgsl") ? override.slice(0, -5) : override;
    // A name that is no variant name at all says why (a misspelt target: `suffix "nvidai" is not a target`).
    let named = name, why = "";
    try {
      named = parseVariantName(name).entry;
    } catch (e) {
      why = ` (${(e as Error).message})`;
    }
    if (named !== entry || !(name in sources)) {
      throw new Error(
        `override "${override}" is not a variant of entry point "${entry}"; available: ${available.join(", ")}${why}`,
      );
    }
    return { variant: name, source: sources[name], rung: "override", tried: [name] };
  }
  const candidates: [Rung, string | undefined][] = [
    ["target+dtype", target && dtype ? `${entry}.${target}.${dtype}` : undefined],
    ["target", target ? `${entry}.${target}` : undefined],
    ["dtype", dtype ? `${entry}.${dtype}` : undefined],
    ["portable", entry],
  ];
  const tried: string[] = [];
  for (const [rung, name] of candidates) {
    if (name === undefined) continue;
    tried.push(name);
    if (name in sources) return { variant: name, source: sources[name], rung, tried };
  }
  throw new Error(`unreachable: "${entry}" has a portable kernel`);
}

/**
 * Requires an override to be a variant name: a non-empty string (a number or an object there would
 * otherwise fail inside the name's parsing as a TypeError).
 *
 * @param override the value given as `override`
 * @returns the override
 * @throws Error naming `override` and what it must be
 */
export function checkOverride(override: unknown): string {
  if (typeof override !== "string" || override === "") {
    const given = typeof override === "string"
      ? '""'
      : typeof override === "object"
      ? JSON.stringify(override)
      : String(override);
    throw new Error(`override must be a variant name (a non-empty string such as "kernel"), got ${given}`);
  }
  return override;
}

/**
 * The entry point an override names: `undefined` for no override, the override itself when it is no
 * variant name at all (so that the caller's check against its entry points refuses it, naming them).
 * For the plans that choose among entry points by the override (attention, gqa, group_norm, stft,
 * fused_gemv, matmul's tiles).
 *
 * @param override the value given as `override`
 * @returns its entry point, or undefined without an override
 * @throws Error naming `override` when it is not a non-empty string ({@link checkOverride})
 */
export function overrideEntry(override: unknown): string | undefined {
  if (override === undefined) return undefined;
  const name = checkOverride(override);
  try {
    return parseVariantName(name).entry;
  } catch {
    return name;
  }
}
