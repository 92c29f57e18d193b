/**
 * The example pages in a real browser: Debian's Chromium, headless, driven by playwright-core, on
 * the WebGPU adapter it finds (SwiftShader on a machine with no GPU). Each page is served by
 * `examples/serve.ts` and imports the package bundled for the browser (`/bundle/...`), as esm.sh
 * serves it. A page must load with no console error and reach its own verdict; a screenshot of each
 * is saved to `.screenshots/<page>.png` for a person to look at.
 *
 * Without Chromium the tests are ignored with the reason, except under `CI=true`, where they fail.
 */
import { deepStrictEqual, ok } from "node:assert/strict";
import { chromium } from "playwright-core";
import * as esbuild from "esbuild";
import { staticHandler } from "./serve.ts";

const CHROMIUM = "/usr/bin/chromium";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--enable-unsafe-webgpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
];
const hasChromium = await Deno.stat(CHROMIUM).then((s) => s.isFile, () => false);
const inCI = Deno.env.get("CI") === "true";
const root = new URL("../", import.meta.url);

/** What a page test gets: the page, the console errors so far, and where to save its screenshot. */
interface PageRun {
  page: import("playwright-core").Page;
  consoleErrors: string[];
  screenshot: (name: string) => Promise<void>;
}

/**
 * Registers a test that opens `path` on a fresh server and browser and runs `fn` on it.
 *
 * @param name the test's name
 * @param path the page, relative to the repository root
 * @param fn the checks
 */
function pageTest(name: string, path: string, fn: (run: PageRun) => Promise<void>): void {
  if (!hasChromium && inCI) {
    Deno.test(name, () => {
      throw new Error(`CI=true but ${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
    });
    return;
  }
  Deno.test({
    name: hasChromium ? name : `${name} (ignored: no ${CHROMIUM})`,
    ignore: !hasChromium,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => {
      const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, staticHandler(root.pathname));
      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
      try {
        const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
        const consoleErrors: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error") consoleErrors.push(m.text());
        });
        page.on("pageerror", (e) => consoleErrors.push(e.message));
        // The browser asks every page for a favicon; there is none, and its 404 is not the page's error.
        await page.route("**/favicon.ico", (route) => route.fulfill({ status: 204, body: "" }));
        await page.goto(`http://127.0.0.1:${server.addr.port}/${path}`);
        await fn({
          page,
          consoleErrors,
          screenshot: async (file) => {
            await Deno.mkdir(new URL(".screenshots/", root), { recursive: true });
            await page.screenshot({ path: new URL(`.screenshots/${file}.png`, root).pathname, fullPage: true });
          },
        });
      } finally {
        await browser.close();
        await server.shutdown();
        await esbuild.stop();
      }
    },
  });
}

pageTest("examples/ops: kernels agree with their references in the browser", "examples/ops/", async (run) => {
  await run.page.waitForSelector("#status[data-done]", { timeout: 120_000 });
  await run.screenshot("ops");
  const results = await run.page.evaluate(() =>
    (globalThis as unknown as { opsResults: { op: string; ok: boolean }[] }).opsResults
  );
  deepStrictEqual(run.consoleErrors, []);
  ok(results.length >= 5, `the page checked ${results.length} ops`);
  deepStrictEqual(results.filter((r) => !r.ok).map((r) => r.op), []);
  ok(/^Adapter: /.test(await run.page.textContent("#adapter") ?? ""), "the page found a WebGPU adapter");
});
