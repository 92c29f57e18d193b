// flashAttention on NaN and ±Infinity, held to torch (goldens/nonfinite.py through
// ../attention/goldens/sdpa_nonfinite.py): attention's conventions (ops/attention/reference.ts): NaN or
// +inf scores make their rows NaN, a row of -inf is zeros, a key masked by -inf has its v multiplied by
// 0 (NaN for a NaN v, as torch), and a key hidden by `causal` is no part of the row (no score, v not
// read). Every kernel gives the reference's values on the goldens' small shapes and on a causal case of
// several row tiles and key blocks, with one exception left out below, not passed: NaN or ±inf in v at
// a key hidden by `causal`. The kernels stop at the last key their tile's rows see, not each row's, so
// a hidden key inside that range meets its row's probability 0 and gives NaN, as torch's fused kernels
// do within the blocks they compute (mod.ts). `tiled` and `buffered`, which need more workgroup memory
// than the software adapter grants, are reported as ignored there, with the reason.
import {
  flashAttention,
  type FlashAttentionArgs,
  flashAttentionGpu,
  type FlashAttentionVariant,
  KERNELS,
  workgroupBytes,
} from "./mod.ts";
import { assertNonfiniteSdpa, gpuTolerance, loadNonfiniteSdpa, mha } from "../attention/testing_helpers.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  gpuTest,
  hasAdapter,
  randomF32,
  type ReferenceCase,
} from "../../harness/testing.ts";

const golden = await loadNonfiniteSdpa(new URL("./goldens/nonfinite.json", import.meta.url));

Deno.test(`flashAttention reference: NaN and ±Infinity in q, k, v and the mask as torch ${golden.torch}`, () => {
  for (const c of golden.cases) {
    const { q, k, v, mask } = c.args;
    const held = [q, k, v, mask].filter((x): x is Float32Array =>
      x !== undefined && x.some((e) => !Number.isFinite(e))
    );
    assertNonFiniteOperands({ [c.label]: held.flatMap((x) => [...x]) });
    assertNonfiniteSdpa(flashAttention(mha(c.args)), c);
  }
});

/**
 * L = S = 150, causal: two row tiles of 128 and several key blocks; NaN and ±inf in q and k, and in v at
 * key 0, which every row sees.
 */
function blocks(): ReferenceCase<FlashAttentionArgs> {
  const [L, S, D] = [150, 150, 8];
  const q = randomF32(L * D, 61), k = randomF32(S * D, 62), v = randomF32(S * D, 63);
  [q[140 * D + 3], q[20 * D], k[70 * D + 1], k[149 * D + 2]] = [NaN, -Infinity, Infinity, NaN];
  [v[2], v[5], v[7]] = [NaN, Infinity, -Infinity];
  return { label: "L = S = 150 causal, non-finite q, k and v", args: { B: 1, H: 1, L, S, D, causal: true, q, k, v } };
}

const adapter = hasAdapter ? await navigator.gpu.requestAdapter({ powerPreference: "high-performance" }) : null;
const granted = adapter?.limits.maxComputeWorkgroupStorageSize ?? 0;
const cases = [
  ...golden.cases.filter((c) => c.expect !== "hidden").map((c) => ({ label: c.label, args: mha(c.args) })),
  blocks(),
];

for (const entry of ["tiled", "wide", "staged", "kernel", "buffered"] as const satisfies FlashAttentionVariant[]) {
  const name = `flashAttention (non-finite): ${entry} matches the reference`;
  const needed = workgroupBytes(KERNELS[entry]);
  if (adapter !== null && granted < needed) {
    Deno.test({
      name: `${name} (ignored: the adapter grants ${granted} bytes of workgroup memory, ${entry} needs ${needed})`,
      ignore: true,
      fn: () => {},
    });
    continue;
  }
  gpuTest(name, async (gpu) => {
    for (const { label, args } of cases) {
      const out = await flashAttentionGpu(gpu, args, { override: entry });
      assertClose(out, flashAttention(args), gpuTolerance(args), `${entry} ${label}`);
    }
  });
}
