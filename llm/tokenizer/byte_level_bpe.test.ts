// Every fixture pair made by the Python tokenizers package (goldens/gen.py) held to exact equality.
import assert from "node:assert/strict";
import { ByteLevelBpeTokenizer } from "./byte_level_bpe.ts";

const dir = new URL("./goldens/", import.meta.url);
interface Fixture {
  vocab_size: number;
  pairs: { text: string; ids: number[]; tokens: string[]; decoded: string; decoded_skip_special: string }[];
  decodes: { ids: number[]; decoded: string; decoded_skip_special: string }[];
}
function load(name: string) {
  const json = Deno.readTextFileSync(new URL(`hf_${name}.tokenizer.json`, dir));
  const fixture = JSON.parse(Deno.readTextFileSync(new URL(`hf_${name}.json`, dir))) as Fixture;
  return { tokenizer: new ByteLevelBpeTokenizer(json), fixture, json };
}

for (const name of ["llama3_style", "gpt2_style"]) {
  Deno.test(`byte-level BPE ${name}: encode equals the package on every pair`, () => {
    const { tokenizer, fixture } = load(name);
    assert.equal(tokenizer.vocabSize, fixture.vocab_size);
    assert.ok(fixture.pairs.length >= 80);
    for (const { text, ids, tokens } of fixture.pairs) {
      const got = tokenizer.encode(text);
      assert.deepEqual(got, ids, `encode ${JSON.stringify(text)}`);
      assert.deepEqual(got.map((id) => tokenizer.idToToken(id)), tokens);
    }
  });

  Deno.test(`byte-level BPE ${name}: decode equals the package, with and without special tokens`, () => {
    const { tokenizer, fixture } = load(name);
    for (const { ids, decoded, decoded_skip_special } of [...fixture.pairs, ...fixture.decodes]) {
      assert.equal(tokenizer.decode(ids), decoded, `decode ${ids}`);
      assert.equal(tokenizer.decode(ids, { skipSpecialTokens: true }), decoded_skip_special, `decode ${ids}`);
    }
  });

  Deno.test(`byte-level BPE ${name}: streaming decode never emits a partial character`, () => {
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

Deno.test("byte-level BPE: split characters are held until complete; Llama 3 special ids by name", () => {
  const { json } = load("llama3_style");
  const tokenizer = new ByteLevelBpeTokenizer(json, { bos: "<|begin_of_text|>", eos: "<|eot_id|>" });
  assert.equal(tokenizer.bosId, 0);
  assert.equal(tokenizer.eosId, 2);
  const ids = tokenizer.encode("絵文字😀");
  assert.ok(ids.length > 4); // the vocabulary has no whole token for these: bytes are split
  const stream = tokenizer.decodeStream();
  const parts = ids.map((id) => stream.push(id));
  assert.ok(parts.every((p) => !p.includes("\ufffd")));
  assert.equal(parts.join("") + stream.flush(), "絵文字😀");
});

Deno.test("byte-level BPE: refuses what it does not implement, by name", () => {
  const config = JSON.parse(load("gpt2_style").json);
  assert.throws(
    () => new ByteLevelBpeTokenizer({ ...config, normalizer: { type: "NFKC" } }),
    /normalizer "NFKC" is not implemented/,
  );
  assert.throws(
    () => new ByteLevelBpeTokenizer({ ...config, model: { ...config.model, type: "WordPiece" } }),
    /model "WordPiece" is not implemented/,
  );
  assert.throws(
    () => new ByteLevelBpeTokenizer({ ...config, pre_tokenizer: { type: "Whitespace" } }),
    /pre-tokenizer "Whitespace" is not implemented/,
  );
  const added = config.added_tokens.map((t: { id: number }) => ({ ...t, lstrip: true }));
  assert.throws(() => new ByteLevelBpeTokenizer({ ...config, added_tokens: added }), /lstrip/);
  const empty = [...config.added_tokens, { id: config.added_tokens.length + 1000, content: "", special: true }];
  assert.throws(() => new ByteLevelBpeTokenizer({ ...config, added_tokens: empty }), /an empty added token/);
});
