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
 * kept as it is, by reference: a class instance or Map that holds tensors would be restored pointing at
 * the original buffers, so the structures given here hold theirs in plain objects and arrays. The
 * structure is recorded when the copy is taken; later changes to it do not reach a restore. The copy
 * does not free the originals: the caller destroys them (or keeps them) as before.
 *
 * `restoreDeferred` makes the same buffers and structure but writes nothing: it hands back the bytes
 * as {@link PendingUploads}, which the caller writes buffer by buffer just before the first work that
 * reads each one. A model that runs its layers in turn then uploads layer i + 1 on the host while the
 * GPU runs layer i, instead of uploading everything before its first layer.
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
   * @param gpu the device (default: the one the copy was read from; another must grant the same limits,
   *   since the structure's layout was made for them)
   * @returns the structure, its tensors on the device
   * @throws LimitError when a buffer is over the device's maxBufferSize, DeviceLostError on a lost device:
   *   none of this call's buffers is then left (an out-of-memory error, which WebGPU reports later, is
   *   not caught here)
   */
  restore(gpu?: ResidentDevice): T;
  /**
   * Makes the buffers and the structure as {@link restore} does, but writes none of the bytes: each
   * buffer's are written by the first {@link PendingUploads.write} that names it. The caller owns that
   * promise: every buffer is written before the first submission that reads it.
   *
   * @param gpu the device, as for {@link restore}
   * @returns the structure and its pending bytes
   * @throws as {@link restore}
   */
  restoreDeferred(gpu?: ResidentDevice): { value: T; uploads: PendingUploads };
}

/**
 * Bytes of a deferred restore ({@link HostCopy.restoreDeferred}) not yet written to their buffers.
 * Each buffer is written once, in full, by the first {@link write} that names it, through
 * `queue.writeBuffer`: the queue orders the write after the work submitted before it and before the
 * next submission.
 */
export class PendingUploads {
  readonly #queue: GPUQueue;
  readonly #pending: Map<GPUBuffer, Uint32Array>;

  /**
   * Bytes to write into their buffers.
   *
   * @param queue the device's queue
   * @param pending each buffer's bytes, as many as the buffer holds
   */
  constructor(queue: GPUQueue, pending: Map<GPUBuffer, Uint32Array>) {
    this.#queue = queue;
    this.#pending = pending;
  }

  /** Bytes not yet written. */
  get bytes(): number {
    let n = 0;
    for (const words of this.#pending.values()) n += words.byteLength;
    return n;
  }

  /** Whether any of these buffers is still to be written. */
  has(buffers: Iterable<GPUBuffer>): boolean {
    for (const b of buffers) if (this.#pending.has(b)) return true;
    return false;
  }

  /**
   * Writes the pending bytes of these buffers; a buffer already written, or never pending, is skipped.
   *
   * @param buffers the buffers the next submission reads
   * @returns the bytes written
   */
  write(buffers: Iterable<GPUBuffer>): number {
    let n = 0;
    for (const buffer of buffers) {
      const words = this.#pending.get(buffer);
      if (!words) continue;
      this.#queue.writeBuffer(buffer, 0, words as Uint32Array<ArrayBuffer>);
      this.#pending.delete(buffer);
      n += words.byteLength;
    }
    return n;
  }

  /**
   * Writes every pending buffer but these.
   *
   * @param later the buffers left pending
   * @returns the bytes written
   */
  writeAllBut(later: Iterable<GPUBuffer>): number {
    const keep = new Set(later);
    return this.write([...this.#pending.keys()].filter((b) => !keep.has(b)));
  }

  /** Drops what is pending (its buffers were destroyed unread). */
  clear(): void {
    this.#pending.clear();
  }
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

/** Where a tensor's bytes are in a copy: its buffer's index, and the tensor's dtype, length and offset. */
class HeldTensor {
  constructor(
    readonly index: number,
    readonly dtype: GpuTensor["dtype"],
    readonly length: number,
    readonly offset: number | undefined,
  ) {}
}

/**
 * Reads every tensor of a structure back to the host, each buffer once.
 *
 * @param gpu the device the tensors are on
 * @param parts plain objects and arrays holding tensors (and anything else, kept by reference)
 * @param build what a restore returns, made from the restored parts and the device (default: the parts
 *   themselves), e.g. a model class's constructor over its weights
 * @returns the host copy
 * @throws Error when a read fails (a destroyed buffer, another device's), naming the buffer
 */
export async function copyToHost<P, T = P>(
  gpu: ResidentDevice,
  parts: P,
  build: (parts: P, gpu: ResidentDevice) => T = (p) => p as unknown as T,
): Promise<HostCopy<T>> {
  // The structure as it is now, each tensor replaced by where its bytes are: later changes to `parts`
  // do not reach a restore.
  const buffers = new Map<GPUBuffer, number>();
  const template = (value: unknown): unknown => {
    if (isTensor(value)) {
      if (!buffers.has(value.buffer)) buffers.set(value.buffer, buffers.size);
      return new HeldTensor(buffers.get(value.buffer)!, value.dtype, value.length, value.offset);
    }
    if (Array.isArray(value)) return value.map(template);
    if (isPlain(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, template(v)]));
    return value;
  };
  const shape = template(parts);
  const held: { label: string; words: Uint32Array }[] = [];
  for (const buffer of buffers.keys()) {
    const words = await gpu.read({ buffer, dtype: "u32", length: buffer.size / 4 }) as Uint32Array;
    held.push({ label: buffer.label, words });
  }
  const bytes = held.reduce((n, h) => n + h.words.byteLength, 0);
  const restoreDeferred = (device: ResidentDevice = gpu): { value: T; uploads: PendingUploads } => {
    const made: GPUBuffer[] = [];
    try {
      for (const { label, words } of held) made.push(device.alloc("u32", words.length, label).buffer);
    } catch (e) {
      for (const b of made) b.destroy(); // a restore that fails halfway leaves no buffer behind
      throw e;
    }
    const rebuild = (value: unknown): unknown => {
      if (value instanceof HeldTensor) {
        const { dtype, length, offset } = value, buffer = made[value.index];
        return offset === undefined ? { buffer, dtype, length } : { buffer, dtype, length, offset };
      }
      if (Array.isArray(value)) return value.map(rebuild);
      if (isPlain(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebuild(v)]));
      return value;
    };
    const pending = new Map(made.map((buffer, i) => [buffer, held[i].words]));
    return { value: build(rebuild(shape) as P, device), uploads: new PendingUploads(device.device.queue, pending) };
  };
  return {
    bytes,
    restore(device: ResidentDevice = gpu): T {
      const { value, uploads } = restoreDeferred(device);
      uploads.writeAllBut([]);
      return value;
    },
    restoreDeferred,
  };
}
