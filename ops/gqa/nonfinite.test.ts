// gqa on NaN and ±Infinity, held to torch (goldens/nonfinite.py through
// ../attention/goldens/sdpa_nonfinite.py, 4 query heads over 2 KV heads, enable_gqa): attention's
// conventions (ops/attention/reference.ts): NaN or +inf scores make their rows NaN, a row of -inf is
// zeros, a key masked by -inf has its v multiplied by 0 (NaN for a NaN v, as torch), and a key hidden by
// `causal` is no part of the row, whatever its v. Both paths give the reference's values (decode: split
// keys, then `combine` or `combine_wide`, which keep a split whose sum is NaN; prefill: flash_attention's
// kernel), on the goldens' small shapes, on several splits of keys, and on a causal case with NaN and
// ±inf in v at keys that some rows of a workgroup see and others do not, or that no row sees.
import { gqa, type GqaArgs, gqaGpu, type GqaOptions } from "./mod.ts";
import { assertNonfiniteSdpa, gpuTolerance, loadNonfiniteSdpa } from "../attention/testing_helpers.ts";
import { assertClose, assertNonFiniteOperands, gpuTest, randomF32 } from "../../harness/testing.ts";

const golden = await loadNonfiniteSdpa(new URL("./goldens/nonfinite.json", import.meta.url));

Deno.test(`gqa reference: NaN and ±Infinity in q, k, v and the mask as torch ${golden.torch}`, () => {
  for (const c of golden.cases) {
    const { q, k, v, mask } = c.args;
    const held = [q, k, v, mask].filter((x): x is Float32Array =>
      x !== undefined && x.some((e) => !Number.isFinite(e))
    );
    assertNonFiniteOperands({ [c.label]: held.flatMap((x) => [...x]) });
    assertNonfiniteSdpa(gqa(c.args), c);
  }
});

/**
 * One decode row per head over 600 keys (several splits): NaN and ±inf in v at keys some split holds,
 * a key masked by -inf whose v is NaN, and a split of masked keys only.
 */
function splits(): GqaArgs {
  const [H, kvHeads, S, D] = [4, 2, 600, 8];
  const q = randomF32(H * D, 71), k = randomF32(kvHeads * S * D, 72), v = randomF32(kvHeads * S * D, 73);
  [v[5 * D + 1], v[(S + 300) * D + 2], v[(S + 301) * D + 2]] = [NaN, Infinity, -Infinity];
  v[590 * D + 4] = NaN; // masked below
  const mask = new Float32Array(S);
  mask.fill(-Infinity, 256, 512).fill(-Infinity, 590, 591);
  return { B: 1, H, kvHeads, L: 1, S, D, q, k, v, mask, maskShape: [1, 1, 1, S] };
}

/**
 * Causal, 5 rows per head over 300 keys (3 splits), queryOffset 200: row i sees keys up to 200 + i, so
 * the first split's keys are seen by every row, keys 201-204 by some rows of a workgroup, and the last
 * two splits' keys 205-299 by none. NaN and ±inf in v (one column each) at keys of each kind.
 */
function hiddenV(): GqaArgs {
  const [H, kvHeads, L, S, D] = [4, 2, 5, 300, 8];
  const q = randomF32(H * L * D, 74), k = randomF32(kvHeads * S * D, 75), v = randomF32(kvHeads * S * D, 76);
  const at = (head: number, key: number, column: number, value: number) => v[(head * S + key) * D + column] = value;
  at(0, 202, 0, NaN);
  at(0, 204, 1, Infinity);
  at(0, 250, 2, NaN);
  at(0, 280, 3, -Infinity);
  at(1, 200, 4, -Infinity);
  at(1, 203, 5, NaN);
  at(1, 299, 6, Infinity);
  return { B: 1, H, kvHeads, L, S, D, causal: true, queryOffset: 200, q, k, v };
}

Deno.test("gqa reference: NaN and ±inf in v at keys hidden by causal leave the rows that do not see them finite", () => {
  const args = hiddenV();
  const out = gqa(args), group = args.H / args.kvHeads;
  for (let h = 0; h < args.H; h++) {
    for (let key = 0; key < args.S; key++) {
      for (let column = 0; column < args.D; column++) {
        if (Number.isFinite(args.v[(Math.floor(h / group) * args.S + key) * args.D + column])) continue;
        for (let i = 0; i < args.L; i++) {
          const got = out[(h * args.L + i) * args.D + column];
          if (Number.isFinite(got) === key <= i + args.queryOffset!) {
            throw new Error(`head ${h}, row ${i}, column ${column} is ${got} (key ${key})`);
          }
        }
      }
    }
  }
});

// The decode path with each combine kernel (the plan takes `combine` at these few splits), and prefill.
const runs: [string, GqaOptions][] = [
  ["decode, combine", { path: "decode", override: "combine" }],
  ["decode, combine_wide", { path: "decode", override: "combine_wide" }],
  ["prefill", { path: "prefill" }],
];
for (const [name, options] of runs) {
  gpuTest(`gqa GPU: ${name} gives the reference's NaN and ±Infinity`, async (gpu) => {
    const cases = [
      ...golden.cases,
      { label: "600 keys in several splits", args: splits() },
      { label: "causal, NaN and ±inf in v at hidden keys", args: hiddenV() },
    ];
    for (const { label, args } of cases) {
      assertClose(await gqaGpu(gpu, args, options), gqa(args), gpuTolerance(args), `${name} ${label}`);
    }
  });
}
