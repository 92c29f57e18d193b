import { deepStrictEqual, rejects, strictEqual, throws } from "node:assert/strict";
import { buildManifest, manifestKey, parseManifest, serializeManifest, sha256Hex } from "./manifest.ts";

const text = (s: string) => new TextEncoder().encode(s);

Deno.test("sha256Hex: the FIPS 180-2 vectors", async () => {
  strictEqual(await sha256Hex(text("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  strictEqual(await sha256Hex(new Uint8Array(0)), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // A view into a larger buffer hashes only its own bytes.
  strictEqual(await sha256Hex(text("xxabcxx").subarray(2, 5)), await sha256Hex(text("abc")));
});

Deno.test("buildManifest: name, size and sha256 per file, in order; the text is stable and parses back", async () => {
  const manifest = await buildManifest([
    { name: "config.json", bytes: text("{}") },
    { name: "weights/model.safetensors", bytes: text("abc") },
  ]);
  deepStrictEqual(manifest, {
    format: "xpu-weight-manifest",
    version: 1,
    files: [
      { name: "config.json", size: 2, sha256: "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a" },
      {
        name: "weights/model.safetensors",
        size: 3,
        sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
      },
    ],
  });
  const serialized = serializeManifest(manifest);
  strictEqual(serialized, serializeManifest(parseManifest(serialized)));
  deepStrictEqual(parseManifest(text(serialized)), manifest);
  strictEqual(await manifestKey(text(serialized)), await sha256Hex(text(serialized)));
  const again = await buildManifest((async function* () {
    yield { name: "config.json", bytes: text("{}") };
    yield { name: "weights/model.safetensors", bytes: text("abc") };
  })());
  strictEqual(serializeManifest(again), serialized, "an async iterable gives the same manifest");
});

Deno.test("parseManifest: refuses what could mislead a cache, naming the field", async () => {
  const file = { name: "a.bin", size: 3, sha256: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" };
  const with_ = (files: unknown[], extra: object = {}) =>
    JSON.stringify({ format: "xpu-weight-manifest", version: 1, files, ...extra });
  throws(() => parseManifest("{"), /weight manifest: the text is not JSON/);
  throws(() => parseManifest(with_([], { format: "other" })), /format must be "xpu-weight-manifest", got "other"/);
  throws(() => parseManifest(with_([], { version: 2 })), /version must be 1, got 2/);
  throws(() => parseManifest(with_([file, file])), /files\[1\]: name a.bin appears twice/);
  for (const name of ["../x.bin", "/x.bin", "a//b", "a/./b", "a\\b", "a?b", "a#b", ""]) {
    throws(() => parseManifest(with_([{ ...file, name }])), /files\[0\]: name must be/, name);
  }
  throws(() => parseManifest(with_([{ ...file, size: -1 }])), /a.bin\): size must be a non-negative integer, got -1/);
  throws(() => parseManifest(with_([{ ...file, size: 1.5 }])), /size must be a non-negative integer, got 1.5/);
  throws(() => parseManifest(with_([{ ...file, sha256: file.sha256.toUpperCase() }])), /sha256 must be 64 lowercase/);
  throws(() => parseManifest(with_([{ ...file, sha256: "abc" }])), /sha256 must be 64 lowercase hex digits, got "abc"/);
  await rejects(buildManifest([{ name: "../escape", bytes: text("") }]), /name must be a relative path/);
});
