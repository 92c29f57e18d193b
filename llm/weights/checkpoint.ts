/**
 * What every model loader does with a checkpoint before reading data: look at it through a name
 * prefix (a component of a bigger file, candle's `vb.pp("blocks").pp(i)`), and check that it holds
 * exactly the tensors a config calls for, with their shapes, naming each missing, extra or
 * mis-shaped one before a byte of data is read.
 *
 * @module
 */

import { SafetensorsError, type TensorInfo, type TensorStore } from "../safetensors.ts";

/** A tensor a model expects: its checkpoint name and shape. */
export interface ExpectedTensor {
  /** The checkpoint name. */
  name: string;
  /** The shape. */
  shape: readonly number[];
}

/**
 * The tensors of `store` whose names start with `prefix`, under their names without it.
 *
 * @param store a checkpoint
 * @param prefix the prefix, e.g. `model.layers.3.` (a trailing dot is the caller's to give)
 * @returns a store of those tensors; reads go to `store`
 *
 * @example
 * ```ts
 * import { bytesSource, encodeSafetensors, SafetensorsFile, scopedStore } from "@xpu/ops/llm";
 * const data = new Uint8Array(new Float32Array([1, 2]).buffer);
 * const bytes = encodeSafetensors([{ name: "net.proj.weight", dtype: "F32", shape: [2], data }]);
 * const net = scopedStore(await SafetensorsFile.open(bytesSource(bytes)), "net.");
 * net.info("proj.weight").shape; // [2]
 * await net.readFloat32("proj.weight"); // Float32Array [1, 2]
 * ```
 */
export function scopedStore(store: TensorStore, prefix: string): TensorStore {
  if (
    store === null || typeof store !== "object" || !Array.isArray(store.tensors) || typeof store.info !== "function"
  ) {
    throw new Error(
      `scopedStore: store must be a TensorStore (SafetensorsFile.open, openCheckpointDir), got ${String(store)}`,
    );
  }
  if (typeof prefix !== "string") throw new Error(`scopedStore: prefix must be a string, got ${String(prefix)}`);
  const tensors = store.tensors.filter((t) => t.name.startsWith(prefix))
    .map((t): TensorInfo => ({ ...t, name: t.name.slice(prefix.length) }));
  const names = new Set(tensors.map((t) => t.name));
  const full = (name: string) => {
    if (!names.has(name)) {
      throw new SafetensorsError(
        "TensorNotFound",
        `"${prefix}" view`,
        `no tensor "${prefix}${name}" (looked up as "${name}")`,
      );
    }
    return prefix + name;
  };
  return {
    tensors,
    metadata: store.metadata,
    info: (name) => ({ ...store.info(full(name)), name }),
    read: (name) => store.read(full(name)),
    readRows: (name, row0, rows) => store.readRows(full(name), row0, rows),
    readFloat32: (name) => store.readFloat32(full(name)),
  };
}

/** Options of {@link checkTensorLayout}. */
export interface LayoutCheckOptions {
  /** Tensors of the store that are not the model's and are left alone (e.g. a VAE file's encoder). */
  ignore?: (name: string) => boolean;
}

/**
 * Checks that `store` holds exactly `expected` (names and shapes), before any data is read.
 *
 * @param store the checkpoint (or a {@link scopedStore} view of it)
 * @param expected every tensor the model reads
 * @param what the model or component, for the message
 * @param options which stored tensors to ignore
 * @throws Error naming every missing, mis-shaped and extra tensor (up to 8 of each, with counts)
 *
 * @example
 * ```ts
 * import { bytesSource, checkTensorLayout, encodeSafetensors, SafetensorsFile } from "@xpu/ops/llm";
 * const data = new Uint8Array(new Float32Array([1, 2]).buffer);
 * const store = await SafetensorsFile.open(bytesSource(encodeSafetensors([{ name: "w", dtype: "F32", shape: [2], data }])));
 * checkTensorLayout(store, [{ name: "w", shape: [2] }], "tiny"); // passes
 * // [{ name: "w", shape: [3] }] throws: tiny: 1 tensor mis-shaped: w is [2], expected [3]
 * ```
 */
export function checkTensorLayout(
  store: TensorStore,
  expected: readonly ExpectedTensor[],
  what: string,
  options?: LayoutCheckOptions,
): void {
  options ??= {};
  const stored = new Map(store.tensors.map((t) => [t.name, t]));
  const wanted = new Set(expected.map((t) => t.name));
  const missing: string[] = [], misshaped: string[] = [];
  for (const { name, shape } of expected) {
    const t = stored.get(name);
    if (!t) missing.push(name);
    else if (t.shape.length !== shape.length || t.shape.some((d, i) => d !== shape[i])) {
      misshaped.push(`${name} is [${t.shape.join(", ")}], expected [${shape.join(", ")}]`);
    }
  }
  const extra = store.tensors.map((t) => t.name).filter((n) => !wanted.has(n) && !options.ignore?.(n));
  const parts: string[] = [];
  const list = (items: string[], label: string) => {
    if (items.length === 0) return;
    const shown = items.slice(0, 8).join("; ") + (items.length > 8 ? `; ... (${items.length - 8} more)` : "");
    parts.push(`${items.length} tensor${items.length === 1 ? "" : "s"} ${label}: ${shown}`);
  };
  list(missing, "missing");
  list(misshaped, "mis-shaped");
  list(extra, "not expected");
  if (parts.length > 0) throw new Error(`${what}: ${parts.join(". ")}`);
}
