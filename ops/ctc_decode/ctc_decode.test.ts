import { deepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  seededRandom,
} from "../../harness/testing.ts";
import { ctcDecode, type CtcDecodeArgs, ctcDecodeGpu, ctcDecodePlan, type CtcDecodeResult, KERNELS } from "./mod.ts";
import type { CtcDecodeVariant } from "./kernels.gen.ts";

interface Golden {
  meta: { torch: string };
  cases: {
    label: string;
    B: number;
    T: number;
    C: number;
    blank: number;
    inputLengths: number[];
    logits: number[];
    tokens: number[];
    lengths: number[];
  }[];
}
const loadCtcGolden = () => loadGolden<Golden>(new URL("./goldens/ctc_decode.json", import.meta.url));
/** Frames whose argmax is `labels[t]`: a one-hot row per frame. */
function oneHot(labels: number[], C: number): Float32Array {
  const x = new Float32Array(labels.length * C);
  labels.forEach((c, t) => (x[t * C + c] = 1));
  return x;
}
const flat = (r: CtcDecodeResult) => Int32Array.from([...r.tokens, ...r.lengths]);

Deno.test("ctcDecode reference: collapse repeats, then drop blanks (a blank a is two a's)", () => {
  const { tokens, lengths } = ctcDecode({ logits: oneHot([1, 1, 0, 1, 2, 2, 0], 3), B: 1, T: 7, C: 3 });
  deepStrictEqual([...tokens], [1, 1, 2, -1, -1, -1, -1]);
  deepStrictEqual([...lengths], [3]);
  // Dropping blanks first would merge the two a's into one: [1, 2].
});

Deno.test("ctcDecode reference: blank defaults to 0 and can be moved; ties go to the lower class", () => {
  const logits = oneHot([2, 2, 1, 0], 3);
  deepStrictEqual([...ctcDecode({ logits, B: 1, T: 4, C: 3 }).tokens], [2, 1, -1, -1]);
  deepStrictEqual([...ctcDecode({ logits, B: 1, T: 4, C: 3, blank: 2 }).tokens], [1, 0, -1, -1]);
  // Equal logits in classes 1 and 2: torch.argmax takes the first, 1.
  deepStrictEqual([...ctcDecode({ logits: new Float32Array([0, 5, 5]), B: 1, T: 1, C: 3 }).tokens], [1]);
});

Deno.test("ctcDecode reference: [B, T, C] batch-major; inputLengths cut each row; padding is -1", () => {
  // Row 0: a b; row 1: b a, of which only 1 frame counts.
  const logits = new Float32Array([...oneHot([1, 2], 3), ...oneHot([2, 1], 3)]);
  const got = ctcDecode({ logits, B: 2, T: 2, C: 3, inputLengths: new Int32Array([2, 1]) });
  deepStrictEqual([...got.tokens], [1, 2, 2, -1]);
  deepStrictEqual([...got.lengths], [2, 1]);
});

Deno.test("ctcDecode reference matches the torch goldens", async () => {
  const golden = await loadCtcGolden();
  ok(golden.cases.length >= 4 && golden.meta.torch, "golden has cases and a torch version");
  for (const c of golden.cases) {
    const { B, T, C, blank } = c;
    const got = ctcDecode({
      B,
      T,
      C,
      blank,
      logits: new Float32Array(c.logits),
      inputLengths: Int32Array.from(c.inputLengths),
    });
    deepStrictEqual([...got.tokens], c.tokens, c.label);
    deepStrictEqual([...got.lengths], c.lengths, c.label);
  }
});

async function rejectsBadInput(run: (args: CtcDecodeArgs) => unknown): Promise<void> {
  const logits = new Float32Array(6);
  await assertThrowsMessage(
    () => run({ logits, B: 1, T: 2, C: 2 }),
    "ctcDecode: logits must have length B * T * C = 4, got 6",
  );
  await assertThrowsMessage(() => run({ logits, B: 0, T: 2, C: 3 }), "ctcDecode: B must be an integer >= 1, got 0");
  await assertThrowsMessage(
    () => run({ logits, B: 1, T: 2, C: 3, blank: 3 }),
    "ctcDecode: blank must be an integer in [0, 2], got 3",
  );
  await assertThrowsMessage(
    () => run({ logits, B: 1, T: 2, C: 3, inputLengths: new Int32Array([3]) }),
    "ctcDecode: inputLengths[0] must be an integer in [0, 2], got 3",
  );
  await assertThrowsMessage(
    () => run({ logits, B: 1, T: 2, C: 3, inputLengths: new Uint32Array([1]) as unknown as Int32Array }),
    "ctcDecode: inputLengths must be an Int32Array, got Uint32Array",
  );
}
Deno.test("ctcDecode reference: bad input throws naming the argument", () => rejectsBadInput(ctcDecode));

gpuTest("ctcDecode GPU: bad input throws before dispatch", async (gpu) => {
  await rejectsBadInput((args) => ctcDecodeGpu(gpu, args));
});

gpuTest("ctcDecode GPU matches the torch goldens", async (gpu) => {
  for (const c of (await loadCtcGolden()).cases) {
    const got = await ctcDecodeGpu(gpu, {
      B: c.B,
      T: c.T,
      C: c.C,
      blank: c.blank,
      logits: new Float32Array(c.logits),
      inputLengths: Int32Array.from(c.inputLengths),
    });
    deepStrictEqual([...got.tokens], c.tokens, c.label);
    deepStrictEqual([...got.lengths], c.lengths, c.label);
  }
});

gpuTest("ctcDecode GPU: more than 65,535 sequences fold into y", async (gpu) => {
  deepStrictEqual(ctcDecodePlan(gpu, { B: 70_000, T: 4, C: 3 }).workgroups, foldWorkgroups(70_000, 65_535));
  const args = { logits: randomF32(3 * 20 * 5, 3), B: 3, T: 20, C: 5 };
  const plan = { ...ctcDecodePlan(gpu, args), workgroups: foldWorkgroups(3, 2) };
  const [tokens, lengths] = await gpu.run(plan, [args.logits, new Int32Array(3).fill(20)]);
  const want = ctcDecode(args);
  deepStrictEqual([...tokens], [...want.tokens]);
  deepStrictEqual([...lengths], [...want.lengths]);
});

/** Logits with long runs and many blanks: small integers over few classes, per frame drawn from `seed`. */
function runs(B: number, T: number, C: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  const x = new Float32Array(B * T * C);
  for (let f = 0; f < B * T; f++) {
    const hot = next() < 0.4 ? 0 : Math.floor(next() * Math.min(C, 4));
    for (let c = 0; c < C; c++) x[f * C + c] = Math.floor(next() * 3) + (c === hot ? 4 : 0);
  }
  return x;
}

// Labels are integers: exact agreement. Frame counts crossing 256-frame blocks, C multiple of 4 and
// not, unequal lengths including 0, a blank other than 0, a single class.
checkAgainstReference<CtcDecodeArgs, CtcDecodeVariant>(
  "ctcDecode",
  KERNELS,
  "kernel",
  [
    { label: "B=1 T=1 C=1", args: { logits: new Float32Array([0.5]), B: 1, T: 1, C: 1 } },
    { label: "B=3 T=600 C=29", args: { logits: runs(3, 600, 29, 1), B: 3, T: 600, C: 29 } },
    {
      label: "B=4 T=513 C=32 lengths 513, 256, 0, 257",
      args: { logits: runs(4, 513, 32, 2), B: 4, T: 513, C: 32, inputLengths: new Int32Array([513, 256, 0, 257]) },
    },
    { label: "B=2 T=300 C=7 blank=3", args: { logits: runs(2, 300, 7, 3), B: 2, T: 300, C: 7, blank: 3 } },
    { label: "B=5 T=40 C=1000 random", args: { logits: randomF32(5 * 40 * 1000, 4), B: 5, T: 40, C: 1000 } },
  ],
  (args) => flat(ctcDecode(args)),
  async (gpu, args, options) => flat(await ctcDecodeGpu(gpu, args, options)),
  { atol: 0, rtol: 0 },
);
