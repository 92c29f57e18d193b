/**
 * Deno only (a file tool): a Z-Image checkpoint in a directory on disk.
 *
 * @module
 */

import { fileSource } from "../../llm/safetensors_file.ts";
import type { ModelFiles } from "./source.ts";

/**
 * The files of a model directory (a diffusers snapshot, or a folder with ComfyUI's three files).
 * Files are opened when read and stay open until `close()`.
 *
 * @param dir the directory
 * @returns the files, and `close` for the ones opened
 *
 * @example
 * ```ts
 * import { directoryFiles } from "@xpu/ops/models/zimage/file";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/hello.txt`, "hi");
 * const files = directoryFiles(dir);
 * (await files.open("hello.txt"))?.size; // 2
 * (await files.open("missing.txt")); // null
 * files.close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function directoryFiles(dir: string): ModelFiles & { close(): void } {
  const opened: { close(): void }[] = [];
  return {
    name: dir,
    open: async (path) => {
      try {
        const source = await fileSource(`${dir}/${path}`);
        opened.push(source);
        return source;
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
    },
    close: () => opened.splice(0).forEach((f) => f.close()),
  };
}
