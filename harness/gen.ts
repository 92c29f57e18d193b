/**
 * `deno task gen`: writes `ops/<op>/kernels.gen.ts` from `ops/<op>/wgsl/*.wgsl`.
 *
 * JSR and npm ship modules, not assets, so each op's WGSL is also published as a TS module
 * exporting its sources as strings; consumers need no bundler loader. The generated files are
 * committed and a test fails when one is stale. Deno-only (file I/O).
 *
 * ## Includes
 *
 * WGSL has no include mechanism, and several kernels of one op share code (GEMM staging and
 * k-steps, an exact-FMA fallback, decoders of quantized weights); pasting it twice lets the copies
 * drift apart. So a line of exactly the form
 *
 * ```wgsl
 * // #include "exact_fma.wgsl"
 * ```
 *
 * alone on its line (at column 0, nothing after it) in a kernel is replaced by the contents of
 * `ops/<op>/wgsl/include/exact_fma.wgsl`, its final newline dropped and its own indentation kept
 * (a snippet may be a whole declaration or a run of statements inside a function). A name is a plain
 * file name (`[a-z0-9_]+.wgsl`), never a path. It is looked up in the op's own `wgsl/include/` first,
 * then in `harness/wgsl/`, which holds the snippets several ops share: the row kernels' row sum,
 * chunk loads and ragged-row helpers (`row_*`); the element accesses of vec4-typed bindings in
 * transpose, permute, pad and upsample (`vec4_parts`); the vec4 block walk of dequantize and upsample
 * (`quad_blocks`); the pieces of the register-blocked GEMM tiles (`gemm_*`: a's transposed
 * staging, the 8 x 8 accumulators and one k-step's FMAs that matmul's 128 x 128 tiles, conv,
 * conv_transpose and flash_attention's output role share; `gemm64_*`: the 64 x 64 tile's k-steps and
 * main body that matmul/tile64 shares with stft's and mel's gathered GEMM; `gemm8_*`: the 8-deep
 * blocks, k-steps and stores of conv's and conv_transpose's implicit GEMMs); the sigmoid and SiLU of
 * activation, of group_norm's and channel_norm's fused SiLU and of matmul's epilogue (`silu`), and
 * matmul's GELU forms (`gelu`); and the adaLN modulation
 * hooks of rmsnorm's and layernorm's `modulated` kernels (`modulate`); and the decode state of a
 * generation loop kept on the GPU, which sample's choosing kernels advance and gqa's KV-cache kernels
 * read (`decode_state`). Each snippet opens with
 * a comment saying what it expects of the including kernel (bindings, constants, names in scope).
 * A name in both is an error, and a shared snippet sees only
 * shared snippets, so it never depends on the op that includes it. A snippet may include another; a
 * cycle is an error. So are a missing snippet and any other line that looks
 * like a directive (`//#include`, an indented one, a single-quoted name, a path, text after it),
 * each naming the file and line. The directive is a WGSL comment, so an unexpanded file still
 * parses as WGSL in an editor.
 *
 * Files in `wgsl/include/` are snippets, not variants: only plain files directly in `wgsl/` are
 * kernels, and a snippet no kernel includes (of its op, or of any op for a shared one) is an error
 * too (dead code that would drift). Nothing
 * is substituted (no parameters): where two kernels differ in a constant, the differing part stays
 * in each kernel and only identical text is shared, so each kernel's generated source is exactly
 * the code it runs.
 *
 * Usage: `deno task gen` (write), `deno run -R harness/gen.ts --check` (exit 1 when stale).
 *
 * @module
 */

import { parseVariantName } from "./variants.ts";

/** Name of the generated module in each op directory. */
export const GENERATED_FILE = "kernels.gen.ts";

/** Subdirectory of an op's `wgsl/` holding its include snippets (not variants). */
export const INCLUDE_DIR = "include";

/** Directory of the snippets several ops share, relative to the repository root. */
export const SHARED_INCLUDE_DIR = "harness/wgsl";

/** A set of snippets a directive's name may resolve to. */
export interface SnippetScope {
  /** Snippet file name (`<name>.wgsl`) to its text. */
  snippets: ReadonlyMap<string, string>;
  /** Their directory's path, for error messages and nested file names. */
  dir: string;
  /** When given, receives the name of every snippet of this scope an expansion reads. */
  used?: Set<string>;
}

/** A well-formed include directive; the name is captured without `.wgsl`. */
const INCLUDE = /^\/\/ #include "([a-z0-9_]+)\.wgsl"$/;
/** Anything that looks like an attempt at a directive (checked only when {@link INCLUDE} fails). */
const LOOKS_LIKE_INCLUDE = /^\s*(?:\/\/\s*)?#\s*include\b/;

/**
 * Expands the include directives of one WGSL file (see the module doc).
 *
 * @param source the file's text
 * @param file the file's path, for error messages
 * @param snippets snippet file name (`<name>.wgsl`) to its text: the op's `wgsl/include/`
 * @param includeDir the snippets' directory path, for error messages and nested file names
 * @param used when given, receives the name of every snippet of the op's own the expansion reads
 * @param shared the snippets several ops share, looked up when the op has no snippet of the name
 * @returns the text with every directive replaced by its snippet, recursively
 * @throws Error naming the file and line of a malformed directive, a missing snippet or a cycle
 */
export function expandIncludes(
  source: string,
  file: string,
  snippets: ReadonlyMap<string, string>,
  includeDir = INCLUDE_DIR,
  used?: Set<string>,
  shared?: SnippetScope,
): string {
  return expand(source, file, [{ snippets, dir: includeDir, used }, ...(shared ? [shared] : [])], []);
}

function expand(source: string, file: string, scopes: readonly SnippetScope[], stack: string[]): string {
  const lines = source.split("\n");
  return lines.map((line, i) => {
    const at = `${file}:${i + 1}`;
    const match = INCLUDE.exec(line);
    if (!match) {
      if (LOOKS_LIKE_INCLUDE.test(line)) {
        throw new Error(
          `${at}: malformed include directive ${JSON.stringify(line)}; ` +
            `expected exactly // #include "<name>.wgsl" alone on its line (name: [a-z0-9_]+)`,
        );
      }
      return line;
    }
    const name = `${match[1]}.wgsl`;
    const found = scopes.findIndex((scope) => scope.snippets.has(name));
    const scope = scopes[Math.max(found, 0)];
    const path = `${scope.dir}/${name}`;
    const chain = [...stack, file];
    if (chain.includes(path)) throw new Error(`${at}: include cycle: ${[...chain, path].join(" -> ")}`);
    if (found < 0) throw new Error(`${at}: included file ${path} not found`);
    scope.used?.add(name);
    const text = scope.snippets.get(name)!;
    // A snippet resolves names in its own scope and those after it: a shared one sees no op's own.
    return expand(text.endsWith("\n") ? text.slice(0, -1) : text, path, scopes.slice(found), chain);
  }).join("\n");
}

/** Reads the `.wgsl` files directly in `dir` (none when it does not exist), by file name. */
async function readSnippets(dir: URL): Promise<Map<string, string>> {
  const snippets = new Map<string, string>();
  try {
    if (!(await Deno.stat(dir)).isDirectory) return snippets;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return snippets;
    throw e; // a permission error must not read as "no snippets"
  }
  for await (const f of Deno.readDir(dir)) {
    if (f.isFile && f.name.endsWith(".wgsl")) snippets.set(f.name, await Deno.readTextFile(new URL(f.name, dir)));
  }
  return snippets;
}

/**
 * Renders the generated module for one op.
 *
 * @param op the op name
 * @param sources variant name to WGSL text (includes already expanded)
 * @returns the module text
 */
export function renderKernelModule(op: string, sources: Record<string, string>): string {
  const names = Object.keys(sources).sort();
  for (const n of names) parseVariantName(n);
  const body = names.map((n) => `  ${JSON.stringify(n)}: ${JSON.stringify(sources[n])},`).join("\n");
  const variant = variantTypeName(op);
  return `// Generated by \`deno task gen\` from ops/${op}/wgsl/*.wgsl. Do not edit; edit the .wgsl files.\n` +
    `/**\n * WGSL sources of ${op}, by variant name (\`<entry>[.<target>][.<dtype>]\`).\n * @module\n */\n\n` +
    `/** The names of ${op}'s kernel variants: what its options' \`override\` may name. */\n` +
    `export type ${variant} = ${names.map((n) => JSON.stringify(n)).join(" | ")};\n\n` +
    `/** WGSL sources of ${op}, by variant name. */\n` +
    `export const KERNELS: Readonly<Record<${variant}, string>> = {\n${body}\n};\n`;
}

/**
 * The name of the variant-name type an op's generated module exports: the op's directory name in
 * PascalCase, then `Variant` (`conv_transpose` gives `ConvTransposeVariant`).
 *
 * @param op the op's directory name
 * @returns the type's name
 */
export function variantTypeName(op: string): string {
  return op.split("_").map((part) => part[0].toUpperCase() + part.slice(1)).join("") + "Variant";
}

/**
 * Reads every op's `wgsl/` directory (kernels: the plain `.wgsl` files directly in it; snippets:
 * `wgsl/include/*.wgsl`, then the shared ones), expands includes and renders its generated module.
 *
 * @param opsDir the `ops/` directory
 * @param sharedDir the shared snippets' directory (default: `harness/wgsl/` beside `ops/`)
 * @returns op name to [generated file URL, expected text]
 * @throws Error on a malformed directive, a missing snippet, an include cycle, a snippet no kernel
 *   includes, or an op's snippet named like a shared one
 */
export async function renderAll(
  opsDir: URL,
  sharedDir = new URL(`../${SHARED_INCLUDE_DIR}/`, opsDir),
): Promise<Map<string, [URL, string]>> {
  const shared: SnippetScope = { snippets: await readSnippets(sharedDir), dir: SHARED_INCLUDE_DIR, used: new Set() };
  const out = new Map<string, [URL, string]>();
  for await (const op of Deno.readDir(opsDir)) {
    if (!op.isDirectory) continue;
    const wgsl = new URL(`${op.name}/wgsl/`, opsDir);
    if (!(await Deno.stat(wgsl).catch(() => undefined))?.isDirectory) continue;
    const snippets = await readSnippets(new URL(`${INCLUDE_DIR}/`, wgsl));
    const includeDir = `ops/${op.name}/wgsl/${INCLUDE_DIR}`;
    const twice = [...snippets.keys()].find((name) => shared.snippets.has(name));
    if (twice) throw new Error(`${includeDir}/${twice}: named like the shared ${SHARED_INCLUDE_DIR}/${twice}`);
    const sources: Record<string, string> = {};
    const used = new Set<string>();
    for await (const f of Deno.readDir(wgsl)) {
      if (f.isFile && f.name.endsWith(".wgsl")) {
        const text = await Deno.readTextFile(new URL(f.name, wgsl));
        sources[parseVariantName(f.name).name] = expandIncludes(
          text,
          `ops/${op.name}/wgsl/${f.name}`,
          snippets,
          includeDir,
          used,
          shared,
        );
      }
    }
    const unused = [...snippets.keys()].filter((name) => !used.has(name)).sort();
    if (unused.length > 0) throw new Error(`${includeDir}/${unused[0]}: included by no kernel (a dead snippet)`);
    out.set(op.name, [new URL(`${op.name}/${GENERATED_FILE}`, opsDir), renderKernelModule(op.name, sources)]);
  }
  const unused = [...shared.snippets.keys()].filter((name) => !shared.used!.has(name)).sort();
  if (unused.length > 0) {
    throw new Error(`${SHARED_INCLUDE_DIR}/${unused[0]}: included by no op's kernel (a dead snippet)`);
  }
  return out;
}

const USAGE = `usage: deno task gen [--check]     (deno run -R=ops,harness/wgsl -W=ops harness/gen.ts)
  Writes ops/<op>/kernels.gen.ts from ops/<op>/wgsl/*.wgsl (includes expanded): run it after
  editing a .wgsl file and commit the result.
  --check   write nothing; list the stale files and exit 1 if there are any
  --help    this text`;

if (import.meta.main) {
  if (Deno.args.includes("--help") || Deno.args.includes("-h")) {
    console.log(USAGE);
    Deno.exit(0);
  }
  const unknown = Deno.args.find((arg) => arg !== "--check");
  if (unknown !== undefined) {
    console.error(`gen: unknown argument ${unknown}\n${USAGE}`);
    Deno.exit(2);
  }
  const opsDir = new URL("../ops/", import.meta.url);
  const check = Deno.args.includes("--check");
  let stale = 0;
  for (const [op, [file, text]] of await renderAll(opsDir)) {
    const current = await Deno.readTextFile(file).catch(() => "");
    if (current === text) continue;
    stale++;
    if (check) console.error(`stale: ops/${op}/${GENERATED_FILE}`);
    else await Deno.writeTextFile(file, text);
  }
  if (check && stale > 0) Deno.exit(1);
  if (!check) console.log(`gen: ${stale} file(s) written`);
}
