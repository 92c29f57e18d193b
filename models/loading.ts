/**
 * Loads that leave nothing behind when they fail. A model's weights go to the device tensor by
 * tensor; a read error or a device error halfway through would leave the tensors uploaded so far on
 * the device, unreachable, until the garbage collector happens to free them (it does not know about
 * GPU memory). {@link freeOnFailure} runs such a load and destroys what it kept when it throws.
 * {@link StageCopies} keeps a pipeline's stages in host memory when they load in turn, so a later
 * load is uploads alone.
 *
 * @module
 */

import type { GpuTensor } from "../harness/device.ts";
import type { HostCopy } from "../harness/host_copy.ts";

/** Records the tensors in a value (see {@link freeOnFailure}) and returns the value. */
export type Keep = <V>(value: V) => V;

function isTensor(value: object): value is GpuTensor {
  const t = value as Partial<GpuTensor>;
  return typeof t.buffer?.destroy === "function" && typeof t.dtype === "string" && typeof t.length === "number";
}

/** Every tensor in a value: the value itself, or those in its arrays and plain objects, at any depth. */
function tensorsIn(value: unknown, into: Set<GpuTensor>, seen: Set<object>): void {
  if (typeof value !== "object" || value === null || seen.has(value)) return;
  seen.add(value);
  if (isTensor(value)) {
    into.add(value);
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (!Array.isArray(value) && proto !== Object.prototype && proto !== null) return; // a class: its own destroy
  for (const v of Object.values(value)) tensorsIn(v, into, seen);
}

/**
 * Runs a load that puts tensors on the device piece by piece, and destroys every tensor it kept if
 * the load throws (then rethrows). The load passes each piece through `keep` as it is made: a tensor,
 * or arrays and plain objects of them (a layer's weight, scales and bias). On success the tensors are
 * the caller's, as the load returns them.
 *
 * @param load the load; `keep(x)` records the tensors in `x` and returns `x`
 * @returns what the load returns
 * @throws what the load throws, after destroying what it kept
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { freeOnFailure } from "./loading.ts";
 * const gpu = await acquireDevice();
 * const before = gpu.memory.bytes;
 * const load = freeOnFailure(async (keep) => {
 *   keep(gpu.upload(new Float32Array(256), "weight"));
 *   throw new Error("the next tensor could not be read");
 * });
 * await load.catch(() => {}); // the error, and the weight destroyed
 * console.log(gpu.memory.bytes - before); // 0
 * gpu.destroy();
 * ```
 */
export async function freeOnFailure<T>(load: (keep: Keep) => Promise<T>): Promise<T> {
  const kept = new Set<GpuTensor>();
  const keep: Keep = (value) => {
    tensorsIn(value, kept, new Set());
    return value;
  };
  try {
    return await load(keep);
  } catch (e) {
    for (const t of kept) t.buffer.destroy();
    throw e;
  }
}

/** A model stage that can be copied to the host and rebuilt from the copy (harness/host_copy.ts). */
export interface CopyableStage {
  /** Host copies of its weights; `restore()` makes the stage again by uploads alone. */
  hostCopy(): Promise<HostCopy<this>>;
  /** Frees its weights. */
  destroy(): void;
}

/**
 * A pipeline's stages kept in host memory while they load in turn: each stage is copied once, at its
 * first load, and comes back from that copy afterwards, with no checkpoint read or quantization.
 */
export class StageCopies<S extends { [K in keyof S]: CopyableStage }> {
  readonly #copies: { [K in keyof S]?: HostCopy<S[K]> } = {};

  /** @param enabled whether copies are kept (false: every load reads the checkpoint) */
  constructor(readonly enabled: boolean) {}

  /**
   * A stage: restored from its copy (then `onRestored`), or loaded and, when copies are kept, copied.
   *
   * @param key the stage
   * @param load loads it from the checkpoint
   * @param onRestored called after a restore (progress)
   * @returns the stage; a loaded one whose copy fails is destroyed before the error is thrown
   */
  async stage<K extends keyof S>(key: K, load: () => Promise<S[K]>, onRestored?: () => void): Promise<S[K]> {
    const copy = this.#copies[key];
    if (copy) {
      const restored = copy.restore();
      onRestored?.();
      return restored;
    }
    const loaded = await load();
    if (this.enabled) {
      try {
        this.#copies[key] = await loaded.hostCopy();
      } catch (e) {
        loaded.destroy(); // not yet the pipeline's: nothing else would free it
        throw e;
      }
    }
    return loaded;
  }

  /** Bytes of the copies (a streamed DiT's host blocks, which its copy shares, are not counted). */
  get bytes(): number {
    return Object.values<HostCopy<unknown> | undefined>(this.#copies).reduce((n, c) => n + (c?.bytes ?? 0), 0);
  }

  /** Drops the copies. */
  clear(): void {
    for (const key of Object.keys(this.#copies)) delete this.#copies[key as keyof S];
  }
}
