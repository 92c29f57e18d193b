// The harness sits below the ops: no file under harness/ may import an op (the registry of ops is
// ops/registry.ts, above both). A harness that imported ops could not be published or tested alone.
// And llm/ sits below models/: model ports may import llm/, harness/ and ops/, never the reverse, and
// llm/'s tests keep what they read in llm/fixtures/, never in a model's fixtures/ (models read llm/'s).
import { deepStrictEqual } from "node:assert/strict";
import { relative, resolve } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";

const root = fromFileUrl(new URL("../", import.meta.url));
const harness = fromFileUrl(new URL("./", import.meta.url));

/** The source less its line and block comments (JSDoc examples included). */
function withoutComments(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
}

/** Every module specifier a file imports or re-exports, statically or dynamically. */
function specifiersOf(source: string): string[] {
  // Comments are not imports.
  const code = withoutComments(source);
  const found: string[] = [];
  for (const m of code.matchAll(/\b(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/g)) found.push(m[1]);
  for (const m of code.matchAll(/\bimport\s*["']([^"']+)["']/g)) found.push(m[1]);
  for (const m of code.matchAll(/\bimport\s*\(\s*["'`]([^"'`]+)["'`]/g)) found.push(m[1]);
  return found;
}

/** Whether a specifier in `file` reaches an op: a path into ops/, the root mod.ts, or the package's op entry points. */
function reachesOps(file: string, specifier: string): boolean {
  if (/^@xpu\/ops(\/ops\/|$)/.test(specifier) || /^jsr:@xpu\/ops(@[^/]*)?(\/ops\/|$)/.test(specifier)) return true;
  if (!specifier.startsWith(".")) return false;
  const target = relative(root, resolve(file, "..", specifier)).replaceAll("\\", "/");
  return target.startsWith("ops/") || target === "mod.ts";
}

async function* walk(dir: string): AsyncGenerator<string> {
  for await (const e of Deno.readDir(dir)) {
    const path = `${dir}/${e.name}`;
    if (e.isDirectory && e.name !== "node_modules" && e.name !== "baselines") yield* walk(path);
    else if (e.isFile && /\.(ts|js|mjs)$/.test(e.name)) yield path;
  }
}

Deno.test("the import scan finds static, re-exported and dynamic imports, and skips comments", () => {
  const sample = `import { a } from "../ops/x/mod.ts";
export { b } from "./b.ts";
import type { C } from
  "../mod.ts";
import "./side.ts";
const m = await import("../ops/y/mod.ts");
// import { no } from "../ops/z/mod.ts";
/** import { no } from "../ops/w/mod.ts"; */`;
  deepStrictEqual(specifiersOf(sample).sort(), [
    "../mod.ts",
    "../ops/x/mod.ts",
    "../ops/y/mod.ts",
    "./b.ts",
    "./side.ts",
  ]);
  deepStrictEqual(
    ["../ops/x/mod.ts", "../mod.ts", "./b.ts", "@xpu/ops", "@xpu/ops/harness", "@xpu/ops/ops/softmax"].map((s) =>
      reachesOps(`${harness}/demo.ts`, s)
    ),
    [true, true, false, true, false, true],
  );
});

Deno.test("no file under harness/ imports from ops/ (or the root mod.ts that re-exports them)", async () => {
  const offenders: string[] = [];
  const self = fromFileUrl(import.meta.url);
  for await (const file of walk(harness.replace(/\/$/, ""))) {
    if (file === self) continue; // its sample text above imports nothing
    for (const specifier of specifiersOf(await Deno.readTextFile(file))) {
      if (reachesOps(file, specifier)) offenders.push(`${relative(root, file)} imports "${specifier}"`);
    }
  }
  deepStrictEqual(offenders, []);
});

/** Whether a specifier in `file` reaches models/: a path into it, or the package's model entry points. */
function reachesModels(file: string, specifier: string): boolean {
  if (/^@xpu\/ops\/models\//.test(specifier) || /^jsr:@xpu\/ops(@[^/]*)?\/models\//.test(specifier)) return true;
  if (!specifier.startsWith(".")) return false;
  return relative(root, resolve(file, "..", specifier)).replaceAll("\\", "/").startsWith("models/");
}

Deno.test("the models/ check tells a path into models/ from one beside it", () => {
  deepStrictEqual(
    ["../models/qwen3/mod.ts", "../../models/x.ts", "./models.ts", "@xpu/ops/models/qwen3", "@xpu/ops/llm"].map((s) =>
      reachesModels(`${root}llm/engine/demo.ts`, s)
    ),
    [false, true, false, true, false],
  );
});

Deno.test("no file under llm/ imports from models/", async () => {
  const offenders: string[] = [];
  for await (const file of walk(`${root}llm`)) {
    for (const specifier of specifiersOf(await Deno.readTextFile(file))) {
      if (reachesModels(file, specifier)) offenders.push(`${relative(root, file)} imports "${specifier}"`);
    }
  }
  deepStrictEqual(offenders, []);
});

/** The paths into a model's fixtures (`models/<name>/fixtures/...`) that a file's code (not its comments) names. */
function modelFixturePaths(source: string): string[] {
  return [...withoutComments(source).matchAll(/["'`]([^"'`]*\bmodels\/[\w-]+\/fixtures\b[^"'`]*)["'`]/g)].map((m) =>
    m[1]
  );
}

Deno.test("the fixture scan finds a model's fixtures named in code, and skips comments and other model files", () => {
  const sample = `const a = new URL("../models/llama/fixtures/tiny-gqa/f32", import.meta.url);
const b = \`\${root}models/qwen3/fixtures/x.json\`;
const c = new URL("models/fortune/tokenizer.model", root);
const d = "../fixtures/quant-ties.safetensors";
// const e = "../models/llama/fixtures/tiny-tied/bf16";
/** const dir = "models/llama/fixtures/tiny-gqa/f32"; */`;
  deepStrictEqual(modelFixturePaths(sample), [
    "../models/llama/fixtures/tiny-gqa/f32",
    "${root}models/qwen3/fixtures/x.json",
  ]);
});

Deno.test("no file under llm/ reads a model's fixtures", async () => {
  const offenders: string[] = [];
  for await (const file of walk(`${root}llm`)) {
    for (const path of modelFixturePaths(await Deno.readTextFile(file))) {
      offenders.push(`${relative(root, file)}: "${path}"`);
    }
  }
  deepStrictEqual(offenders, []);
});
