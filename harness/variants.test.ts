import { deepStrictEqual } from "node:assert/strict";
import { INCLUDE_DIR } from "./gen.ts";
import { assertThrowsMessage } from "./testing.ts";
import { entriesOf, parseVariantName, variantsOf } from "./variants.ts";

Deno.test("variant grammar: <entry>[.<target>][.<dtype>].wgsl parses", () => {
  deepStrictEqual(parseVariantName("kernel.wgsl"), { name: "kernel", entry: "kernel" });
  deepStrictEqual(parseVariantName("inverse.f16.wgsl"), { name: "inverse.f16", entry: "inverse", dtype: "f16" });
  deepStrictEqual(parseVariantName("kernel.nvidia"), { name: "kernel.nvidia", entry: "kernel", target: "nvidia" });
  deepStrictEqual(parseVariantName("scores.apple.f16.wgsl"), {
    name: "scores.apple.f16",
    entry: "scores",
    target: "apple",
    dtype: "f16",
  });
});

Deno.test("variant grammar: misspelt, misordered, repeated and bare suffixes are rejected", async () => {
  await assertThrowsMessage(() => parseVariantName("kernel.nvidai.wgsl"), 'suffix "nvidai" is not a target');
  await assertThrowsMessage(() => parseVariantName("nvidia.wgsl"), 'a bare "nvidia" is ambiguous');
  await assertThrowsMessage(() => parseVariantName("f16.wgsl"), 'a bare "f16" is ambiguous');
  await assertThrowsMessage(() => parseVariantName("kernel.f16.nvidia.wgsl"), 'suffix "nvidia"');
  await assertThrowsMessage(() => parseVariantName("kernel.f16.f16.wgsl"), 'suffix "f16"');
  await assertThrowsMessage(() => parseVariantName("kernel.nvidia.f16.x.wgsl"), "at most two suffixes");
  await assertThrowsMessage(() => parseVariantName("Kernel.wgsl"), 'entry point "Kernel"');
});

Deno.test("variant grammar: every .wgsl file in the tree parses", async () => {
  const ops = new URL("../ops/", import.meta.url);
  let files = 0;
  for await (const op of Deno.readDir(ops)) {
    if (!op.isDirectory) continue;
    for await (const f of Deno.readDir(new URL(`${op.name}/wgsl/`, ops))) {
      if (f.isDirectory && f.name === INCLUDE_DIR) {
        // Snippets, not variants (harness/gen.ts); still only .wgsl files.
        for await (const g of Deno.readDir(new URL(`${op.name}/wgsl/${INCLUDE_DIR}/`, ops))) {
          if (!g.isFile || !g.name.endsWith(".wgsl")) {
            throw new Error(`ops/${op.name}/wgsl/${INCLUDE_DIR}/${g.name}: not a .wgsl file`);
          }
        }
        continue;
      }
      if (!f.isFile || !f.name.endsWith(".wgsl")) throw new Error(`ops/${op.name}/wgsl/${f.name}: not a .wgsl file`);
      parseVariantName(f.name);
      files++;
    }
  }
  if (files === 0) throw new Error("no kernels found under ops/*/wgsl");
});

Deno.test("variantsOf lists one entry point's variants, portable first; entriesOf lists entries", async () => {
  const sources = { kernel: "", "kernel.nvidia": "", "kernel.f16": "", rows: "", "rows.amd": "" };
  deepStrictEqual(variantsOf(sources, "kernel"), ["kernel", "kernel.f16", "kernel.nvidia"]);
  deepStrictEqual(variantsOf(sources, "rows"), ["rows", "rows.amd"]);
  deepStrictEqual(entriesOf(sources), ["kernel", "rows"]);
  await assertThrowsMessage(() => variantsOf({ "inverse.nvidia": "" }, "inverse"), "has no portable kernel");
});
