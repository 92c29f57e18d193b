// attention on NaN and ±Infinity, held to torch (goldens/nonfinite.py through sdpa_nonfinite.py):
// NaN or +inf scores (from q, k or the mask) make their rows NaN, a row of -inf is zeros, NaN and ±inf
// in v reach every row through its probability, 0 for a masked or hidden key (0 * inf is NaN), as torch
// does; where torch's math backend and its fused CPU kernel disagree the case says which the op follows
// (reference.ts's module doc says why). Both entry points (scores, weighted_sum) give the reference's
// values.
import { attention, type AttentionArgs, attentionGpu, type AttentionVariant, KERNELS } from "./mod.ts";
import { assertNonfiniteSdpa, gpuTolerance, loadNonfiniteSdpa, mha } from "./testing_helpers.ts";
import { assertNonFiniteOperands, checkAgainstReference } from "../../harness/testing.ts";

const golden = await loadNonfiniteSdpa(new URL("./goldens/nonfinite.json", import.meta.url));

Deno.test(`attention reference: NaN and ±Infinity in q, k, v and the mask as torch ${golden.torch}`, () => {
  for (const c of golden.cases) {
    const { q, k, v, mask } = c.args;
    const held = [q, k, v, mask].filter((x): x is Float32Array =>
      x !== undefined && x.some((e) => !Number.isFinite(e))
    );
    assertNonFiniteOperands({ [c.label]: held.flatMap((x) => [...x]) });
    assertNonfiniteSdpa(attention(mha(c.args)), c);
  }
});

for (const entry of ["scores", "weighted_sum"]) {
  checkAgainstReference<AttentionArgs, AttentionVariant>(
    "attention (non-finite)",
    KERNELS,
    entry,
    golden.cases.map((c) => ({ label: c.label, args: mha(c.args) })),
    attention,
    attentionGpu,
    gpuTolerance,
  );
}
