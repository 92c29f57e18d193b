/**
 * Host copies of a model part's GPU tensors: what a pipeline keeps of a stage it releases to make room
 * for the next one, so that the stage comes back by uploads alone, without reading and converting (or
 * quantizing) its checkpoint again.
 *
 * {@link copyToHost} walks a structure of plain objects and arrays (a stage's weights: layers, Linear
 * layers, norms), reads every distinct buffer its {@link GpuTensor}s name, once, and returns a
 * {@link HostCopy} whose `restore` uploads those bytes into new buffers and rebuilds the same
 * structure around them: tensors that were views of one buffer are views of one new buffer, at the
 * same offsets. Anything else in the structure (numbers, strings, typed arrays, class instances) is
 * kept as it is, by reference. The copy does not free the originals: the caller destroys them (or
 * keeps them) as before.
 *
 * @example
 * ```ts
 * import { acquireDevice, copyToHost } from "@xpu/ops/harness";
 * const gpu = await acquireDevice();
 * const parts = { weight: gpu.upload(new Float32Array([1, 2, 3])), rows: 3 };
 * const copy = await copyToHost(gpu, parts);
 * parts.weight.buffer.destroy(); // the GPU memory is free; copy.bytes stay on the host
 * const again = copy.restore(gpu); // { weight: a new tensor holding 1, 2, 3; rows: 3 }
 * console.log(await gpu.read(again.weight)); // Float32Array [1, 2, 3]
 * gpu.destroy();
 * ```
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "./device.ts";

/** A structure's tensors held on the host; {@link HostCopy.restore} puts them back on a device. */
export interface HostCopy<T> {
  /** Bytes held on the host (the distinct buffers' sizes). */
  readonly bytes: number;
  /**
   * Uploads the bytes into new buffers and returns the structure rebuilt around them (each call makes
   * a new set of buffers).
   *
   * @param gpu the device (default: the one the copy was read from)
   * @returns the structure, its tensors on the device
   * @throws Error (LimitError) when a buffer cannot be made; none of this call's buffers is left
   */
  restore(gpu?: ResidentDevice): T;
}

function isPlain(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function isTensor(value: unknown): value is GpuTensor {
  return isPlain(value) && value.buffer instanceof GPUBuffer && typeof value.dtype === "string" &&
    typeof value.length === "number";
}

/**
 * Reads every tensor of a structure back to the host, each buffer once.
 *
 * @param gpu the device the tensors are on
 * @param parts plain objects and arrays holding tensors (and anything else, kept by reference)
 * @returns the host copy
 * @throws Error when a read fails (a destroyed buffer, another device's), naming the buffer
 */
export async function copyToHost<T>(gpu: ResidentDevice, parts: T): Promise<HostCopy<T>> {
  const buffers = new Map<GPUBuffer, number>();
  const walk = (value: unknown): void => {
    if (isTensor(value)) {
      if (!buffers.has(value.buffer)) buffers.set(value.buffer, buffers.size);
    } else if (Array.isArray(value)) value.forEach(walk);
    else if (isPlain(value)) Object.values(value).forEach(walk);
  };
  walk(parts);
  const held: { label: string; words: Uint32Array }[] = [];
  for (const buffer of buffers.keys()) {
    const words = await gpu.read({ buffer, dtype: "u32", length: buffer.size / 4 }) as Uint32Array;
    held.push({ label: buffer.label, words });
  }
  const bytes = held.reduce((n, h) => n + h.words.byteLength, 0);
  return {
    bytes,
    restore(device: ResidentDevice = gpu): T {
      const made: GPUBuffer[] = [];
      try {
        for (const { label, words } of held) {
          const t = device.alloc("u32", words.length, label);
          made.push(t.buffer);
          device.device.queue.writeBuffer(t.buffer, 0, words as Uint32Array<ArrayBuffer>);
        }
      } catch (e) {
        for (const b of made) b.destroy(); // a restore that fails halfway leaves no buffer behind
        throw e;
      }
      const rebuild = (value: unknown): unknown => {
        if (isTensor(value)) {
          const buffer = made[buffers.get(value.buffer)!];
          return value.offset === undefined
            ? { buffer, dtype: value.dtype, length: value.length }
            : { buffer, dtype: value.dtype, length: value.length, offset: value.offset };
        }
        if (Array.isArray(value)) return value.map(rebuild);
        if (isPlain(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebuild(v)]));
        return value;
      };
      return rebuild(parts) as T;
    },
  };
}
