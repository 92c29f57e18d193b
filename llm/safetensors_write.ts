/**
 * safetensors writer: the header first (every tensor's dtype, shape and offsets are known before
 * any data is), then each tensor's bytes in the order declared, so a converter streams tensor by
 * tensor and never holds the checkpoint. The header is padded with spaces to a multiple of 8 bytes,
 * as the reference writer pads it, so the data section starts 8-aligned and, with every tensor here
 * a multiple of 4 bytes, each F32/U32 tensor can be viewed in place. Our metadata goes in
 * `__metadata__` (string values only, as the format requires).
 *
 * @module
 */

import { type Dtype, DTYPE_BYTES } from "./safetensors.ts";

/** A tensor to be written: its name, dtype and shape. */
export interface TensorSpec {
  /** The tensor's name (not `__metadata__`). */
  name: string;
  /** Its dtype. */
  dtype: Dtype;
  /** Its shape. */
  shape: readonly number[];
}

/** A tensor with its bytes, for {@link encodeSafetensors}. */
export interface TensorData extends TensorSpec {
  /** Its raw little-endian bytes: exactly elements × dtype bytes. */
  data: Uint8Array;
}

/** Where the writer puts its output, chunk by chunk, in order. */
export type ByteSink = (chunk: Uint8Array) => Promise<void> | void;

function byteLength(spec: TensorSpec): number {
  return spec.shape.reduce((p, d) => p * d, DTYPE_BYTES[spec.dtype]);
}

/**
 * Lays out a file: its header bytes (length prefix included) and each tensor's size.
 *
 * @param specs the tensors, in the order their data will follow
 * @param metadata string key/values for `__metadata__`
 * @returns the header bytes and the total file size
 * @throws Error naming a duplicate or reserved name, an unknown dtype or a bad shape
 *
 * @example
 * ```ts
 * import { layoutSafetensors } from "@xpu/ops/llm";
 * const { header, fileBytes } = layoutSafetensors([{ name: "w", dtype: "F16", shape: [1024, 1024] }]);
 * fileBytes - header.length; // 2097152: the data section, 2 bytes an element
 * ```
 */
export function layoutSafetensors(
  specs: readonly TensorSpec[],
  metadata?: Record<string, string>,
): { header: Uint8Array; fileBytes: number } {
  metadata ??= {};
  const op = "safetensors writer";
  const json: Record<string, unknown> = {};
  if (Object.keys(metadata).length > 0) {
    for (const [k, v] of Object.entries(metadata)) {
      if (typeof v !== "string") throw new Error(`${op}: metadata ${k} must be a string, got ${typeof v}`);
    }
    json.__metadata__ = metadata;
  }
  let offset = 0;
  const names = new Set<string>();
  for (const spec of specs) {
    if (spec.name === "__metadata__" || names.has(spec.name)) {
      throw new Error(`${op}: tensor name ${spec.name} is reserved or given twice`);
    }
    if (!Object.hasOwn(DTYPE_BYTES, spec.dtype)) {
      throw new Error(`${op}: tensor ${spec.name}: unknown dtype ${spec.dtype}`);
    }
    if (!spec.shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw new Error(`${op}: tensor ${spec.name}: shape must be integers >= 0, got ${JSON.stringify(spec.shape)}`);
    }
    names.add(spec.name);
    const end = offset + byteLength(spec);
    json[spec.name] = { dtype: spec.dtype, shape: spec.shape, data_offsets: [offset, end] };
    offset = end;
  }
  const text = JSON.stringify(json);
  const encoded = new TextEncoder().encode(text);
  const padded = Math.ceil(encoded.length / 8) * 8;
  const header = new Uint8Array(8 + padded).fill(0x20);
  new DataView(header.buffer).setBigUint64(0, BigInt(padded), true);
  header.set(encoded, 8);
  return { header, fileBytes: header.length + offset };
}

/**
 * Writes a safetensors file to a sink, tensor by tensor: `await writer.write(name, bytes)` for each
 * declared tensor in order, then `close()`, which checks every tensor was written.
 *
 * @example
 * ```ts
 * import { SafetensorsWriter } from "@xpu/ops/llm";
 * const chunks: Uint8Array[] = []; // a file's writable stream in practice
 * const writer = new SafetensorsWriter(
 *   [{ name: "a", dtype: "F32", shape: [2] }, { name: "b", dtype: "I32", shape: [1] }],
 *   { format: "pt" },
 *   (chunk) => void chunks.push(chunk),
 * );
 * await writer.write("a", new Uint8Array(new Float32Array([1, 2]).buffer));
 * await writer.write("b", new Uint8Array(new Int32Array([7]).buffer));
 * await writer.close();
 * chunks.reduce((n, c) => n + c.length, 0) === writer.fileBytes; // true
 * ```
 */
export class SafetensorsWriter {
  /** Total bytes the file will have. */
  readonly fileBytes: number;
  readonly #specs: readonly TensorSpec[];
  readonly #sink: ByteSink;
  readonly #header: Uint8Array;
  #next = 0;
  #started = false;

  /**
   * Lays out the file (nothing is written until the first tensor).
   *
   * @param specs the tensors, in the order they will be written
   * @param metadata string key/values for `__metadata__`
   * @param sink receives the file's bytes in order
   */
  constructor(specs: readonly TensorSpec[], metadata: Record<string, string>, sink: ByteSink) {
    const { header, fileBytes } = layoutSafetensors(specs, metadata);
    this.#specs = specs;
    this.#sink = sink;
    this.#header = header;
    this.fileBytes = fileBytes;
  }

  /**
   * Writes the next tensor's bytes (the header goes out before the first).
   *
   * @param name must be the next declared tensor
   * @param data exactly its byte count
   * @throws Error for a tensor out of order or of the wrong size
   */
  async write(name: string, data: Uint8Array): Promise<void> {
    const spec = this.#specs[this.#next];
    if (!spec || spec.name !== name) {
      throw new Error(`safetensors writer: expected tensor ${spec?.name ?? "(none left)"} next, got ${name}`);
    }
    if (data.byteLength !== byteLength(spec)) {
      throw new Error(
        `safetensors writer: tensor ${name} (${spec.dtype} ${JSON.stringify(spec.shape)}) needs ${
          byteLength(spec)
        } bytes, got ${data.byteLength}`,
      );
    }
    if (!this.#started) {
      this.#started = true;
      await this.#sink(this.#header);
    }
    await this.#sink(data);
    this.#next++;
  }

  /**
   * Finishes the file (writing the header if there were no tensors).
   *
   * @throws Error when a declared tensor was not written
   */
  async close(): Promise<void> {
    if (this.#next !== this.#specs.length) {
      throw new Error(`safetensors writer: closed before tensor ${this.#specs[this.#next].name} was written`);
    }
    if (!this.#started) {
      this.#started = true;
      await this.#sink(this.#header);
    }
  }
}

/**
 * Encodes a whole safetensors file in memory (for small files and tests).
 *
 * @param tensors the tensors with their bytes, in data order
 * @param metadata string key/values for `__metadata__`
 * @returns the file's bytes
 *
 * @example
 * ```ts
 * import { encodeSafetensors } from "@xpu/ops/llm";
 * const data = new Uint8Array(new Float32Array([1, 2]).buffer);
 * encodeSafetensors([{ name: "w", dtype: "F32", shape: [2], data }], { format: "f32" }).length; // 104
 * ```
 */
export function encodeSafetensors(tensors: readonly TensorData[], metadata?: Record<string, string>): Uint8Array {
  const { header, fileBytes } = layoutSafetensors(tensors, metadata);
  const out = new Uint8Array(fileBytes);
  out.set(header, 0);
  let offset = header.length;
  for (const t of tensors) {
    if (t.data.byteLength !== byteLength(t)) {
      throw new Error(`safetensors writer: tensor ${t.name} needs ${byteLength(t)} bytes, got ${t.data.byteLength}`);
    }
    out.set(t.data, offset);
    offset += t.data.byteLength;
  }
  return out;
}
