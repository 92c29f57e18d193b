/**
 * The example pages and README's browser lines in headless Chromium: each must load with no console
 * error and reach its own verdict (see `browser_testing.ts`).
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { pageTest, root, STALL_MS, waitWhileProgressing } from "./browser_testing.ts";

pageTest("examples/ops: kernels agree with their references in the browser", "examples/ops/", async (run) => {
  await waitWhileProgressing(run.page, `document.querySelector("#status[data-done]") !== null`, "the ops");
  await run.screenshot("ops");
  const results = await run.page.evaluate(() =>
    (globalThis as unknown as { opsResults: { op: string; ok: boolean }[] }).opsResults
  );
  deepStrictEqual(run.consoleErrors, []);
  ok(results.length >= 5, `the page checked ${results.length} ops`);
  deepStrictEqual(results.filter((r) => !r.ok).map((r) => r.op), []);
  ok(/^Adapter: /.test(await run.page.textContent("#adapter") ?? ""), "the page found a WebGPU adapter");
});

const version = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))).version as string;

pageTest(
  "README: the browser lines (esm.sh import map) run as written",
  "readme-example.html",
  async (run) => {
    // The page shows nothing while it works, so the only bound is the one on a page that has stopped.
    const stalled = Date.now() + STALL_MS;
    while (!run.consoleLogs.some((l) => l.startsWith("gpu ")) && run.consoleErrors.length === 0) {
      if (Date.now() > stalled) throw new Error(`the README example printed nothing in ${STALL_MS / 1000} s`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await run.screenshot("readme-example");
    deepStrictEqual(run.consoleErrors, []);
    const [, gpu, reference] = /^gpu (.*) reference (.*)$/.exec(run.consoleLogs.find((l) => l.startsWith("gpu "))!)!;
    const y = gpu.split(" ").map(Number), expected = reference.split(" ").map(Number);
    deepStrictEqual(y.length, 6);
    ok(y.every((v, i) => Math.abs(v - expected[i]) <= 2e-5 * expected[i]), `${gpu} against ${reference}`);
  },
  async (page, origin) => {
    const readme = await Deno.readTextFile(new URL("README.md", root));
    const html = /## In a browser[\s\S]*?```html\n([\s\S]*?)```/.exec(readme)?.[1];
    if (!html) throw new Error("README has no html block under its browser section");
    const esm = `https://esm.sh/jsr/@xpu/ops@${version}`;
    ok(html.includes(`"${esm}"`), `README's import map names this version (${version})`);
    await page.route(
      `${origin}/readme-example.html`,
      (route) =>
        route.fulfill({ contentType: "text/html", body: `<!doctype html><meta charset="utf-8"><body>${html}</body>` }),
    );
    // esm.sh is not reachable here: its answer for the package is the bundle esbuild makes of each export.
    await page.route(`${esm}**`, async (route) => {
      const subpath = route.request().url().slice(esm.length).replace(/^\//, "") || "mod";
      const response = await fetch(`${origin}/bundle/${subpath}.js`);
      await route.fulfill({ status: response.status, contentType: "text/javascript", body: await response.text() });
    });
  },
);
