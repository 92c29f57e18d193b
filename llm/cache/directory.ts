/**
 * Deno only: the weight cache's store in a directory on disk, and a manifest built from files on
 * disk. Everything else in `llm/cache/` runs in a browser too; this module uses `Deno.` file APIs
 * and is not exported from the package's browser entry point.
 *
 * Each key is one file in the directory, named by `encodeURIComponent(key)` (so a key's `/` cannot
 * make a subdirectory or leave the directory), written to a temporary name and renamed into place
 * so a crash never leaves half a part under a real key.
 *
 * @module
 */

import { buildManifest, type WeightManifest } from "./manifest.ts";
import type { CacheStore } from "./store.ts";

const TEMPORARY = ".writing";

/**
 * A store in a directory (created when missing).
 *
 * @param dir the directory
 * @returns the store
 * @example
 * ```ts
 * import { WeightCache } from "@xpu/ops/llm";
 * import { directoryStore } from "@xpu/ops/llm/cache/directory";
 * const dir = await Deno.makeTempDir(); // in practice a lasting one, e.g. ".weights"
 * const store = await directoryStore(dir);
 * await store.put("a/key", new Uint8Array([1, 2, 3])); // one file in dir, named a%2Fkey
 * await store.get("a/key"); // Uint8Array [1, 2, 3]
 * const cache = new WeightCache(store); // then cache.load(manifestUrl) keeps a model's files there
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function directoryStore(dir: string): Promise<CacheStore> {
  await Deno.mkdir(dir, { recursive: true });
  const path = (key: string) => `${dir}/${encodeURIComponent(key)}`;
  return {
    kind: "directory",
    async get(key) {
      try {
        return await Deno.readFile(path(key));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return undefined;
        throw e;
      }
    },
    async put(key, bytes) {
      const target = path(key);
      await Deno.writeFile(target + TEMPORARY, bytes);
      await Deno.rename(target + TEMPORARY, target);
    },
    async delete(key) {
      await Deno.remove(path(key)).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
    },
    async keys() {
      const keys: string[] = [];
      for await (const entry of Deno.readDir(dir)) {
        if (entry.isFile && !entry.name.endsWith(TEMPORARY)) keys.push(decodeURIComponent(entry.name));
      }
      return keys;
    },
  };
}

/**
 * Builds the manifest of files in a directory (each read whole, one at a time).
 *
 * @param dir the directory the manifest will be published in
 * @param names the files, relative to `dir`, in the manifest's order
 * @returns the manifest; write it with `serializeManifest`
 * @example
 * ```ts
 * import { serializeManifest } from "@xpu/ops/llm";
 * import { manifestOfFiles } from "@xpu/ops/llm/cache/directory";
 * const dir = await Deno.makeTempDir(); // in practice, the folder the model is published from
 * await Deno.writeTextFile(`${dir}/config.json`, "{}");
 * const manifest = await manifestOfFiles(dir, ["config.json"]);
 * manifest.files[0].size; // 2
 * await Deno.writeTextFile(`${dir}/manifest.json`, serializeManifest(manifest));
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function manifestOfFiles(dir: string, names: string[]): Promise<WeightManifest> {
  return buildManifest((async function* () {
    for (const name of names) yield { name, bytes: await Deno.readFile(`${dir}/${name}`) };
  })());
}
