import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { staticHandler } from "../../examples/serve.ts";
import { serializeManifest, sha256Hex } from "./manifest.ts";
import { type CacheStore, memoryStore } from "./store.ts";
import { type CacheProgress, WeightCache, WeightCacheError } from "./weight_cache.ts";
import { directoryStore, manifestOfFiles } from "./directory.ts";

function randomBytes(length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i += 65536) crypto.getRandomValues(out.subarray(i, i + 65536));
  return out;
}

/** What a test server saw: each request's path and Range header. */
interface Seen {
  path: string;
  range: string | null;
}

/** Serves a model folder on port 0: three files and their manifest; `mode` bends its Range handling. */
async function withModel(
  fn: (ctx: {
    url: string;
    files: Map<string, Uint8Array>;
    seen: Seen[];
    dir: string;
    setMode: (m: "ranges" | "ignore-range" | "wrong-range") => void;
  }) => Promise<void>,
) {
  const dir = await Deno.makeTempDir();
  const files = new Map([
    ["config.json", new TextEncoder().encode('{"hidden_size": 64}')],
    ["model.safetensors", randomBytes(300_000)],
    ["extra/tokenizer.bin", randomBytes(70_001)],
  ]);
  await Deno.mkdir(`${dir}/extra`);
  for (const [name, bytes] of files) await Deno.writeFile(`${dir}/${name}`, bytes);
  await Deno.writeTextFile(`${dir}/manifest.json`, serializeManifest(await manifestOfFiles(dir, [...files.keys()])));
  const seen: Seen[] = [];
  let mode = "ranges";
  const serve = staticHandler(dir);
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (request) => {
    seen.push({ path: new URL(request.url).pathname, range: request.headers.get("range") });
    if (mode === "ranges") return serve(request);
    const headers = new Headers(request.headers);
    headers.delete("range");
    // "wrong-range" answers a range that does not start where the client asked.
    if (mode === "wrong-range" && request.headers.has("range")) headers.set("range", "bytes=0-");
    return serve(new Request(request.url, { headers }));
  });
  try {
    await fn({
      url: `http://127.0.0.1:${server.addr.port}/manifest.json`,
      files,
      seen,
      dir,
      setMode: (m) => mode = m,
    });
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
}

function assertFiles(got: Map<string, Uint8Array>, want: Map<string, Uint8Array>) {
  deepStrictEqual([...got.keys()], [...want.keys()]);
  for (const [name, bytes] of want) {
    ok(bytes.length === got.get(name)!.length && bytes.every((b, i) => b === got.get(name)![i]), name);
  }
}

Deno.test("first load downloads every file with progress in bytes; a pinned second load makes no request", async () => {
  await withModel(async ({ url, files, seen, dir }) => {
    const cache = new WeightCache(memoryStore());
    const progress: CacheProgress[] = [];
    const first = await cache.load(url, { onProgress: (p) => progress.push(p), partBytes: 64 * 1024 });
    assertFiles(first.files, files);
    const total = 19 + 300_000 + 70_001;
    deepStrictEqual(seen.map((s) => [s.path, s.range]), [
      ["/manifest.json", null],
      ["/config.json", null],
      ["/model.safetensors", null],
      ["/extra/tokenizer.bin", null],
    ]);
    strictEqual(
      first.key,
      await sha256Hex(await Deno.readFile(`${dir}/manifest.json`)),
      "keyed by the manifest's hash",
    );
    ok(progress.every((p, i) => p.total === total && (i === 0 || p.done >= progress[i - 1].done)), "done only grows");
    deepStrictEqual(progress.at(-1), { file: "extra/tokenizer.bin", done: total, total, fromNetwork: total });

    seen.length = 0;
    const progressAgain: CacheProgress[] = [];
    const second = await cache.load(url, { manifestSha256: first.key, onProgress: (p) => progressAgain.push(p) });
    assertFiles(second.files, files);
    strictEqual(seen.length, 0, "nothing was asked of the server");
    deepStrictEqual(progressAgain.at(-1), { file: "extra/tokenizer.bin", done: total, total, fromNetwork: 0 });

    const unpinned = await cache.load(url);
    assertFiles(unpinned.files, files);
    deepStrictEqual(seen.map((s) => s.path), ["/manifest.json"], "unpinned, only the manifest is fetched");
  });
});

/** Loads with an abort once `after` bytes have come from the network; returns the bytes that had. */
async function interruptedLoad(cache: WeightCache, url: string, after: number): Promise<number> {
  const controller = new AbortController();
  let atAbort = -1;
  await rejects(
    cache.load(url, {
      signal: controller.signal,
      partBytes: 16 * 1024,
      onProgress: (p) => {
        if (p.fromNetwork >= after && atAbort < 0) {
          atAbort = p.fromNetwork;
          controller.abort(new Error("stopped by the test"));
        }
      },
    }),
    /stopped by the test/,
  );
  return atAbort;
}

Deno.test("an interrupted download keeps what arrived and resumes with a Range from there", async () => {
  await withModel(async ({ url, files, seen }) => {
    const cache = new WeightCache(memoryStore());
    const atAbort = await interruptedLoad(cache, url, 100_000);
    const heldOfModel = atAbort - 19; // config.json came first, whole
    ok(heldOfModel > 0 && heldOfModel < 300_000, `stopped inside model.safetensors (${heldOfModel})`);
    const [listed] = await cache.list();
    deepStrictEqual(listed.files.map((f) => f.held), [19, heldOfModel, 0], "every byte that arrived was kept");

    seen.length = 0;
    let fromNetwork = 0;
    const resumed = await cache.load(url, { onProgress: (p) => fromNetwork = p.fromNetwork });
    assertFiles(resumed.files, files);
    deepStrictEqual(seen.map((s) => [s.path, s.range]), [
      ["/manifest.json", null],
      ["/model.safetensors", `bytes=${heldOfModel}-`],
      ["/extra/tokenizer.bin", null],
    ]);
    strictEqual(fromNetwork, 300_000 - heldOfModel + 70_001, "only the missing bytes came again");
  });
});

Deno.test("a server that ignores Range, or answers another range, restarts the file instead of splicing it", async () => {
  for (const mode of ["ignore-range", "wrong-range"] as const) {
    await withModel(async ({ url, files, seen, setMode }) => {
      const cache = new WeightCache(memoryStore());
      const atAbort = await interruptedLoad(cache, url, 50_000);
      ok(atAbort > 19);
      setMode(mode);
      seen.length = 0;
      let fromNetwork = 0;
      const again = await cache.load(url, { onProgress: (p) => fromNetwork = p.fromNetwork });
      assertFiles(again.files, files);
      const held = atAbort - 19;
      deepStrictEqual(
        seen.filter((s) => s.path === "/model.safetensors").map((s) => s.range),
        mode === "ignore-range" ? [`bytes=${held}-`] : [`bytes=${held}-`, null],
        `${mode}: asked for the rest; ${mode === "ignore-range" ? "took the whole file sent" : "asked again whole"}`,
      );
      strictEqual(fromNetwork, 300_000 + 70_001, `${mode}: the whole file came again`);
    });
  }
});

/** The stored parts of one file: keys naming it whose values are bigger than a state record. */
async function partsOf(store: CacheStore, name: string): Promise<string[]> {
  const keys = [];
  for (const key of await store.keys()) {
    if (key.endsWith(`/${name}`) && (await store.get(key))!.length > 1000) keys.push(key);
  }
  return keys;
}

Deno.test("a corrupted or missing part is detected by sha256, deleted and fetched again whole", async () => {
  await withModel(async ({ url, files, seen }) => {
    const store = memoryStore();
    const cache = new WeightCache(store);
    const { key } = await cache.load(url, { partBytes: 64 * 1024 });
    const [part] = await partsOf(store, "model.safetensors");
    const bytes = (await store.get(part))!;
    bytes[123] ^= 1;
    await store.put(part, bytes);

    seen.length = 0;
    const repaired = await cache.load(url, { manifestSha256: key });
    assertFiles(repaired.files, files);
    deepStrictEqual(seen.map((s) => [s.path, s.range]), [["/model.safetensors", null]]);

    const parts = await partsOf(store, "extra/tokenizer.bin");
    ok(parts.length >= 1);
    await store.delete(parts.at(-1)!);
    seen.length = 0;
    assertFiles((await cache.load(url, { manifestSha256: key })).files, files);
    deepStrictEqual(seen.map((s) => [s.path, s.range]), [["/extra/tokenizer.bin", null]]);
  });
});

Deno.test("a server whose file is not the manifest's: an integrity error, and nothing of it kept", async () => {
  await withModel(async ({ url, dir }) => {
    const cache = new WeightCache(memoryStore());
    const originalTokenizer = await Deno.readFile(`${dir}/extra/tokenizer.bin`);
    const changed = originalTokenizer.slice();
    changed[70_000] ^= 0xff;
    await Deno.writeFile(`${dir}/extra/tokenizer.bin`, changed);
    const error = await cache.load(url).then(() => null, (e) => e);
    ok(error instanceof WeightCacheError && error.reason === "integrity", String(error));
    ok(
      /extra\/tokenizer\.bin downloaded whole has sha256 [0-9a-f]{64}, the manifest says [0-9a-f]{64}/.test(
        error.message,
      ),
    );
    deepStrictEqual((await cache.list())[0].files.map((f) => f.held), [19, 300_000, 0]);

    await Deno.writeFile(`${dir}/extra/tokenizer.bin`, changed.subarray(0, 1000));
    await rejects(cache.load(url), /tokenizer\.bin sends 1000 bytes, the manifest says 70001/);

    // An unreadable part record is no record: the file is fetched again, not a crash.
    const stateKey = (await cache.store.keys()).find((k) => k.endsWith("/model.safetensors") && k.includes("state"))!;
    await cache.store.put(stateKey, new TextEncoder().encode("not json"));
    await Deno.writeFile(`${dir}/extra/tokenizer.bin`, originalTokenizer);
    const repaired = await cache.load(url);
    strictEqual(repaired.files.get("model.safetensors")!.length, 300_000);
  });
});

Deno.test("a full store: the error says how many more bytes the model needs and how many are free", async () => {
  await withModel(async ({ url }) => {
    const inner = memoryStore();
    let used = 0;
    const quota = 200_000;
    const store: CacheStore = {
      ...inner,
      kind: "memory",
      async put(key, bytes) {
        if (used + bytes.length > quota) throw new DOMException("over quota", "QuotaExceededError");
        used += bytes.length;
        await inner.put(key, bytes);
      },
      estimate: () => Promise.resolve({ usage: used, quota }),
    };
    const cache = new WeightCache(store);
    const error = await cache.load(url, { partBytes: 32 * 1024 }).then(() => null, (e) => e);
    ok(error instanceof WeightCacheError && error.reason === "quota", String(error));
    const held = (await cache.list())[0].files.reduce((sum, f) => sum + f.held, 0);
    ok(held > 100_000 && held < quota, `${held} bytes kept before the store filled`);
    const needed = 19 + 300_000 + 70_001 - held;
    strictEqual(error.needed, needed);
    strictEqual(error.available, quota - used);
    ok(error.message.includes(`the model needs ${needed} more bytes (370020 in all)`), error.message);
    ok(/^weight cache: no room to store model\.safetensors \(bytes \d+ to \d+\)/.test(error.message), error.message);
    ok(error.message.includes(`this origin has ${quota - used} bytes free (${used} used of a ${quota}-byte quota)`));

    const noEstimate = new WeightCache({ ...store, estimate: undefined });
    await rejects(noEstimate.load(url), /the memory store does not say how much room it has/);
  });
});

Deno.test("the directory store (Deno): a new process reads the model from disk, checks it, lists and clears it", async () => {
  await withModel(async ({ url, files, seen }) => {
    const dir = await Deno.makeTempDir();
    try {
      const first = await new WeightCache(await directoryStore(`${dir}/cache`)).load(url, { partBytes: 100_000 });
      seen.length = 0;
      const reopened = new WeightCache(await directoryStore(`${dir}/cache`));
      assertFiles((await reopened.load(url, { manifestSha256: first.key })).files, files);
      strictEqual(seen.length, 0, "read from disk alone");

      const onDisk = [];
      for await (const entry of Deno.readDir(`${dir}/cache`)) onDisk.push(entry.name);
      const part = onDisk.find((n) => n.endsWith(encodeURIComponent("/model.safetensors")) && n.includes("part"))!;
      const bytes = await Deno.readFile(`${dir}/cache/${part}`);
      bytes[0] ^= 1;
      await Deno.writeFile(`${dir}/cache/${part}`, bytes);
      assertFiles((await reopened.load(url, { manifestSha256: first.key })).files, files);
      deepStrictEqual(seen.map((s) => s.path), ["/model.safetensors"]);

      deepStrictEqual(
        (await reopened.list()).map((m) => [m.key, m.held, m.files.map((f) => f.name)]),
        [[first.key, 370_020, ["config.json", "model.safetensors", "extra/tokenizer.bin"]]],
      );
      await reopened.clear(first.key);
      deepStrictEqual(await reopened.list(), []);
      deepStrictEqual([...Deno.readDirSync(`${dir}/cache`)], [], "nothing left on disk");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
});

Deno.test("list and clear: models kept under their manifest's key, a new version beside the old", async () => {
  await withModel(async ({ url, dir }) => {
    const cache = new WeightCache(memoryStore());
    const old = await cache.load(url);
    await Deno.writeTextFile(`${dir}/config.json`, '{"hidden_size": 128}');
    await Deno.writeTextFile(`${dir}/manifest.json`, serializeManifest(await manifestOfFiles(dir, ["config.json"])));
    const next = await cache.load(url);
    ok(next.key !== old.key);
    strictEqual(new TextDecoder().decode(next.files.get("config.json")), '{"hidden_size": 128}', "never the old file");
    deepStrictEqual((await cache.list()).map((m) => m.key).sort(), [old.key, next.key].sort());
    await cache.clear(old.key);
    deepStrictEqual((await cache.list()).map((m) => [m.key, m.held]), [[next.key, 20]]);
    await cache.clear();
    deepStrictEqual(await cache.store.keys(), []);
  });
});

Deno.test("network failures are WeightCacheError 'network' naming the URL, never a raw TypeError", async () => {
  /** The error `fn` rejects with. */
  const errorOf = async (fn: () => Promise<unknown>) => {
    try {
      await fn();
    } catch (e) {
      return e;
    }
    throw new Error("did not reject");
  };
  // Nothing listens on the port: the manifest's fetch rejects (connection refused).
  const listener = Deno.listen({ port: 0, hostname: "127.0.0.1" });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const refused = await errorOf(() => new WeightCache(memoryStore()).load(`http://127.0.0.1:${port}/manifest.json`));
  ok(refused instanceof WeightCacheError && refused.reason === "network", String(refused));
  ok(refused.message.startsWith(`weight cache: GET http://127.0.0.1:${port}/manifest.json failed (TypeError: `));
  // A fetch that rejects for a file (a blocked request, a dropped connection) names that file's URL.
  await withModel(async ({ url }) => {
    const flaky: typeof fetch = (input, init) =>
      String(input).endsWith("model.safetensors")
        ? Promise.reject(new TypeError("Failed to fetch"))
        : fetch(input, init);
    const e = await errorOf(() => new WeightCache(memoryStore()).load(url, { fetch: flaky }));
    ok(e instanceof WeightCacheError && e.reason === "network", String(e));
    strictEqual(
      e.message,
      `weight cache: GET ${new URL("model.safetensors", url)} failed (TypeError: Failed to fetch)`,
    );
  });
  // A body that breaks off after some bytes: what arrived is kept, and the next load finishes it.
  await withModel(async ({ url, files }) => {
    const store = memoryStore();
    const broken: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      if (!String(input).endsWith("model.safetensors")) return response;
      const reader = response.body!.getReader();
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done, value } = await reader.read();
          if (done || sent > 100_000) {
            await reader.cancel();
            controller.error(new TypeError("error reading a body from connection"));
            return;
          }
          sent += value.length;
          controller.enqueue(value);
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const e = await errorOf(() => new WeightCache(store).load(url, { fetch: broken, partBytes: 16 * 1024 }));
    ok(e instanceof WeightCacheError && e.reason === "network", String(e));
    ok(
      /model\.safetensors broke off at byte \d+ of 300000 \(TypeError: error reading a body from connection\)/.test(
        e.message,
      ),
      e.message,
    );
    const again = await new WeightCache(store).load(url);
    assertFiles(again.files, files);
  });
});

Deno.test("a manifest that is not one is a WeightCacheError; a bad URL, option or store is named", async () => {
  const cache = new WeightCache(memoryStore());
  const answering = (body: string) => (() => Promise.resolve(new Response(body))) as unknown as typeof fetch;
  await rejects(
    () => cache.load("http://127.0.0.1:9/m.json", { fetch: answering("{not json") }),
    (e) =>
      e instanceof WeightCacheError && e.reason === "manifest" && /the manifest at .* cannot be read/.test(e.message),
  );
  await rejects(() => cache.load("::", { fetch: answering("{}") }), /weight cache: manifestUrl must be a URL/);
  await rejects(
    () => cache.load("http://127.0.0.1:9/m.json", { partbytes: 8 } as never),
    /weight cache: unknown option "partbytes"/,
  );
  ok(
    String((() => {
      try {
        new WeightCache(undefined as never);
      } catch (e) {
        return e;
      }
    })()).includes("weight cache: store must be a CacheStore"),
  );
});
