/**
 * The variant file-name grammar: `<entry>[.<target>][.<dtype>].wgsl`.
 *
 * An op's `wgsl/` directory holds one portable kernel per entry point and any number of variants
 * of it. The file name is the whole grammar, so a misspelt suffix must be an error rather than a
 * variant that silently never resolves: `kernel.nvidai.wgsl` is rejected, and so is a bare
 * `nvidia.wgsl` (far likelier a mis-written variant than an entry point named after a vendor).
 *
 * @module
 */

/** A hardware target of a variant. */
export type Target = "apple" | "nvidia" | "amd" | "soc";
/** Targets a variant may be written for. Intel and fallback adapters resolve to none of them. */
export const TARGETS: readonly Target[] = ["apple", "nvidia", "amd", "soc"];

/**
 * Dtypes a variant may be written for; f32 is the portable floor and never a suffix. Quantized
 * weight formats (q8, q4) are separate entry points with their own bindings, not variants.
 */
export const DTYPES: readonly Dtype[] = ["f16"];
/** A dtype of a variant. */
export type Dtype = "f16";

/** A parsed variant name (the file name without `.wgsl`). */
export interface VariantName {
  /** The full name, e.g. `kernel.nvidia.f16`. */
  name: string;
  /** The entry point it implements, e.g. `kernel`. */
  entry: string;
  /** The target suffix, if any. */
  target?: Target;
  /** The dtype suffix, if any. */
  dtype?: Dtype;
}

const ENTRY = /^[a-z][a-z0-9_]*$/;

function isTarget(s: string): s is Target {
  return (TARGETS as readonly string[]).includes(s);
}

function isDtype(s: string): s is Dtype {
  return (DTYPES as readonly string[]).includes(s);
}

/**
 * Parses a variant name (a `wgsl/` file name with or without `.wgsl`).
 *
 * @param fileName e.g. `kernel.nvidia.f16.wgsl` or `inverse`
 * @returns the entry point and the suffixes
 * @throws Error when a suffix is not a known target or dtype, when suffixes are out of order or
 *   repeated, or when the entry point itself is a target or dtype name.
 *
 * @example
 * ```ts
 * import { parseVariantName } from "@xpu/ops/harness";
 * parseVariantName("kernel.nvidia.f16.wgsl"); // { name: "kernel.nvidia.f16", entry: "kernel", target: "nvidia", dtype: "f16" }
 * ```
 */
export function parseVariantName(fileName: string): VariantName {
  if (typeof fileName !== "string") {
    throw new Error(`parseVariantName: fileName must be a variant's name (a string), got ${String(fileName)}`);
  }
  const name = fileName.endsWith(".wgsl") ? fileName.slice(0, -".wgsl".length) : fileName;
  const [entry, ...suffixes] = name.split(".");
  if (!ENTRY.test(entry)) {
    throw new Error(`variant "${fileName}": entry point "${entry}" must match ${ENTRY}`);
  }
  if (isTarget(entry) || isDtype(entry)) {
    throw new Error(
      `variant "${fileName}": a bare "${entry}" is ambiguous; name the entry point first, ` +
        `as "kernel.${entry}.wgsl"`,
    );
  }
  if (suffixes.length > 2) {
    throw new Error(`variant "${fileName}": at most two suffixes, <entry>[.<target>][.<dtype>]`);
  }
  const parsed: VariantName = { name, entry };
  for (const [i, suffix] of suffixes.entries()) {
    if (isTarget(suffix) && i === 0) parsed.target = suffix;
    else if (isDtype(suffix) && parsed.dtype === undefined) parsed.dtype = suffix;
    else {
      throw new Error(
        `variant "${fileName}": suffix "${suffix}" is not a target (${TARGETS.join(", ")}) ` +
          `or dtype (${DTYPES.join(", ")}) in the order <entry>[.<target>][.<dtype>]`,
      );
    }
  }
  return parsed;
}

/** An op's kernel sources: variant name (file name without `.wgsl`) to WGSL text. */
export type KernelSources = Readonly<Record<string, string>>;

/**
 * Lists the variants of one entry point in `sources`, portable first.
 *
 * @param sources an op's kernel sources
 * @param entry the entry point
 * @returns the variant names of `entry`
 * @throws Error when `entry` has no portable kernel
 *
 * @example
 * ```ts
 * import { variantsOf } from "@xpu/ops/harness";
 * const sources = { kernel: "// portable", "kernel.nvidia": "// nvidia", "kernel.f16": "// f16", rows: "// rows" };
 * variantsOf(sources, "kernel"); // ["kernel", "kernel.f16", "kernel.nvidia"]
 * ```
 */
export function variantsOf<V extends string>(sources: Readonly<Record<V, string>>, entry: string): V[] {
  requireSources("variantsOf", sources);
  if (!(entry in sources)) {
    throw new Error(
      `entry point "${entry}" has no portable kernel (${entry}.wgsl); entries: ` +
        entriesOf(sources).join(", "),
    );
  }
  const names = (Object.keys(sources) as V[]).filter((n) => parseVariantName(n).entry === entry);
  return [entry as V, ...names.filter((n) => n !== entry).sort()];
}

/**
 * Lists the entry points present in `sources`.
 *
 * @param sources an op's kernel sources
 * @returns the distinct entry-point names, sorted
 *
 * @example
 * ```ts
 * import { entriesOf } from "@xpu/ops/harness";
 * const sources = { kernel: "// portable", "kernel.nvidia": "// nvidia", "kernel.f16": "// f16", rows: "// rows" };
 * entriesOf(sources); // ["kernel", "rows"]
 * ```
 */
export function entriesOf(sources: KernelSources): string[] {
  requireSources("entriesOf", sources);
  return [...new Set(Object.keys(sources).map((n) => parseVariantName(n).entry))].sort();
}

/** Requires an op's kernel sources: an object of WGSL strings by variant name (its `KERNELS`). */
function requireSources(where: string, sources: unknown): void {
  if (sources === null || typeof sources !== "object" || Array.isArray(sources)) {
    throw new Error(`${where}: sources must be an op's kernel sources (its KERNELS), got ${String(sources)}`);
  }
}
