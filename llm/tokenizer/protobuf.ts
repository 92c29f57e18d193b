/**
 * The smallest protobuf wire-format reader the SentencePiece `.model` file needs: varints
 * (int32, enum, bool), fixed32 floats and length-delimited fields (strings, bytes, nested
 * messages). Unknown fields are skipped by wire type, as any protobuf reader does; a wire type
 * this reader does not know (the deprecated groups, 3 and 4) is an error, because skipping one
 * needs parsing it.
 *
 * @module
 */

/** One field as read off the wire: its number, and where its payload lies. */
export interface ProtoField {
  /** The field number from the .proto file. */
  readonly field: number;
  /** 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32. */
  readonly wireType: number;
  /** Varint payload as its low 32 bits, signed (int32 and enum semantics); 0 for other wire types. */
  readonly int32: number;
  /** Start of the payload in the message's bytes. */
  readonly start: number;
  /** End of the payload (exclusive). */
  readonly end: number;
}

/**
 * Reads every top-level field of one message, in wire order.
 *
 * @param bytes The message's bytes (a nested message is a subarray of its parent).
 * @returns The fields, with payload bounds into `bytes`.
 * @example
 * ```ts
 * import { readProtoFields } from "@xpu/ops/llm";
 * // field 1, varint 150: the protobuf documentation's own example
 * const [f] = readProtoFields(new Uint8Array([0x08, 0x96, 0x01]));
 * f.int32; // 150
 * ```
 */
export function readProtoFields(bytes: Uint8Array): ProtoField[] {
  const fields: ProtoField[] = [];
  let pos = 0;
  const varint = (): number => {
    let low = 0;
    let shift = 0;
    for (;;) {
      if (pos >= bytes.length) throw new Error(`protobuf: varint runs past the end of the message at byte ${pos}`);
      const b = bytes[pos++];
      if (shift < 32) low |= (b & 0x7f) << shift;
      shift += 7;
      if ((b & 0x80) === 0) return low;
      if (shift > 63) throw new Error(`protobuf: varint longer than 10 bytes at byte ${pos}`);
    }
  };
  while (pos < bytes.length) {
    const key = varint() >>> 0;
    const field = key >>> 3;
    const wireType = key & 7;
    if (field === 0) throw new Error(`protobuf: field number 0 at byte ${pos}`);
    let int32 = 0;
    let start = pos;
    switch (wireType) {
      case 0:
        int32 = varint();
        break;
      case 1:
        pos += 8;
        break;
      case 2: {
        const length = varint() >>> 0;
        start = pos;
        pos += length;
        break;
      }
      case 5:
        pos += 4;
        break;
      default:
        throw new Error(`protobuf: unsupported wire type ${wireType} for field ${field}`);
    }
    if (pos > bytes.length) throw new Error(`protobuf: field ${field} runs past the end of the message`);
    fields.push({ field, wireType, int32, start, end: pos });
  }
  return fields;
}
