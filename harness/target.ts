/**
 * What an adapter says about itself, and which target (if any) that suggests.
 *
 * `adapter.info` gives a vendor, an architecture and a description and little else, so detection
 * is a hint, never a certainty: it may answer "no target", and that answer resolves to the
 * portable kernels. Intel covers both integrated and discrete parts with nothing to tell them
 * apart, so it maps to no target; a fallback (software) adapter names silicon the code is not
 * running on, so it maps to none either.
 *
 * @module
 */

import type { Target } from "./variants.ts";

/** What was read from an adapter, and the target detection made of it, with the reason. */
export interface AdapterDescription {
  /** `adapter.info.vendor` as reported (may be a PCI id in decimal, or empty). */
  vendor: string;
  /** `adapter.info.architecture`. */
  architecture: string;
  /** `adapter.info.description`: the driver's name for the device. */
  description: string;
  /** `adapter.info.isFallbackAdapter`. */
  isFallbackAdapter: boolean;
  /** Features the adapter offers, sorted. */
  features: string[];
  /** The detected target, or `undefined` when nothing can be honestly inferred. */
  target: Target | undefined;
  /** Why that target (or none) was chosen. */
  reason: string;
}

/** Subset of `GPUAdapterInfo` used for detection, so tests can describe imaginary adapters. */
export interface AdapterInfoLike {
  /** Vendor name or PCI id. */
  vendor: string;
  /** Architecture name, often empty. */
  architecture: string;
  /** The driver's description of the device. */
  description: string;
  /** Whether this is a fallback (software) adapter. */
  isFallbackAdapter?: boolean;
}

const PCI_VENDORS: Record<string, string> = {
  "4318": "nvidia", // 0x10de
  "4098": "amd", // 0x1002
  "32902": "intel", // 0x8086
  "4203": "apple", // 0x106b
  "5045": "arm", // 0x13b5
  "20803": "qualcomm", // 0x5143
};

const VENDOR_TARGETS: Record<string, Target | undefined> = {
  nvidia: "nvidia",
  amd: "amd",
  apple: "apple",
  arm: "soc",
  qualcomm: "soc",
  "img-tec": "soc",
  intel: undefined,
};

/**
 * Infers a target from adapter info.
 *
 * @param info the adapter's info (vendor, architecture, description, isFallbackAdapter)
 * @returns the target, or undefined, and the reason
 *
 * @example
 * ```ts
 * import { detectTarget } from "@xpu/ops/harness";
 * detectTarget({ vendor: "4318", architecture: "", description: "NVIDIA H200" }).target; // "nvidia" (PCI id 0x10de)
 * detectTarget({ vendor: "intel", architecture: "", description: "" }).target; // undefined: no target
 * ```
 */
export function detectTarget(info: AdapterInfoLike): { target: Target | undefined; reason: string } {
  if (info === null || typeof info !== "object" || typeof info.vendor !== "string") {
    throw new Error(
      `detectTarget: info must be an adapter's info ({ vendor, architecture, description }), got ${String(info)}`,
    );
  }
  if (info.isFallbackAdapter) {
    return { target: undefined, reason: "fallback (software) adapter: portable kernels" };
  }
  const raw = info.vendor.toLowerCase();
  const vendor = PCI_VENDORS[raw] ?? raw;
  if (vendor in VENDOR_TARGETS) {
    const target = VENDOR_TARGETS[vendor];
    return target
      ? { target, reason: `vendor "${info.vendor}" is ${vendor}` }
      : { target, reason: `vendor ${vendor} spans integrated and discrete parts: no target` };
  }
  const text = `${info.description} ${info.architecture}`.toLowerCase();
  for (const [needle, target] of [["nvidia", "nvidia"], ["radeon", "amd"], ["apple", "apple"]] as const) {
    if (text.includes(needle)) return { target, reason: `description mentions "${needle}"` };
  }
  return { target: undefined, reason: `vendor "${info.vendor}" not recognised: no target` };
}

/**
 * Reports what an adapter said about itself and the target detected from it.
 *
 * @param adapter a WebGPU adapter
 * @returns the adapter's description with the detected target and the reason
 *
 * @example
 * ```ts
 * import { describeAdapter } from "@xpu/ops/harness";
 * const adapter = await navigator.gpu.requestAdapter();
 * if (adapter) {
 *   const { description, target, reason } = describeAdapter(adapter);
 *   console.log(description, target ?? "portable", reason);
 * }
 * ```
 */
export function describeAdapter(adapter: GPUAdapter): AdapterDescription {
  if (adapter === null || typeof adapter !== "object" || typeof adapter.features?.has !== "function") {
    throw new Error(
      `describeAdapter: adapter must be a GPUAdapter (navigator.gpu.requestAdapter()), got ${String(adapter)}`,
    );
  }
  // `adapter.info` is recent: an adapter from an older runtime may not have it.
  const info: AdapterInfoLike = adapter.info ??
    { vendor: "", architecture: "", description: "unknown (the adapter has no info)" };
  const { target, reason } = detectTarget(info);
  return {
    vendor: info.vendor,
    architecture: info.architecture,
    description: info.description,
    isFallbackAdapter: info.isFallbackAdapter ?? false,
    features: [...adapter.features].sort(),
    target,
    reason,
  };
}
