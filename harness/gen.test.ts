import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { expandIncludes, GENERATED_FILE, renderAll } from "./gen.ts";
import { assertThrowsMessage, unguardedOps } from "./testing.ts";

const DIR = "ops/demo/wgsl/include";
const expand = (source: string, snippets: Record<string, string>) =>
  expandIncludes(source, "ops/demo/wgsl/kernel.wgsl", new Map(Object.entries(snippets)), DIR);

Deno.test("include: a directive line is replaced by the snippet, its final newline dropped", () => {
  const kernel = 'const A = 1u;\n// #include "sum.wgsl"\nfn main() {}\n';
  strictEqual(
    expand(kernel, { "sum.wgsl": "// sums\nfn sum(a: f32, b: f32) -> f32 { return a + b; }\n" }),
    "const A = 1u;\n// sums\nfn sum(a: f32, b: f32) -> f32 { return a + b; }\nfn main() {}\n",
  );
  strictEqual(expand('// #include "x.wgsl"', { "x.wgsl": "let x = 1;" }), "let x = 1;");
  strictEqual(
    expand("fn f() {} // #include is only a directive alone on its line\n", {}),
    "fn f() {} // #include is only a directive alone on its line\n",
  );
});

Deno.test("include: snippets may include snippets, and one may be included twice without a cycle", () => {
  const snippets = {
    "outer.wgsl": 'fn outer() {}\n// #include "inner.wgsl"\n',
    "inner.wgsl": "fn inner() {}\n",
    "twice.wgsl": '// #include "inner.wgsl"\n// #include "inner.wgsl"\n',
  };
  strictEqual(expand('// #include "outer.wgsl"\nfn main() {}', snippets), "fn outer() {}\nfn inner() {}\nfn main() {}");
  strictEqual(expand('// #include "twice.wgsl"', snippets), "fn inner() {}\nfn inner() {}");
});

Deno.test("include: a cycle is an error naming the file, the line and the chain", async () => {
  await assertThrowsMessage(
    () => expand('\n// #include "a.wgsl"', { "a.wgsl": '// #include "b.wgsl"', "b.wgsl": 'x\n// #include "a.wgsl"' }),
    `${DIR}/b.wgsl:2: include cycle: ops/demo/wgsl/kernel.wgsl -> ${DIR}/a.wgsl -> ${DIR}/b.wgsl -> ${DIR}/a.wgsl`,
  );
  await assertThrowsMessage(
    () => expand('// #include "self.wgsl"', { "self.wgsl": '// #include "self.wgsl"' }),
    `${DIR}/self.wgsl:1: include cycle`,
  );
});

Deno.test("include: a missing snippet is an error naming the including file and line", async () => {
  await assertThrowsMessage(
    () => expand('fn a() {}\n\n// #include "nope.wgsl"\n', {}),
    `ops/demo/wgsl/kernel.wgsl:3: included file ${DIR}/nope.wgsl not found`,
  );
  await assertThrowsMessage(
    () => expand('// #include "mid.wgsl"', { "mid.wgsl": 'fn m() {}\n// #include "gone.wgsl"' }),
    `${DIR}/mid.wgsl:2: included file ${DIR}/gone.wgsl not found`,
  );
});

Deno.test("include: a malformed directive is an error naming the file and line", async () => {
  for (
    const bad of [
      '//#include "a.wgsl"',
      '//  #include "a.wgsl"',
      '  // #include "a.wgsl"',
      '// #include "a.wgsl" // trailing',
      '// #include "a.wgsl" ',
      "// #include 'a.wgsl'",
      "// #include a.wgsl",
      '// #include "a"',
      '// #include "../other/a.wgsl"',
      '// #include "sub/a.wgsl"',
      '// #include "A.wgsl"',
      '#include "a.wgsl"',
      "// # include",
    ]
  ) {
    await assertThrowsMessage(
      () => expand(`fn a() {}\n${bad}\n`, { "a.wgsl": "" }),
      "ops/demo/wgsl/kernel.wgsl:2: malformed include directive",
    );
  }
});

Deno.test("renderAll expands includes from wgsl/include/, which holds snippets, not variants", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(`${dir}/demo/wgsl/include`, { recursive: true });
    await Deno.writeTextFile(`${dir}/demo/wgsl/kernel.wgsl`, '// #include "body.wgsl"\n');
    await Deno.writeTextFile(`${dir}/demo/wgsl/kernel.nvidia.wgsl`, 'const N = 2u;\n// #include "body.wgsl"\n');
    await Deno.writeTextFile(`${dir}/demo/wgsl/include/body.wgsl`, 'fn body() {}\n// #include "nvidia.wgsl"\n');
    // Named like a bare target, which the variant grammar rejects: read as a variant, it would throw.
    await Deno.writeTextFile(`${dir}/demo/wgsl/include/nvidia.wgsl`, "fn tuned() {}\n");
    await Deno.writeTextFile(`${dir}/demo/demo.test.ts`, 'eachVariant(KERNELS, "kernel", () => {});');
    const [file, text] = (await renderAll(new URL(`file://${dir}/`))).get("demo")!;
    strictEqual(file.pathname.endsWith(`/demo/${GENERATED_FILE}`), true);
    strictEqual(text.includes(`"kernel": "fn body() {}\\nfn tuned() {}\\n",`), true, text);
    strictEqual(text.includes(`"kernel.nvidia": "const N = 2u;\\nfn body() {}\\nfn tuned() {}\\n",`), true, text);
    strictEqual(text.includes("include"), false, "no snippet is a variant and no directive survives");
    deepStrictEqual(await unguardedOps(new URL(`file://${dir}/`)), []);

    await Deno.writeTextFile(`${dir}/demo/wgsl/include/dead.wgsl`, "fn dead() {}\n");
    await assertThrowsMessage(
      () => renderAll(new URL(`file://${dir}/`)),
      "ops/demo/wgsl/include/dead.wgsl: included by no kernel",
    );
    await Deno.remove(`${dir}/demo/wgsl/include/dead.wgsl`);

    await Deno.writeTextFile(`${dir}/demo/wgsl/kernel.wgsl`, '\n// #include "missing.wgsl"\n');
    await assertThrowsMessage(
      () => renderAll(new URL(`file://${dir}/`)),
      "ops/demo/wgsl/kernel.wgsl:2: included file ops/demo/wgsl/include/missing.wgsl not found",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
