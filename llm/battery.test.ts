/**
 * The hostile-caller battery over llm/'s host-side parts (the counterpart of `ops/battery.test.ts`, sorted
 * by `harness/battery_test_util.ts` alike): the tokenizers (the fortune model's SentencePiece, T5's, Qwen3's
 * byte-level BPE) given text that is not a string, huge or odd text, ids that are not ids, and bad options;
 * the tokenizer loaders given garbage; safetensors given truncated, garbage and lying headers; the
 * sources given bad ranges; the weight cache given a network that fails, manifests that lie and bad
 * options; the sampler given bad logits and options. The suite fails on any crash, hang, silent answer or
 * refused valid call, and on more vague refusals than {@link VAGUE_BUDGET}. `BATTERY_SUMMARY=<file>`
 * writes the counts.
 */
import { ok } from "node:assert/strict";
import { Tally, type Trial, writeSummary } from "../harness/battery_test_util.ts";
import { qwenFiles, t5Tokenizer } from "./fixtures/tokenizer_files.ts";
import { fileSource } from "./safetensors_file.ts";
import {
  browserStore,
  ByteLevelBpeTokenizer,
  bytesSource,
  convertedFormat,
  convertedMetadata,
  encodeSafetensors,
  LineFormatConstraint,
  loadQwenTokenizer,
  manifestKey,
  memoryStore,
  parseManifest,
  qwenChatPrompt,
  requireWeightFormat,
  SafetensorsError,
  SafetensorsFile,
  sampleNext,
  scopedStore,
  SentencePieceTokenizer,
  serializeManifest,
  sha256Hex,
  type Tokenizer,
  urlSource,
  WeightCache,
  WeightCacheError,
} from "./mod.ts";

/** At most this many refusals may fail to name the argument and what was expected. */
const VAGUE_BUDGET = 10;

const TALLY = new Tally();
const root = new URL("../", import.meta.url);
const fortune = new SentencePieceTokenizer(await Deno.readFile(new URL("models/fortune/tokenizer.model", root)));
const t5 = t5Tokenizer();
const qwen = loadQwenTokenizer(await qwenFiles());
const TOKENIZERS: [string, Tokenizer][] = [["fortune", fortune], ["t5", t5], ["qwen", qwen]];

Deno.test("battery: tokenizers — text that is not a string, odd text, ids that are not ids, bad options", async () => {
  const trials: Trial[] = [];
  const huge = "fortune cookie ".repeat(20_000);
  for (const [name, tok] of TOKENIZERS) {
    const vocab = tok.vocabSize;
    for (
      const [what, text] of [
        ["undefined", undefined],
        ["null", null],
        ["42", 42],
        ["an array of strings", ["a"]],
        ["a String object", new String("a")],
        ["bytes", new Uint8Array([97])],
        ["a symbol", Symbol("a")],
      ] as const
    ) {
      trials.push({
        family: "tokenizer",
        label: `${name}.encode(${what})`,
        expect: "refuse",
        names: ["text"],
        run: () => tok.encode(text as unknown as string),
      });
    }
    for (
      const [what, text] of [
        ["an empty string", ""],
        ["300,000 characters", huge],
        ["a lone surrogate", "a\ud800b"],
        ["NUL and controls", "a\u0000\u0001\u007f b"],
        ["emoji and combining marks", "e\u0301 👩‍👩‍👧 日本語"],
        ["only spaces", "     "],
      ] as const
    ) {
      trials.push({
        family: "tokenizer",
        label: `${name}.encode(${what}) decodes back`,
        expect: "accept",
        run: () => tok.encode(text),
        check: (ids) => {
          const list = ids as number[];
          if (!Array.isArray(list) || list.some((id) => !Number.isInteger(id) || id < 0 || id >= vocab)) {
            return "ids outside the vocabulary";
          }
          return undefined;
        },
        timeoutMs: 30_000,
      });
    }
    for (
      const [what, options, expect] of [
        ["{ maxLength: 0 }", { maxLength: 0 }, "refuse"],
        ["{ maxLength: 2.5 }", { maxLength: 2.5 }, "refuse"],
        ["{ maxLength: NaN }", { maxLength: NaN }, "refuse"],
        ['{ maxLength: "3" }', { maxLength: "3" }, "refuse"],
        ["{ maxLength: Infinity }", { maxLength: Infinity }, "refuse"],
        ["{ maxLenght: 3 }", { maxLenght: 3 }, "refuse"],
        ["42", 42, "refuse"],
        ["{ maxLength: 2 }", { maxLength: 2 }, "accept"],
      ] as const
    ) {
      trials.push({
        family: "tokenizer",
        label: `${name}.encode("a b c d", ${what})`,
        expect,
        names: ["maxLength", "maxLenght", "options"],
        run: () => (tok.encode as (text: string, options: unknown) => number[])("a b c d", options),
        check: (ids) => ((ids as number[]).length <= 2 ? undefined : `${(ids as number[]).length} ids`),
      });
    }
    const idLists: [string, unknown][] = [
      ["[-1]", [-1]],
      ["[1.5]", [1.5]],
      ["[NaN]", [NaN]],
      ["[vocabSize]", [vocab]],
      ["[2^40]", [2 ** 40]],
      ['["3"]', ["3"]],
      ["[null]", [null]],
      ["undefined", undefined],
      ["42", 42],
      ['"1 2"', "1 2"],
    ];
    for (const [what, ids] of idLists) {
      trials.push({
        family: "tokenizer",
        label: `${name}.decode(${what})`,
        expect: "refuse",
        names: ["ids", "id", "token id"],
        run: () => tok.decode(ids as number[]),
      });
      if (Array.isArray(ids)) {
        trials.push({
          family: "tokenizer",
          label: `${name}.decodeStream().push(${what.slice(1, -1)})`,
          expect: "refuse",
          names: ["id", "token id"],
          run: () => tok.decodeStream().push(ids[0] as number),
        });
        trials.push({
          family: "tokenizer",
          label: `${name}.idToToken(${what.slice(1, -1)})`,
          expect: "refuse",
          names: ["id", "token id"],
          run: () => tok.idToToken(ids[0] as number),
        });
      }
    }
    trials.push({
      family: "tokenizer",
      label: `${name}.decode(Uint32Array of ids)`,
      expect: "either",
      names: ["ids"],
      run: () => tok.decode(new Uint32Array(tok.encode("a b")) as unknown as number[]),
      check: (text) => (typeof text === "string" ? undefined : "not a string"),
    });
  }
  for (const [what, prompt] of [["undefined", undefined], ["42", 42], ["null", null]] as const) {
    trials.push({
      family: "tokenizer",
      label: `qwenChatPrompt(${what})`,
      expect: "refuse",
      names: ["prompt"],
      run: () => qwenChatPrompt(prompt as unknown as string),
    });
  }
  trials.push({
    family: "tokenizer",
    label: `qwenChatPrompt("a", { enableThinking: "yes" })`,
    expect: "refuse",
    names: ["enableThinking"],
    run: () => qwenChatPrompt("a", { enableThinking: "yes" as unknown as boolean }),
  });
  await TALLY.run(trials);
});

Deno.test("battery: tokenizer loaders — garbage, truncated and wrong-typed model files", async () => {
  const model = await Deno.readFile(new URL("models/fortune/tokenizer.model", root));
  const files = await qwenFiles();
  const trials: Trial[] = [];
  for (
    const [what, bytes] of [
      ["undefined", undefined],
      ["null", null],
      ["a string", "tokenizer.model"],
      ["empty bytes", new Uint8Array(0)],
      ["garbage bytes", new Uint8Array(64).fill(0xff)],
      ["the first half of a model", model.subarray(0, model.length >> 1)],
      ["the first 7 bytes of a model", model.subarray(0, 7)],
      ["a JSON file", new TextEncoder().encode('{"model": {}}')],
      ["an ArrayBuffer", model.buffer],
    ] as const
  ) {
    trials.push({
      family: "loaders",
      label: `new SentencePieceTokenizer(${what})`,
      expect: what === "an ArrayBuffer" ? "either" : "refuse",
      names: ["model", "SentencePiece", "tokenizer.model", "ModelProto"],
      run: () => new SentencePieceTokenizer(bytes as Uint8Array),
    });
  }
  for (
    const [what, json] of [
      ["undefined", undefined],
      ["42", 42],
      ["an empty string", ""],
      ["not JSON", "{model"],
      ["{}", "{}"],
      ["a model without a vocab", JSON.stringify({ model: { type: "BPE", merges: [] } })],
      ["a WordPiece model", JSON.stringify({ model: { type: "WordPiece", vocab: {} } })],
    ] as const
  ) {
    trials.push({
      family: "loaders",
      label: `new ByteLevelBpeTokenizer(${what})`,
      expect: "refuse",
      names: ["json", "tokenizer.json", "model", "vocab", "decoder", "normalizer"],
      run: () => new ByteLevelBpeTokenizer(json as string),
    });
  }
  for (
    const [what, bad] of [
      ["vocab undefined", { ...files, vocab: undefined }],
      ["vocab not JSON", { ...files, vocab: new TextEncoder().encode("{") }],
      ["vocab an array", { ...files, vocab: "[1, 2]" }],
      ["merges 42", { ...files, merges: 42 }],
      ["merges with a bad line", { ...files, merges: "#version: 0.2\na b c\n" }],
      ["tokenizerConfig null", { ...files, tokenizerConfig: null }],
      ["no files", undefined],
    ] as const
  ) {
    trials.push({
      family: "loaders",
      label: `loadQwenTokenizer(${what})`,
      expect: "refuse",
      names: ["vocab", "merges", "tokenizerConfig", "files"],
      run: () => loadQwenTokenizer(bad as never),
    });
  }
  await TALLY.run(trials);
});

/** A safetensors file's bytes with the header JSON given (data bytes appended). */
function withHeader(header: string, dataBytes = 0, claimedLength?: number): Uint8Array {
  const json = new TextEncoder().encode(header);
  const out = new Uint8Array(8 + json.length + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(claimedLength ?? json.length), true);
  out.set(json, 8);
  return out;
}

Deno.test("battery: safetensors — truncated, garbage and lying headers; bad sources and reads", async () => {
  const good = encodeSafetensors([{ name: "w", dtype: "F32", shape: [2, 3], data: new Uint8Array(24) }]);
  const t = (header: string, data = 0, claimed?: number) => withHeader(header, data, claimed);
  const files: [string, Uint8Array][] = [
    ["no bytes", new Uint8Array(0)],
    ["7 bytes", good.subarray(0, 7)],
    ["the header cut short", good.subarray(0, 20)],
    ["the data cut short", good.subarray(0, good.length - 4)],
    ["garbage", new Uint8Array(256).fill(0x41)],
    ["a header length of 2^60", t("{}", 0, 2 ** 52)],
    ["a header length of 0", t("", 0, 0)],
    ["a header that is not JSON", t("{not json}")],
    ["a header that is an array", t("[1,2]")],
    ["a header that is null", t("null")],
    ["a tensor without dtype", t('{"w":{"shape":[2],"data_offsets":[0,8]}}', 8)],
    ["an unknown dtype", t('{"w":{"dtype":"F128","shape":[2],"data_offsets":[0,8]}}', 8)],
    ["a negative dimension", t('{"w":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}}', 8)],
    ["a fractional dimension", t('{"w":{"dtype":"F32","shape":[2.5],"data_offsets":[0,10]}}', 10)],
    ["a shape that is a string", t('{"w":{"dtype":"F32","shape":"2","data_offsets":[0,8]}}', 8)],
    ["offsets past the data", t('{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}', 4)],
    ["offsets reversed", t('{"w":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}}', 8)],
    ["offsets that disagree with the shape", t('{"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', 8)],
    ["offsets that are strings", t('{"w":{"dtype":"F32","shape":[2],"data_offsets":["0","8"]}}', 8)],
    [
      "two tensors overlapping",
      t(
        '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}',
        12,
      ),
    ],
    ["metadata that is not strings", t('{"__metadata__":{"format":7}}')],
    ["a huge shape", t('{"w":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}}', 8)],
  ];
  const trials: Trial[] = [];
  for (const [what, bytes] of files) {
    trials.push({
      family: "safetensors",
      label: `SafetensorsFile.open(${what})`,
      expect: "refuse",
      clearAs: [SafetensorsError],
      run: () => SafetensorsFile.open(bytesSource(bytes, "m.safetensors")),
    });
  }
  for (const [what, source] of [["undefined", undefined], ["bytes, not a source", good], ["{}", {}]] as const) {
    trials.push({
      family: "safetensors",
      label: `SafetensorsFile.open(${what})`,
      expect: "refuse",
      names: ["source"],
      run: () => SafetensorsFile.open(source as never),
    });
  }
  const file = await SafetensorsFile.open(bytesSource(good, "good.safetensors"));
  const reads: [string, () => unknown, Trial["expect"], string[]][] = [
    ['info("nope")', () => file.info("nope"), "refuse", ["nope"]],
    ["info(undefined)", () => file.info(undefined as never), "refuse", ["name", "undefined"]],
    ['read("nope")', () => file.read("nope"), "refuse", ["nope"]],
    ['readRows("w", -1, 1)', () => file.readRows("w", -1, 1), "refuse", ["row0", "rows"]],
    ['readRows("w", 0, 3)', () => file.readRows("w", 0, 3), "refuse", ["rows", "row0"]],
    ['readRows("w", 1.5, 1)', () => file.readRows("w", 1.5, 1), "refuse", ["row0", "rows"]],
    ['readRows("w", NaN, 1)', () => file.readRows("w", NaN, 1), "refuse", ["row0", "rows"]],
    ['readRows("w", 0, "1")', () => file.readRows("w", 0, "1" as never), "refuse", ["rows"]],
    ['readRows("w", 1, 1)', () => file.readRows("w", 1, 1), "accept", []],
    ['readFloat32("nope")', () => file.readFloat32("nope"), "refuse", ["nope"]],
  ];
  const source = bytesSource(good, "good.safetensors");
  for (
    const [what, offset, length] of [["-1, 4", -1, 4], ["0, -4", 0, -4], ["0, 1e9", 0, 1e9], ["NaN, 4", NaN, 4], [
      "1.5, 4",
      1.5,
      4,
    ]] as const
  ) {
    reads.push([`bytesSource.read(${what})`, () => source.read(offset, length), "refuse", ["offset", "length"]]);
  }
  const path = await Deno.makeTempFile({ suffix: ".safetensors" });
  await Deno.writeFile(path, good);
  const onDisk = await fileSource(path);
  for (
    const [what, offset, length] of [["-1, 4", -1, 4], ["0, -4", 0, -4], ["NaN, 4", NaN, 4], [
      "0, 1e9",
      0,
      1e9,
    ]] as const
  ) {
    reads.push([`fileSource.read(${what})`, () => onDisk.read(offset, length), "refuse", ["offset", "length"]]);
  }
  reads.push(["fileSource.read(0, 8)", () => onDisk.read(0, 8), "accept", []]);
  reads.push(["fileSource(a missing file)", () => fileSource(`${path}.missing`), "refuse", ["path", "missing"]]);
  reads.push(["bytesSource(undefined)", () => bytesSource(undefined as never), "refuse", ["bytes"]]);
  reads.push(["bytesSource(a string)", () => bytesSource("abc" as never), "refuse", ["bytes"]]);
  for (const [label, run, expect, names] of reads) {
    trials.push({ family: "safetensors", label, expect, names, clearAs: [SafetensorsError], run });
  }
  // A URL source whose server fails: the fetch given rejects as the network does, or answers 404 / no length.
  const failing = (response: () => Promise<Response>) => (() => response()) as unknown as typeof fetch;
  for (
    const [what, fetchFn] of [
      ["a network failure", failing(() => Promise.reject(new TypeError("error sending request")))],
      ["a 404", failing(() => Promise.resolve(new Response("no", { status: 404 })))],
      ["no Content-Length", failing(() => Promise.resolve(new Response(null, { status: 200 })))],
    ] as const
  ) {
    trials.push({
      family: "safetensors",
      label: `urlSource with ${what}`,
      expect: "refuse",
      names: ["http://127.0.0.1:9/m.safetensors", "url"],
      clearAs: [SafetensorsError],
      run: () => urlSource("http://127.0.0.1:9/m.safetensors", fetchFn),
    });
  }
  trials.push({
    family: "safetensors",
    label: "urlSource(undefined)",
    expect: "refuse",
    names: ["url"],
    run: () => urlSource(undefined as never),
  });
  await TALLY.run(trials);
  onDisk.close();
  await Deno.remove(path);
});

Deno.test("battery: weight cache — a failing network, lying manifests, bad options", async () => {
  const cache = new WeightCache(memoryStore());
  const trials: Trial[] = [];
  const respond = (body: BodyInit | null, status = 200) => () => Promise.resolve(new Response(body, { status }));
  const fetches: [string, typeof fetch][] = [
    ["a network failure", (() => Promise.reject(new TypeError("error sending request"))) as unknown as typeof fetch],
    ["a 404", respond("no", 404) as unknown as typeof fetch],
    ["a 500", respond("boom", 500) as unknown as typeof fetch],
    ["a manifest that is not JSON", respond("{not json") as unknown as typeof fetch],
    ["a manifest that is an array", respond("[]") as unknown as typeof fetch],
    ["a manifest without files", respond('{"format":1}') as unknown as typeof fetch],
    ["an empty body", respond(null) as unknown as typeof fetch],
  ];
  for (const [what, fetchFn] of fetches) {
    trials.push({
      family: "cache",
      label: `WeightCache.load with ${what}`,
      expect: "refuse",
      clearAs: [WeightCacheError],
      run: () => cache.load("http://127.0.0.1:9/model/manifest.json", { fetch: fetchFn }),
    });
  }
  const ok = respond("{}") as unknown as typeof fetch;
  for (
    const [what, url, options] of [
      ["url undefined", undefined, { fetch: ok }],
      ["url 42", 42, { fetch: ok }],
      ['url "::"', "::", { fetch: ok }],
      ["partBytes 0", "http://127.0.0.1:9/m.json", { fetch: ok, partBytes: 0 }],
      ["partBytes NaN", "http://127.0.0.1:9/m.json", { fetch: ok, partBytes: NaN }],
      ['partBytes "8"', "http://127.0.0.1:9/m.json", { fetch: ok, partBytes: "8" }],
      ["fetch 42", "http://127.0.0.1:9/m.json", { fetch: 42 }],
      ["options 42", "http://127.0.0.1:9/m.json", 42],
      ["an unknown option", "http://127.0.0.1:9/m.json", { fetch: ok, partbytes: 8 }],
      ['manifestSha256 "xyz"', "http://127.0.0.1:9/m.json", { fetch: ok, manifestSha256: "xyz" }],
    ] as const
  ) {
    trials.push({
      family: "cache",
      label: `WeightCache.load(${what})`,
      expect: "refuse",
      names: ["manifestUrl", "url", "partBytes", "fetch", "options", "partbytes", "manifestSha256", "manifest"],
      clearAs: [WeightCacheError],
      run: () => cache.load(url as never, options as never),
    });
  }
  trials.push({
    family: "cache",
    label: "new WeightCache(undefined).list()",
    expect: "refuse",
    names: ["store"],
    run: () => new WeightCache(undefined as never).list(),
  });
  await TALLY.run(trials);
});

Deno.test("battery: sampler — logits and options that are not what sampleNext takes", async () => {
  const logits = new Float32Array([0.1, 2, -1, 0.5]);
  const trials: Trial[] = [];
  const cases: [string, unknown, unknown, Trial["expect"], string[]][] = [
    ["logits undefined", undefined, { mode: "greedy" }, "refuse", ["logits"]],
    ["logits empty", new Float32Array(0), { mode: "greedy" }, "refuse", ["logits"]],
    ["logits a plain array", [1, 2], { mode: "greedy" }, "either", ["logits"]],
    ["logits all NaN", new Float32Array([NaN, NaN]), { mode: "greedy" }, "either", ["logit", "logits"]],
    ["options undefined", logits, undefined, "either", ["options"]],
    ["mode nope", logits, { mode: "nope" }, "refuse", ["mode"]],
    ["temperature 0", logits, { mode: "sample", temperature: 0, seed: 1 }, "refuse", ["temperature"]],
    ["temperature NaN", logits, { mode: "sample", temperature: NaN, seed: 1 }, "refuse", ["temperature"]],
    ["temperature 1e39", logits, { mode: "sample", temperature: 1e39, seed: 1 }, "either", ["temperature"]],
    ["topK -1", logits, { mode: "sample", temperature: 1, topK: -1, seed: 1 }, "refuse", ["topK"]],
    ["topK 2.5", logits, { mode: "sample", temperature: 1, topK: 2.5, seed: 1 }, "refuse", ["topK"]],
    ["topP 2", logits, { mode: "sample", temperature: 1, topP: 2, seed: 1 }, "refuse", ["topP"]],
    ["topP NaN", logits, { mode: "sample", temperature: 1, topP: NaN, seed: 1 }, "refuse", ["topP"]],
    ["minP -0.5", logits, { mode: "sample", temperature: 1, minP: -0.5, seed: 1 }, "refuse", ["minP"]],
    ["seed 1.5", logits, { mode: "sample", temperature: 1, seed: 1.5 }, "refuse", ["seed"]],
    ['seed "1"', logits, { mode: "sample", temperature: 1, seed: "1" }, "refuse", ["seed"]],
    ["an unknown key", logits, { mode: "sample", temperature: 1, seed: 1, topk: 3 }, "refuse", ["topk"]],
  ];
  for (const [what, l, options, expect, names] of cases) {
    trials.push({
      family: "sampler",
      label: `sampleNext(${what})`,
      expect,
      names,
      run: () => sampleNext(l as Float32Array, [], options as never),
      check: (id) =>
        typeof id === "number" && Number.isInteger(id) && id >= 0 && id < ((l as Float32Array)?.length ?? 0)
          ? undefined
          : `returned ${String(id)}`,
    });
  }
  await TALLY.run(trials);
});

Deno.test("battery: weights, manifests, stores, constraints — bad formats, garbage and wrong types", async () => {
  const trials: Trial[] = [];
  const refuse = (label: string, run: () => unknown, names: string[], clearAs?: Trial["clearAs"]) =>
    trials.push({ family: "more", label, expect: "refuse", names, clearAs, run });
  for (const [what, format] of [['"q3"', "q3"], ['"Q8"', "Q8"], ['""', ""], ["undefined", undefined], ["42", 42]]) {
    refuse(`requireWeightFormat(${what})`, () => requireWeightFormat("load", format), ["format"]);
    refuse(`convertedMetadata(${what})`, () => convertedMetadata(format as never), ["format"]);
  }
  refuse('convertedFormat({ format: "q3", permutation })', () => convertedFormat({ format: "q3", permutation: "x" }), [
    "format",
  ]);
  refuse("convertedFormat(undefined)", () => convertedFormat(undefined as never), ["metadata"]);
  for (
    const [what, text] of [
      ["undefined", undefined],
      ["42", 42],
      ["not JSON", "{"],
      ["[]", "[]"],
      ["{}", "{}"],
      ["a wrong format tag", '{"format":"other","files":[]}'],
      ["files not an array", '{"format":"xpu-weight-manifest","version":1,"files":{}}'],
      ["a file without sha256", '{"format":"xpu-weight-manifest","version":1,"files":[{"name":"a","bytes":1}]}'],
      [
        "a negative size",
        '{"format":"xpu-weight-manifest","version":1,"files":[{"name":"a","bytes":-1,"sha256":"0"}]}',
      ],
    ] as const
  ) {
    refuse(`parseManifest(${what})`, () => parseManifest(text as never), ["manifest", "files", "format", "source"]);
  }
  refuse("serializeManifest(undefined)", () => serializeManifest(undefined as never), ["manifest"]);
  refuse("sha256Hex(undefined)", () => sha256Hex(undefined as never), ["bytes"]);
  refuse('sha256Hex("abc")', () => sha256Hex("abc" as never), ["bytes"]);
  refuse("manifestKey(undefined)", () => manifestKey(undefined as never), ["manifestBytes", "bytes"]);
  const store = memoryStore();
  refuse('memoryStore().put("k", "text")', () => store.put("k", "text" as never), ["bytes"]);
  refuse("memoryStore().put(undefined, bytes)", () => store.put(undefined as never, new Uint8Array(1)), ["key"]);
  refuse('browserStore("nope")', () => browserStore("nope" as never), ["kind"]);
  refuse('scopedStore(undefined, "model.")', () => scopedStore(undefined as never, "model."), ["store"]);
  refuse(
    "scopedStore(store, 42)",
    () => scopedStore({ tensors: [], metadata: {}, info: () => undefined } as never, 42 as never),
    ["prefix"],
  );
  const codec = {
    vocabSize: 257, // the 256 bytes, and EOS (256)
    encode: (text: string) => [...new TextEncoder().encode(text)],
    tokenBytes: (id: number) => (id < 256 ? new Uint8Array([id]) : new Uint8Array(0)),
  };
  for (
    const [what, spec] of [
      ["undefined", undefined],
      ["{}", {}],
      ["segments 42", { segments: 42, eosTokenId: 256 }],
      ["a segment of unknown kind", { segments: [{ kind: "regex", text: "a" }], eosTokenId: 256 }],
      ["an enum without choices", { segments: [{ kind: "enum" }], eosTokenId: 256 }],
      ["a freeText with maxLength -1", {
        segments: [{ kind: "freeText", forbiddenChars: [], maxLength: -1 }],
        eosTokenId: 3,
      }],
      ["eosTokenId 1.5", { segments: [{ kind: "literal", text: "a" }], eosTokenId: 1.5 }],
    ] as const
  ) {
    refuse(`new LineFormatConstraint(codec, ${what})`, () => new LineFormatConstraint(codec, spec as never), [
      "spec",
      "segments",
      "segment 0",
      "segments[0]",
      "kind",
      "choices",
      "maxLength",
      "eosTokenId",
    ]);
  }
  refuse(
    "new LineFormatConstraint(undefined, spec)",
    () => new LineFormatConstraint(undefined as never, { segments: [{ kind: "literal", text: "a" }], eosTokenId: 256 }),
    ["codec"],
  );
  const constraint = new LineFormatConstraint(codec, { segments: [{ kind: "literal", text: "a" }], eosTokenId: 256 });
  for (const [what, prefix] of [["undefined", undefined], ["[-1]", [-1]], ["[1.5]", [1.5]], ['"ab"', "ab"]] as const) {
    refuse(`constraint.nextAllowed(${what})`, () => constraint.nextAllowed(prefix as never), [
      "prefixTokens",
      "token id",
      "id",
    ]);
    refuse(`constraint.mask(${what})`, () => constraint.mask(prefix as never), ["prefixTokens", "token id", "id"]);
  }
  await TALLY.run(trials);
});

Deno.test("battery: the counts — no crash, hang, silent answer or refused valid call; few vague refusals", async () => {
  const total = TALLY.total();
  const path = Deno.env.get("BATTERY_SUMMARY");
  if (path) await writeSummary(path, "llm", TALLY);
  const findings = Deno.env.get("BATTERY_FINDINGS");
  if (findings) await Deno.writeTextFile(findings, TALLY.report(Infinity) + "\n");
  console.log(`llm battery: ${JSON.stringify(total)}`);
  const bad = total.crash + total.hang + total.silent + total.refused;
  ok(bad === 0 && total.vague <= VAGUE_BUDGET, `${JSON.stringify(total)}\n${TALLY.report()}`);
  ok(total.calls > 200, `${total.calls} calls`);
});
