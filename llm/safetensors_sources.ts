/**
 * Where a safetensors file's bytes come from: memory, a Blob (a browser File included) or a URL
 * read with HTTP Range requests. Each is a {@link ByteSource}: random access by offset, so a reader
 * fetches the header and then only the tensors it is asked for. (Local files: the Deno-only
 * `safetensors_file.ts`.)
 *
 * @module
 */

import { type ByteSource, checkSourceRange, SafetensorsError } from "./safetensors.ts";

/**
 * A source over bytes already in memory.
 *
 * @param bytes the whole file
 * @param name for messages
 * @returns the source
 *
 * @example
 * ```ts
 * import { bytesSource } from "@xpu/ops/llm";
 * const source = bytesSource(new Uint8Array([1, 2, 3, 4]), "demo.bin");
 * source.size; // 4
 * await source.read(1, 2); // Uint8Array [2, 3]
 * ```
 */
export function bytesSource(bytes: Uint8Array, name?: string): ByteSource {
  if (!(bytes instanceof Uint8Array)) {
    throw new Error(`bytesSource: bytes must be a Uint8Array, got ${kindOf(bytes)}`);
  }
  const source = name ?? "<bytes>";
  return {
    name: source,
    size: bytes.byteLength,
    read: (offset, length) => {
      checkSourceRange(source, offset, length, bytes.byteLength);
      return Promise.resolve(bytes.subarray(offset, offset + length));
    },
  };
}

/** A value as a source's message shows it: `undefined`, `null`, a type, or a constructor's name. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  return typeof value === "object" ? value.constructor?.name ?? "an object" : typeof value;
}

/**
 * A source over a Blob (a browser File included): each read slices only the bytes it needs.
 *
 * @param blob the file
 * @param name for messages
 * @returns the source
 *
 * @example
 * ```ts
 * import { blobSource, encodeSafetensors, SafetensorsFile } from "@xpu/ops/llm";
 * const bytes = encodeSafetensors([{ name: "w", dtype: "F32", shape: [1], data: new Uint8Array(4) }]);
 * const blob = new File([new Uint8Array(bytes)], "w.safetensors"); // in a page: a File picked or dropped
 * const file = await SafetensorsFile.open(blobSource(blob)); // named after the File, for messages
 * file.tensors.length; // 1
 * ```
 */
export function blobSource(blob: Blob, name?: string): ByteSource {
  if (!(blob instanceof Blob)) throw new Error(`blobSource: blob must be a Blob or File, got ${kindOf(blob)}`);
  const source = name ?? (blob instanceof File ? blob.name : "<blob>");
  return {
    name: source,
    size: blob.size,
    read: async (offset, length) => {
      checkSourceRange(source, offset, length, blob.size);
      return new Uint8Array(await blob.slice(offset, offset + length).arrayBuffer());
    },
  };
}

/**
 * A source over a URL read with HTTP Range requests (works in a browser: plain `fetch`). The size
 * comes from the first response's `Content-Range`; a server that ignores Range (status 200 rather
 * than 206) is refused rather than downloaded whole.
 *
 * @param url the file's URL
 * @param fetchFn the fetch to use (defaults to the global one)
 * @returns the source, its size known
 *
 * @example
 * ```ts
 * import { encodeSafetensors, SafetensorsFile, urlSource } from "@xpu/ops/llm";
 * // In a page: `await urlSource("https://host/model/model.safetensors")`. Here the server is a fetch
 * // that answers Range requests from a file in memory, as a static server answers them from disk.
 * const bytes = encodeSafetensors([{ name: "w", dtype: "F32", shape: [2], data: new Uint8Array(8) }]);
 * const rangeFetch = (_url: string | URL | Request, init?: RequestInit) => {
 *   const [, first, last] = /bytes=(\d+)-(\d+)/.exec(new Headers(init?.headers).get("range")!)!.map(Number);
 *   const end = Math.min(last, bytes.length - 1);
 *   const headers = { "content-range": `bytes ${first}-${end}/${bytes.length}` };
 *   return Promise.resolve(new Response(bytes.slice(first, end + 1), { status: 206, headers }));
 * };
 * const source = await urlSource("https://host/model/model.safetensors", rangeFetch);
 * const file = await SafetensorsFile.open(source); // range requests: the length, then the header
 * file.tensors.map((t) => t.name); // ["w"]
 * ```
 * @throws SafetensorsError SourceError for an HTTP failure or a server without Range support
 */
export async function urlSource(url: string | URL, fetchFn?: typeof fetch): Promise<ByteSource> {
  if (typeof url !== "string" && !(url instanceof URL)) {
    throw new Error(`urlSource: url must be a string or URL, got ${kindOf(url)}`);
  }
  if (typeof fetchFn !== "function" && fetchFn !== undefined) {
    throw new Error(`urlSource: fetchFn must be a fetch function, got ${kindOf(fetchFn)}`);
  }
  const fetchOne = fetchFn ?? fetch;
  const name = String(url);
  const request = async (range: string): Promise<Response> => {
    try {
      return await fetchOne(url, { headers: { Range: range } });
    } catch (e) {
      // fetch rejects with a bare TypeError for a network failure or a URL it cannot request.
      throw new SafetensorsError("SourceError", name, `the request failed (${(e as Error)?.message ?? String(e)})`);
    }
  };
  let size = Infinity;
  const get = async (offset: number, length: number): Promise<{ bytes: Uint8Array; total: number }> => {
    checkSourceRange(name, offset, length, size);
    if (length === 0) return { bytes: new Uint8Array(0), total: NaN };
    const response = await request(`bytes=${offset}-${offset + length - 1}`);
    if (response.status !== 206) {
      await response.body?.cancel();
      throw new SafetensorsError("SourceError", name, `a Range request answered ${response.status}, expected 206`);
    }
    const range = /bytes (\d+)-(\d+)\/(\d+)/.exec(response.headers.get("Content-Range") ?? "");
    const bytes = new Uint8Array(await response.arrayBuffer());
    if (!range || Number(range[1]) !== offset || bytes.byteLength !== length) {
      throw new SafetensorsError(
        "SourceError",
        name,
        `asked for bytes ${offset}-${offset + length - 1}, got ${bytes.byteLength} bytes (Content-Range ${
          range?.[0] ?? "missing"
        })`,
      );
    }
    return { bytes, total: Number(range[3]) };
  };
  const { total } = await get(0, 1);
  size = total;
  return { name, size, read: async (offset, length) => (await get(offset, length)).bytes };
}
