import assert from "node:assert/strict";
import { SentencePieceTokenizer } from "../tokenizer/sentencepiece.ts";
import { sampleNext } from "../sampler.ts";
import type { TokenCodec } from "./constraint.ts";
import { LineFormatConstraint, type LineFormatSpec } from "./line_format.ts";

// One token per ASCII character (id = char code), "ab" as one extra token (id 128), EOS = 0.
const charCodec: TokenCodec = {
  vocabSize: 129,
  encode: (text) => [...text].map((c) => c.charCodeAt(0)),
  tokenBytes: (id) => (id === 0 ? new Uint8Array(0) : id === 128 ? new Uint8Array([97, 98]) : new Uint8Array([id])),
};
const SPEC: LineFormatSpec = {
  segments: [
    { kind: "literal", text: "p: " },
    { kind: "enum", choices: ["allow", "deny"] },
    { kind: "literal", text: "\nt: " },
    { kind: "freeText", forbiddenChars: ["\n"], maxLength: 3 },
  ],
  eosTokenId: 0,
};
const ids = (text: string) => charCodec.encode(text);
const sorted = (set: ReadonlySet<number>) => [...set].sort((a, b) => a - b);

Deno.test("line format: the allowed sets, state by state, by hand", () => {
  const c = new LineFormatConstraint(charCodec, SPEC);
  assert.deepEqual(sorted(c.nextAllowed([])), ids("p"));
  assert.deepEqual(sorted(c.nextAllowed(ids("p: "))), ids("ad")); // enum: a(llow) or d(eny)
  assert.deepEqual(sorted(c.nextAllowed(ids("p: de"))), ids("n"));
  assert.deepEqual(sorted(c.nextAllowed(ids("p: deny"))), ids("\n"));
  // free text with 3 bytes of room: every byte token but "\n", the two-byte "ab", and EOS
  const free = c.nextAllowed(ids("p: deny\nt: "));
  assert.ok(free.has(0) && free.has(128) && free.has(32) && free.has(126));
  assert.ok(!free.has(10));
  assert.equal(free.size, 126 + 1 + 1); // ids 1..127 less "\n" (126), "ab" (128), EOS (0)
  // one byte of room left: "ab" no longer fits
  const last = c.nextAllowed([...ids("p: deny\nt: "), 120, 121]);
  assert.ok(!last.has(128) && last.has(122) && last.has(0));
  // full: only EOS
  assert.deepEqual(sorted(c.nextAllowed([...ids("p: deny\nt: "), 120, 121, 122])), [0]);
  // after EOS, or off the format: nothing
  assert.equal(c.nextAllowed([...ids("p: deny\nt: "), 0]).size, 0);
  assert.equal(c.nextAllowed(ids("q")).size, 0);
});

Deno.test("line format: the mask is the allowed set as a bitset", () => {
  const c = new LineFormatConstraint(charCodec, SPEC);
  for (const prefix of [[], ids("p: "), ids("p: allow\nt: "), [...ids("p: allow\nt: "), 128]]) {
    const mask = c.mask(prefix);
    assert.equal(mask.length, Math.ceil(129 / 32));
    const set = c.nextAllowed(prefix);
    for (let id = 0; id < 129; id++) assert.equal(((mask[id >> 5] >>> (id & 31)) & 1) === 1, set.has(id), `id ${id}`);
    assert.equal(c.mask(prefix), mask); // cached per state
  }
});

Deno.test("line format: refuses an enum that is not token-prefix-free, and other bad specs", () => {
  const enumOf = (choices: string[]): LineFormatSpec => ({ segments: [{ kind: "enum", choices }], eosTokenId: 0 });
  assert.throws(() => new LineFormatConstraint(charCodec, enumOf(["al", "allow"])), /token-prefix-free.*"al"/);
  assert.throws(() => new LineFormatConstraint(charCodec, enumOf(["deny", "deny"])), /token-prefix-free/);
  assert.doesNotThrow(() => new LineFormatConstraint(charCodec, enumOf(["ab", "ba"])));
  const free = { kind: "freeText", forbiddenChars: [], maxLength: 4 } as const;
  assert.throws(
    () => new LineFormatConstraint(charCodec, { segments: [free, { kind: "literal", text: "x" }], eosTokenId: 0 }),
    /freeText must be the last segment/,
  );
  assert.throws(
    () => new LineFormatConstraint(charCodec, { segments: [{ ...free, forbiddenChars: ["é"] }], eosTokenId: 0 }),
    /single ASCII characters/,
  );
  assert.throws(() => new LineFormatConstraint(charCodec, { segments: [free], eosTokenId: 129 }), /eosTokenId/);
  // "\n" is not in unigram_identity's vocabulary: its encoding holds <unk>, which cannot spell it
  const tokenizer = new SentencePieceTokenizer(
    Deno.readFileSync(new URL("../tokenizer/goldens/sp_unigram_identity.model", import.meta.url)),
  );
  assert.throws(
    () => new LineFormatConstraint(tokenizer, { segments: [{ kind: "literal", text: "a\nb" }], eosTokenId: 0 }),
    /do not spell it/,
  );
});

Deno.test("line format: random logits through the sampler always give a well-formed line (SentencePiece codec)", () => {
  // unigram_identity has no dummy prefix, so its encode gives mid-text tokens as the spec needs.
  const tokenizer = new SentencePieceTokenizer(
    Deno.readFileSync(new URL("../tokenizer/goldens/sp_unigram_identity.model", import.meta.url)),
  );
  const eos = tokenizer.eosId!;
  const constraint = new LineFormatConstraint(tokenizer, {
    segments: [
      { kind: "literal", text: "policy: " },
      { kind: "enum", choices: ["allow", "deny", "review"] },
      { kind: "literal", text: "; topic: " },
      { kind: "freeText", forbiddenChars: [";"], maxLength: 40 },
    ],
    eosTokenId: eos,
  });
  const shape = /^policy: (allow|deny|review); topic: [^;]{0,40}$/;
  for (let seed = 0; seed < 20; seed++) {
    const out: number[] = [];
    let state = seed * 7919 + 1;
    const logits = new Float32Array(tokenizer.vocabSize);
    for (;;) {
      for (let i = 0; i < logits.length; i++) {
        state = (Math.imul(state, 1103515245) + 12345) >>> 0;
        logits[i] = (state >>> 8) / 2 ** 22;
      }
      const id = sampleNext(logits, out, { mode: "sample", temperature: 1, seed }, constraint);
      if (id === eos) break;
      out.push(id);
      assert.ok(out.length < 200);
    }
    const text = tokenizer.decode(out);
    assert.match(text, shape);
    assert.ok(new TextEncoder().encode(text.slice(text.indexOf("topic: ") + 7)).length <= 40);
  }
});
