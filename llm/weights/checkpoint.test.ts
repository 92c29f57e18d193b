import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { assertThrowsMessage } from "../../harness/testing.ts";
import { SafetensorsFile } from "../safetensors.ts";
import { bytesSource } from "../safetensors_sources.ts";
import { encodeSafetensors } from "../safetensors_write.ts";
import { checkTensorLayout, scopedStore } from "./checkpoint.ts";

async function store(entries: [string, number[]][]) {
  const tensors = entries.map(([name, shape]) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Uint8Array(Float32Array.from({ length: n }, (_, i) => name.length + i).buffer);
    return { name, dtype: "F32" as const, shape, data };
  });
  return await SafetensorsFile.open(bytesSource(encodeSafetensors(tensors), "test.safetensors"));
}

Deno.test("scopedStore: names under the prefix, reads from the full name, others invisible", async () => {
  const file = await store([["net.a.weight", [2]], ["net.b", [1, 3]], ["vae.c", [4]]]);
  const net = scopedStore(file, "net.");
  deepStrictEqual(net.tensors.map((t) => t.name), ["a.weight", "b"]);
  deepStrictEqual(net.info("b").shape, [1, 3]);
  strictEqual(net.info("b").name, "b");
  deepStrictEqual([...await net.readFloat32("a.weight")], [12, 13]); // "net.a.weight".length = 12
  deepStrictEqual(await net.read("b"), await file.read("net.b"));
  await assertThrowsMessage(() => net.info("c"), 'no tensor "net.c" (looked up as "c")');
  const nested = scopedStore(net, "a.");
  deepStrictEqual(nested.tensors.map((t) => t.name), ["weight"]);
  deepStrictEqual([...await nested.readFloat32("weight")], [12, 13]);
});

Deno.test("checkTensorLayout: passes the exact layout, names missing, mis-shaped and extra tensors", async () => {
  const file = await store([["w", [2, 3]], ["b", [3]], ["enc.x", [1]]]);
  checkTensorLayout(file, [{ name: "w", shape: [2, 3] }, { name: "b", shape: [3] }], "m", {
    ignore: (n) => n.startsWith("enc."),
  });
  await assertThrowsMessage(
    () =>
      checkTensorLayout(
        file,
        [{ name: "w", shape: [3, 2] }, { name: "b", shape: [3] }, { name: "g", shape: [1] }],
        "m",
      ),
    "m: 1 tensor missing: g. 1 tensor mis-shaped: w is [2, 3], expected [3, 2]. 1 tensor not expected: enc.x",
  );
  const many = Array.from({ length: 10 }, (_, i) => ({ name: `t${i}`, shape: [1] }));
  await assertThrowsMessage(
    () => checkTensorLayout(file, [...many], "m", { ignore: () => true }),
    "10 tensors missing: t0; t1",
  );
  await assertThrowsMessage(() => checkTensorLayout(file, [...many], "m", { ignore: () => true }), "(2 more)");
});
