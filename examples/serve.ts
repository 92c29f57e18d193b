/**
 * The static server for the example pages and the weights they load. A CLI (Deno):
 *
 * ```sh
 * deno task serve [--port 8000] [--root .]
 * ```
 *
 * It serves the files under `root` with byte ranges (`Range: bytes=a-b`, `a-`, `-n` give 206 with
 * `Content-Range`; a range past the end gives 416), so a page can resume a download, and
 * `/bundle/<subpath>.js`: the package's export `<subpath>` (`mod` for `.`, `ops/softmax`,
 * `harness`, ...) bundled for the browser by esbuild, as esm.sh serves a JSR package to a page.
 * Paths that leave `root` are refused; a directory named without its trailing slash is redirected
 * (301) to the slash's URL. `/` and `/examples/`, where no `index.html` is, list the example pages
 * ({@link examplesIndex}), with the browser flags WebGPU needs.
 *
 * @module
 */

import * as esbuild from "esbuild";
import { parseArgs } from "node:util";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".wgsl": "text/plain; charset=utf-8",
};

/** A parsed `Range` header: the inclusive byte range to send, or `"unsatisfiable"`. */
export type ByteRange = { start: number; end: number } | "unsatisfiable";

/**
 * Parses a single-range `Range` header against a file size (RFC 9110 §14.1.2).
 *
 * @param header the header's value, e.g. `bytes=100-199`
 * @param size the file's size in bytes
 * @returns the inclusive range, `"unsatisfiable"`, or null when the header is absent or not a
 *   single byte range (the whole file is then sent, as the RFC allows)
 *
 * @example
 * ```ts
 * import { parseRange } from "./serve.ts";
 * parseRange("bytes=100-199", 1000); // { start: 100, end: 199 }
 * parseRange("bytes=-100", 1000); // { start: 900, end: 999 }: the last 100 bytes
 * parseRange("bytes=1000-", 1000); // "unsatisfiable": a 416
 * parseRange(null, 1000); // null: the whole file
 * ```
 */
export function parseRange(header: string | null, size: number): ByteRange | null {
  const match = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!match || (match[1] === "" && match[2] === "")) return null;
  if (match[1] === "") {
    const suffix = Number(match[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  const end = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  if (start >= size || end < start) return "unsatisfiable";
  return { start, end };
}

/**
 * Bundles one of the package's exports for the browser.
 *
 * @param root the package root (holding deno.json)
 * @param subpath `mod` for `.`, otherwise the export's name without `./`
 * @returns the ESM bundle, or null when the package has no such export
 *
 * @example
 * ```ts
 * import * as esbuild from "esbuild";
 * import { bundleExport } from "./serve.ts";
 * const js = await bundleExport(".", "ops/softmax"); // run from the repository root
 * await bundleExport(".", "ops/nothing"); // null
 * await esbuild.stop(); // esbuild's service process would otherwise keep running
 * ```
 */
export async function bundleExport(root: string, subpath: string): Promise<string | null> {
  const config = JSON.parse(await Deno.readTextFile(`${root}/deno.json`));
  const entry = (config.exports as Record<string, string>)[subpath === "mod" ? "." : `./${subpath}`];
  if (!entry) return null;
  const result = await esbuild.build({
    entryPoints: [`${root}/${entry}`],
    bundle: true,
    platform: "browser",
    format: "esm",
    write: false,
    logLevel: "silent",
  });
  return result.outputFiles[0].text;
}

/**
 * An HTML page listing the example pages under `<root>/examples/` (each directory with an
 * `index.html`, named by its `<title>`), linked relative to `/examples/`, with what a browser needs
 * to run them.
 *
 * @param root the directory served
 * @returns the page
 *
 * @example
 * ```ts
 * import { examplesIndex } from "./serve.ts";
 * const html = await examplesIndex("."); // run from the repository root
 * html.includes('href="/examples/chat/"'); // true
 * ```
 */
export async function examplesIndex(root: string): Promise<string> {
  const pages: { dir: string; title: string }[] = [];
  for await (const entry of Deno.readDir(`${root}/examples`)) {
    if (!entry.isDirectory) continue;
    const html = await Deno.readTextFile(`${root}/examples/${entry.name}/index.html`).catch(() => null);
    if (html === null) continue;
    const title = /<title>([^<]*)<\/title>/.exec(html)?.[1] ?? entry.name;
    pages.push({ dir: entry.name, title });
  }
  pages.sort((a, b) => a.dir.localeCompare(b.dir));
  const items = pages.map(({ dir, title }) => `<li><a href="/examples/${dir}/">${dir}/</a>: ${title}</li>`);
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>@xpu/ops: example pages</title></head>
<body>
<h1>@xpu/ops: example pages</h1>
<ul>
${items.join("\n")}
</ul>
<p>They need WebGPU: Chrome or Edge (on Linux started with <code>--enable-unsafe-webgpu --enable-features=Vulkan</code>),
Safari 26, or Firefox with WebGPU enabled. The package is served bundled at <code>/bundle/&lt;subpath&gt;.js</code>.</p>
</body>
</html>
`;
}

/**
 * The request handler: files under `root` with ranges, `/bundle/<subpath>.js`, and an index of the
 * example pages at `/` and `/examples/`.
 *
 * @param root the directory served
 * @returns a handler for `Deno.serve`
 *
 * @example
 * ```ts
 * import { staticHandler } from "./serve.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${root}/hello.txt`, "hello, world");
 * const handle = staticHandler(root); // in practice: Deno.serve({ port: 8000 }, staticHandler("."))
 * const response = await handle(new Request("http://localhost/hello.txt", { headers: { range: "bytes=0-4" } }));
 * response.status; // 206
 * await response.text(); // "hello"
 * await Deno.remove(root, { recursive: true });
 * ```
 */
export function staticHandler(root: string): (request: Request) => Promise<Response> {
  const base = Deno.realPathSync(root);
  return async (request) => {
    const url = new URL(request.url);
    const path = decodeURIComponent(url.pathname);
    const bundled = /^\/bundle\/(.+)\.js$/.exec(path);
    if (bundled) {
      const text = await bundleExport(base, bundled[1]);
      if (text === null) return new Response(`no export ${bundled[1]}\n`, { status: 404 });
      return new Response(text, { headers: { "content-type": CONTENT_TYPES[".js"], "cache-control": "no-cache" } });
    }
    let file: string;
    try {
      file = Deno.realPathSync(`${base}${path.endsWith("/") ? `${path}index.html` : path}`);
    } catch {
      if ((path === "/" || path === "/examples/") && await isDirectory(`${base}/examples`)) {
        return new Response(await examplesIndex(base), { headers: { "content-type": CONTENT_TYPES[".html"] } });
      }
      return new Response("not found\n", { status: 404 });
    }
    if (file !== base && !file.startsWith(`${base}/`)) return new Response("outside the root\n", { status: 403 });
    const info = await Deno.stat(file);
    // A directory named without its slash (`/examples/chat`) moves to the slash's URL, as static servers
    // do, so that the page's relative URLs (`./main.js`) resolve inside it.
    if (info.isDirectory && !path.endsWith("/")) {
      return new Response(null, { status: 301, headers: { location: `${url.pathname}/${url.search}` } });
    }
    if (!info.isFile) return new Response("not a file\n", { status: 404 });
    const extension = /\.[^./]+$/.exec(file)?.[0] ?? "";
    const headers = new Headers({
      "content-type": CONTENT_TYPES[extension] ?? "application/octet-stream",
      "accept-ranges": "bytes",
      "cache-control": "no-cache",
    });
    const range = parseRange(request.headers.get("range"), info.size);
    if (range === "unsatisfiable") {
      headers.set("content-range", `bytes */${info.size}`);
      return new Response(null, { status: 416, headers });
    }
    const { start, end } = range ?? { start: 0, end: info.size - 1 };
    const length = Math.max(0, end - start + 1);
    headers.set("content-length", String(length));
    if (range) headers.set("content-range", `bytes ${start}-${end}/${info.size}`);
    if (request.method === "HEAD" || length === 0) {
      return new Response(null, { status: range ? 206 : 200, headers });
    }
    const handle = await Deno.open(file);
    await handle.seek(start, Deno.SeekMode.Start);
    let left = length;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const chunk = new Uint8Array(Math.min(left, 1 << 20));
        const read = await handle.read(chunk);
        if (read === null || read === 0) {
          handle.close();
          controller.error(new Error(`${file} ended before byte ${end}`));
          return;
        }
        controller.enqueue(chunk.subarray(0, read));
        left -= read;
        if (left === 0) {
          handle.close();
          controller.close();
        }
      },
      cancel() {
        handle.close();
      },
    });
    return new Response(body, { status: range ? 206 : 200, headers });
  };
}

const USAGE = `usage: deno task serve [--port 8000] [--root .]     (deno run -A examples/serve.ts)
  Serves the example pages at http://127.0.0.1:<port>/ (an index of them at / and /examples/), the
  package bundled for the browser at /bundle/<subpath>.js, and files with byte ranges. Open the pages
  in Chrome or Edge; Chromium needs --enable-unsafe-webgpu (and on Linux --enable-features=Vulkan).
  --help   this text`;

async function isDirectory(path: string): Promise<boolean> {
  return await Deno.stat(path).then((s) => s.isDirectory, () => false);
}

if (import.meta.main) {
  let values: { port?: string; root?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: Deno.args,
      options: {
        port: { type: "string", default: "8000" },
        root: { type: "string", default: "." },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    console.error(`serve: ${(e as Error).message} (--help lists the options)`);
    Deno.exit(2);
  }
  if (values.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`serve: --port must be an integer in [0, 65535], got ${JSON.stringify(values.port)}`);
    Deno.exit(2);
  }
  const root = values.root ?? ".";
  Deno.serve({
    port,
    hostname: "127.0.0.1",
    onListen: ({ port }) =>
      console.log(`serving ${Deno.realPathSync(root)} at http://127.0.0.1:${port}/ (the example pages: /examples/)`),
  }, staticHandler(root));
}
