import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { packParams } from "./params.ts";
import { assertThrowsMessage } from "./testing.ts";

const layout = [
  { name: "n", type: "u32" },
  { name: "offset", type: "i32" },
  { name: "alpha", type: "f32" },
] as const;

Deno.test("packParams writes little-endian scalars in declaration order, padded to 16 bytes", () => {
  const bytes = packParams(layout, { n: 4294967295, offset: -3, alpha: 0.1 }, "demo");
  strictEqual(bytes.byteLength, 16);
  const view = new DataView(bytes);
  deepStrictEqual([view.getUint32(0, true), view.getInt32(4, true), view.getFloat32(8, true)], [
    4294967295,
    -3,
    Math.fround(0.1),
  ]);
  strictEqual(
    packParams([...layout, ...layout, { name: "z", type: "u32" }], { n: 1, offset: 1, alpha: 1, z: 1 }, "x").byteLength,
    32,
  );
});

Deno.test("packParams refuses values a WGSL scalar cannot hold, naming the field", async () => {
  await assertThrowsMessage(
    () => packParams(layout, { n: -1, offset: 0, alpha: 0 }, "demo"),
    'demo: param "n" must be a u32',
  );
  await assertThrowsMessage(() => packParams(layout, { n: 2 ** 32, offset: 0, alpha: 0 }, "demo"), 'param "n"');
  await assertThrowsMessage(() => packParams(layout, { n: 1.5, offset: 0, alpha: 0 }, "demo"), 'param "n"');
  await assertThrowsMessage(
    () => packParams(layout, { n: 1, offset: 2 ** 31, alpha: 0 }, "demo"),
    'param "offset" must be a i32',
  );
  await assertThrowsMessage(() => packParams(layout, { n: 1, offset: 0 }, "demo"), 'param "alpha" must be a number');
  await assertThrowsMessage(() => packParams(layout, { n: 1, offset: 0, alpha: NaN }, "demo"), 'param "alpha"');
});

Deno.test("packParams refuses an f32 value that is not a finite f32, naming the field", async () => {
  // 1e39 is a finite f64 but rounds to Infinity in f32: the GPU would see Infinity.
  for (const alpha of [1e39, -1e39, Infinity, -Infinity, 3.5e38]) {
    await assertThrowsMessage(
      () => packParams(layout, { n: 1, offset: 0, alpha }, "demo"),
      `demo: param "alpha" must be a finite f32 (|value| <= 3.4028234663852886e38), got ${alpha}`,
    );
  }
  await assertThrowsMessage(() => packParams(layout, { n: 1, offset: 0, alpha: NaN }, "demo"), 'param "alpha"');
  await assertThrowsMessage(() => packParams(layout, { n: -1, offset: 0, alpha: 0 }, "demo"), 'param "n"');
  await assertThrowsMessage(() => packParams(layout, { n: NaN, offset: 0, alpha: 0 }, "demo"), 'param "n"');
  // The largest finite f32, and a value just above it that still rounds down to it, pass.
  const max = new DataView(packParams(layout, { n: 0, offset: 0, alpha: 3.4028235e38 }, "demo")).getFloat32(8, true);
  strictEqual(max, 3.4028234663852886e38);
});

Deno.test("packParams names the arguments a derived field is made of, not the kernel's name for it", async () => {
  const derived = [{ name: "n", type: "u32", of: "N * C * L" }, {
    name: "shift",
    type: "i32",
    of: "before - after",
  }] as const;
  await assertThrowsMessage(
    () => packParams(derived, { n: 2 ** 45, shift: 0 }, "snake"),
    'snake: N * C * L must be <= 4294967295 (the largest u32, the kernel\'s "n"), got 35184372088832',
  );
  await assertThrowsMessage(
    () => packParams(derived, { n: 1, shift: -(2 ** 31) - 1 }, "pad"),
    'pad: before - after must be >= -2147483648 (the least i32, the kernel\'s "shift"), got -2147483649',
  );
  // Not an integer at all: still the field (a derived value can be fractional only by an op's bug).
  await assertThrowsMessage(() => packParams(derived, { n: 1.5, shift: 0 }, "snake"), 'snake: param "n" must be a u32');
});

Deno.test("packParams refuses a layout or values that are not what it packs, naming them", async () => {
  await assertThrowsMessage(() => packParams(undefined as never, {}, "demo"), "demo: layout must be an array of");
  await assertThrowsMessage(() => packParams([undefined] as never, {}, "demo"), "demo: layout must be an array of");
  await assertThrowsMessage(() => packParams([{ name: "n", type: "u32" }], null as never, "demo"), "demo: values must");
});
