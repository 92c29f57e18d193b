import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { describeAdapter, detectTarget } from "./target.ts";

const info = (vendor: string, description = "", isFallbackAdapter = false) => ({
  vendor,
  architecture: "",
  description,
  isFallbackAdapter,
});

Deno.test("detectTarget: PCI vendor ids and names map to targets", () => {
  deepStrictEqual(detectTarget(info("4318", "NVIDIA H200")).target, "nvidia");
  deepStrictEqual(detectTarget(info("nvidia")).target, "nvidia");
  deepStrictEqual(detectTarget(info("4098")).target, "amd");
  deepStrictEqual(detectTarget(info("apple")).target, "apple");
  deepStrictEqual(detectTarget(info("qualcomm")).target, "soc");
  deepStrictEqual(detectTarget(info("arm")).target, "soc");
});

Deno.test("detectTarget answers 'no target' where nothing honest can be inferred", () => {
  const intel = detectTarget(info("intel", "Intel(R) Arc(tm) A770"));
  deepStrictEqual(intel.target, undefined);
  deepStrictEqual(intel.reason.includes("integrated and discrete"), true);
  // A fallback adapter's vendor names silicon the code is not running on.
  const software = detectTarget(info("4318", "llvmpipe", true));
  deepStrictEqual(software.target, undefined);
  deepStrictEqual(software.reason.includes("fallback"), true);
  deepStrictEqual(detectTarget(info("65541", "llvmpipe (LLVM 15.0.6, 256 bits)")).target, undefined);
});

Deno.test("detectTarget falls back to the description when the vendor is empty", () => {
  deepStrictEqual(detectTarget(info("", "NVIDIA GeForce RTX 4090")).target, "nvidia");
  deepStrictEqual(detectTarget(info("", "AMD Radeon RX 7900")).target, "amd");
});

Deno.test("describeAdapter: an adapter without info (an older runtime) is described as unknown, no target", () => {
  const old = { features: new Set(["timestamp-query"]) } as unknown as GPUAdapter;
  const d = describeAdapter(old);
  strictEqual(d.description, "unknown (the adapter has no info)");
  strictEqual(d.target, undefined);
  deepStrictEqual(d.features, ["timestamp-query"]);
});
