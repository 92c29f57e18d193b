/**
 * The weight cache: a model's files downloaded once and kept, in a page (Cache API or IndexedDB)
 * or a Deno program (a directory), checked against the model's manifest (`manifest.ts`).
 *
 * What it does on {@linkcode WeightCache.load}:
 * - Everything is kept under the manifest's SHA-256 (the SHA-256 of its raw bytes), so a new
 *   version of a model never reads a file of an old one. Give `manifestSha256` (the version pinned
 *   in the page's code) and a second load reads nothing from the network, not even the manifest;
 *   without it the manifest is fetched every time (to see a new version) and the files are not.
 * - A file is stored as parts of `partBytes` as it streams in. A download that stops (an abort,
 *   a lost connection, a closed tab) keeps what arrived, and the next load asks for the rest with
 *   `Range: bytes=<held>-`. A server that ignores the range (answers 200 with the whole file) or
 *   answers some other range is not trusted to line up: the parts are dropped and the file starts
 *   over from that answer, never spliced.
 * - A file's SHA-256 (of the assembled bytes, `crypto.subtle.digest`) is checked against the
 *   manifest every time it is read, before it is returned: a file corrupted in the store is
 *   deleted and fetched again; one that is still wrong after a fresh download is an error (the
 *   server's file is not the manifest's).
 * - A store that is full (`QuotaExceededError`, or `ENOSPC` on disk) becomes a
 *   {@linkcode WeightCacheError} saying how many more bytes the model needs and how many the
 *   origin has free (`navigator.storage.estimate()` where present).
 * - A network failure (no connection, a refused or reset one, a body that breaks off) is a
 *   {@linkcode WeightCacheError} "network" naming the URL, never fetch's bare TypeError; what arrived
 *   before it is kept.
 * - Progress is reported in bytes held / bytes in all, and bytes taken from the network.
 *
 * Files are downloaded one after another and each is returned whole (a `Uint8Array`), so the
 * largest file must fit in memory once; {@linkcode WeightCache.list} and
 * {@linkcode WeightCache.clear} show and remove what is kept.
 *
 * @module
 */

import { type ManifestFile, manifestKey, parseManifest, sha256Hex, type WeightManifest } from "./manifest.ts";
import type { CacheStore } from "./store.ts";

/** Progress of a load, in bytes. */
export interface CacheProgress {
  /** The file being read or downloaded. */
  file: string;
  /** Bytes held so far (from the store and from the network) of all the model's files. */
  done: number;
  /** Bytes of all the model's files. */
  total: number;
  /** Bytes taken from the network by this load so far. */
  fromNetwork: number;
}

/** Options of {@linkcode WeightCache.load}. */
export interface CacheLoadOptions {
  /** The manifest's expected SHA-256 (hex): with it, a cached model loads with no request at all. */
  manifestSha256?: string;
  /** Called as bytes arrive (and once per file read from the store). */
  onProgress?: (progress: CacheProgress) => void;
  /** Stops the load; what has arrived is kept for the next one. */
  signal?: AbortSignal;
  /** The fetch to use (default `globalThis.fetch`). */
  fetch?: typeof fetch;
  /** Bytes per stored part (default 8 MiB): the most a resumed download can lose. */
  partBytes?: number;
}

/** A loaded model: its key, its manifest and each file's verified bytes. */
export interface CachedModel {
  /** The manifest's SHA-256, under which the files are kept. */
  key: string;
  /** The manifest read. */
  manifest: WeightManifest;
  /** Each file's bytes, by manifest name. */
  files: Map<string, Uint8Array>;
}

/** What {@linkcode WeightCache.list} shows of one kept model. */
export interface CachedModelInfo {
  /** The model's manifest key. */
  key: string;
  /** Each manifest file with the bytes held of it (equal to `size` when complete). */
  files: (ManifestFile & { held: number })[];
  /** Bytes held of all its files. */
  held: number;
}

/** Why a load failed: `"quota"` (the store is full), `"integrity"`, `"network"` or `"manifest"`. */
export type WeightCacheErrorReason = "quota" | "integrity" | "network" | "manifest";

/**
 * A weight cache failure with its reason; a quota error carries the bytes needed and free.
 *
 * @example
 * ```ts
 * import { memoryStore, WeightCache, WeightCacheError } from "@xpu/ops/llm";
 * const cache = new WeightCache(memoryStore());
 * const offline = () => Promise.resolve(new Response("", { status: 503 })); // a server that is down
 * try {
 *   await cache.load("https://example.com/model/manifest.json", { fetch: offline });
 * } catch (e) {
 *   if (!(e instanceof WeightCacheError)) throw e;
 *   e.reason; // "network"
 * }
 * ```
 */
export class WeightCacheError extends Error {
  /**
   * A failure of the weight cache.
   *
   * @param reason what kind of failure
   * @param message the whole message
   * @param needed for `"quota"`: bytes the model still needs
   * @param available for `"quota"`: bytes the origin has free, where known
   */
  constructor(
    readonly reason: WeightCacheErrorReason,
    message: string,
    readonly needed?: number,
    readonly available?: number,
  ) {
    super(message);
    this.name = "WeightCacheError";
  }
}

const DEFAULT_PART_BYTES = 8 << 20;

/** An error's message, or the value itself. */
const errorText = (e: unknown) => e instanceof Error ? `${e.name}: ${e.message}` : String(e);

/**
 * Runs a request: fetch rejects with a bare TypeError when the network fails (no connection, a
 * refused or reset one, a blocked request), which becomes a WeightCacheError "network" naming the
 * URL; an abort stays the signal's reason, and a WeightCacheError passes through.
 */
async function networkCall<T>(url: URL, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (e instanceof WeightCacheError) throw e;
    if (signal?.aborted) throw signal.reason;
    throw new WeightCacheError("network", `weight cache: GET ${url} failed (${errorText(e)})`);
  }
}
/** The keys {@link CacheLoadOptions} may carry. */
const LOAD_OPTIONS = ["manifestSha256", "onProgress", "signal", "fetch", "partBytes"];

/** Refuses load options that are not an object, carry an unknown key (a misspelt one would be ignored) or a fetch that is not a function. */
function checkLoadOptions(options: CacheLoadOptions): void {
  if (typeof options !== "object" || options === null) {
    throw new Error(`weight cache: options must be an object, got ${String(options)}`);
  }
  const unknown = Object.keys(options).filter((k) =>
    !LOAD_OPTIONS.includes(k) && (options as Record<string, unknown>)[k] !== undefined
  );
  if (unknown.length > 0) {
    throw new Error(
      `weight cache: unknown option ${unknown.map((k) => `"${k}"`).join(", ")} (expected ${LOAD_OPTIONS.join(", ")})`,
    );
  }
  for (const key of ["fetch", "onProgress"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new Error(`weight cache: ${key} must be a function, got ${typeof options[key]}`);
    }
  }
}

/** The manifest's URL: absolute, or relative to the page; anything else is refused naming manifestUrl. */
function manifestLocation(manifestUrl: string | URL): URL {
  const base = (globalThis as { location?: { href: string } }).location?.href;
  if (typeof manifestUrl === "string" || manifestUrl instanceof URL) {
    try {
      return new URL(manifestUrl, base);
    } catch {
      // refused below
    }
  }
  const given = typeof manifestUrl === "string" ? JSON.stringify(manifestUrl) : String(manifestUrl);
  throw new Error(
    `weight cache: manifestUrl must be a URL (absolute${base ? ", or relative to the page" : ""}), got ${given}`,
  );
}

const manifestEntry = (key: string) => `${key}/manifest.json`;
const stateEntry = (key: string, name: string) => `${key}/state/${name}`;
const partEntry = (key: string, name: string, index: number) => `${key}/part/${index}/${name}`;

function isQuotaError(e: unknown): boolean {
  const error = e as { name?: string; code?: string } | null;
  return error?.name === "QuotaExceededError" || error?.code === "ENOSPC";
}

/** One load's running totals, shared by the files it reads. */
interface LoadRun {
  key: string;
  manifest: WeightManifest;
  manifestUrl: URL;
  options: CacheLoadOptions;
  fetch: typeof fetch;
  partBytes: number;
  held: Map<string, number>;
  fromNetwork: number;
}

/**
 * A cache of models' files over one store.
 *
 * @example
 * ```ts
 * import { buildManifest, memoryStore, serializeManifest, WeightCache } from "@xpu/ops/llm";
 * // In a page: `new WeightCache(await browserStore())` and the model's manifest URL. Here the server is a
 * // fetch answering from memory, for a one-file model: its manifest and the file beside it.
 * const weights = new Uint8Array(4096).fill(7);
 * const manifest = serializeManifest(await buildManifest([{ name: "model.safetensors", bytes: weights }]));
 * const served: Record<string, BodyInit> = { "/model/manifest.json": manifest, "/model/model.safetensors": weights };
 * const server = (url: string | URL | Request) =>
 *   Promise.resolve(new Response(served[new URL(url instanceof Request ? url.url : url).pathname]));
 * const cache = new WeightCache(memoryStore());
 * const model = await cache.load("https://host/model/manifest.json", {
 *   fetch: server,
 *   onProgress: ({ done, total }) => console.log(`${done} / ${total} bytes`),
 * });
 * model.files.get("model.safetensors")!.length; // 4096; a second load reads the store, not the server
 * ```
 */
export class WeightCache {
  /**
   * A cache over one store.
   *
   * @param store where the bytes are kept
   */
  constructor(readonly store: CacheStore) {
    const methods = ["get", "put", "keys", "delete"] as const;
    if (store === null || typeof store !== "object" || methods.some((m) => typeof store[m] !== "function")) {
      throw new Error(
        `weight cache: store must be a CacheStore ({ ${methods.join(", ")} }: memoryStore(), browserStore()), got ${
          store === null || typeof store !== "object" ? String(store) : "an object without them"
        }`,
      );
    }
  }

  /**
   * Loads a model's files: from the store where held and intact, from the network otherwise.
   *
   * @param manifestUrl the manifest's URL; file names are relative to it
   * @param options pinned manifest hash, progress, abort signal, fetch, part size
   * @returns the key, manifest and verified bytes of every file
   * @throws WeightCacheError (quota, integrity, network, manifest); the signal's reason when aborted
   */
  async load(manifestUrl: string | URL, options?: CacheLoadOptions): Promise<CachedModel> {
    options ??= {};
    checkLoadOptions(options);
    const url = manifestLocation(manifestUrl);
    const fetchFn = options.fetch ?? globalThis.fetch.bind(globalThis);
    const partBytes = options.partBytes ?? DEFAULT_PART_BYTES;
    if (!Number.isSafeInteger(partBytes) || partBytes < 1) {
      throw new Error(`weight cache: partBytes must be a positive integer, got ${partBytes}`);
    }
    const { key, manifest } = await this.#manifest(url, options.manifestSha256, fetchFn, options.signal);
    const held = new Map<string, number>();
    for (const file of manifest.files) held.set(file.name, await this.#heldBytes(key, file.name));
    const run: LoadRun = { key, manifest, manifestUrl: url, options, fetch: fetchFn, partBytes, held, fromNetwork: 0 };
    const files = new Map<string, Uint8Array>();
    for (const file of manifest.files) files.set(file.name, await this.#file(run, file));
    return { key, manifest, files };
  }

  /**
   * What is kept: each model (by manifest key) with the bytes held of each of its files.
   *
   * @returns the models kept
   */
  async list(): Promise<CachedModelInfo[]> {
    const models: CachedModelInfo[] = [];
    for (const entry of await this.store.keys()) {
      const key = /^([0-9a-f]{64})\/manifest\.json$/.exec(entry)?.[1];
      const bytes = key ? await this.store.get(entry) : undefined;
      if (!key || !bytes) continue;
      const files = await Promise.all(
        parseManifest(bytes).files.map(async (f) => ({ ...f, held: await this.#heldBytes(key, f.name) })),
      );
      models.push({ key, files, held: files.reduce((sum, f) => sum + f.held, 0) });
    }
    return models;
  }

  /**
   * Removes one model (by its key) or everything this cache keeps.
   *
   * @param key a model's manifest key; all models when absent
   * @returns once removed
   */
  async clear(key?: string): Promise<void> {
    for (const entry of await this.store.keys()) {
      if (key === undefined || entry.startsWith(`${key}/`)) await this.store.delete(entry);
    }
  }

  async #manifest(url: URL, pinned: string | undefined, fetchFn: typeof fetch, signal?: AbortSignal) {
    if (pinned !== undefined && !/^[0-9a-f]{64}$/.test(pinned)) {
      throw new Error(`weight cache: manifestSha256 must be 64 lowercase hex digits, got ${pinned}`);
    }
    let bytes = pinned ? await this.store.get(manifestEntry(pinned)) : undefined;
    const stored = bytes !== undefined && await manifestKey(bytes) === pinned;
    if (!stored) {
      bytes = await networkCall(url, signal, async () => {
        const response = await fetchFn(url, { signal });
        if (!response.ok) throw new WeightCacheError("network", `weight cache: GET ${url} answered ${response.status}`);
        return new Uint8Array(await response.arrayBuffer());
      });
    }
    const key = await manifestKey(bytes!);
    if (pinned && key !== pinned) {
      throw new WeightCacheError(
        "manifest",
        `weight cache: the manifest at ${url} has sha256 ${key}, expected ${pinned}`,
      );
    }
    let manifest: WeightManifest;
    try {
      manifest = parseManifest(bytes!);
    } catch (e) {
      throw new WeightCacheError(
        "manifest",
        `weight cache: the manifest at ${url} cannot be read: ${(e as Error).message}`,
      );
    }
    if (!stored) await this.#put(null, manifestEntry(key), bytes!, "the manifest");
    return { key, manifest };
  }

  /** The sizes of a file's stored parts, in order; none when the record is absent or unreadable. */
  async #parts(key: string, name: string): Promise<number[]> {
    const state = await this.store.get(stateEntry(key, name));
    try {
      const parts = state ? JSON.parse(new TextDecoder().decode(state)) : [];
      return Array.isArray(parts) && parts.every((n) => Number.isSafeInteger(n) && n > 0) ? parts : [];
    } catch {
      return [];
    }
  }

  async #heldBytes(key: string, name: string): Promise<number> {
    return (await this.#parts(key, name)).reduce((sum, n) => sum + n, 0);
  }

  async #drop(run: LoadRun, name: string) {
    const parts = await this.#parts(run.key, name);
    await this.store.delete(stateEntry(run.key, name));
    for (let i = 0; i < parts.length; i++) await this.store.delete(partEntry(run.key, name, i));
    run.held.set(name, 0);
  }

  /** A put whose quota error names the bytes the model still needs and the bytes free. */
  async #put(run: LoadRun | null, entry: string, bytes: Uint8Array, what: string) {
    try {
      await this.store.put(entry, bytes);
    } catch (e) {
      if (!isQuotaError(e)) throw e;
      // What is stored (not what has arrived: the part that failed is not stored).
      let total = bytes.length, stored = 0;
      if (run) {
        total = run.manifest.files.reduce((sum, f) => sum + f.size, 0);
        for (const f of run.manifest.files) stored += await this.#heldBytes(run.key, f.name);
      }
      const needed = total - stored;
      const estimate = await this.store.estimate?.().catch(() => undefined);
      const free = estimate?.quota !== undefined && estimate.usage !== undefined
        ? estimate.quota - estimate.usage
        : undefined;
      const room = free === undefined
        ? `the ${this.store.kind} store does not say how much room it has`
        : `this origin has ${free} bytes free (${estimate!.usage} used of a ${estimate!.quota}-byte quota)`;
      throw new WeightCacheError(
        "quota",
        `weight cache: no room to store ${what}: the model needs ${needed} more bytes ` +
          `(${total} in all); ${room}`,
        needed,
        free,
      );
    }
  }

  #report(run: LoadRun, file: string) {
    const done = [...run.held.values()].reduce((sum, n) => sum + n, 0);
    const total = run.manifest.files.reduce((sum, f) => sum + f.size, 0);
    run.options.onProgress?.({ file, done, total, fromNetwork: run.fromNetwork });
  }

  /** One file, verified: read from the store, downloaded (or finished), or fetched again after a mismatch. */
  async #file(run: LoadRun, file: ManifestFile): Promise<Uint8Array> {
    let fresh = false;
    for (;;) {
      if (run.held.get(file.name)! > file.size) await this.#drop(run, file.name);
      if (run.held.get(file.name)! < file.size) {
        fresh = run.held.get(file.name) === 0;
        await this.#download(run, file);
      }
      const bytes = await this.#assemble(run.key, file);
      this.#report(run, file.name);
      const sha256 = bytes ? await sha256Hex(bytes) : "(a part is missing)";
      if (bytes && sha256 === file.sha256) return bytes;
      await this.#drop(run, file.name);
      if (fresh) {
        throw new WeightCacheError(
          "integrity",
          `weight cache: ${file.name} downloaded whole has sha256 ${sha256}, the manifest says ${file.sha256}`,
        );
      }
    }
  }

  async #assemble(key: string, file: ManifestFile): Promise<Uint8Array | null> {
    const out = new Uint8Array(file.size);
    let offset = 0;
    const parts = await this.#parts(key, file.name);
    for (let i = 0; i < parts.length; i++) {
      const part = await this.store.get(partEntry(key, file.name, i));
      if (!part || part.length !== parts[i] || offset + part.length > file.size) return null;
      out.set(part, offset);
      offset += part.length;
    }
    return offset === file.size ? out : null;
  }

  /** Downloads the rest of a file from the bytes held, storing parts as they fill. */
  async #download(run: LoadRun, file: ManifestFile): Promise<void> {
    const url = new URL(file.name, run.manifestUrl);
    const held = run.held.get(file.name)!;
    const headers: HeadersInit = held > 0 ? { range: `bytes=${held}-` } : {};
    const response = await networkCall(
      url,
      run.options.signal,
      () => run.fetch(url, { headers, signal: run.options.signal }),
    );
    const contentRange = response.headers.get("content-range");
    const resumed = held > 0 && response.status === 206 &&
      contentRange === `bytes ${held}-${file.size - 1}/${file.size}`;
    if (!resumed && response.status !== 200) {
      await response.body?.cancel();
      // A range the server would not give (416, or another range) is retried whole, once.
      if (held > 0 && (response.status === 206 || response.status === 416)) {
        await this.#drop(run, file.name);
        return this.#download(run, file);
      }
      throw new WeightCacheError("network", `weight cache: GET ${url} answered ${response.status}`);
    }
    if (!resumed && held > 0) await this.#drop(run, file.name); // the server ignored the range: start over
    const start = resumed ? held : 0;
    // A compressed body's Content-Length counts the compressed bytes; only a plain one is checked early.
    const encoded = (response.headers.get("content-encoding") ?? "identity") !== "identity";
    const length = encoded ? null : response.headers.get("content-length");
    if (length !== null && Number(length) !== file.size - start) {
      await response.body?.cancel();
      throw new WeightCacheError(
        "integrity",
        `weight cache: ${url} sends ${Number(length) + start} bytes, the manifest says ${file.size}`,
      );
    }
    const parts = await this.#parts(run.key, file.name);
    let received = start;
    let pending: Uint8Array[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const part = new Uint8Array(pendingBytes);
      let offset = 0;
      for (const chunk of pending) part.set(chunk, (offset += chunk.length) - chunk.length);
      pending = [];
      pendingBytes = 0;
      // The part first, then the state naming it: a part without a state entry is overwritten next time.
      const what = `${file.name} (bytes ${received - part.length} to ${received})`;
      await this.#put(run, partEntry(run.key, file.name, parts.length), part, what);
      parts.push(part.length);
      await this.#put(run, stateEntry(run.key, file.name), new TextEncoder().encode(JSON.stringify(parts)), what);
    };
    const reader = response.body!.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received += value.length;
        if (received > file.size) {
          throw new WeightCacheError(
            "integrity",
            `weight cache: ${url} sends more than the manifest's ${file.size} bytes`,
          );
        }
        pending.push(value);
        pendingBytes += value.length;
        run.fromNetwork += value.length;
        if (pendingBytes >= run.partBytes) await flush();
        run.held.set(file.name, received);
        this.#report(run, file.name);
      }
    } catch (e) {
      if (e instanceof WeightCacheError) throw e;
      await flush(); // keep what arrived before the abort or the lost connection
      if (run.options.signal?.aborted) throw run.options.signal.reason;
      throw new WeightCacheError(
        "network",
        `weight cache: ${url} broke off at byte ${received} of ${file.size} (${errorText(e)}); what arrived is ` +
          `kept and the next load asks for the rest`,
      );
    }
    await flush();
    if (received !== file.size) {
      throw new WeightCacheError("network", `weight cache: ${url} ended at byte ${received} of ${file.size}`);
    }
  }
}
