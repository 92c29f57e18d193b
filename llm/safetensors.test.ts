import { deepStrictEqual as assertEquals, ok as assert, rejects } from "node:assert/strict";
import { assertThrowsMessage } from "../harness/testing.ts";
import {
  MAX_HEADER_BYTES,
  SafetensorsError,
  type SafetensorsErrorCode,
  SafetensorsFile,
  tensorRowBytes,
  toFloat32,
} from "./safetensors.ts";
import { blobSource, bytesSource, urlSource } from "./safetensors_sources.ts";
import { ShardedSafetensors } from "./safetensors_sharded.ts";
import { fileSource, openCheckpointDir } from "./safetensors_file.ts";
import { encodeSafetensors, SafetensorsWriter } from "./safetensors_write.ts";
import { TS_WRITTEN, TS_WRITTEN_METADATA } from "./fixtures/ts_written.ts";
import { scopedStore } from "./weights/checkpoint.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url).pathname;

/** A file from a header (object or raw text), data bytes and optionally a lying length. */
function build(header: unknown, dataBytes = 0, headerLength?: number): Uint8Array {
  const json = header instanceof Uint8Array
    ? header
    : new TextEncoder().encode(typeof header === "string" ? header : JSON.stringify(header));
  const out = new Uint8Array(8 + json.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(headerLength ?? json.length), true);
  out.set(json, 8);
  return out;
}

async function expectCode(bytes: Uint8Array, code: SafetensorsErrorCode, detail: RegExp) {
  await rejects(() => SafetensorsFile.open(bytesSource(bytes, "t.safetensors")), (e: unknown) => {
    assert(e instanceof SafetensorsError, `not a SafetensorsError: ${e}`);
    assertEquals(e.code, code, e.message);
    assert(e.message.startsWith(`safetensors t.safetensors: ${code}: `), e.message);
    assert(detail.test(e.message), `${e.message} does not match ${detail}`);
    return true;
  });
}

const f32 = (shape: number[], begin: number, end: number) => ({ dtype: "F32", shape, data_offsets: [begin, end] });

Deno.test("safetensors: every validation error is named as the reference reader names it", async () => {
  await expectCode(new Uint8Array(5), "HeaderTooSmall", /5 bytes/);
  await expectCode(build("{}", 0, MAX_HEADER_BYTES + 1), "HeaderTooLarge", /100000001/);
  await expectCode(build("{}", 0, 1000), "InvalidHeaderLength", /1000 runs past the file's 10 bytes/);
  await expectCode(build(new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])), "InvalidHeader", /UTF-8/);
  await expectCode(build(' {"a": 1}'), "InvalidHeaderStart", /start with '\{'/);
  await expectCode(build("{not json"), "InvalidHeaderDeserialization", /JSON|token/i);
  await expectCode(build({ w: { shape: [1], data_offsets: [0, 4] } }, 4), "InvalidHeaderDeserialization", /w: dtype/);
  await expectCode(build({ w: f32([-1], 0, 4) }, 4), "InvalidHeaderDeserialization", /w: shape/);
  await expectCode(
    build({ w: { dtype: "F32", shape: [1], data_offsets: [0] } }, 4),
    "InvalidHeaderDeserialization",
    /data_offsets/,
  );
  await expectCode(
    build({ __metadata__: { a: 1 } }),
    "InvalidHeaderDeserialization",
    /__metadata__.a must be a string/,
  );
  await expectCode(build({ w: { dtype: "F128", shape: [1], data_offsets: [0, 16] } }, 16), "UnknownDtype", /F128/);
  await expectCode(
    build({ w: { dtype: "toString", shape: [1], data_offsets: [0, 1] } }, 1),
    "UnknownDtype",
    /toString/,
  );
  // A gap before the first tensor, an overlap, and a tensor ending before it begins.
  await expectCode(build({ w: f32([1], 4, 8) }, 8), "InvalidOffset", /w: data_offsets \[4, 8\]/);
  await expectCode(
    build({ a: f32([2], 0, 8), b: f32([2], 4, 12) }, 12),
    "InvalidOffset",
    /b: .*previous tensor ends \(8\)/,
  );
  await expectCode(build({ a: f32([0], 0, 0), b: f32([1], 0, 4), c: f32([1], 8, 4) }, 8), "InvalidOffset", /c:/);
  await expectCode(build({ w: f32([3], 0, 8) }, 8), "TensorInvalidInfo", /F32 \[3\] is 12 bytes, data_offsets span 8/);
  await expectCode(build({ w: f32([2 ** 40, 2 ** 40], 0, 4) }, 4), "ValidationOverflow", /overflows/);
  await expectCode(
    build({ w: f32([1], 0, 4) }, 8),
    "MetadataIncompleteBuffer",
    /end at 4 bytes of data, the file holds 8/,
  );
  const ok = await SafetensorsFile.open(bytesSource(build({ w: f32([1], 0, 4) }, 4)));
  await assertThrowsMessage(() => ok.read("nope"), /TensorNotFound: no tensor named nope/);
});

Deno.test("safetensors: an empty file of tensors and zero-size tensors are valid", async () => {
  assertEquals((await SafetensorsFile.open(bytesSource(build("{}")))).tensors, []);
  const file = await SafetensorsFile.open(bytesSource(build({ e: f32([0, 3], 0, 0), w: f32([1], 0, 4) }, 4)));
  assertEquals(file.tensors.map((t) => t.name), ["e", "w"]);
  assertEquals((await file.read("e")).length, 0);
});

Deno.test("safetensors: a file written by the Python package decodes exactly (bf16, f16, f32, ints, scalar, empty)", async () => {
  const file = await SafetensorsFile.open(await fileSource(`${FIXTURES}py-dtypes.safetensors`));
  assertEquals(file.metadata, { origin: "safetensors.torch.save_file" });
  // torch's own .float() of the bf16/f16 tensors is the expected value, bit for bit.
  for (const half of ["bf16", "f16"]) {
    const got = await file.readFloat32(half);
    const want = await file.readFloat32(`${half}_as_f32`);
    assertEquals(new Uint32Array(got.buffer), new Uint32Array(want.buffer), half);
    assert(Number.isNaN((await file.readFloat32(`nan_${half}`))[0]));
  }
  assert(Object.is((await file.readFloat32("f16"))[7], -0));
  assertEquals(file.info("f16").dtype, "F16");
  assertEquals(file.info("bf16").dtype, "BF16");
  assertEquals(file.info("f32").shape, [3, 4]);
  assertEquals(file.info("scalar").shape, []);
  assertEquals([...await file.readFloat32("scalar")], [2.5]);
  assertEquals(file.info("empty").shape, [0, 4]);
  assertEquals([...new Int32Array((await file.read("i32")).slice().buffer)], [-2, -1, 0, 1, 2]);
  assertEquals([...await file.read("u8")], [0, 7, 255]);
  assertEquals([...new BigInt64Array((await file.read("i64")).slice().buffer)], [-1n, 2n ** 40n]);
  assertEquals(file.info("i64").dtype, "I64");
});

Deno.test("safetensors: toFloat32 decodes bf16 and f16 bit patterns by hand", async () => {
  // bf16 0x3f80 = 1, 0xc020 = -2.5, 0x0001 = 2^-133 (a subnormal f32); f16 0x0001 = 2^-24, 0x7bff = 65504.
  assertEquals([...toFloat32("BF16", new Uint8Array([0x80, 0x3f, 0x20, 0xc0, 0x01, 0x00]))], [1, -2.5, 2 ** -133]);
  assertEquals([...toFloat32("F16", new Uint8Array([0x01, 0x00, 0xff, 0x7b, 0x00, 0xfc, 0x00, 0x3c]))], [
    2 ** -24,
    65504,
    -Infinity,
    1,
  ]);
  assert(Number.isNaN(toFloat32("F16", new Uint8Array([0x01, 0x7c]))[0]));
  await assertThrowsMessage(() => toFloat32("I32", new Uint8Array(4)), /decodes F32, F16 and BF16, not I32/);
});

Deno.test("safetensors: the writer's file is what the Python package read back", async () => {
  const bytes = encodeSafetensors(TS_WRITTEN, TS_WRITTEN_METADATA);
  assertEquals(bytes, await Deno.readFile(`${FIXTURES}ts-written.safetensors`), "the committed file is this encoding");
  const readback = JSON.parse(await Deno.readTextFile(`${FIXTURES}ts-written.readback.json`));
  assertEquals(readback.metadata, TS_WRITTEN_METADATA);
  const values: Record<string, number[]> = {
    f32: [...new Float32Array(TS_WRITTEN[0].data.slice().buffer)],
    u32_packed: [0x0002ff01, 0x7f1, 0xffffffff, 0],
    i32: [-7, 0, 7, 2147483647],
    bf16_x: [1, -2.5, 0.099609375],
    empty: [],
    scalar: [2.5],
    u8: [0, 1, 127, 128, 255],
  };
  for (const t of TS_WRITTEN) {
    assertEquals(readback.tensors[t.name].shape, t.shape, t.name);
    assertEquals(readback.tensors[t.name].values, values[t.name], t.name);
  }
  // The header is padded with spaces so the data section starts 8-aligned, as the reference pads it.
  const file = await SafetensorsFile.open(bytesSource(bytes));
  assertEquals(file.dataStart % 8, 0);
  assertEquals(bytes[file.dataStart - 1], 0x20);
  assertEquals([...await file.readFloat32("bf16_x")], values.bf16_x);
});

Deno.test("safetensors: the writer refuses what would make a bad file", async () => {
  const spec = { name: "w", dtype: "F32" as const, shape: [2] };
  const sink: Uint8Array[] = [];
  const writer = new SafetensorsWriter([spec, { ...spec, name: "v" }], { k: "v" }, (c) => void sink.push(c));
  await assertThrowsMessage(() => writer.write("v", new Uint8Array(8)), /expected tensor w next, got v/);
  await assertThrowsMessage(() => writer.write("w", new Uint8Array(4)), /tensor w \(F32 \[2\]\) needs 8 bytes, got 4/);
  await writer.write("w", new Uint8Array(8));
  await assertThrowsMessage(() => writer.close(), /closed before tensor v was written/);
  await writer.write("v", new Uint8Array(8));
  await writer.close();
  const file = await SafetensorsFile.open(
    bytesSource(new Uint8Array(await new Blob(sink as BlobPart[]).arrayBuffer())),
  );
  assertEquals(file.tensors.map((t) => [t.name, t.begin, t.end]), [["w", 0, 8], ["v", 8, 16]]);
  await assertThrowsMessage(
    () => new SafetensorsWriter([spec, spec], {}, () => {}),
    /tensor name w is reserved or given twice/,
  );
  await assertThrowsMessage(
    () => new SafetensorsWriter([{ ...spec, name: "__metadata__" }], {}, () => {}),
    /tensor name __metadata__ is reserved/,
  );
  await assertThrowsMessage(
    () => encodeSafetensors([{ ...spec, data: new Uint8Array(4) }]),
    /tensor w needs 8 bytes, got 4/,
  );
});

/** Serves `bytes` over HTTP on a free port, honouring Range requests unless `ranges` is false. */
function serve(bytes: Uint8Array, ranges = true): { url: string; requests: string[]; close(): Promise<void> } {
  const requests: string[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, (req) => {
    const range = req.headers.get("Range");
    requests.push(range ?? "(none)");
    const m = /bytes=(\d+)-(\d+)/.exec(range ?? "");
    if (!ranges || !m) return new Response(bytes.slice());
    const [begin, end] = [Number(m[1]), Math.min(Number(m[2]), bytes.length - 1)];
    return new Response(bytes.slice(begin, end + 1), {
      status: 206,
      headers: { "Content-Range": `bytes ${begin}-${end}/${bytes.length}` },
    });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/w.safetensors`, requests, close: () => server.shutdown() };
}

Deno.test("safetensors: a URL is read with Range requests, only the bytes asked for", async () => {
  const bytes = await Deno.readFile(`${FIXTURES}py-dtypes.safetensors`);
  const server = serve(bytes);
  try {
    const file = await SafetensorsFile.open(await urlSource(server.url));
    const local = await SafetensorsFile.open(bytesSource(bytes));
    assertEquals(await file.readFloat32("f32"), await local.readFloat32("f32"));
    const info = file.info("f32");
    const [begin, end] = [file.dataStart + info.begin, file.dataStart + info.end - 1];
    assertEquals(server.requests.at(-1), `bytes=${begin}-${end}`);
    assert(server.requests.every((r) => r.startsWith("bytes=")), "every request is a Range request");
  } finally {
    await server.close();
  }
  const noRanges = serve(bytes, false);
  try {
    await assertThrowsMessage(() => urlSource(noRanges.url), /SourceError: a Range request answered 200, expected 206/);
  } finally {
    await noRanges.close();
  }
});

Deno.test("safetensors: a Blob and a file read the same tensors as bytes in memory", async () => {
  const path = `${FIXTURES}py-dtypes.safetensors`;
  const bytes = await Deno.readFile(path);
  const fromBlob = await SafetensorsFile.open(blobSource(new Blob([bytes]), "blob"));
  const source = await fileSource(path);
  try {
    const fromFile = await SafetensorsFile.open(source);
    for (const t of fromFile.tensors) assertEquals(await fromBlob.read(t.name), await fromFile.read(t.name), t.name);
    assertEquals(fromBlob.tensors, fromFile.tensors);
  } finally {
    source.close();
  }
  // A truncated download: the header still parses, the data section is short.
  await expectCode(bytes.slice(0, bytes.length - 3), "MetadataIncompleteBuffer", /the file holds/);
});

Deno.test("safetensors: a closed file says so, naming it, never Deno's 'Bad resource ID'", async () => {
  const path = `${FIXTURES}py-dtypes.safetensors`;
  const source = await fileSource(path);
  const file = await SafetensorsFile.open(source);
  const name = file.tensors[0].name;
  const pending = file.read(name); // queued before the close: it finds the file closed
  source.close();
  source.close(); // a second close is harmless
  const closed =
    `safetensors ${path}: SourceError: the file was closed (its source's close()); open it again to read it`;
  await assertThrowsMessage(() => pending, closed);
  await assertThrowsMessage(() => file.read(name), closed);
  // A checkpoint directory's store after its close(): the same, naming the shard.
  const { store, close } = await openCheckpointDir(`${FIXTURES}tiny-tied/bf16`);
  close();
  await assertThrowsMessage(() => store.read(store.tensors[0].name), /SourceError: the file was closed/);
});

Deno.test("safetensors: a sharded checkpoint reads the same tensors as the single file", async () => {
  const sharded = await openCheckpointDir(`${FIXTURES}tiny-tied/bf16-sharded`);
  const single = await openCheckpointDir(`${FIXTURES}tiny-tied/bf16`);
  try {
    assert(sharded.store instanceof ShardedSafetensors);
    assertEquals(sharded.store.tensors.length, single.store.tensors.length);
    for (const t of single.store.tensors) {
      assertEquals(await sharded.store.read(t.name), await single.store.read(t.name), t.name);
      assertEquals(sharded.store.info(t.name).shape, t.shape);
    }
  } finally {
    sharded.close();
    single.close();
  }
});

Deno.test("safetensors: a sharded index that disagrees with its shards is refused by name", async () => {
  const shard = encodeSafetensors([{ name: "a", dtype: "F32", shape: [1], data: new Uint8Array(4) }]);
  const open = (file: string) => Promise.resolve(bytesSource(shard, file));
  const index = (map: Record<string, string>) => JSON.stringify({ metadata: {}, weight_map: map });
  await assertThrowsMessage(
    () => ShardedSafetensors.open(index({ a: "s1", b: "s1" }), open),
    /InvalidIndex: weight_map puts b in s1, which does not hold it/,
  );
  await assertThrowsMessage(
    () => ShardedSafetensors.open(index({ a: "s1", c: "s2" }), open),
    /InvalidIndex: s2 holds a, which weight_map puts in "s1"/,
  );
  await assertThrowsMessage(() => ShardedSafetensors.open(JSON.stringify({ weight_map: [] }), open), /InvalidIndex/);
  await assertThrowsMessage(
    () => ShardedSafetensors.open(index({ a: "../s1" }), open),
    /weight_map's values must be plain file names/,
  );
  await assertThrowsMessage(() => ShardedSafetensors.open("{", open), /InvalidIndex/);
  const ok = await ShardedSafetensors.open(index({ a: "s1" }), open);
  await assertThrowsMessage(() => ok.read("b"), /TensorNotFound: no tensor named b/);
});

Deno.test("safetensors: concurrent reads of one file return each its own bytes", async () => {
  const path = `${FIXTURES}py-dtypes.safetensors`;
  const bytes = await Deno.readFile(path);
  const source = await fileSource(path);
  try {
    const file = await SafetensorsFile.open(source);
    const all = await Promise.all(file.tensors.map((t) => file.read(t.name)));
    file.tensors.forEach((t, i) =>
      assertEquals(all[i], bytes.subarray(file.dataStart + t.begin, file.dataStart + t.end))
    );
  } finally {
    source.close();
  }
});

Deno.test("safetensors: a file source keeps no read's bytes once the caller drops them (a child process collects and measures)", async () => {
  // The bytes of a read must be collectable while the source stays open: a loaded engine keeps its
  // store (for rebind), and a queue that held the last read kept a whole tensor alive with it.
  const module = new URL("./safetensors_file.ts", import.meta.url).href;
  const code = `
    const { fileSource } = await import(${JSON.stringify(module)});
    const path = await Deno.makeTempFile();
    await Deno.writeFile(path, new Uint8Array(32 << 20));
    const source = await fileSource(path);
    let data = await source.read(0, 32 << 20);
    const before = Deno.memoryUsage().external;
    data = null;
    for (let i = 0; i < 3; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 20)); }
    console.log(JSON.stringify({ before, after: Deno.memoryUsage().external }));
    source.close();
    await Deno.remove(path);`;
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--v8-flags=--expose-gc", code],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert(run.success, new TextDecoder().decode(run.stderr));
  const lines = new TextDecoder().decode(run.stdout).trim().split("\n");
  const { before, after } = JSON.parse(lines[lines.length - 1]);
  assert(before >= 32 << 20, `the read's 32 MiB were external memory before (${before} bytes)`);
  assert(after < 8 << 20, `external memory after the bytes were dropped: ${after} bytes (the read is still held)`);
});

Deno.test("safetensors: readRows reads only a range of rows' bytes (memory, URL, sharded, scoped) and refuses rows outside", async () => {
  const bytes = await Deno.readFile(`${FIXTURES}py-dtypes.safetensors`);
  const file = await SafetensorsFile.open(bytesSource(bytes));
  const info = file.info("f32"); // [3, 4]: rows of 16 bytes
  const whole = await file.read("f32");
  assertEquals(await file.readRows("f32", 1, 2), whole.subarray(16, 48));
  assertEquals(await file.readRows("f32", 3, 0), new Uint8Array(0));
  assertEquals(toFloat32("BF16", await file.readRows("bf16", 0, 1)), (await file.readFloat32("bf16")).subarray(0, 1));
  const server = serve(bytes);
  try {
    const remote = await SafetensorsFile.open(await urlSource(server.url));
    assertEquals(await remote.readRows("f32", 2, 1), whole.subarray(32, 48));
    const begin = remote.dataStart + info.begin + 32;
    assertEquals(server.requests.at(-1), `bytes=${begin}-${begin + 15}`);
  } finally {
    await server.close();
  }
  const sharded = await openCheckpointDir(`${FIXTURES}tiny-tied/bf16-sharded`);
  try {
    const name = "model.embed_tokens.weight", rows = sharded.store.info(name).shape[0];
    const all = await sharded.store.read(name), rowBytes = all.length / rows;
    assertEquals(await sharded.store.readRows(name, rows - 3, 3), all.subarray((rows - 3) * rowBytes));
    assertEquals(
      await scopedStore(sharded.store, "model.").readRows("embed_tokens.weight", 1, 1),
      all.subarray(rowBytes, 2 * rowBytes),
    );
  } finally {
    sharded.close();
  }
  assertEquals(tensorRowBytes(info, 1, 2), { offset: 16, length: 32 });
  await assertThrowsMessage(
    () => file.readRows("f32", 2, 2),
    "rows [2, 2 + 2) of f32 must be integers within its 3 rows",
  );
  await assertThrowsMessage(() => file.readRows("f32", -1, 1), "rows [-1, -1 + 1) of f32");
  await assertThrowsMessage(() => file.readRows("f32", 0.5, 1), "rows [0.5, 0.5 + 1) of f32");
  await assertThrowsMessage(() => file.readRows("scalar", 0, 1), "scalar is a scalar, it has no rows");
  await assertThrowsMessage(() => file.readRows("nope", 0, 1), /TensorNotFound: no tensor named nope/);
});
