// Every string of llm/fixtures/tokenizer-corpus/corpus.json.gz (over 2,000: multilingual text, emoji,
// special-token text, whitespace and digit runs, lone surrogates, inputs of 10k+ characters) encoded
// and decoded by Qwen3's and T5's tokenizers, against the ids transformers, tokenizers and
// sentencepiece gave on the GPU machine (the file's gen.py). Without the file these tests are ignored,
// saying why, except under CI=true, where they fail.
import assert from "node:assert/strict";
import { gunzip, qwenFiles, qwenTokenizer, t5Model, t5Tokenizer } from "../fixtures/tokenizer_files.ts";
import { qwenChatPrompt } from "./qwen.ts";

interface Corpus {
  versions: Record<string, string>;
  files_sha256: Record<string, string>;
  categories: string[];
  texts: string[];
  utf8_bytes: number[];
  qwen: number[][];
  t5: number[][];
  t5_fast_differs: Record<string, number[]>;
  qwen_decoded: Record<string, string>;
  t5_decoded: Record<string, string>;
  qwen_decodes: { ids: number[]; text: string; skip: string }[];
  t5_decodes: { ids: number[]; text: string }[];
  chat: { index: number; text: string; no_thinking: string; truncated: Record<string, number[]> }[];
  t5_truncated: { index: number; truncated: Record<string, number[]> }[];
}

const file = new URL("../fixtures/tokenizer-corpus/corpus.json.gz", import.meta.url);
const missing = await Deno.stat(file).then(() => null, () => "llm/fixtures/tokenizer-corpus/corpus.json.gz");
let loaded: Promise<Corpus> | null = null;
const corpus = () => loaded ??= gunzip(file).then((bytes) => JSON.parse(new TextDecoder().decode(bytes)));

function corpusTest(name: string, fn: (corpus: Corpus) => Promise<void> | void): void {
  const how = "gen.py beside it writes it on the GPU machine";
  if (missing && Deno.env.get("CI") === "true") {
    Deno.test(name, () => {
      throw new Error(`CI=true but ${missing} is missing: ${how}`);
    });
  } else if (missing) {
    Deno.test({ name: `${name} (ignored: ${missing} is missing; ${how})`, ignore: true, fn() {} });
  } else Deno.test(name, async () => await fn(await corpus()));
}

/** Fails once with the first few mismatches listed, rather than at the first. */
function assertAllEqual(what: string, count: number, check: (i: number) => string | null): void {
  const failures: string[] = [];
  for (let i = 0; i < count; i++) {
    const failure = check(i);
    if (failure !== null) failures.push(failure);
  }
  assert.equal(
    failures.length,
    0,
    `${what}: ${failures.length} of ${count} differ, e.g.\n${failures.slice(0, 8).join("\n")}`,
  );
}

const show = (text: string) => JSON.stringify(text.length > 60 ? text.slice(0, 60) + "…" : text);
const same = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((x, i) => x === b[i]);

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(bytes)));
  return [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
}

corpusTest(
  "tokenizer corpus: made from this repository's files, over 2,000 strings, same input on both sides",
  async (c) => {
    const files = await qwenFiles();
    assert.deepEqual(c.files_sha256, {
      "qwen3/vocab.json": await sha256(files.vocab),
      "qwen3/merges.txt": await sha256(files.merges),
      "qwen3/tokenizer_config.json": await sha256(files.tokenizerConfig),
      "t5/spiece.model": await sha256(t5Model()),
    });
    assert.ok(c.texts.length >= 2000, `${c.texts.length} strings`);
    assert.ok(c.texts.filter((t) => t.length >= 10_000).length >= 10, "long inputs");
    assert.ok(c.texts.some((t) => !t.isWellFormed()), "lone surrogates");
    // Python was fed the text TextEncoder makes (lone surrogates as U+FFFD): the byte counts agree.
    const encoder = new TextEncoder();
    assertAllEqual("UTF-8 length", c.texts.length, (i) => {
      const n = encoder.encode(c.texts[i]).length;
      return n === c.utf8_bytes[i] ? null : `${i} ${show(c.texts[i])}: ${n} bytes here, ${c.utf8_bytes[i]} in Python`;
    });
  },
);

corpusTest("tokenizer corpus: Qwen3 encodes every string to transformers' ids", async (c) => {
  const qwen = await qwenTokenizer();
  assertAllEqual("Qwen3 ids", c.texts.length, (i) => {
    const got = qwen.encode(c.texts[i]);
    return same(got, c.qwen[i])
      ? null
      : `${i} (${c.categories[i]}) ${show(c.texts[i])}: ${got.slice(0, 12)} vs ${c.qwen[i].slice(0, 12)}`;
  });
});

corpusTest("tokenizer corpus: Qwen3 decodes every encoding and random id sequences as transformers", async (c) => {
  const qwen = await qwenTokenizer();
  assertAllEqual("Qwen3 decode", c.texts.length, (i) => {
    const expected = c.qwen_decoded[i] ?? c.texts[i].toWellFormed();
    const got = qwen.decode(c.qwen[i]);
    return got === expected ? null : `${i} ${show(c.texts[i])}: ${show(got)} vs ${show(expected)}`;
  });
  assert.ok(c.qwen_decodes.length >= 100);
  assertAllEqual("Qwen3 decode of random ids", c.qwen_decodes.length, (i) => {
    const { ids, text, skip } = c.qwen_decodes[i];
    const got = qwen.decode(ids), gotSkip = qwen.decode(ids, { skipSpecialTokens: true });
    return got === text && gotSkip === skip
      ? null
      : `[${ids}]: ${show(got)} / ${show(gotSkip)} vs ${show(text)} / ${show(skip)}`;
  });
});

corpusTest("tokenizer corpus: T5 encodes every string to sentencepiece's ids + </s>, and decodes them back", (c) => {
  const t5 = t5Tokenizer();
  assertAllEqual("T5 ids", c.texts.length, (i) => {
    const got = t5.encode(c.texts[i], { addEos: true });
    return same(got, c.t5[i])
      ? null
      : `${i} (${c.categories[i]}) ${show(c.texts[i])}: ${got.slice(0, 12)} vs ${c.t5[i].slice(0, 12)}`;
  });
  assertAllEqual("T5 decode", c.texts.length, (i) => {
    const expected = c.t5_decoded[i] ?? c.texts[i].toWellFormed();
    const got = t5.decode(c.t5[i]);
    return got === expected ? null : `${i} ${show(c.texts[i])}: ${show(got)} vs ${show(expected)}`;
  });
  assertAllEqual("T5 decode of random ids", c.t5_decodes.length, (i) => {
    const { ids, text } = c.t5_decodes[i];
    const got = t5.decode(ids);
    return got === text ? null : `[${ids}]: ${show(got)} vs ${show(text)}`;
  });
});

corpusTest(
  "tokenizer corpus: Qwen3's chat template and right truncation, T5's truncation, as transformers",
  async (c) => {
    const qwen = await qwenTokenizer();
    const t5 = t5Tokenizer();
    assert.ok(c.chat.length >= 40);
    for (const { index, text, no_thinking, truncated } of c.chat) {
      const prompt = c.texts[index].toWellFormed();
      assert.equal(qwenChatPrompt(prompt), text, `template of ${show(prompt)}`);
      assert.equal(qwenChatPrompt(prompt, { enableThinking: false }), no_thinking);
      for (const [maxLength, ids] of Object.entries(truncated)) {
        assert.deepEqual(qwen.encode(text, { maxLength: Number(maxLength) }), ids, `${show(text)} to ${maxLength}`);
      }
    }
    assert.ok(c.t5_truncated.length >= 20);
    for (const { index, truncated } of c.t5_truncated) {
      for (const [maxLength, ids] of Object.entries(truncated)) {
        const got = t5.encode(c.texts[index], { addEos: true, maxLength: Number(maxLength) });
        assert.deepEqual(got, ids, `${show(c.texts[index])} to ${maxLength}`);
      }
    }
  },
);
