import { deepStrictEqual, strictEqual, throws as assertThrows } from "node:assert/strict";
import { assertThrowsMessage } from "../harness/testing.ts";
import { crc32, decodedToRgba, encodePng } from "./image.ts";

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

Deno.test("decodedToRgba: (x/2 + 0.5) clamped, x 255, halves to even, planar to interleaved, alpha 255", () => {
  // G's first two values map to exactly 64.5 and 65.5 in float32 (found with numpy); numpy's round gives
  // 64 and 66 (half to even), where rounding halves up would give 65 and 66.
  const decoded = new Float32Array([-2, 0, 2, -0.4941176176071167, -0.48627448081970215, -1, 0.999, -0.999, 1]);
  deepStrictEqual([...decodedToRgba(decoded, 3, 1)], [0, 64, 255, 255, 128, 66, 0, 255, 255, 0, 255, 255]);
  deepStrictEqual([...decodedToRgba(new Float32Array([0.5, 0.5, 0.5]), 1, 1)], [191, 191, 191, 255]); // 191.25
  assertThrows(() => decodedToRgba(new Float32Array(4), 1, 1), /decoded must hold 3 x 1 x 1 values, got 4/);
});

Deno.test("encodePng: signature, IHDR, one IDAT whose zlib data inflates to the filtered rows, IEND, CRCs", async () => {
  strictEqual(crc32(new TextEncoder().encode("IEND")), 0xae426082); // the CRC every PNG ends with
  strictEqual(crc32(new TextEncoder().encode("123456789")), 0xcbf43926); // the standard check value
  const w = 3, h = 2, rgba = Uint8ClampedArray.from({ length: w * h * 4 }, (_, i) => (i * 37) % 256);
  const png = await encodePng(rgba, w, h);
  deepStrictEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const view = new DataView(png.buffer);
  const chunks: { type: string; data: Uint8Array }[] = [];
  for (let at = 8; at < png.length;) {
    const length = view.getUint32(at), type = new TextDecoder().decode(png.subarray(at + 4, at + 8));
    const data = png.subarray(at + 8, at + 8 + length);
    strictEqual(view.getUint32(at + 8 + length), crc32(png.subarray(at + 4, at + 8 + length)), `${type} CRC`);
    chunks.push({ type, data });
    at += 12 + length;
  }
  deepStrictEqual(chunks.map((c) => c.type), ["IHDR", "IDAT", "IEND"]);
  deepStrictEqual([...chunks[0].data], [0, 0, 0, 3, 0, 0, 0, 2, 8, 6, 0, 0, 0]);
  const raw = await inflate(chunks[1].data);
  const rows = [0, 1].map((y) => [0, ...rgba.subarray(y * 12, y * 12 + 12)]);
  deepStrictEqual([...raw], rows.flat());
  await assertThrowsMessage(() => encodePng(rgba, 4, 2), "rgba must hold 4 x 2 x 4 bytes, got 24");
  await assertThrowsMessage(() => encodePng(rgba, 0, 2), "width must be an integer in [1, 2^31), got 0");
});
