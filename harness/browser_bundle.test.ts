/**
 * Every published entry point bundles for the browser: each `exports` entry of deno.json is bundled
 * with esbuild (platform browser, ESM, nothing external), the way esm.sh builds a JSR package for a
 * page, and the bundle must reach no `Deno.` API and no `node:` module. The one kind of export allowed
 * to is a file tool whose module doc begins "Deno only" (`@xpu/ops/llm/file`,
 * `@xpu/ops/llm/cache/directory`); every other export is checked, so such a module reached from a
 * browser entry point still fails.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import * as esbuild from "esbuild";

const root = new URL("../", import.meta.url);
const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
const exportsMap = config.exports as Record<string, string>;

/** Deno's global used as an API (`Deno.readFile`, `globalThis.Deno`), not the word in a message. */
const DENO_API = /(?<![\w$"'`])(?:globalThis\.)?Deno\s*\.\s*[A-Za-z_$]/;

/** Whether a module's doc says it is for Deno only (a file tool), so no page imports it. */
async function saysDenoOnly(entry: string): Promise<boolean> {
  const text = await Deno.readTextFile(new URL(entry, root));
  return /^\/\*\*\s*\n\s*\*\s*Deno only\b/.test(text);
}

async function bundle(entry: string): Promise<{ text: string; errors: string[] }> {
  try {
    const result = await esbuild.build({
      entryPoints: [new URL(entry, root).pathname],
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      logLevel: "silent",
      // No comments in the output: a JSDoc example that shows a Deno call is not a call.
      minifyWhitespace: true,
      legalComments: "none",
    });
    return { text: result.outputFiles.map((f) => f.text).join("\n"), errors: [] };
  } catch (e) {
    const failure = e as { errors?: { text: string }[] };
    return { text: "", errors: failure.errors?.map((x) => x.text) ?? [String(e)] };
  }
}

Deno.test({
  name: "every published entry point bundles for the browser with no Deno API and no node: module",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    try {
      const problems: string[] = [];
      for (const [name, entry] of Object.entries(exportsMap)) {
        if (await saysDenoOnly(entry)) continue;
        const { text, errors } = await bundle(entry);
        for (const error of errors) problems.push(`${name}: ${error}`);
        if (errors.length > 0) continue;
        const deno = DENO_API.exec(text);
        if (deno) problems.push(`${name}: reaches the Deno API (${text.slice(deno.index, deno.index + 60)})`);
        if (/\bfrom\s*["']node:|import\(\s*["']node:|require\(\s*["']node:/.test(text)) {
          problems.push(`${name}: reaches a node: module`);
        }
      }
      deepStrictEqual(problems, []);
    } finally {
      await esbuild.stop();
    }
  },
});

Deno.test({
  name: "the bundle check catches a module that reaches Deno or node:",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/uses_deno.ts`, "export const read = () => Deno.readTextFile('x');\n");
      await Deno.writeTextFile(`${dir}/uses_node.ts`, 'import { join } from "node:path";\nexport const j = join;\n');
      await Deno.writeTextFile(`${dir}/clean.ts`, 'export const message = "needs Deno 2.9.6";\n');
      const denoBundle = await bundle(`file://${dir}/uses_deno.ts`);
      ok(DENO_API.test(denoBundle.text), "a Deno.readTextFile call is found");
      const nodeBundle = await bundle(`file://${dir}/uses_node.ts`);
      ok(nodeBundle.errors.length > 0, "a node: import does not bundle for the browser");
      const clean = await bundle(`file://${dir}/clean.ts`);
      deepStrictEqual(clean.errors, []);
      ok(!DENO_API.test(clean.text), "the word Deno in a message is not an API use");
      ok(await saysDenoOnly("llm/safetensors_file.ts"), "the file reader says it is for Deno only");
      ok(!(await saysDenoOnly("llm/mod.ts")), "llm/mod.ts is for browsers too");
    } finally {
      await esbuild.stop();
      await Deno.remove(dir, { recursive: true });
    }
  },
});
