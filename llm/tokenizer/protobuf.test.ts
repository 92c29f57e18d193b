import assert from "node:assert/strict";
import { readProtoFields } from "./protobuf.ts";

Deno.test("protobuf: varints, negative int32, strings, fixed32, hand-encoded", () => {
  const bytes = new Uint8Array([
    0x08,
    0x96,
    0x01, // field 1 varint 150 (the protobuf documentation's example)
    0x10,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0xff,
    0x01, // field 2 int32 -1: ten bytes
    0x1a,
    0x03,
    0x61,
    0x62,
    0x63, // field 3 string "abc"
    0x25,
    0x00,
    0x00,
    0x80,
    0xbf, // field 4 fixed32 float -1.0
    0xa8,
    0x02,
    0x01, // field 37 (two-byte key) varint 1
  ]);
  const [a, b, c, d, e] = readProtoFields(bytes);
  assert.deepEqual([a.field, a.wireType, a.int32], [1, 0, 150]);
  assert.deepEqual([b.field, b.int32], [2, -1]);
  assert.deepEqual([c.field, c.wireType, new TextDecoder().decode(bytes.subarray(c.start, c.end))], [3, 2, "abc"]);
  assert.deepEqual([d.field, d.wireType, new DataView(bytes.buffer).getFloat32(d.start, true)], [4, 5, -1]);
  assert.deepEqual([e.field, e.int32], [37, 1]);
});

Deno.test("protobuf: truncated or unsupported input throws", () => {
  assert.throws(() => readProtoFields(new Uint8Array([0x08, 0x96])), /varint runs past the end/);
  assert.throws(() => readProtoFields(new Uint8Array([0x1a, 0x05, 0x61])), /field 3 runs past the end/);
  assert.throws(() => readProtoFields(new Uint8Array([0x0b])), /unsupported wire type 3 for field 1/);
});
