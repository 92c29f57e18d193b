// Qwen3's tokenizer (Qwen2Tokenizer) from the fixture's vocab.json + merges.txt + tokenizer_config.json:
// the oracle's 15 prompts (transformers 5.17 / tokenizers 0.23.2), cases whose ids are derived by hand
// from the pre-tokenizer's rules and vocab.json, and the conventions that have plausible alternatives.
import assert from "node:assert/strict";
import { gunzip, oracleGoldens, qwenFiles, qwenTokenizer } from "../fixtures/tokenizer_files.ts";
import { ByteLevelBpeTokenizer, toJsRegex } from "./byte_level_bpe.ts";
import { loadQwenTokenizer, QWEN_PRETOKENIZE_REGEX, qwenChatPrompt, qwenTokenizerJson } from "./qwen.ts";

const goldens = oracleGoldens();
const vocab: Record<string, number> = JSON.parse(
  new TextDecoder().decode(await gunzip(new URL("../fixtures/qwen3-tokenizer/vocab.json.gz", import.meta.url))),
);
/** Ids of tokens spelled as vocab.json spells them (GPT-2's byte alphabet: Ġ space, Ċ newline, ĉ tab). */
const idsOf = (...tokens: string[]) =>
  tokens.map((t) => {
    assert.ok(t in vocab, `${t} is in vocab.json`);
    return vocab[t];
  });
const IM_START = 151644, IM_END = 151645, ENDOFTEXT = 151643, THINK = 151667, THINK_END = 151668;

Deno.test("qwen: the oracle's 15 prompts encode to transformers' ids and decode back", async () => {
  const qwen = await qwenTokenizer();
  assert.equal(goldens.prompts.length, 15);
  goldens.prompts.forEach((prompt, i) => {
    assert.deepEqual(qwen.encode(prompt), goldens.qwen3.ids[i], `encode ${JSON.stringify(prompt)}`);
    // Decode returns the NFC form (prompt 14 holds no decomposed character, so it is the prompt).
    assert.equal(qwen.decode(goldens.qwen3.ids[i]), prompt.normalize("NFC"));
  });
});

Deno.test("qwen: vocabulary size, EOS and padding as tokenizer_config.json names them, no BOS", async () => {
  const qwen = await qwenTokenizer();
  assert.equal(qwen.vocabSize, goldens.qwen3.vocab_size_with_added); // 151,643 + 26 added
  assert.equal(qwen.eosId, goldens.qwen3.eos[1]);
  assert.equal(qwen.padId, goldens.qwen3.pad[1]);
  assert.equal(qwen.bosId, null);
  assert.equal(qwen.unkId, null);
  assert.equal(qwen.idToToken(IM_START), "<|im_start|>");
  assert.equal(qwen.idToToken(THINK_END), "</think>");
});

Deno.test("qwen: hand-derived ids (pre-tokenizer rules, then vocab.json)", async () => {
  const qwen = await qwenTokenizer();
  const cases: [string, number[]][] = [
    ["", []], // no BOS, no EOS: nothing
    ["Hello world", idsOf("Hello", "Ġworld")],
    ["a   b", idsOf("a", "ĠĠ", "Ġb")], // \s+(?!\S) leaves the last space to the word
    ["a    b", idsOf("a", "ĠĠĠ", "Ġb")],
    ["  ", idsOf("ĠĠ")],
    ["a\n\nb", idsOf("a", "ĊĊ", "b")], // \s*[\r\n]+
    ["\n\n\n", idsOf("ĊĊĊ")],
    ["a\tb", idsOf("a", "ĉb")], // a tab, like any non-letter, may lead a word
    ["12", idsOf("1", "2")], // \p{N}: one digit per piece
    ["it's", idsOf("it", "'s")],
    ["IT'S", idsOf("IT", "'S")],
    ["don't", idsOf("don", "'t")],
    ["we'll they're you've I'm he'd", idsOf("we", "'ll", "Ġthey", "'re", "Ġyou", "'ve", "ĠI", "'m", "Ġhe", "'d")],
    ["\u00e9", idsOf("Ã©")],
    ["e\u0301", idsOf("Ã©")], // NFC composes e + U+0301 first
    ["<|im_start|>user\nhi<|im_end|>", [IM_START, ...idsOf("user", "Ċ", "hi"), IM_END]],
    ["x<|endoftext|>x", [...idsOf("x"), ENDOFTEXT, ...idsOf("x")]],
    ["<think>x</think>", [THINK, ...idsOf("x"), THINK_END]], // added but not special: still matched
    ["<|im_start|><|im_start|>", [IM_START, IM_START]],
  ];
  for (const [text, ids] of cases) assert.deepEqual(qwen.encode(text), ids, `encode ${JSON.stringify(text)}`);
});

Deno.test("qwen: the pre-tokenizer's contractions fold case as Oniguruma does (ſ is s)", () => {
  const split = (text: string) => [...text.matchAll(toJsRegex(QWEN_PRETOKENIZE_REGEX))].map((m) => m[0]);
  assert.deepEqual(split("it'sound"), ["it", "'s", "ound"]);
  assert.deepEqual(split("IT'SOUND"), ["IT", "'S", "OUND"]);
  assert.deepEqual(split("it'\u017found"), ["it", "'\u017f", "ound"]); // U+017F folds to s
  assert.deepEqual(split("x'Sp 'LLy"), ["x", "'S", "p", " '", "LLy"]);
  // The rewritten group accepts exactly what a native case-insensitive group accepts, letter by
  // letter, over every code point.
  const letters = "strevmld";
  const folded = new RegExp(`^(?:${letters.split("").map((l) => `'${l}`).join("|")})$`, "iv");
  const ours = toJsRegex(`(?i:${letters.split("").map((l) => `'${l}`).join("|")})`);
  assert.ok(!ours.source.includes("(?i"), "the group is spelled out");
  const anchored = new RegExp(`^(?:${ours.source})$`, "v");
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp < 0xe000) continue;
    const s = "'" + String.fromCodePoint(cp);
    assert.equal(anchored.test(s), folded.test(s), `U+${cp.toString(16)}`);
  }
});

Deno.test("qwen: NFC is applied (without it, e + U+0301 would be other ids)", async () => {
  const files = await qwenFiles();
  const json = qwenTokenizerJson(files);
  const withoutNfc = new ByteLevelBpeTokenizer({ ...json, normalizer: null });
  const qwen = await qwenTokenizer();
  assert.deepEqual(qwen.encode("cafe\u0301"), qwen.encode("caf\u00e9"));
  assert.notDeepEqual(withoutNfc.encode("cafe\u0301"), qwen.encode("cafe\u0301"));
  // Added tokens are split off before normalizing: nothing composes across them.
  assert.deepEqual(qwen.encode("e<|im_end|>\u0301"), [...qwen.encode("e"), IM_END, ...qwen.encode("\u0301")]);
});

Deno.test("qwen: lone surrogates encode as U+FFFD, as TextEncoder makes them", async () => {
  const qwen = await qwenTokenizer();
  assert.deepEqual(qwen.encode("a\ud800b"), qwen.encode("a\ufffdb"));
  assert.deepEqual(qwen.encode("\udc00"), qwen.encode("\ufffd"));
  assert.deepEqual(qwen.encode("\ud83d\ud83d\ude00"), qwen.encode("\ufffd\u{1f600}"));
});

Deno.test("qwen: decode keeps special tokens unless told to skip them", async () => {
  const qwen = await qwenTokenizer();
  const ids = [IM_START, ...idsOf("user", "Ċ", "hi"), IM_END, THINK];
  assert.equal(qwen.decode(ids), "<|im_start|>user\nhi<|im_end|><think>");
  // <think> is an added token but not special: skipping special tokens keeps it.
  assert.equal(qwen.decode(ids, { skipSpecialTokens: true }), "user\nhi<think>");
});

Deno.test("qwen: chat prompt and right truncation as Z-Image tokenizes", async () => {
  const qwen = await qwenTokenizer();
  const prompt = qwenChatPrompt("a cat");
  assert.equal(prompt, "<|im_start|>user\na cat<|im_end|>\n<|im_start|>assistant\n");
  assert.equal(
    qwenChatPrompt("a cat", { enableThinking: false }),
    "<|im_start|>user\na cat<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
  );
  const ids = [
    IM_START,
    ...idsOf("user", "Ċ", "a", "Ġcat"),
    IM_END,
    ...idsOf("Ċ"),
    IM_START,
    ...idsOf("assistant", "Ċ"),
  ];
  assert.deepEqual(qwen.encode(prompt), ids);
  assert.deepEqual(qwen.encode(prompt, { maxLength: 512 }), ids);
  assert.deepEqual(qwen.encode(prompt, { maxLength: 4 }), ids.slice(0, 4)); // the right end goes
  assert.deepEqual(qwen.encode(prompt, { maxLength: 10 }), ids);
  assert.throws(() => qwen.encode(prompt, { maxLength: 0 }), /maxLength must be an integer >= 1, got 0/);
  assert.throws(() => qwen.encode(prompt, { maxLength: 1.5 }), /maxLength must be an integer >= 1, got 1.5/);
  assert.throws(() => qwenChatPrompt(undefined as unknown as string), /prompt must be a string, got undefined/);
});

Deno.test("qwen: encode refuses a non-string, naming the argument", async () => {
  const qwen = await qwenTokenizer();
  assert.throws(() => qwen.encode(undefined as unknown as string), /encode: text must be a string, got undefined/);
  assert.throws(() => qwen.encode(42 as unknown as string), /encode: text must be a string, got number 42/);
  assert.throws(() => qwen.encode(null as unknown as string), /encode: text must be a string, got null/);
});

Deno.test("qwen: long inputs (a 30,000-byte word of CJK letters, 40k mixed characters) round-trip", async () => {
  const qwen = await qwenTokenizer();
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 8;
  let cjk = "";
  for (let i = 0; i < 10_000; i++) cjk += String.fromCharCode(0x4e00 + next() % 20_000);
  const start = performance.now();
  const ids = qwen.encode(cjk);
  const ms = performance.now() - start;
  assert.equal(qwen.decode(ids), cjk);
  assert.ok(ms < 2000, `a 10,000-letter word took ${ms.toFixed(0)} ms`); // a rescan per merge takes minutes
  const mixed = goldens.prompts.join("\n").repeat(40);
  assert.equal(qwen.decode(qwen.encode(mixed)), mixed.normalize("NFC"));
});

Deno.test("qwen: tokenizer.json and the three-file form load the same tokenizer", async () => {
  const files = await qwenFiles();
  const json = JSON.stringify(qwenTokenizerJson(files));
  const fromJson = loadQwenTokenizer({ tokenizerJson: json, tokenizerConfig: files.tokenizerConfig });
  const qwen = await qwenTokenizer();
  assert.equal(fromJson.vocabSize, qwen.vocabSize);
  assert.equal(fromJson.eosId, qwen.eosId);
  goldens.prompts.forEach((prompt, i) => assert.deepEqual(fromJson.encode(prompt), goldens.qwen3.ids[i]));
  // Without tokenizer_config.json nothing names EOS or padding.
  const bare = loadQwenTokenizer({ tokenizerJson: json });
  assert.equal(bare.eosId, null);
  assert.equal(bare.padId, null);
});

Deno.test("qwen: refuses files it cannot read as Qwen2Tokenizer, by name", async () => {
  const files = await qwenFiles();
  const config = JSON.parse(new TextDecoder().decode(files.tokenizerConfig));
  const tiny = { vocab: { a: 0, b: 1, ab: 2 }, merges: "#version: 0.2\na b\n" };
  const load = (tokenizerConfig: object) => loadQwenTokenizer({ ...tiny, tokenizerConfig });
  assert.equal(load({ ...config, added_tokens_decoder: {} }).encode("ab").length, 1);
  assert.throws(() => load({ ...config, tokenizer_class: "LlamaTokenizer" }), /tokenizer_class "LlamaTokenizer"/);
  assert.throws(() => load({ ...config, add_prefix_space: true }), /add_prefix_space = true is not implemented/);
  assert.throws(() => load({ ...config, split_special_tokens: true }), /split_special_tokens = true/);
  assert.throws(
    () => loadQwenTokenizer({ ...tiny, merges: "a b c\n", tokenizerConfig: config }),
    /merges line 1 is not two tokens/,
  );
  assert.throws(
    () => loadQwenTokenizer({ vocab: "{", merges: "", tokenizerConfig: config }),
    /vocab is not JSON/,
  );
  assert.throws(
    () => loadQwenTokenizer({ vocab: tiny.vocab } as never),
    /files must hold tokenizerJson, or vocab, merges and tokenizerConfig/,
  );
});
