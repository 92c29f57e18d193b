/**
 * The weight cache: a model's files downloaded once and kept (Cache API or IndexedDB in a page, a
 * directory for Deno through `@xpu/ops/llm/cache/directory`), resumed by HTTP Range after an
 * interruption, each checked against the model's manifest (name, size, SHA-256) before it is
 * returned. See `weight_cache.ts` for what a load does and `manifest.ts` for the manifest's format.
 *
 * @example
 * ```ts ignore
 * // ignore: a page's code: needs a server holding the manifest and the weights
 * import { browserStore, WeightCache } from "@xpu/ops/llm";
 * const cache = new WeightCache(await browserStore());
 * const { files } = await cache.load("/weights/manifest.json", {
 *   onProgress: ({ done, total }) => bar.value = done / total,
 * });
 * ```
 *
 * @module
 */
export * from "./manifest.ts";
export * from "./store.ts";
export * from "./weight_cache.ts";
