// Every fixture pair made by the Python sentencepiece package (goldens/gen.py) held to exact equality.
import assert from "node:assert/strict";
import { SentencePieceTokenizer } from "./sentencepiece.ts";
import { readSentencePieceModel } from "./sentencepiece_model.ts";

const MODELS = ["unigram_nfkc", "unigram_identity", "bpe_nfkc", "bpe_identity", "unigram_nmt_nfkc"];
const dir = new URL("./goldens/", import.meta.url);

interface Fixture {
  vocab_size: number;
  unk_id: number;
  bos_id: number;
  eos_id: number;
  pad_id: number;
  options: Record<string, unknown>;
  vocab: { piece: string; score: number; type: string }[];
  pairs: { text: string; ids: number[]; pieces: string[]; decoded: string }[];
  decodes: { ids: number[]; decoded: string }[];
}

function load(name: string): { tokenizer: SentencePieceTokenizer; fixture: Fixture; bytes: Uint8Array } {
  const bytes = Deno.readFileSync(new URL(`sp_${name}.model`, dir));
  const fixture = JSON.parse(Deno.readTextFileSync(new URL(`sp_${name}.json`, dir))) as Fixture;
  return { tokenizer: new SentencePieceTokenizer(bytes), fixture, bytes };
}

for (const name of MODELS) {
  Deno.test(`sentencepiece ${name}: the .model file reads as the package reads it`, () => {
    const { tokenizer, fixture } = load(name);
    assert.equal(tokenizer.vocabSize, fixture.vocab_size);
    assert.equal(tokenizer.unkId, fixture.unk_id);
    const orNull = (id: number) => (id < 0 ? null : id);
    assert.equal(tokenizer.bosId, orNull(fixture.bos_id));
    assert.equal(tokenizer.eosId, orNull(fixture.eos_id));
    assert.equal(tokenizer.padId, orNull(fixture.pad_id));
    const pieces = tokenizer.model.pieces;
    fixture.vocab.forEach((v, id) => {
      assert.equal(pieces[id].piece, v.piece, `piece ${id}`);
      assert.equal(pieces[id].score, Math.fround(v.score), `score of ${id}`);
      const type = pieces[id].type;
      const expected = type === "normal" || type === "user_defined" ? "other" : type;
      assert.equal(expected, v.type, `type of ${id}`);
    });
    assert.equal(tokenizer.model.modelType, fixture.options.model_type);
    assert.equal(tokenizer.model.byteFallback, fixture.options.byte_fallback);
    assert.equal(tokenizer.model.normalizer.name, fixture.options.normalization_rule_name);
    // What spm stores per rule: the name, and the compiled table — empty for "identity" only.
    assert.equal(
      tokenizer.model.normalizer.precompiledCharsmap.length > 0,
      fixture.options.normalization_rule_name !== "identity",
    );
    assert.equal(tokenizer.model.normalizer.addDummyPrefix, fixture.options.add_dummy_prefix);
    assert.equal(tokenizer.model.normalizer.removeExtraWhitespaces, fixture.options.remove_extra_whitespaces);
  });

  Deno.test(`sentencepiece ${name}: encode equals the package on every pair`, () => {
    const { tokenizer, fixture } = load(name);
    assert.ok(fixture.pairs.length >= 80);
    for (const { text, ids, pieces } of fixture.pairs) {
      const got = tokenizer.encode(text);
      assert.deepEqual(got, ids, `encode ${JSON.stringify(text)}`);
      // Pieces too, except merged unknowns, whose piece upstream is the surface text.
      got.forEach((id, i) => {
        if (id !== tokenizer.unkId) assert.equal(tokenizer.idToToken(id), pieces[i]);
      });
    }
  });

  Deno.test(`sentencepiece ${name}: decode equals the package on every pair and id sequence`, () => {
    const { tokenizer, fixture } = load(name);
    for (const { ids, decoded } of fixture.pairs) assert.equal(tokenizer.decode(ids), decoded, `decode ${ids}`);
    assert.ok(fixture.decodes.length >= 24);
    for (const { ids, decoded } of fixture.decodes) assert.equal(tokenizer.decode(ids), decoded, `decode ${ids}`);
  });

  Deno.test(`sentencepiece ${name}: streaming decode never emits a partial character`, () => {
    const { tokenizer, fixture } = load(name);
    for (const { ids, decoded } of [...fixture.pairs, ...fixture.decodes]) {
      const stream = tokenizer.decodeStream();
      let text = "";
      for (const id of ids) {
        text += stream.push(id);
        assert.ok(decoded.startsWith(text), `stream prefix ${JSON.stringify(text)} of ${JSON.stringify(decoded)}`);
      }
      assert.equal(text + stream.flush(), decoded);
    }
  });
}

Deno.test("sentencepiece: the stored charsmap is executed, so nmt_nfkc (not NFKC) matches upstream", () => {
  // nmt_nfkc maps tabs and newlines to spaces; String.prototype.normalize("NFKC") keeps them.
  const { tokenizer, fixture } = load("unigram_nmt_nfkc");
  const pair = fixture.pairs.find((p) => p.text === "tab\tseparated\tvalues")!;
  assert.equal(pair.decoded, "tab separated values");
  assert.notEqual(pair.text.normalize("NFKC"), pair.decoded);
  assert.equal(tokenizer.decode(tokenizer.encode(pair.text)), pair.decoded);
});

Deno.test("sentencepiece: a multi-byte character split over byte-fallback tokens is held until complete", () => {
  const { tokenizer } = load("unigram_nfkc");
  const byte = (b: number) =>
    tokenizer.model.pieces.findIndex((p) => p.piece === `<0x${b.toString(16).toUpperCase()}>`);
  const stream = tokenizer.decodeStream();
  // 😀 is F0 9F 98 80
  assert.equal(stream.push(byte(0xf0)), "");
  assert.equal(stream.push(byte(0x9f)), "");
  assert.equal(stream.push(byte(0x98)), "");
  assert.equal(stream.push(byte(0x80)), "😀");
  // A truncated character is one U+FFFD per byte at the end, as upstream decodes it.
  assert.equal(stream.push(byte(0xe3)), "");
  assert.equal(stream.push(byte(0x81)), "");
  assert.equal(stream.flush(), "\ufffd\ufffd");
});

Deno.test("sentencepiece: refuses what it does not implement, by name", () => {
  const { bytes } = load("unigram_identity");
  const model = readSentencePieceModel(bytes);
  assert.throws(
    () => new SentencePieceTokenizer({ ...model, modelType: "word" }),
    /model type "word" is not implemented/,
  );
  assert.throws(
    () => new SentencePieceTokenizer({ ...model, treatWhitespaceAsSuffix: true }),
    /treat_whitespace_as_suffix is not implemented/,
  );
  assert.throws(
    () => new SentencePieceTokenizer({ ...model, normalizer: { ...model.normalizer, name: "nfkc_cf" } }),
    /normalizer "nfkc_cf" has no precompiled charsmap/,
  );
  const unused = model.pieces.map((p, i) => (i === 10 ? { ...p, type: "unused" as const } : p));
  assert.throws(() => new SentencePieceTokenizer({ ...model, pieces: unused }), /UNUSED piece .* is not implemented/);
  assert.throws(
    () => load("unigram_identity").tokenizer.decode([800]),
    /token id must be an integer in \[0, 800\), got 800/,
  );
});
