// gqa on NaN and ±Infinity, held to torch (goldens/nonfinite.py through
// ../attention/goldens/sdpa_nonfinite.py, 4 query heads over 2 KV heads, enable_gqa): attention's
// conventions (ops/attention/reference.ts): NaN or +inf scores make their rows NaN, a row of -inf is
// zeros, a key masked by -inf has its v multiplied by 0 (NaN for a NaN v, as torch), and a key hidden by
// `causal` is no part of the row. Both paths give the reference's values (decode: split keys, then
// `combine` or `combine_wide`, which keep a split whose sum is NaN; prefill: flash_attention's kernel),
// with one exception left out below, not passed: NaN or ±inf in v at a key hidden by `causal`, which the
// kernels meet inside the key range their rows share, as flash_attention's do (its mod.ts).
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

// The decode path with each combine kernel (the plan takes `combine` at these few splits), and prefill.
const runs: [string, GqaOptions][] = [
  ["decode, combine", { path: "decode", override: "combine" }],
  ["decode, combine_wide", { path: "decode", override: "combine_wide" }],
  ["prefill", { path: "prefill" }],
];
for (const [name, options] of runs) {
  gpuTest(`gqa GPU: ${name} gives the reference's NaN and ±Infinity`, async (gpu) => {
    const cases = golden.cases.filter((c) => c.expect !== "hidden");
    for (const { label, args } of [...cases, { label: "600 keys in several splits", args: splits() }]) {
      assertClose(await gqaGpu(gpu, args, options), gqa(args), gpuTolerance(args), `${name} ${label}`);
    }
  });
}
