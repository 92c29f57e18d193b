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

type Page = import("playwright-core").Page;

/** What a page test gets: the page, its console messages so far, and where to save its screenshot. */
interface PageRun {
  page: Page;
  consoleErrors: string[];
  consoleLogs: string[];
  screenshot: (name: string) => Promise<void>;
}

/**
 * Registers a test that opens `path` on a fresh server and browser and runs `fn` on it.
 *
 * @param name the test's name
 * @param path the page, relative to the repository root
 * @param fn the checks
 * @param prepare routes to set up before the page loads, given the server's origin
 */
function pageTest(
  name: string,
  path: string,
  fn: (run: PageRun) => Promise<void>,
  prepare?: (page: Page, origin: string) => Promise<void>,
): void {
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
        const consoleLogs: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error") consoleErrors.push(m.text());
          if (m.type() === "log") consoleLogs.push(m.text());
        });
        page.on("pageerror", (e) => consoleErrors.push(e.message));
        // The browser asks every page for a favicon; there is none, and its 404 is not the page's error.
        await page.route("**/favicon.ico", (route) => route.fulfill({ status: 204, body: "" }));
        const origin = `http://127.0.0.1:${server.addr.port}`;
        await prepare?.(page, origin);
        await page.goto(`${origin}/${path}`);
        await fn({
          page,
          consoleErrors,
          consoleLogs,
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

const version = JSON.parse(await Deno.readTextFile(new URL("deno.json", root))).version as string;

pageTest(
  "README: the browser lines (esm.sh import map) run as written",
  "readme-example.html",
  async (run) => {
    const deadline = Date.now() + 120_000;
    while (!run.consoleLogs.some((l) => l.startsWith("gpu ")) && run.consoleErrors.length === 0) {
      if (Date.now() > deadline) throw new Error("the README example printed nothing in 120 s");
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
