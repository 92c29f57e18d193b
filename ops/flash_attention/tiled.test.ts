import { ok } from "node:assert/strict";
import { assertClose, checkAgainstReference, gpuTest } from "../../harness/testing.ts";
import { gpuTolerance, loadSdpaGolden, randomCase } from "../attention/testing_helpers.ts";
import { cases } from "./cases.ts";
import { flashAttention, flashAttentionGpu, KERNELS } from "./mod.ts";

// `tiled`, held to the same cases and goldens as `staged` (flash_attention.test.ts) and `kernel`
// (portable.test.ts), in a file of its own so that each file compiles one kernel on llvmpipe.
checkAgainstReference("flashAttention", KERNELS, "tiled", cases, flashAttention, flashAttentionGpu, gpuTolerance);

gpuTest("flashAttention GPU (tiled) matches the torch goldens", async (gpu) => {
  const golden = await loadSdpaGolden(new URL("./goldens/flash_attention.json", import.meta.url));
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const out = await flashAttentionGpu(gpu, c.args, { override: "tiled" });
    assertClose(out, c.out, gpuTolerance(c.args), `torch ${c.label}`);
  }
});

gpuTest(
  "flashAttention GPU (tiled): blocks past the diagonal skipped, the diagonal's masked, full blocks not",
  async (gpu) => {
    // L = S = 300 causal: row tiles of 64 rows see 1 to 5 key blocks of 64; every kind of block (full,
    // cut by causal, cut by S) in one call, with a query offset that shifts the diagonal off block
    // boundaries.
    for (const [queryOffset, seed] of [[0, 21], [-37, 22], [45, 23]]) {
      const args = randomCase({ B: 1, H: 2, L: 300, S: 300, D: 32, causal: true, queryOffset }, seed);
      const out = await flashAttentionGpu(gpu, args, { override: "tiled" });
      assertClose(out, flashAttention(args), gpuTolerance(args), `queryOffset ${queryOffset}`);
    }
  },
);
