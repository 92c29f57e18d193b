import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { overrideEntry, resolve } from "./resolve.ts";
import { assertThrowsMessage } from "./testing.ts";

const all = {
  kernel: "portable",
  "kernel.nvidia.f16": "nvidia f16",
  "kernel.nvidia": "nvidia",
  "kernel.f16": "f16",
  inverse: "inverse portable",
};

Deno.test("resolve walks target+dtype → target → dtype → portable and reports what it tried", () => {
  const hit = (r: ReturnType<typeof resolve>) => [r.rung, r.variant, r.source, r.tried];
  deepStrictEqual(hit(resolve(all, { entry: "kernel", target: "nvidia", dtype: "f16" })), [
    "target+dtype",
    "kernel.nvidia.f16",
    "nvidia f16",
    ["kernel.nvidia.f16"],
  ]);
  deepStrictEqual(hit(resolve(all, { entry: "kernel", target: "nvidia" })), [
    "target",
    "kernel.nvidia",
    "nvidia",
    ["kernel.nvidia"],
  ]);
  deepStrictEqual(hit(resolve(all, { entry: "kernel", target: "amd", dtype: "f16" })), [
    "dtype",
    "kernel.f16",
    "f16",
    ["kernel.amd.f16", "kernel.amd", "kernel.f16"],
  ]);
  deepStrictEqual(hit(resolve(all, { entry: "kernel", target: "apple" })), [
    "portable",
    "kernel",
    "portable",
    ["kernel.apple", "kernel"],
  ]);
  deepStrictEqual(hit(resolve(all, { entry: "kernel" })), ["portable", "kernel", "portable", ["kernel"]]);
});

Deno.test("resolve never leaves the entry point it was asked about", () => {
  const r = resolve(all, { entry: "inverse", target: "nvidia", dtype: "f16" });
  strictEqual(r.variant, "inverse");
  deepStrictEqual(r.tried, ["inverse.nvidia.f16", "inverse.nvidia", "inverse.f16", "inverse"]);
});

Deno.test("an override wins, and naming a missing variant throws instead of falling back", async () => {
  const r = resolve(all, { entry: "kernel", target: "nvidia", override: "kernel.f16" });
  deepStrictEqual([r.rung, r.variant], ["override", "kernel.f16"]);
  strictEqual(resolve(all, { entry: "kernel", override: "kernel.nvidia.wgsl" }).variant, "kernel.nvidia");
  await assertThrowsMessage(
    () => resolve(all, { entry: "kernel", override: "kernel.amd" }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
  await assertThrowsMessage(
    () => resolve(all, { entry: "kernel", override: "inverse" }),
    'override "inverse" is not a variant of entry point "kernel"',
  );
  await assertThrowsMessage(() => resolve(all, { entry: "missing" }), 'entry point "missing" has no portable kernel');
});

Deno.test("an override that is not a non-empty string, or no variant name at all, is refused naming override", async () => {
  for (const [override, given] of [[42, "42"], [{}, "{}"], ["", '""'], [null, "null"]] as const) {
    await assertThrowsMessage(
      () => resolve(all, { entry: "kernel", override: override as unknown as string }),
      `override must be a variant name (a non-empty string such as "kernel"), got ${given}`,
    );
  }
  await assertThrowsMessage(
    () => resolve(all, { entry: "kernel", override: "Kernel!" }),
    'override "Kernel!" is not a variant of entry point "kernel"; available: kernel',
  );
  strictEqual(overrideEntry(undefined), undefined);
  strictEqual(overrideEntry("kernel.nvidia.f16"), "kernel");
  strictEqual(overrideEntry("Kernel!"), "Kernel!");
});
