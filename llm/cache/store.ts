/**
 * Where the weight cache keeps its bytes: a small key-value contract (`get`, `put`, `delete`,
 * `keys`) with one implementation per place, so the download, resume and integrity logic
 * (`weight_cache.ts`) is written once and tested on the in-memory store.
 *
 * - {@linkcode cacheApiStore}: the Cache API (`caches`), present in pages served over https or
 *   from localhost. Each value is a `Response` under a made-up URL on the reserved `.invalid`
 *   domain, so it never collides with the page's own requests.
 * - {@linkcode indexedDbStore}: IndexedDB, for pages without the Cache API (plain http on a LAN
 *   address is not a secure context and has no `caches`).
 * - {@linkcode memoryStore}: a `Map`, for tests and for programs that want no persistence.
 * - A directory on disk, for Deno: `directoryStore` in `@xpu/ops/llm/cache/directory`.
 *
 * A store reports how much room its origin has through `estimate()` where the platform says
 * (`navigator.storage.estimate()`), so a quota error can state the numbers.
 *
 * @module
 */

/** The key-value contract every store meets. Values are whole byte arrays (a part of a file). */
export interface CacheStore {
  /** What the store is, for messages and tests: `"memory"`, `"cache-api"`, `"indexeddb"`, `"directory"`. */
  readonly kind: string;
  /** The bytes under `key`, or undefined. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Stores bytes under `key`, replacing what was there. Throws the platform's quota error when full. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** Removes `key` (nothing happens when absent). */
  delete(key: string): Promise<void>;
  /** Every key held. */
  keys(): Promise<string[]>;
  /** Bytes used and allowed for this origin, where the platform says. */
  estimate?(): Promise<StorageEstimate | undefined>;
}

/** Usage and quota in bytes, as `navigator.storage.estimate()` gives them. */
export interface StorageEstimate {
  /** Bytes this origin uses. */
  usage?: number;
  /** Bytes this origin may use. */
  quota?: number;
}

/** Which browser store to use: the Cache API where present, else IndexedDB (`"auto"`), or one forced. */
export type BrowserStoreKind = "auto" | "cache-api" | "indexeddb";

const DEFAULT_NAME = "xpu-weights";
const CACHE_ORIGIN = "https://xpu-weight-cache.invalid/";

function navigatorEstimate(): Promise<StorageEstimate | undefined> {
  const storage = (globalThis.navigator as { storage?: { estimate?: () => Promise<StorageEstimate> } } | undefined)
    ?.storage;
  return storage?.estimate ? storage.estimate() : Promise.resolve(undefined);
}

/** Refuses an entry a store cannot keep: a key that is not a string, bytes that are not a Uint8Array. */
function checkEntry(where: string, key: unknown, bytes: unknown): void {
  if (typeof key !== "string") throw new Error(`${where}: key must be a string, got ${String(key)}`);
  if (!(bytes instanceof Uint8Array)) {
    throw new Error(
      `${where}: bytes must be a Uint8Array, got ${typeof bytes === "string" ? "a string" : String(bytes)}`,
    );
  }
}

/**
 * A store in memory (a `Map`); nothing persists.
 *
 * @returns the store
 * @example
 * ```ts
 * import { memoryStore, WeightCache } from "@xpu/ops/llm";
 * const cache = new WeightCache(memoryStore());
 * ```
 */
export function memoryStore(): CacheStore {
  const map = new Map<string, Uint8Array>();
  return {
    kind: "memory",
    get: (key) => Promise.resolve(map.get(key)?.slice()),
    put: (key, bytes) => {
      checkEntry("memoryStore", key, bytes);
      map.set(key, bytes.slice());
      return Promise.resolve();
    },
    delete: (key) => {
      map.delete(key);
      return Promise.resolve();
    },
    keys: () => Promise.resolve([...map.keys()]),
  };
}

/**
 * A store in the Cache API (`caches.open(name)`).
 *
 * @param name the cache's name
 * @returns the store
 * @throws Error when this context has no Cache API
 * @example
 * ```ts
 * import { cacheApiStore } from "@xpu/ops/llm";
 * const store = await cacheApiStore("xpu-example"); // Deno has the Cache API too
 * await store.put("greeting", new TextEncoder().encode("hi"));
 * await store.get("greeting"); // Uint8Array [104, 105]
 * await caches.delete("xpu-example");
 * ```
 */
export async function cacheApiStore(name?: string): Promise<CacheStore> {
  name ??= DEFAULT_NAME;
  if (typeof caches === "undefined") {
    throw new Error("weight cache: this context has no Cache API (caches); use indexedDbStore");
  }
  const cache = await caches.open(name);
  const url = (key: string) => CACHE_ORIGIN + encodeURIComponent(key);
  return {
    kind: "cache-api",
    async get(key) {
      const response = await cache.match(url(key));
      return response ? new Uint8Array(await response.arrayBuffer()) : undefined;
    },
    put: (key, bytes) => {
      checkEntry("cacheApiStore", key, bytes);
      return cache.put(url(key), new Response(bytes as Uint8Array<ArrayBuffer>));
    },
    delete: async (key) => void await cache.delete(url(key)),
    keys: async () =>
      (await cache.keys()).map((request) => request.url).filter((u) => u.startsWith(CACHE_ORIGIN))
        .map((u) => decodeURIComponent(u.slice(CACHE_ORIGIN.length))),
    estimate: navigatorEstimate,
  };
}

// The few IndexedDB types used here (Deno's type library has no DOM).
interface IdbRequest<T> {
  result: T;
  error: unknown;
  onsuccess: (() => void) | null;
  onerror: (() => void) | null;
}
interface IdbObjectStore {
  get(key: string): IdbRequest<unknown>;
  put(value: unknown, key: string): IdbRequest<unknown>;
  delete(key: string): IdbRequest<unknown>;
  getAllKeys(): IdbRequest<unknown[]>;
}
interface IdbTransaction {
  error: unknown;
  objectStore(name: string): IdbObjectStore;
  oncomplete: (() => void) | null;
  onerror: (() => void) | null;
  onabort: (() => void) | null;
}
interface IdbDatabase {
  createObjectStore(name: string): unknown;
  transaction(store: string, mode: "readonly" | "readwrite"): IdbTransaction;
}
interface IdbFactory {
  open(name: string, version: number): IdbRequest<IdbDatabase> & { onupgradeneeded: (() => void) | null };
}

function request<T>(r: IdbRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

/**
 * A store in IndexedDB (database `name`, one object store of byte arrays keyed by string).
 *
 * @param name the database's name
 * @returns the store
 * @throws Error when this context has no IndexedDB
 * @example
 * ```ts
 * import { indexedDbStore, WeightCache } from "@xpu/ops/llm";
 * if ("indexedDB" in globalThis) {
 *   const cache = new WeightCache(await indexedDbStore("my-models")); // in a page
 * } else {
 *   await indexedDbStore("my-models").catch((e) => e.message); // Deno: "weight cache: this context has no IndexedDB"
 * }
 * ```
 */
export async function indexedDbStore(name?: string): Promise<CacheStore> {
  name ??= DEFAULT_NAME;
  const factory = (globalThis as { indexedDB?: IdbFactory }).indexedDB;
  if (!factory) throw new Error("weight cache: this context has no IndexedDB");
  const open = factory.open(name, 1);
  open.onupgradeneeded = () => open.result.createObjectStore("blobs");
  const db = await request(open);
  // Each call is its own transaction; a write resolves once committed, so a part stored is a part kept.
  const run = <T>(mode: "readonly" | "readwrite", op: (s: IdbObjectStore) => IdbRequest<T>): Promise<T> => {
    const transaction = db.transaction("blobs", mode);
    const result = request(op(transaction.objectStore("blobs")));
    const done = new Promise<void>((resolve, reject) => {
      transaction.oncomplete = () => resolve();
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error ?? new DOMException("transaction aborted", "AbortError"));
    });
    return Promise.all([result, done]).then(([value]) => value);
  };
  return {
    kind: "indexeddb",
    async get(key) {
      const value = await run("readonly", (s) => s.get(key) as IdbRequest<Uint8Array | undefined>);
      return value === undefined ? undefined : new Uint8Array(value);
    },
    put: async (key, bytes) => {
      checkEntry("indexedDbStore", key, bytes);
      await run("readwrite", (s) => s.put(bytes, key));
    },
    delete: async (key) => void await run("readwrite", (s) => s.delete(key)),
    keys: async () => (await run("readonly", (s) => s.getAllKeys())).map(String),
    estimate: navigatorEstimate,
  };
}

/**
 * The store a page should use: the Cache API where present, IndexedDB otherwise.
 *
 * @param kind `"auto"`, or one store forced
 * @param name the cache's (or database's) name
 * @returns the store
 * @example
 * ```ts
 * import { browserStore, WeightCache } from "@xpu/ops/llm";
 * const store = await browserStore("auto", "example-models"); // Deno has the Cache API too
 * store.kind; // "cache-api" (a page without it gets "indexeddb")
 * const cache = new WeightCache(store);
 * await caches.delete("example-models");
 * ```
 */
export function browserStore(kind?: BrowserStoreKind, name?: string): Promise<CacheStore> {
  kind ??= "auto";
  name ??= DEFAULT_NAME;
  if (kind === "cache-api" || (kind === "auto" && typeof caches !== "undefined")) return cacheApiStore(name);
  if (kind === "indexeddb" || kind === "auto") return indexedDbStore(name);
  throw new Error(`weight cache: store kind must be "auto", "cache-api" or "indexeddb", got ${kind}`);
}
