import { deepStrictEqual, notDeepStrictEqual, ok, rejects } from "node:assert/strict";
import { syntheticStore } from "./synthetic_store.ts";

const store = syntheticStore(
  [{ name: "table", shape: [6, 5] }, { name: "norm", shape: [7] }, { name: "conv", shape: [3, 2, 2, 2] }],
  (name) => name === "norm" ? { center: 1, half: 0.25 } : { center: 0, half: 0.5 },
);

Deno.test("synthetic store: readRows gives the rows readFloat32 holds, made alone", async () => {
  for (const name of ["table", "norm", "conv"]) {
    const all = await store.readFloat32(name);
    const { shape } = store.info(name);
    const row = all.length / shape[0];
    for (const [row0, rows] of [[0, 1], [1, 2], [shape[0] - 1, 1], [0, shape[0]]]) {
      const bytes = await store.readRows(name, row0, rows);
      deepStrictEqual(new Float32Array(bytes.slice().buffer), all.slice(row0 * row, (row0 + rows) * row), name);
    }
    deepStrictEqual(new Uint8Array((await store.read(name)).slice()), new Uint8Array(all.buffer), name);
  }
  await rejects(store.readRows("table", 5, 2), /rows \[5, 5 \+ 2\) of table/);
});

Deno.test("synthetic store: values lie in the caller's range, differ between rows and tensors, and repeat", async () => {
  const table = await store.readFloat32("table"), norm = await store.readFloat32("norm");
  ok(table.every((v) => v >= -0.5 && v < 0.5) && norm.every((v) => v >= 0.75 && v < 1.25));
  notDeepStrictEqual(table.slice(0, 5), table.slice(5, 10));
  ok(new Set(norm).size === norm.length, "each of a 1-D tensor's values is its own row's draw");
  const again = syntheticStore([{ name: "table", shape: [6, 5] }], () => ({ center: 0, half: 0.5 }));
  deepStrictEqual(await again.readFloat32("table"), table);
  const other = syntheticStore([{ name: "table2", shape: [6, 5] }], () => ({ center: 0, half: 0.5 }));
  notDeepStrictEqual(await other.readFloat32("table2"), table);
});
