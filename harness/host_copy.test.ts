import { deepStrictEqual, notStrictEqual, ok, strictEqual } from "node:assert/strict";
import { tensorView } from "./device.ts";
import { copyToHost } from "./host_copy.ts";
import { assertThrowsMessage, gpuTest } from "./testing.ts";

class Opaque {
  constructor(readonly value: number) {}
}

gpuTest(
  "copyToHost: restores every tensor's bytes into new buffers, the structure and its other values kept",
  async (gpu) => {
    const a = gpu.upload(new Float32Array([1.5, -2, 3.25]), "a");
    const shared = gpu.upload(Int32Array.from({ length: 128 }, (_, i) => i - 64), "shared");
    const opaque = new Opaque(7), table = new Float32Array([9]);
    const parts = {
      layers: [{ w: a, rows: 3 }, { w: tensorView(shared, 64, 64), name: "view" }],
      whole: shared,
      extras: { opaque, table, flag: true },
    };
    const copy = await copyToHost(gpu, parts);
    // Two distinct buffers, each read once: a's 16 bytes (three floats, rounded up) and shared's 512.
    strictEqual(copy.bytes, a.buffer.size + shared.buffer.size);
    a.buffer.destroy();
    shared.buffer.destroy();
    // The structure as it was when copied: later changes to it do not reach the restore.
    parts.layers[0] = { w: gpu.alloc("f32", 1), rows: 1 };
    parts.extras.flag = false;
    const back = copy.restore(gpu);
    deepStrictEqual(Array.from(await gpu.read(back.layers[0].w)), [1.5, -2, 3.25]);
    deepStrictEqual(Array.from(await gpu.read(back.layers[1].w)), Array.from({ length: 64 }, (_, i) => i));
    deepStrictEqual(Array.from(await gpu.read(back.whole)).slice(0, 3), [-64, -63, -62]);
    // The view and the whole tensor share one new buffer, at the view's offset; the dtype and length are kept.
    strictEqual(back.layers[1].w.buffer, back.whole.buffer);
    strictEqual(back.layers[1].w.offset, 256);
    strictEqual(back.whole.dtype, "i32");
    notStrictEqual(back.whole.buffer, shared.buffer);
    strictEqual(back.layers[0].w.buffer.label, "a");
    strictEqual(back.layers[0].rows, 3);
    strictEqual(back.layers[1].name, "view");
    // Class instances and typed arrays are the same objects.
    strictEqual(back.extras.opaque, opaque);
    strictEqual(back.extras.table, table);
    strictEqual(back.extras.flag, true);
    parts.layers[0].w.buffer.destroy();
    // Each restore makes its own buffers.
    const again = copy.restore(gpu);
    notStrictEqual(again.whole.buffer, back.whole.buffer);
    deepStrictEqual(Array.from(await gpu.read(again.layers[0].w)), [1.5, -2, 3.25]);
    for (const t of [back.layers[0].w, back.whole, again.layers[0].w, again.whole]) t.buffer.destroy();
  },
);

gpuTest("copyToHost: a destroyed buffer is an error naming it, not zeros", async (gpu) => {
  const t = gpu.upload(new Float32Array([1, 2]), "released weight");
  t.buffer.destroy();
  await assertThrowsMessage(() => copyToHost(gpu, { t }), '"released weight"');
});

gpuTest("copyToHost: a restore over the device's maxBufferSize is refused and leaves no buffer", async (gpu) => {
  const small = gpu.upload(new Float32Array(4), "small"), big = gpu.upload(new Float32Array(1024), "big");
  const copy = await copyToHost(gpu, { small, big });
  const narrow = gpu.withLimits({ maxBufferSize: 1024 });
  const before = gpu.memory.bytes;
  await assertThrowsMessage(() => copy.restore(narrow), "maxBufferSize");
  strictEqual(gpu.memory.bytes, before);
  strictEqual(copy.bytes, small.buffer.size + big.buffer.size);
  small.buffer.destroy();
  big.buffer.destroy();
});

gpuTest(
  "copyToHost: a deferred restore writes each buffer at its first write, once, and restore writes them all",
  async (gpu) => {
    const a = gpu.upload(new Float32Array([1, 2, 3, 4]), "a"), b = gpu.upload(new Int32Array([-5, 6, -7, 8]), "b");
    const copy = await copyToHost(gpu, { a, b, rows: 4 });
    const { value, uploads } = copy.restoreDeferred(gpu);
    strictEqual(value.rows, 4);
    strictEqual(uploads.bytes, 32);
    ok(uploads.has([value.a.buffer]) && uploads.has([value.b.buffer]));
    // Nothing written yet: the new buffers hold zeros.
    deepStrictEqual(Array.from(await gpu.read(value.a)), [0, 0, 0, 0]);
    strictEqual(uploads.write([value.b.buffer]), 16);
    deepStrictEqual(Array.from(await gpu.read(value.b)), [-5, 6, -7, 8]);
    deepStrictEqual(Array.from(await gpu.read(value.a)), [0, 0, 0, 0]);
    ok(!uploads.has([value.b.buffer]));
    // A buffer already written (or not of this restore) is skipped.
    strictEqual(uploads.write([value.b.buffer, a.buffer]), 0);
    strictEqual(uploads.writeAllBut([value.b.buffer]), 16);
    deepStrictEqual(Array.from(await gpu.read(value.a)), [1, 2, 3, 4]);
    strictEqual(uploads.bytes, 0);
    const eager = copy.restore(gpu);
    deepStrictEqual(Array.from(await gpu.read(eager.b)), [-5, 6, -7, 8]);
    for (const t of [a, b, value.a, value.b, eager.a, eager.b]) t.buffer.destroy();
  },
);
