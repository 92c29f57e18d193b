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

Deno.test("include: the op's own snippets first, then the shared ones; a shared snippet sees only shared ones", async () => {
  const shared = {
    snippets: new Map(Object.entries({
      "row_sum.wgsl": 'fn row_sum() {}\n// #include "helper.wgsl"\n',
      "helper.wgsl": "fn shared_helper() {}\n",
    })),
    dir: "harness/wgsl",
    used: new Set<string>(),
  };
  const used = new Set<string>();
  const expandShared = (source: string, own: Record<string, string>) =>
    expandIncludes(source, "ops/demo/wgsl/kernel.wgsl", new Map(Object.entries(own)), DIR, used, shared);
  // helper.wgsl exists in both: the kernel gets its op's, the shared snippet the shared one.
  strictEqual(
    expandShared('// #include "row_sum.wgsl"\n// #include "helper.wgsl"', { "helper.wgsl": "fn own_helper() {}" }),
    "fn row_sum() {}\nfn shared_helper() {}\nfn own_helper() {}",
  );
  deepStrictEqual([...used], ["helper.wgsl"]);
  deepStrictEqual([...shared.used].sort(), ["helper.wgsl", "row_sum.wgsl"]);
  await assertThrowsMessage(
    () => expandShared('// #include "nowhere.wgsl"', {}),
    `ops/demo/wgsl/kernel.wgsl:1: included file ${DIR}/nowhere.wgsl not found`,
  );
});

Deno.test("renderAll: shared snippets in harness/wgsl/, never shadowed, never dead", async () => {
  const dir = await Deno.makeTempDir();
  const ops = new URL(`file://${dir}/ops/`);
  try {
    await Deno.mkdir(`${dir}/ops/demo/wgsl/include`, { recursive: true });
    await Deno.mkdir(`${dir}/harness/wgsl`, { recursive: true });
    await Deno.writeTextFile(`${dir}/harness/wgsl/row_sum.wgsl`, "fn row_sum() {}\n");
    await Deno.writeTextFile(`${dir}/ops/demo/wgsl/kernel.wgsl`, '// #include "row_sum.wgsl"\n');
    await Deno.writeTextFile(`${dir}/ops/demo/demo.test.ts`, 'eachVariant(KERNELS, "kernel", () => {});');
    const [, text] = (await renderAll(ops)).get("demo")!;
    strictEqual(text.includes(`"kernel": "fn row_sum() {}\\n",`), true, text);

    await Deno.writeTextFile(`${dir}/ops/demo/wgsl/include/row_sum.wgsl`, "fn mine() {}\n");
    await assertThrowsMessage(
      () => renderAll(ops),
      "ops/demo/wgsl/include/row_sum.wgsl: named like the shared harness/wgsl/row_sum.wgsl",
    );
    await Deno.remove(`${dir}/ops/demo/wgsl/include/row_sum.wgsl`);

    await Deno.writeTextFile(`${dir}/harness/wgsl/dead.wgsl`, "fn dead() {}\n");
    await assertThrowsMessage(() => renderAll(ops), "harness/wgsl/dead.wgsl: included by no op's kernel");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("gen CLI: an unknown argument is refused before anything is read or written", async () => {
  // No read or write permission: the refusal must come before the generator touches a file.
  const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", new URL("./gen.ts", import.meta.url).pathname, "--chek"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  strictEqual(code, 2);
  strictEqual(new TextDecoder().decode(stdout), "");
  strictEqual(new TextDecoder().decode(stderr).split("\n")[0], "gen: unknown argument --chek");
});
