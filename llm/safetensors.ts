/**
 * safetensors: our own reader, validating a file as the reference reader (the `safetensors` Rust
 * crate behind the Python package, 0.4+) does, reading tensors lazily from any {@link ByteSource}
 * (`safetensors_sources.ts`: bytes in memory, a Blob, a URL through HTTP Range requests; the
 * Deno-only `safetensors_file.ts`: local files). Sharded checkpoints: `safetensors_sharded.ts`.
 *
 * The format: 8 bytes of little-endian u64 header length `n`, then `n` bytes of UTF-8 JSON
 * `{"__metadata__": {string: string}, name: {"dtype", "shape", "data_offsets": [begin, end]}, ...}`,
 * then the data section; offsets are relative to the data section's start.
 *
 * Validation, in the reference's order, each failure a {@link SafetensorsError} whose `code` is the
 * reference's error name:
 * - `HeaderTooSmall`: fewer than 8 bytes; `HeaderTooLarge`: n over {@link MAX_HEADER_BYTES}
 *   (100,000,000, the reference's cap); `InvalidHeaderLength`: 8 + n past the end of the file;
 * - `InvalidHeader`: not UTF-8; `InvalidHeaderStart`: not starting with `{`;
 *   `InvalidHeaderDeserialization`: not JSON, or not the shape above (a tensor without `dtype`, a
 *   shape that is not integers >= 0, metadata values that are not strings); `UnknownDtype`: a
 *   dtype name outside {@link DTYPE_BYTES};
 * - `InvalidOffset`: sorted by begin, a tensor does not start where the previous one ended (a gap
 *   or an overlap) or ends before it begins; `TensorInvalidInfo`: end - begin is not
 *   elements × dtype bytes; `ValidationOverflow`: a byte count past 2^53;
 * - `MetadataIncompleteBuffer`: the last tensor does not end exactly at the end of the file.
 *
 * Dtypes decode to Float32Array from F32, F16 and BF16 (exact: every such value is an f32); every
 * dtype can be read as raw bytes. Byte order is little-endian, as the format defines it.
 *
 * @module
 */

/** Bytes per element of each dtype name the reference reader accepts. */
export const DTYPE_BYTES = {
  BOOL: 1,
  U8: 1,
  I8: 1,
  F8_E5M2: 1,
  F8_E4M3: 1,
  I16: 2,
  U16: 2,
  F16: 2,
  BF16: 2,
  I32: 4,
  U32: 4,
  F32: 4,
  F64: 8,
  I64: 8,
  U64: 8,
} as const;

/** A dtype name of the safetensors format. */
export type Dtype = keyof typeof DTYPE_BYTES;

/** The reference reader's cap on the header length (bytes). */
export const MAX_HEADER_BYTES = 100_000_000;

/** The reference reader's error names, plus `UnknownDtype` (its deserialiser's refusal). */
export type SafetensorsErrorCode =
  | "HeaderTooSmall"
  | "HeaderTooLarge"
  | "InvalidHeaderLength"
  | "InvalidHeader"
  | "InvalidHeaderStart"
  | "InvalidHeaderDeserialization"
  | "UnknownDtype"
  | "InvalidOffset"
  | "TensorInvalidInfo"
  | "ValidationOverflow"
  | "MetadataIncompleteBuffer"
  | "TensorNotFound"
  | "InvalidIndex"
  | "SourceError";

/**
 * A safetensors file or checkpoint that cannot be read, with the reference's name for why.
 *
 * @example
 * ```ts
 * import { bytesSource, SafetensorsError, SafetensorsFile } from "@xpu/ops/llm";
 * try {
 *   await SafetensorsFile.open(bytesSource(new Uint8Array(4), "short.safetensors"));
 * } catch (e) {
 *   if (!(e instanceof SafetensorsError)) throw e;
 *   e.code; // "HeaderTooSmall"
 * }
 * ```
 */
export class SafetensorsError extends Error {
  /** Why, as the reference reader names it. */
  readonly code: SafetensorsErrorCode;
  /**
   * Makes the error; its message is `safetensors <source>: <code>: <detail>`.
   *
   * @param code why, as the reference reader names it
   * @param source the file, URL or blob being read
   * @param detail what was found
   */
  constructor(code: SafetensorsErrorCode, source: string, detail: string) {
    super(`safetensors ${source}: ${code}: ${detail}`);
    this.name = "SafetensorsError";
    this.code = code;
  }
}

/** Random access to the bytes of one file, wherever it lives. */
export interface ByteSource {
  /** For messages: a path, URL or blob name. */
  readonly name: string;
  /** Total bytes. */
  readonly size: number;
  /**
   * Reads `length` bytes at `offset` (within `size`).
   *
   * @param offset first byte
   * @param length bytes to read
   */
  read(offset: number, length: number): Promise<Uint8Array>;
}

/**
 * The range check every {@link ByteSource} here makes before it reads: whole bytes within the source.
 * A negative offset would count from the end in `subarray`, NaN would read nothing, and a length past
 * the end would read fewer bytes than asked; each is refused naming the source, the offset and the length.
 * A source of one's own can call it too.
 *
 * @param name the source's name, for the message
 * @param offset the first byte asked for
 * @param length the bytes asked for
 * @param size the source's size in bytes
 * @throws SafetensorsError `SourceError` naming the source, the offset and the length
 *
 * @example
 * ```ts
 * import { checkSourceRange } from "@xpu/ops/llm";
 * checkSourceRange("m.safetensors", 8, 16, 1024); // passes
 * try {
 *   checkSourceRange("m.safetensors", -1, 16, 1024);
 * } catch (e) {
 *   (e as Error).message; // "safetensors m.safetensors: SourceError: read(offset, length) must be ..."
 * }
 * ```
 */
export function checkSourceRange(name: string, offset: number, length: number, size: number): void {
  if (
    !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0 ||
    offset + length > size
  ) {
    throw new SafetensorsError(
      "SourceError",
      name,
      `read(offset, length) must be a range of whole bytes within its ${size}, got offset ${String(offset)}, length ${
        String(length)
      }`,
    );
  }
}

/** One tensor's entry in the header; `begin`/`end` are relative to the data section. */
export interface TensorInfo {
  /** Its name. */
  name: string;
  /** Its dtype. */
  dtype: Dtype;
  /** Its shape ([] for a scalar). */
  shape: number[];
  /** First byte, relative to the data section. */
  begin: number;
  /** One past the last byte, relative to the data section. */
  end: number;
}

/** A validated header. */
export interface SafetensorsHeader {
  /** Tensors in the order of their data. */
  tensors: TensorInfo[];
  /** The `__metadata__` map ({} when absent). */
  metadata: Record<string, string>;
  /** Absolute offset of the data section: 8 + header length. */
  dataStart: number;
}

/**
 * Reads the header length from a file's first 8 bytes and checks it against the file's size.
 *
 * @param first8 the first bytes of the file (at least 8, or the file is too small)
 * @param fileBytes the file's size
 * @param source the file's name, for errors
 * @returns the header length n
 * @throws SafetensorsError HeaderTooSmall, HeaderTooLarge or InvalidHeaderLength
 *
 * @example
 * ```ts
 * import { encodeSafetensors, readHeaderLength } from "@xpu/ops/llm";
 * const bytes = encodeSafetensors([{ name: "w", dtype: "F32", shape: [2], data: new Uint8Array(8) }]);
 * const n = readHeaderLength(bytes.subarray(0, 8), bytes.length, "w.safetensors"); // 56: the JSON, padded to 8
 * ```
 */
export function readHeaderLength(first8: Uint8Array, fileBytes: number, source: string): number {
  if (fileBytes < 8 || first8.length < 8) {
    throw new SafetensorsError("HeaderTooSmall", source, `${fileBytes} bytes, fewer than the 8 of the header length`);
  }
  const view = new DataView(first8.buffer, first8.byteOffset, 8);
  const n = Number(view.getBigUint64(0, true));
  if (n > MAX_HEADER_BYTES) {
    throw new SafetensorsError("HeaderTooLarge", source, `header length ${n} is over the cap of ${MAX_HEADER_BYTES}`);
  }
  if (8 + n > fileBytes) {
    throw new SafetensorsError(
      "InvalidHeaderLength",
      source,
      `header length ${n} runs past the file's ${fileBytes} bytes`,
    );
  }
  return n;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * Parses and validates a header: JSON shape, dtype names, offsets contiguous and exact.
 *
 * @param headerBytes the n bytes after the length
 * @param dataBytes the size of the data section (file size - 8 - n)
 * @param source the file's name, for errors
 * @returns the tensors in data order and the metadata
 * @throws SafetensorsError naming what is wrong (see the module doc)
 *
 * @example
 * ```ts
 * import { encodeSafetensors, parseHeader, readHeaderLength } from "@xpu/ops/llm";
 * const bytes = encodeSafetensors([{ name: "w", dtype: "F32", shape: [2], data: new Uint8Array(8) }], { format: "pt" });
 * const n = readHeaderLength(bytes.subarray(0, 8), bytes.length, "w.safetensors");
 * const header = parseHeader(bytes.subarray(8, 8 + n), bytes.length - 8 - n, "w.safetensors");
 * header.tensors[0]; // { name: "w", dtype: "F32", shape: [2], begin: 0, end: 8 }
 * header.metadata; // { format: "pt" }
 * ```
 */
export function parseHeader(headerBytes: Uint8Array, dataBytes: number, source: string): SafetensorsHeader {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(headerBytes);
  } catch {
    throw new SafetensorsError("InvalidHeader", source, "the header is not valid UTF-8");
  }
  if (!text.startsWith("{")) {
    throw new SafetensorsError(
      "InvalidHeaderStart",
      source,
      `the header must start with '{', got ${JSON.stringify(text.slice(0, 8))}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new SafetensorsError("InvalidHeaderDeserialization", source, (e as Error).message);
  }
  const bad = (detail: string) => new SafetensorsError("InvalidHeaderDeserialization", source, detail);
  if (!isPlainObject(json)) throw bad("the header is not a JSON object");
  const metadata: Record<string, string> = {};
  const tensors: TensorInfo[] = [];
  for (const [name, entry] of Object.entries(json)) {
    if (name === "__metadata__") {
      if (!isPlainObject(entry)) throw bad("__metadata__ must be an object of strings");
      for (const [k, v] of Object.entries(entry)) {
        if (typeof v !== "string") throw bad(`__metadata__.${k} must be a string, got ${JSON.stringify(v)}`);
        metadata[k] = v;
      }
      continue;
    }
    if (!isPlainObject(entry)) throw bad(`tensor ${name} must be an object`);
    const { dtype, shape, data_offsets: offsets } = entry;
    if (typeof dtype !== "string") throw bad(`tensor ${name}: dtype must be a string, got ${JSON.stringify(dtype)}`);
    if (!Object.hasOwn(DTYPE_BYTES, dtype)) {
      throw new SafetensorsError("UnknownDtype", source, `tensor ${name}: dtype ${dtype}`);
    }
    if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
      throw bad(`tensor ${name}: shape must be an array of integers >= 0, got ${JSON.stringify(shape)}`);
    }
    if (
      !Array.isArray(offsets) || offsets.length !== 2 || !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)
    ) {
      throw bad(`tensor ${name}: data_offsets must be [begin, end] integers >= 0, got ${JSON.stringify(offsets)}`);
    }
    tensors.push({ name, dtype: dtype as Dtype, shape: shape as number[], begin: offsets[0], end: offsets[1] });
  }
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let expected = 0;
  for (const t of tensors) {
    if (t.begin !== expected || t.end < t.begin) {
      throw new SafetensorsError(
        "InvalidOffset",
        source,
        `tensor ${t.name}: data_offsets [${t.begin}, ${t.end}] do not start where the previous tensor ends (${expected})`,
      );
    }
    const bytes = t.shape.reduce((p, d) => p * d, DTYPE_BYTES[t.dtype]);
    if (!Number.isSafeInteger(bytes)) {
      throw new SafetensorsError(
        "ValidationOverflow",
        source,
        `tensor ${t.name}: shape ${JSON.stringify(t.shape)} overflows`,
      );
    }
    if (t.end - t.begin !== bytes) {
      throw new SafetensorsError(
        "TensorInvalidInfo",
        source,
        `tensor ${t.name}: ${t.dtype} ${JSON.stringify(t.shape)} is ${bytes} bytes, data_offsets span ${
          t.end - t.begin
        }`,
      );
    }
    expected = t.end;
  }
  if (expected !== dataBytes) {
    throw new SafetensorsError(
      "MetadataIncompleteBuffer",
      source,
      `the tensors end at ${expected} bytes of data, the file holds ${dataBytes}`,
    );
  }
  return { tensors, metadata, dataStart: 8 + headerBytes.length };
}

/**
 * Decodes F32, F16 or BF16 little-endian bytes to f32 values, exactly.
 *
 * @param dtype the bytes' dtype
 * @param bytes the raw data
 * @returns one f32 per element
 * @throws Error for any other dtype
 *
 * @example
 * ```ts
 * import { toFloat32 } from "@xpu/ops/llm";
 * toFloat32("BF16", new Uint8Array([0x80, 0x3f])); // Float32Array [1]
 * ```
 */
export function toFloat32(dtype: Dtype, bytes: Uint8Array): Float32Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (dtype === "F32") {
    const out = new Float32Array(bytes.byteLength / 4);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
    return out;
  }
  if (dtype === "BF16") {
    // bf16 is the top half of an f32's bit pattern.
    const bits = new Uint32Array(bytes.byteLength / 2);
    for (let i = 0; i < bits.length; i++) bits[i] = view.getUint16(2 * i, true) << 16;
    return new Float32Array(bits.buffer);
  }
  if (dtype === "F16") {
    const out = new Float32Array(bytes.byteLength / 2);
    for (let i = 0; i < out.length; i++) out[i] = halfToNumber(view.getUint16(2 * i, true));
    return out;
  }
  throw new Error(`safetensors: toFloat32 decodes F32, F16 and BF16, not ${dtype}`);
}

function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const mantissa = h & 0x3ff;
  if (exponent === 0) return sign * mantissa * 2 ** -24;
  if (exponent === 31) return mantissa === 0 ? sign * Infinity : NaN;
  return sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
}

/**
 * Where rows `[row0, row0 + rows)` of a tensor's first axis lie among its bytes (rows are
 * contiguous in the row-major data: each is the product of the other axes times the dtype's bytes).
 *
 * @param info the tensor's header entry
 * @param row0 the first row
 * @param rows how many rows (0 gives an empty range)
 * @returns the range's offset from the tensor's first byte, and its length
 * @throws Error naming the tensor when it is a scalar, or the rows are not integers within its first axis
 *
 * @example
 * ```ts
 * import { tensorRowBytes } from "@xpu/ops/llm";
 * const info = { name: "embed", dtype: "BF16" as const, shape: [10, 4], begin: 0, end: 80 };
 * tensorRowBytes(info, 3, 2); // { offset: 24, length: 16 }: rows 3 and 4, 8 bytes each
 * ```
 */
export function tensorRowBytes(info: TensorInfo, row0: number, rows: number): { offset: number; length: number } {
  const [count, ...rest] = info.shape;
  if (count === undefined) throw new Error(`safetensors: ${info.name} is a scalar, it has no rows`);
  if (!Number.isInteger(row0) || !Number.isInteger(rows) || row0 < 0 || rows < 0 || row0 + rows > count) {
    throw new Error(
      `safetensors: rows [${row0}, ${row0} + ${rows}) of ${info.name} must be integers within its ${count} rows`,
    );
  }
  const rowBytes = rest.reduce((p, d) => p * d, DTYPE_BYTES[info.dtype]);
  return { offset: row0 * rowBytes, length: rows * rowBytes };
}

/** Read access to named tensors: one safetensors file or a sharded checkpoint. */
export interface TensorStore {
  /** Every tensor, in data order (shard by shard for a sharded checkpoint). */
  readonly tensors: readonly TensorInfo[];
  /** The `__metadata__` of the file (of the first shard for a sharded checkpoint). */
  readonly metadata: Record<string, string>;
  /**
   * A tensor's header entry.
   *
   * @param name the tensor
   * @throws SafetensorsError TensorNotFound
   */
  info(name: string): TensorInfo;
  /**
   * Reads one tensor's raw bytes (only those bytes are fetched).
   *
   * @param name the tensor
   */
  read(name: string): Promise<Uint8Array>;
  /**
   * Reads rows `[row0, row0 + rows)` of one tensor's first axis as raw bytes (only those bytes are
   * fetched: an embedding's rows for a few tokens, not its table).
   *
   * @param name the tensor
   * @param row0 the first row
   * @param rows how many rows
   * @throws SafetensorsError TensorNotFound; Error for rows outside the first axis ({@link tensorRowBytes})
   */
  readRows(name: string, row0: number, rows: number): Promise<Uint8Array>;
  /**
   * Reads one F32, F16 or BF16 tensor as f32 values.
   *
   * @param name the tensor
   */
  readFloat32(name: string): Promise<Float32Array>;
}

/**
 * One validated safetensors file over a {@link ByteSource}; tensors are read on demand.
 *
 * @example
 * ```ts
 * import { bytesSource, encodeSafetensors, SafetensorsFile, toFloat32 } from "@xpu/ops/llm";
 * const data = new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer);
 * const bytes = encodeSafetensors([{ name: "w", dtype: "F32", shape: [2, 2], data }]);
 * const file = await SafetensorsFile.open(bytesSource(bytes, "w.safetensors"));
 * file.info("w").shape; // [2, 2]
 * await file.readFloat32("w"); // Float32Array [1, 2, 3, 4]
 * toFloat32("F32", await file.readRows("w", 1, 1)); // Float32Array [3, 4]: row 1, its 8 bytes only
 * ```
 */
export class SafetensorsFile implements TensorStore {
  readonly tensors: readonly TensorInfo[];
  readonly metadata: Record<string, string>;
  /** Absolute offset of the data section. */
  readonly dataStart: number;
  readonly #source: ByteSource;
  readonly #byName: Map<string, TensorInfo>;

  private constructor(source: ByteSource, header: SafetensorsHeader) {
    this.#source = source;
    this.tensors = header.tensors;
    this.metadata = header.metadata;
    this.dataStart = header.dataStart;
    this.#byName = new Map(header.tensors.map((t) => [t.name, t]));
  }

  /**
   * Reads and validates the header (two reads: the length, then the header).
   *
   * @param source where the bytes are
   * @returns the file, its tensors not yet read
   * @throws SafetensorsError naming what is wrong
   *
   * @example
   * ```ts
   * import { bytesSource, encodeSafetensors, SafetensorsFile } from "@xpu/ops/llm";
   * const bytes = encodeSafetensors([{ name: "w", dtype: "F32", shape: [2], data: new Uint8Array(8) }]);
   * const file = await SafetensorsFile.open(bytesSource(bytes, "w.safetensors"));
   * await file.readFloat32("w"); // Float32Array [0, 0]
   * ```
   */
  static async open(source: ByteSource): Promise<SafetensorsFile> {
    const s = source as Partial<ByteSource> | null | undefined;
    if (typeof s !== "object" || s === null || typeof s.size !== "number" || typeof s.read !== "function") {
      const given = s === null || s === undefined ? String(s) : typeof s === "object" ? s.constructor?.name : typeof s;
      throw new Error(
        `SafetensorsFile.open: source must be a ByteSource ({ name, size, read }: bytesSource, blobSource or urlSource), got ${given}`,
      );
    }
    const first8 = source.size >= 8 ? await source.read(0, 8) : new Uint8Array(0);
    const n = readHeaderLength(first8, source.size, source.name);
    const headerBytes = await source.read(8, n);
    return new SafetensorsFile(source, parseHeader(headerBytes, source.size - 8 - n, source.name));
  }

  info(name: string): TensorInfo {
    const t = this.#byName.get(name);
    if (!t) throw new SafetensorsError("TensorNotFound", this.#source.name, `no tensor named ${name}`);
    return t;
  }

  read(name: string): Promise<Uint8Array> {
    const t = this.info(name);
    return this.#source.read(this.dataStart + t.begin, t.end - t.begin);
  }

  async readRows(name: string, row0: number, rows: number): Promise<Uint8Array> {
    const t = this.info(name);
    const { offset, length } = tensorRowBytes(t, row0, rows);
    return await this.#source.read(this.dataStart + t.begin + offset, length);
  }

  async readFloat32(name: string): Promise<Float32Array> {
    return toFloat32(this.info(name).dtype, await this.read(name));
  }
}
