import { ok } from "node:assert/strict";
import { assertClose, checkAgainstReference, gpuTest } from "../../harness/testing.ts";
import { gpuTolerance, loadSdpaGolden, mha, randomCase } from "../attention/testing_helpers.ts";
import { cases } from "./cases.ts";
import { flashAttention, flashAttentionGpu, KERNELS } from "./mod.ts";

// `kernel`, the 16 KiB kernel every device runs (a browser's default limits; the plan takes it where
// `staged` does not fit), held to the same cases and goldens as `staged` in flash_attention.test.ts.
checkAgainstReference("flashAttention", KERNELS, "kernel", cases, flashAttention, flashAttentionGpu, gpuTolerance);

gpuTest("flashAttention GPU (kernel) matches the torch goldens", async (gpu) => {
  const golden = await loadSdpaGolden(new URL("./goldens/flash_attention.json", import.meta.url));
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const out = await flashAttentionGpu(gpu, mha(c.args), { override: "kernel" });
    assertClose(out, c.out, gpuTolerance(c.args), `torch ${c.label}`);
  }
});

gpuTest("flashAttention GPU (kernel): (row tile, head) pairs past the per-dimension limit fold into y", async (gpu) => {
  const narrow = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 4 });
  const args = mha(randomCase({ B: 1, H: 7, L: 130, S: 40, D: 8, causal: true }, 11));
  const out = await flashAttentionGpu(narrow, args, { override: "kernel" });
  assertClose(out, flashAttention(args), gpuTolerance(args), "folded 4 x 4 grid");
});
