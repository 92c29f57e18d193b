/**
 * Images out of image models, for a browser or Deno alike: a decoder's float output to RGBA bytes,
 * and RGBA bytes to a PNG file (compressed with the platform's `CompressionStream("deflate")`).
 *
 * The conversion is the one diffusers-style pipelines apply for their `pil` output, in the float32
 * steps torch and numpy take, so the bytes match theirs: `v = clamp(f32(decoded / 2 + 0.5), 0, 1)`,
 * then `round(f32(v · 255))`, rounding halves to even (numpy's `round`), as uint8; alpha is 255.
 *
 * @module
 */

/** Rounds half to even (numpy's `round`, torch's `round`). */
function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * A decoder's output `[3, height, width]` (values around [-1, 1]) as RGBA bytes, row-major.
 *
 * @param decoded planar RGB, `[3, height, width]`
 * @param width pixels
 * @param height pixels
 * @returns `width · height · 4` bytes
 * @throws Error when `decoded` does not hold 3 · width · height values
 *
 * @example
 * ```ts
 * import { decodedToRgba } from "@xpu/ops/models/image";
 * const px = decodedToRgba(new Float32Array([-1, 0, 1]), 1, 1); // one pixel: R -1, G 0, B 1
 * [...px]; // [0, 128, 255, 255]
 * ```
 */
export function decodedToRgba(decoded: Float32Array, width: number, height: number): Uint8ClampedArray {
  if (!(decoded instanceof Float32Array)) {
    throw new Error(`decodedToRgba: decoded must be a Float32Array, got ${kindOf(decoded)}`);
  }
  for (const [name, v] of [["width", width], ["height", height]] as const) {
    if (!Number.isInteger(v) || v < 1) throw new Error(`decodedToRgba: ${name} must be an integer >= 1, got ${v}`);
  }
  const n = width * height;
  if (decoded.length !== 3 * n) {
    throw new Error(`decodedToRgba: decoded must hold 3 x ${height} x ${width} values, got ${decoded.length}`);
  }
  const out = new Uint8ClampedArray(4 * n);
  for (let c = 0; c < 3; c++) {
    for (let i = 0; i < n; i++) {
      const v = Math.min(Math.max(Math.fround(Math.fround(decoded[c * n + i] / 2) + 0.5), 0), 1);
      out[4 * i + c] = roundHalfEven(Math.fround(v * 255));
    }
  }
  for (let i = 0; i < n; i++) out[4 * i + 3] = 255;
  return out;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32 (ISO 3309, as PNG and zlib use).
 *
 * @param bytes the data
 * @returns the checksum
 *
 * @example
 * ```ts
 * import { crc32 } from "@xpu/ops/models/image";
 * crc32(new TextEncoder().encode("IEND")).toString(16); // "ae426082"
 * ```
 */
export function crc32(bytes: Uint8Array): number {
  if (!(bytes instanceof Uint8Array)) throw new Error(`crc32: bytes must be a Uint8Array, got ${kindOf(bytes)}`);
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

async function deflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function chunk(type: string, data: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + data.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, data.length);
  out.set(new TextEncoder().encode(type), 4);
  out.set(data, 8);
  view.setUint32(8 + data.length, crc32(out.subarray(4, 8 + data.length)));
  return out;
}

/**
 * Encodes RGBA bytes as a PNG file (8 bits per channel, no filtering, zlib-compressed).
 *
 * @param rgba `width · height · 4` bytes, row-major
 * @param width pixels, >= 1
 * @param height pixels, >= 1
 * @returns the file's bytes
 * @throws Error when the sizes and the byte count disagree
 *
 * @example
 * ```ts
 * import { encodePng } from "@xpu/ops/models/image";
 * const png = await encodePng(new Uint8ClampedArray([255, 0, 0, 255]), 1, 1); // one red pixel
 * png.length; // 76
 * ```
 */
export async function encodePng(
  rgba: Uint8ClampedArray | Uint8Array,
  width: number,
  height: number,
): Promise<Uint8Array> {
  for (const [name, v] of [["width", width], ["height", height]] as const) {
    if (!Number.isInteger(v) || v < 1 || v > 0x7fffffff) {
      throw new Error(`encodePng: ${name} must be an integer in [1, 2^31), got ${v}`);
    }
  }
  if (!(rgba instanceof Uint8ClampedArray || rgba instanceof Uint8Array)) {
    throw new Error(`encodePng: rgba must be a Uint8ClampedArray or Uint8Array, got ${kindOf(rgba)}`);
  }
  if (rgba.length !== width * height * 4) {
    throw new Error(`encodePng: rgba must hold ${width} x ${height} x 4 bytes, got ${rgba.length}`);
  }
  const header = new Uint8Array(13);
  const view = new DataView(header.buffer);
  view.setUint32(0, width);
  view.setUint32(4, height);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, no filter method variants, no interlace
  const stride = width * 4;
  const raw = new Uint8Array(height * (stride + 1)); // each row: filter type 0 (None), then its bytes
  for (let y = 0; y < height; y++) raw.set(rgba.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1);
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", await deflate(raw)),
    chunk("IEND", new Uint8Array(0)),
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const p of parts) {
    out.set(p, offset);
    offset += p.length;
  }
  return out;
}

/** A value as this module's messages show it: `undefined`, `null`, a type, or a constructor's name. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  return typeof value === "object" ? value.constructor?.name ?? "an object" : typeof value;
}
