/**
 * The package's shape, checked against the tree: the op count README states, each op directory's
 * files, the exports in deno.json, mod.ts re-exporting every op, generated kernel sources that are
 * not stale, and no entry point with a variant that no test iterates.
 */
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { renderAll } from "./gen.ts";
import { unguardedOps } from "./testing.ts";

const root = new URL("../", import.meta.url);
const opsDir = new URL("ops/", root);

async function opNames(): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(opsDir)) if (e.isDirectory) names.push(e.name);
  return names.sort();
}

Deno.test("README states the number of op directories under ops/", async () => {
  const readme = await Deno.readTextFile(new URL("README.md", root));
  const stated = /\*\*(\d+) ops\*\*/.exec(readme);
  if (!stated) throw new Error('README must state the op count as "**N ops**"');
  strictEqual(Number(stated[1]), (await opNames()).length);
});

Deno.test("every op directory has reference.ts, mod.ts, wgsl/kernel or entries, a test, goldens", async () => {
  for (const op of await opNames()) {
    const files = new Set<string>();
    for await (const e of Deno.readDir(new URL(`${op}/`, opsDir))) files.add(e.name);
    for (const f of ["reference.ts", "mod.ts", "kernels.gen.ts", "wgsl", `${op}.test.ts`, "goldens"]) {
      strictEqual(files.has(f), true, `ops/${op}/${f} is missing`);
    }
    const goldens: string[] = [];
    for await (const e of Deno.readDir(new URL(`${op}/goldens/`, opsDir))) goldens.push(e.name);
    strictEqual(goldens.includes("gen.py") && goldens.some((g) => g.endsWith(".json")), true, `ops/${op}/goldens`);
  }
});

Deno.test("deno.json exports every op, and mod.ts re-exports every op", async () => {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const mod = await Deno.readTextFile(new URL("mod.ts", root));
  for (const op of await opNames()) {
    strictEqual(config.exports[`./ops/${op}`], `./ops/${op}/mod.ts`, `deno.json exports ./ops/${op}`);
    strictEqual(mod.includes(`"./ops/${op}/mod.ts"`), true, `mod.ts re-exports ops/${op}`);
  }
  const exported = Object.keys(config.exports).filter((k) => k.startsWith("./ops/")).map((k) => k.slice(6)).sort();
  deepStrictEqual(exported, await opNames());
});

Deno.test("generated kernel sources are up to date (run `deno task gen`)", async () => {
  for (const [op, [file, text]] of await renderAll(opsDir)) {
    const current = await Deno.readTextFile(file).catch(() => "");
    strictEqual(current === text, true, `ops/${op}/kernels.gen.ts is stale: run \`deno task gen\``);
  }
});

Deno.test("every entry point with variants is iterated by a test (unguardedOps)", async () => {
  deepStrictEqual(await unguardedOps(opsDir), []);
});

Deno.test("unguardedOps finds an entry point whose variant no test iterates", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/demo/wgsl`, { recursive: true });
    await Deno.writeTextFile(`${dir}/demo/wgsl/kernel.wgsl`, "");
    await Deno.writeTextFile(`${dir}/demo/wgsl/kernel.nvidia.wgsl`, "");
    await Deno.writeTextFile(`${dir}/demo/wgsl/rows.wgsl`, "");
    await Deno.writeTextFile(`${dir}/demo/wgsl/rows.amd.wgsl`, "");
    await Deno.writeTextFile(`${dir}/demo/demo.test.ts`, 'eachVariant(KERNELS, "rows", () => {});');
    deepStrictEqual(await unguardedOps(new URL(`file://${dir}/`)), ["demo/kernel"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("unguardedOps accepts a template-literal label in checkAgainstReference", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/demo/wgsl`, { recursive: true });
    await Deno.writeTextFile(`${dir}/demo/wgsl/kernel.wgsl`, "");
    await Deno.writeTextFile(`${dir}/demo/wgsl/kernel.nvidia.wgsl`, "");
    await Deno.writeTextFile(
      `${dir}/demo/demo.test.ts`,
      'checkAgainstReference(`demo ${op}`, KERNELS, "kernel", cases, demo, demoGpu, tol);',
    );
    deepStrictEqual(await unguardedOps(new URL(`file://${dir}/`)), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
