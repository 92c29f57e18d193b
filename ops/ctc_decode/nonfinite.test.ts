// ctcDecode on NaN and ±Infinity, held to torch (goldens/nonfinite.py: torch.argmax, unique_consecutive,
// the blank dropped): a NaN is above every number, so the first NaN of a frame is its class (even beside
// +inf), +inf is above every finite logit and -inf below, equal values go to the first class. The
// kernel gives the reference's tokens and lengths, at C 4 (vec4 rows) and 3.
import { deepStrictEqual } from "node:assert/strict";
import { ctcDecode, type CtcDecodeArgs, ctcDecodeGpu, type CtcDecodeVariant, KERNELS } from "./mod.ts";
import {
  assertNonFiniteOperands,
  checkAgainstReference,
  goldenF32,
  type GoldenFloat,
  loadGolden,
} from "../../harness/testing.ts";

interface Case {
  B: number;
  T: number;
  C: number;
  logits: GoldenFloat[];
  tokens: number[];
  lengths: number[];
}
const golden = await loadGolden<{ torch: string; cases: Case[] }>(new URL("./goldens/nonfinite.json", import.meta.url));
const argsOf = (c: Case): CtcDecodeArgs => ({ logits: goldenF32(c.logits), B: c.B, T: c.T, C: c.C });

Deno.test(`ctcDecode reference: NaN and ±Infinity logits decode as torch ${golden.torch}'s argmax decides`, () => {
  for (const c of golden.cases) {
    const args = argsOf(c);
    assertNonFiniteOperands({ logits: args.logits });
    const { tokens, lengths } = ctcDecode(args);
    deepStrictEqual([...tokens], c.tokens, `C ${c.C}: tokens`);
    deepStrictEqual([...lengths], c.lengths, `C ${c.C}: lengths`);
  }
});

const flat = (r: { tokens: Int32Array; lengths: Int32Array }) => Int32Array.from([...r.tokens, ...r.lengths]);
checkAgainstReference<CtcDecodeArgs, CtcDecodeVariant>(
  "ctcDecode (non-finite)",
  KERNELS,
  "kernel",
  golden.cases.map((c) => ({ label: `C ${c.C}`, args: argsOf(c) })),
  (args) => flat(ctcDecode(args)),
  async (gpu, args, options) => flat(await ctcDecodeGpu(gpu, args, options)),
  { atol: 0, rtol: 0 },
);
