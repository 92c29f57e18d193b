/**
 * The weight cache in headless Chromium (examples/cache/): for the Cache API and for IndexedDB, a
 * second load reads nothing from the network, a corrupted stored file is detected and fetched
 * again, and an interrupted download resumes with a Range from where it stopped. The model is three
 * generated files served with ranges by `staticHandler` from a temporary folder (through
 * `page.route`), and every request the browser makes for them is recorded here too, so the page's
 * own record of its requests is held to what actually went out.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { Buffer } from "node:buffer";
import { pageTest, waitWhileProgressing } from "./browser_testing.ts";
import { staticHandler } from "./serve.ts";
import { serializeManifest } from "../llm/cache/manifest.ts";
import { manifestOfFiles } from "../llm/cache/directory.ts";

const FIXTURE = "/examples/cache/fixture/";
const SIZES: [string, number][] = [["config.json", 19], ["model.bin", 300_000], ["tokenizer.bin", 70_001]];

interface Request {
  path: string;
  range: string | null;
}
interface StoreResult {
  store: string;
  first: { key: string; requests: Request[]; sha256: Record<string, string> };
  second: { requests: Request[]; sha256: Record<string, string> };
  corrupted: { file: string; requests: Request[]; sha256: Record<string, string> };
  interrupted: {
    abortedAt: number;
    aborted: string;
    held: { name: string; held: number; size: number }[];
    abortRequests: Request[];
    requests: Request[];
    sha256: Record<string, string>;
  };
  listed: { key: string; held: number }[];
  afterClear: string[];
}

let fixtureDir = "";
const expectedSha256: Record<string, string> = {};
const sentByBrowser: Request[] = [];

pageTest(
  "examples/cache: reload from the store, corruption fetched again, interrupted download resumed (Cache API, IndexedDB)",
  "examples/cache/?manifest=./fixture/manifest.json",
  async (run) => {
    try {
      await waitWhileProgressing(run.page, `document.querySelector("#status[data-done]") !== null`, "the loads");
      await run.screenshot("cache");
      deepStrictEqual(run.consoleErrors, []);
      const results = await run.page.evaluate(() =>
        (globalThis as unknown as { cacheResults: StoreResult[] }).cacheResults
      );
      deepStrictEqual(results.map((r) => r.store), ["cache-api", "indexeddb"]);
      const path = (name: string) => FIXTURE + name;
      const whole = (...names: string[]) => names.map((name) => ({ path: path(name), range: null }));
      const everyFile = SIZES.map(([name]) => name);
      for (const r of results) {
        const at = `${r.store}:`;
        deepStrictEqual(r.first.requests, whole("manifest.json", ...everyFile), `${at} first load`);
        deepStrictEqual(r.second.requests, [], `${at} the second load asks the network for nothing`);
        strictEqual(r.corrupted.file, "model.bin");
        deepStrictEqual(r.corrupted.requests, whole("model.bin"), `${at} only the corrupted file, whole`);

        const i = r.interrupted;
        strictEqual(i.aborted, "AbortError: stopped by the page", `${at} the first load was aborted`);
        ok(i.abortedAt >= 100_000 && i.abortedAt < 19 + 300_000, `${at} aborted inside model.bin (${i.abortedAt})`);
        const held = i.abortedAt - 19;
        deepStrictEqual(i.held, [
          { name: "config.json", held: 19, size: 19 },
          { name: "model.bin", held, size: 300_000 },
          { name: "tokenizer.bin", held: 0, size: 70_001 },
        ], `${at} every byte that arrived before the abort was kept`);
        deepStrictEqual(i.abortRequests, whole("manifest.json", "config.json", "model.bin"));
        deepStrictEqual(i.requests, [
          ...whole("manifest.json"),
          { path: path("model.bin"), range: `bytes=${held}-` },
          ...whole("tokenizer.bin"),
        ], `${at} the second load resumed model.bin at byte ${held}`);

        for (const load of [r.first, r.second, r.corrupted, i]) deepStrictEqual(load.sha256, expectedSha256, at);
        deepStrictEqual(r.listed, [{ key: r.first.key, held: 19 + 300_000 + 70_001 }], `${at} list`);
        deepStrictEqual(r.afterClear, [], `${at} clear`);
      }
      // What left the browser is exactly what the page recorded: nothing went around its fetch.
      deepStrictEqual(
        sentByBrowser,
        results.flatMap((r) => [
          ...r.first.requests,
          ...r.second.requests,
          ...r.corrupted.requests,
          ...r.interrupted.abortRequests,
          ...r.interrupted.requests,
        ]),
      );
      ok(/every load read what it should/.test(await run.page.textContent("#status") ?? ""));
    } finally {
      await Deno.remove(fixtureDir, { recursive: true });
    }
  },
  async (page, origin) => {
    fixtureDir = await Deno.makeTempDir({ prefix: "xpu-cache-fixture-" });
    let seed = 7;
    for (const [name, size] of SIZES) {
      const bytes = name === "config.json"
        ? new TextEncoder().encode('{"hidden_size": 64}')
        : Uint8Array.from({ length: size }, () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24);
      strictEqual(bytes.length, size);
      await Deno.writeFile(`${fixtureDir}/${name}`, bytes);
      const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
      expectedSha256[name] = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
    }
    const manifest = await manifestOfFiles(fixtureDir, SIZES.map(([name]) => name));
    await Deno.writeTextFile(`${fixtureDir}/manifest.json`, serializeManifest(manifest));
    const serve = staticHandler(fixtureDir);
    page.on("request", (request) => {
      const url = new URL(request.url());
      if (url.pathname.startsWith(FIXTURE)) {
        sentByBrowser.push({ path: url.pathname, range: request.headers().range ?? null });
      }
    });
    await page.route(`${origin}${FIXTURE}**`, async (route) => {
      const url = new URL(route.request().url());
      const request = new Request(`${origin}/${url.pathname.slice(FIXTURE.length)}`, {
        headers: route.request().headers(),
      });
      const response = await serve(request);
      await route.fulfill({
        status: response.status,
        headers: Object.fromEntries(response.headers),
        body: Buffer.from(await response.arrayBuffer()),
      });
    });
  },
);
