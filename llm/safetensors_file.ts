/**
 * Deno only: safetensors files and checkpoint directories on the local file system. Everything
 * else in `llm/` runs in a browser too; this module uses `Deno.open` and is not exported from the
 * package's browser entry point.
 *
 * @module
 */

import { type ByteSource, checkSourceRange, SafetensorsError, type TensorStore } from "./safetensors.ts";
import { openCheckpoint } from "./safetensors_sharded.ts";

/**
 * A source over a local file, read at offsets (the file is never read whole).
 *
 * @param path the file
 * @returns the source; close it when done (closing twice is harmless; a read after it, or one under
 *   way when it closes, throws a SafetensorsError naming the file and that it was closed)
 *
 * @example
 * ```ts
 * import { encodeSafetensors, SafetensorsFile } from "@xpu/ops/llm";
 * import { fileSource } from "@xpu/ops/llm/file";
 * const path = await Deno.makeTempFile({ suffix: ".safetensors" });
 * await Deno.writeFile(path, encodeSafetensors([{ name: "w", dtype: "F32", shape: [1], data: new Uint8Array(4) }]));
 * const source = await fileSource(path);
 * const file = await SafetensorsFile.open(source); // reads the length and the header only
 * await file.readFloat32("w"); // Float32Array [0]
 * source.close();
 * await Deno.remove(path);
 * ```
 */
export async function fileSource(path: string): Promise<ByteSource & { close(): void }> {
  const file = await Deno.open(path, { read: true });
  const { size } = await file.stat();
  let closed = false;
  // Deno's own error for a closed file is "Bad resource ID", which names neither the file nor why.
  const closedError = () =>
    new SafetensorsError("SourceError", path, "the file was closed (its source's close()); open it again to read it");
  const readAt = async (offset: number, length: number) => {
    if (closed) throw closedError();
    checkSourceRange(path, offset, length, size);
    const out = new Uint8Array(length);
    try {
      await file.seek(offset, Deno.SeekMode.Start);
      let done = 0;
      while (done < length) {
        const n = await file.read(out.subarray(done));
        if (n === null) throw new SafetensorsError("SourceError", path, `file ended at byte ${offset + done}`);
        done += n;
      }
    } catch (e) {
      throw closed ? closedError() : e; // closed while this read was under way
    }
    return out;
  };
  // One file position: concurrent reads would interleave their seeks, so they queue. The queue's
  // tail settles to nothing: a tail that resolved to the last read's bytes (as `result.catch()`
  // does) would keep them alive as long as the source, the size of a whole tensor (the 734 MB head
  // of an f32 1B model, measured after its load in harness/baselines/nvidia-h200-llm.md).
  let queue: Promise<void> = Promise.resolve();
  return {
    name: path,
    size,
    close: () => {
      if (closed) return;
      closed = true;
      file.close();
    },
    read(offset, length) {
      const result = queue.then(() => readAt(offset, length));
      queue = result.then(() => {}, () => {});
      return result;
    },
  };
}

/**
 * Opens a Hugging Face checkpoint directory's weights (sharded or single-file).
 *
 * @param dir the directory
 * @returns its tensors, and `close` for its open files
 *
 * @example
 * ```ts
 * import { encodeSafetensors } from "@xpu/ops/llm";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const dir = await Deno.makeTempDir(); // in practice, a Hugging Face snapshot directory
 * await Deno.writeFile(
 *   `${dir}/model.safetensors`,
 *   encodeSafetensors([{ name: "w", dtype: "F32", shape: [1], data: new Uint8Array(4) }]),
 * );
 * const { store, close } = await openCheckpointDir(dir);
 * store.tensors.map((t) => t.name); // ["w"]
 * close();
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function openCheckpointDir(dir: string): Promise<{ store: TensorStore; close(): void }> {
  const opened: { close(): void }[] = [];
  const readText = async (name: string) => {
    try {
      return await Deno.readTextFile(`${dir}/${name}`);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return null;
      throw e;
    }
  };
  try {
    const store = await openCheckpoint(async (name) => {
      const source = await fileSource(`${dir}/${name}`);
      opened.push(source);
      return source;
    }, readText);
    return { store, close: () => opened.forEach((f) => f.close()) };
  } catch (e) {
    opened.forEach((f) => f.close());
    throw e;
  }
}
