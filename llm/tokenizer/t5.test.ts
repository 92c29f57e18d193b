// T5's SentencePiece unigram model (spiece.model, the tokenizer of Anima's LLM adapter): the oracle's 15
// prompts (sentencepiece + `</s>`, equal to T5TokenizerFast on all 15), segmentations checked against
// a brute-force search over the model's own scores, and the normaliser's effects that Unicode's NFKC
// and the nmt rule's whitespace mapping make derivable by hand.
import assert from "node:assert/strict";
import { oracleGoldens, t5Model, t5Tokenizer } from "../fixtures/tokenizer_files.ts";
import { SentencePieceTokenizer } from "./sentencepiece.ts";
import { readSentencePieceModel } from "./sentencepiece_model.ts";

const goldens = oracleGoldens();
const EOS = 1, UNK = 2, PAD = 0;

Deno.test("t5: the oracle's 15 prompts encode to sentencepiece's ids with </s> appended", () => {
  const t5 = t5Tokenizer();
  goldens.prompts.forEach((prompt, i) => {
    assert.deepEqual(t5.encode(prompt, { addEos: true }), goldens.t5.ids[i], `encode ${JSON.stringify(prompt)}`);
  });
  assert.deepEqual(t5.encode("", { addEos: true }), [EOS]);
  assert.deepEqual(t5.encode(""), []);
});

Deno.test("t5: the model reads as T5's: 32,000 unigram pieces, pad 0, </s> 1, unk 2, no byte fallback", () => {
  const t5 = t5Tokenizer();
  assert.equal(t5.vocabSize, 32_000);
  assert.equal(t5.model.modelType, "unigram");
  assert.equal(t5.model.byteFallback, false);
  assert.deepEqual([t5.padId, t5.eosId, t5.unkId], [goldens.t5.pad[1], goldens.t5.eos[1], goldens.t5.unk[1]]);
  assert.deepEqual([t5.padId, t5.eosId, t5.unkId], [PAD, EOS, UNK]);
  assert.equal(t5.bosId, null);
  assert.equal(t5.model.normalizer.name, "nmt_nfkc");
  assert.ok(t5.model.normalizer.addDummyPrefix && t5.model.normalizer.removeExtraWhitespaces);
});

Deno.test("t5: each segmentation scores as high as the best of every segmentation (brute force)", () => {
  const t5 = t5Tokenizer();
  const { pieces } = readSentencePieceModel(t5Model());
  const score = new Map(pieces.filter((p) => p.type === "normal").map((p) => [p.piece, p.score]));
  // Every split of `s` into pieces of the vocabulary, with the f64 sum of their scores.
  const best = (s: string): number => {
    if (s === "") return 0;
    let top = -Infinity;
    for (let i = 1; i <= s.length; i++) {
      const head = score.get(s.slice(0, i));
      if (head !== undefined) top = Math.max(top, head + best(s.slice(i)));
    }
    return top;
  };
  const texts = ["a cat", "hello world", "masterpiece", "best quality", "absurdres", "looking at viewer", "1girl"];
  for (const text of texts) {
    const ids = t5.encode(text);
    const spelled = ids.map((id) => t5.idToToken(id)).join("");
    assert.equal(spelled, "\u2581" + text.replaceAll(" ", "\u2581"), "the pieces spell the normalized text");
    const ours = ids.reduce((sum, id) => sum + pieces[id].score, 0);
    // Upstream sums f32 scores in f32: equal to the f64 optimum within a few f32 roundings.
    assert.ok(Math.abs(ours - best(spelled)) < 1e-4, `${text}: ${ours} vs best ${best(spelled)}`);
  }
  // "a cat" is "▁" "a" "▁cat", not "▁a" "▁cat": the split the scores prefer, whatever the look.
  assert.deepEqual(t5.encode("a cat"), [3, 9, 1712]);
});

Deno.test("t5: the charsmap's NFKC and nmt whitespace mapping, and whitespace collapse", () => {
  const t5 = t5Tokenizer();
  const same = (a: string, b: string) => assert.deepEqual(t5.encode(a), t5.encode(b), `${JSON.stringify(a)} as ${b}`);
  same("\ufb01ne", "fine"); // U+FB01 LATIN SMALL LIGATURE FI: <compat> f i
  same("\uff21\uff22\uff23", "ABC"); // fullwidth: <wide> A B C
  same("\u2460", "1"); // CIRCLED DIGIT ONE: <circle> 1
  same("\u216b", "XII"); // ROMAN NUMERAL TWELVE: <compat> X I I
  same("a\u00a0b", "a b"); // NO-BREAK SPACE: <noBreak> space
  same("a\u3000b", "a b"); // IDEOGRAPHIC SPACE: <wide> space
  same("a\tb", "a b"); // nmt: tab and newlines are spaces
  same("a\nb", "a b");
  same("a\r\nb", "a b");
  same("  a   b  ", "a b"); // leading, trailing and repeated spaces dropped; one ▁ prefix added
  assert.deepEqual(t5.encode("a b").map((id) => t5.idToToken(id)), ["\u2581", "a", "\u2581", "b"]);
  assert.notDeepEqual(t5.encode("ABC"), t5.encode("abc")); // no case folding
});

Deno.test("t5: unknown characters merge into one <unk>; special-token text is plain text", () => {
  const t5 = t5Tokenizer();
  const { pieces } = readSentencePieceModel(t5Model());
  assert.ok(!pieces.some((p) => p.type === "normal" && /[日本語<]/.test(p.piece)), "no piece holds these characters");
  assert.deepEqual(t5.encode("日本語", { addEos: true }), [3, UNK, EOS]); // "▁", then one <unk> for three
  // sentencepiece never produces a control id from text: "</s>" is "▁" <unk> "/" "s" ">", not 1.
  assert.deepEqual(t5.encode("</s>").map((id) => t5.idToToken(id)), ["\u2581", "<unk>", "/", "s", ">"]);
  assert.equal(t5.decode([3, 9, 1712, EOS]), "a cat"); // </s> is invisible in decoded text
});

Deno.test("t5: maxLength keeps </s> last, as transformers' truncation does", () => {
  const t5 = t5Tokenizer();
  const full = t5.encode("a cat", { addEos: true });
  assert.deepEqual(full, [3, 9, 1712, EOS]);
  assert.deepEqual(t5.encode("a cat", { addEos: true, maxLength: 4 }), full);
  assert.deepEqual(t5.encode("a cat", { addEos: true, maxLength: 3 }), [3, 9, EOS]);
  assert.deepEqual(t5.encode("a cat", { addEos: true, maxLength: 1 }), [EOS]);
  assert.deepEqual(t5.encode("a cat", { maxLength: 2 }), [3, 9]);
  assert.throws(() => t5.encode("a cat", { maxLength: -1 }), /maxLength must be an integer >= 1, got -1/);
  const noEos = new SentencePieceTokenizer({ ...readSentencePieceModel(t5Model()), eosPiece: "<none>" });
  assert.throws(() => noEos.encode("a", { addEos: true }), /addEos, but the model has no EOS piece "<none>"/);
});

Deno.test("sentencepiece: encode refuses a non-string, naming the argument", () => {
  const t5 = t5Tokenizer();
  assert.throws(
    () => t5.encode(undefined as unknown as string),
    /SentencePieceTokenizer.encode: text must be a string, got undefined/,
  );
  assert.throws(
    () => t5.encode(42 as unknown as string),
    /SentencePieceTokenizer.encode: text must be a string, got number 42/,
  );
  assert.throws(() => t5.encode(["a"] as unknown as string), /text must be a string, got an array/);
});
