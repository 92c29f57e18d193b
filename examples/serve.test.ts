import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import * as esbuild from "esbuild";
import { parseRange, staticHandler } from "./serve.ts";

Deno.test("parseRange: first-last, open-ended, suffix, clamped, unsatisfiable, absent", () => {
  deepStrictEqual(parseRange("bytes=0-9", 100), { start: 0, end: 9 });
  deepStrictEqual(parseRange("bytes=90-", 100), { start: 90, end: 99 });
  deepStrictEqual(parseRange("bytes=-10", 100), { start: 90, end: 99 });
  deepStrictEqual(parseRange("bytes=-500", 100), { start: 0, end: 99 });
  deepStrictEqual(parseRange("bytes=50-5000", 100), { start: 50, end: 99 });
  strictEqual(parseRange("bytes=100-", 100), "unsatisfiable");
  strictEqual(parseRange("bytes=20-10", 100), "unsatisfiable");
  strictEqual(parseRange(null, 100), null);
  strictEqual(parseRange("bytes=0-1,5-6", 100), null); // several ranges: the whole file is sent
});

Deno.test({
  name: "the server sends byte ranges, refuses paths outside its root, and bundles exports for the browser",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const dir = await Deno.makeTempDir();
    const bytes = Uint8Array.from({ length: 3000 }, (_, i) => i % 251);
    await Deno.mkdir(`${dir}/site`);
    await Deno.writeFile(`${dir}/site/weights.bin`, bytes);
    await Deno.writeTextFile(`${dir}/secret.txt`, "not served");
    await Deno.symlink(`${dir}/secret.txt`, `${dir}/site/link.txt`);
    const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, staticHandler(`${dir}/site`));
    const base = `http://127.0.0.1:${server.addr.port}`;
    try {
      const whole = await fetch(`${base}/weights.bin`);
      strictEqual(whole.status, 200);
      strictEqual(whole.headers.get("accept-ranges"), "bytes");
      deepStrictEqual(new Uint8Array(await whole.arrayBuffer()), bytes);

      const part = await fetch(`${base}/weights.bin`, { headers: { range: "bytes=1000-1999" } });
      strictEqual(part.status, 206);
      strictEqual(part.headers.get("content-range"), "bytes 1000-1999/3000");
      deepStrictEqual(new Uint8Array(await part.arrayBuffer()), bytes.subarray(1000, 2000));

      const tail = await fetch(`${base}/weights.bin`, { headers: { range: "bytes=2990-" } });
      deepStrictEqual(new Uint8Array(await tail.arrayBuffer()), bytes.subarray(2990));

      const past = await fetch(`${base}/weights.bin`, { headers: { range: "bytes=3000-" } });
      strictEqual(past.status, 416);
      strictEqual(past.headers.get("content-range"), "bytes */3000");
      await past.body?.cancel();

      const escape = await fetch(`${base}/%2e%2e/secret.txt`);
      ok(escape.status === 403 || escape.status === 404, `escaping the root gave ${escape.status}`);
      ok(!(await escape.text()).includes("not served"));

      const linked = await fetch(`${base}/link.txt`);
      strictEqual(linked.status, 403, "a link out of the root is refused");
      ok(!(await linked.text()).includes("not served"));

      await Deno.mkdir(`${dir}/site/page`);
      await Deno.writeTextFile(`${dir}/site/page/index.html`, "<p>page</p>");
      const bare = await fetch(`${base}/page?x=1`, { redirect: "manual" });
      strictEqual(bare.status, 301, "a directory without its slash is redirected");
      strictEqual(bare.headers.get("location"), "/page/?x=1");
      await bare.body?.cancel();
      strictEqual(await (await fetch(`${base}/page`)).text(), "<p>page</p>");

      const missing = await fetch(`${base}/nothing.bin`);
      strictEqual(missing.status, 404);
      await missing.body?.cancel();
    } finally {
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }

    const repo = staticHandler(new URL("../", import.meta.url).pathname);
    try {
      for (const path of ["/", "/examples/"]) {
        const index = await repo(new Request(`http://localhost${path}`));
        strictEqual(index.status, 200, path);
        const html = await index.text();
        for (const page of ["anima", "cache", "chat", "ops", "roofline"]) {
          ok(html.includes(`href="/examples/${page}/"`), `${path} links examples/${page}/`);
        }
      }
      const bare = await repo(new Request("http://localhost/examples"));
      strictEqual(bare.status, 301);
      strictEqual(bare.headers.get("location"), "/examples/", "/examples leads to the index");
      const bundle = await repo(new Request("http://localhost/bundle/ops/softmax.js"));
      strictEqual(bundle.status, 200);
      const text = await bundle.text();
      ok(/export\s*\{[^}]*\bsoftmaxGpu\b/.test(text), "the bundle exports softmaxGpu");
      const unknown = await repo(new Request("http://localhost/bundle/ops/nothing.js"));
      strictEqual(unknown.status, 404);
      await unknown.body?.cancel();
    } finally {
      await esbuild.stop();
    }
  },
});
