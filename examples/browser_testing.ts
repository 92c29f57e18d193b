/**
 * Test helpers for pages in a real browser (Deno-only, for tests): Debian's Chromium, headless,
 * driven by playwright-core, on the WebGPU adapter it finds (SwiftShader on a machine with no GPU).
 * Each page is served by `examples/serve.ts` and imports the package bundled for the browser
 * (`/bundle/...`), as esm.sh serves it; a screenshot of each is saved to `.screenshots/<name>.png`
 * for a person to look at.
 *
 * Without Chromium the tests are ignored with the reason, except under `CI=true`, where they fail.
 *
 * @module
 */
import { chromium } from "playwright-core";
import { Buffer } from "node:buffer";
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
/** The repository root. */
export const root: URL = new URL("../", import.meta.url);

/** A browser page. */
export type Page = import("playwright-core").Page;

/**
 * What a page test gets: the page, its console messages so far, and where to save its screenshot.
 * Chromium reports a WebGPU validation error (a shader that does not compile, say) as a warning.
 */
export interface PageRun {
  page: Page;
  consoleErrors: string[];
  consoleWarnings: string[];
  consoleLogs: string[];
  screenshot: (name: string) => Promise<void>;
}

/** How long a page may show no change at all before a wait gives up (a hang, not a slow machine). */
export const STALL_MS = 600_000;

/** What a page shows that changes while it works: its text and the values of its progress bars. */
const PAGE_PROGRESS = `document.body.innerText + "|" +
  [...document.querySelectorAll("progress")].map((p) => p.value + "/" + p.max).join(",")`;

/**
 * Waits until `done` (a JavaScript expression evaluated in the page) is truthy, for as long as the
 * page keeps changing: the wait fails only when neither the page's text nor its progress bars have
 * changed for `stallMs`. A page on the software adapter of a loaded machine can take minutes to do
 * what a GPU does in a second; a deadline on the whole wait would make the test a measure of the
 * machine's load, while a wait on progress fails only when the page has stopped.
 *
 * @param page the page
 * @param done an expression evaluated in the page, e.g. `document.querySelector("#status[data-done]")`
 * @param what what is awaited, for the message
 * @param stallMs how long the page may show no change (default {@link STALL_MS})
 * @throws Error naming `what`, the time without change and the page's `#status` text
 */
export async function waitWhileProgressing(page: Page, done: string, what: string, stallMs = STALL_MS): Promise<void> {
  let last = "";
  let changed = Date.now();
  for (;;) {
    if (await page.evaluate(done)) return;
    const now = String(await page.evaluate(PAGE_PROGRESS));
    if (now !== last) {
      last = now;
      changed = Date.now();
    } else if (Date.now() - changed > stallMs) {
      const status = await page.locator("#status").textContent().catch(() => null);
      throw new Error(`${what}: the page showed no progress for ${stallMs / 1000} s (status: ${status})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Registers a test that opens `path` on a fresh server and browser and runs `fn` on it.
 *
 * @param name the test's name
 * @param path the page, relative to the repository root
 * @param fn the checks
 * @param prepare routes to set up before the page loads, given the server's origin
 */
export function pageTest(
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
        // Playwright gives a navigation or an action 30 s; on a loaded machine the bundle a page loads
        // can take longer to build. Only a page that has stopped fails, as in waitWhileProgressing.
        page.setDefaultTimeout(STALL_MS);
        const consoleErrors: string[] = [];
        const consoleWarnings: string[] = [];
        const consoleLogs: string[] = [];
        page.on("console", (m) => {
          if (m.type() === "error") consoleErrors.push(m.text());
          if (m.type() === "warning") consoleWarnings.push(m.text());
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
          consoleWarnings,
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

/**
 * Answers the page's requests under `prefix` (e.g. `/tiny-zimage/`) from `files`, by path below it, as
 * a static server with byte ranges would: HEAD gives the length, a `Range: bytes=a-b` request the 206
 * part, any other GET the whole file, and a path not in `files` a 404.
 *
 * @param page the page (before it loads)
 * @param prefix the URL path the files are under, with its slashes
 * @param files the files' bytes by path below `prefix`
 */
export async function serveFromMemory(page: Page, prefix: string, files: Record<string, Uint8Array>): Promise<void> {
  await page.route((url) => url.pathname.startsWith(prefix), async (route) => {
    const request = route.request();
    const body = files[new URL(request.url()).pathname.slice(prefix.length)];
    if (!body) return await route.fulfill({ status: 404, body: "" });
    const range = /bytes=(\d+)-(\d+)/.exec(request.headers()["range"] ?? "");
    if (request.method() === "HEAD") {
      return await route.fulfill({ status: 200, headers: { "content-length": String(body.length) }, body: "" });
    }
    if (!range) return await route.fulfill({ status: 200, body: Buffer.from(body) });
    const start = Number(range[1]), end = Math.min(Number(range[2]), body.length - 1);
    await route.fulfill({
      status: 206,
      headers: { "content-range": `bytes ${start}-${end}/${body.length}`, "accept-ranges": "bytes" },
      body: Buffer.from(body.subarray(start, end + 1)),
    });
  });
}

/**
 * The RGBA of the top-left pixel of the page's `#canvas`, read in the page (its DOM types are the
 * page's, not this module's).
 *
 * @param page the page
 * @returns the four bytes
 */
export async function canvasCorner(page: Page): Promise<number[]> {
  return await page.locator("#canvas").evaluate((canvas) => [
    ...(canvas as unknown as { getContext(k: "2d"): { getImageData(...a: number[]): { data: Uint8ClampedArray } } })
      .getContext("2d").getImageData(0, 0, 1, 1).data,
  ]);
}
