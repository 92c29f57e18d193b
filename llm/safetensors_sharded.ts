/**
 * Sharded checkpoints: several safetensors files tied together by `model.safetensors.index.json`
 * (`{"weight_map": {tensor: file}}`, as transformers' `save_pretrained` writes it past
 * `max_shard_size`), read as one {@link TensorStore}; and {@link openCheckpoint}, which opens a
 * checkpoint directory's weights whether sharded or not.
 *
 * @module
 */

import {
  type ByteSource,
  SafetensorsError,
  SafetensorsFile,
  type TensorInfo,
  type TensorStore,
} from "./safetensors.ts";

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * A checkpoint sharded across several files by `model.safetensors.index.json`
 * (`{"weight_map": {tensor: file}}`). Each shard is validated on open; every tensor the map names
 * must be in the shard it names, and no shard may hold a tensor the map does not name.
 *
 * @example
 * ```ts
 * import { bytesSource, encodeSafetensors, ShardedSafetensors } from "@xpu/ops/llm";
 * const f32 = (name: string, values: number[]) => ({
 *   name, dtype: "F32" as const, shape: [values.length], data: new Uint8Array(new Float32Array(values).buffer),
 * });
 * const shards: Record<string, Uint8Array> = {
 *   "model-00001-of-00002.safetensors": encodeSafetensors([f32("a", [1, 2])]),
 *   "model-00002-of-00002.safetensors": encodeSafetensors([f32("b", [3])]),
 * };
 * const index = JSON.stringify({
 *   weight_map: { a: "model-00001-of-00002.safetensors", b: "model-00002-of-00002.safetensors" },
 * });
 * const store = await ShardedSafetensors.open(index, async (file) => bytesSource(shards[file], file));
 * store.tensors.map((t) => t.name); // ["a", "b"]
 * await store.readFloat32("b"); // Float32Array [3]
 * ```
 */
export class ShardedSafetensors implements TensorStore {
  readonly tensors: readonly TensorInfo[];
  readonly metadata: Record<string, string>;
  readonly #fileOf: Map<string, SafetensorsFile>;

  private constructor(tensors: TensorInfo[], metadata: Record<string, string>, fileOf: Map<string, SafetensorsFile>) {
    this.tensors = tensors;
    this.metadata = metadata;
    this.#fileOf = fileOf;
  }

  /**
   * Opens every shard an index names.
   *
   * @param indexJson the text of `model.safetensors.index.json`
   * @param openShard opens a shard by the file name the index gives
   * @returns the checkpoint
   * @throws SafetensorsError InvalidIndex for a malformed or inconsistent index, or any shard's error
   */
  static async open(
    indexJson: string,
    openShard: (file: string) => Promise<ByteSource>,
  ): Promise<ShardedSafetensors> {
    const bad = (detail: string) => new SafetensorsError("InvalidIndex", "model.safetensors.index.json", detail);
    let index: unknown;
    try {
      index = JSON.parse(indexJson);
    } catch (e) {
      throw bad((e as Error).message);
    }
    if (!isPlainObject(index) || !isPlainObject(index.weight_map)) throw bad("weight_map must be an object");
    const weightMap = index.weight_map;
    const files = [...new Set(Object.values(weightMap))];
    if (!files.every((f): f is string => typeof f === "string" && f.length > 0 && !/[\\/]|^\.\.?$/.test(f))) {
      throw bad(`weight_map's values must be plain file names, got ${JSON.stringify(files)}`);
    }
    const fileOf = new Map<string, SafetensorsFile>();
    const tensors: TensorInfo[] = [];
    let metadata: Record<string, string> | undefined;
    for (const file of files.sort()) {
      const shard = await SafetensorsFile.open(await openShard(file));
      metadata ??= shard.metadata;
      for (const t of shard.tensors) {
        if (weightMap[t.name] !== file) {
          throw bad(`${file} holds ${t.name}, which weight_map puts in ${JSON.stringify(weightMap[t.name] ?? null)}`);
        }
        fileOf.set(t.name, shard);
        tensors.push(t);
      }
    }
    for (const [name, file] of Object.entries(weightMap)) {
      if (!fileOf.has(name)) throw bad(`weight_map puts ${name} in ${file}, which does not hold it`);
    }
    return new ShardedSafetensors(tensors, metadata ?? {}, fileOf);
  }

  #file(name: string): SafetensorsFile {
    const file = this.#fileOf.get(name);
    if (!file) throw new SafetensorsError("TensorNotFound", "model.safetensors.index.json", `no tensor named ${name}`);
    return file;
  }

  info(name: string): TensorInfo {
    return this.#file(name).info(name);
  }

  read(name: string): Promise<Uint8Array> {
    return this.#file(name).read(name);
  }

  readRows(name: string, row0: number, rows: number): Promise<Uint8Array> {
    return this.#file(name).readRows(name, row0, rows);
  }

  readFloat32(name: string): Promise<Float32Array> {
    return this.#file(name).readFloat32(name);
  }
}

/**
 * Opens a Hugging Face checkpoint directory's weights, wherever its files live: sharded when it
 * has `model.safetensors.index.json`, else `model.safetensors`.
 *
 * @param openFile opens a file of the directory by name, or returns null when it does not exist
 * @param readText reads a small text file of the directory, or returns null when it does not exist
 * @returns the checkpoint's tensors
 *
 * @example A directory held in memory (in a browser, the files of a picked directory)
 * ```ts
 * import { bytesSource, encodeSafetensors, openCheckpoint } from "@xpu/ops/llm";
 * const files: Record<string, Uint8Array> = {
 *   "model.safetensors": encodeSafetensors([{ name: "w", dtype: "F32", shape: [1], data: new Uint8Array(4) }]),
 * };
 * const store = await openCheckpoint(
 *   async (name) => bytesSource(files[name], name),
 *   async (name) => (name in files ? new TextDecoder().decode(files[name]) : null),
 * ); // no index file: the single model.safetensors
 * store.tensors.map((t) => t.name); // ["w"]
 * ```
 */
export async function openCheckpoint(
  openFile: (name: string) => Promise<ByteSource>,
  readText: (name: string) => Promise<string | null>,
): Promise<TensorStore> {
  const index = await readText("model.safetensors.index.json");
  if (index !== null) return ShardedSafetensors.open(index, openFile);
  return SafetensorsFile.open(await openFile("model.safetensors"));
}
