import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertClose, checkAgainstReference, gpuTest } from "../../harness/testing.ts";
import { gpuTolerance, loadSdpaGolden, mha, randomCase } from "../attention/testing_helpers.ts";
import { cases } from "./cases.ts";
import {
  columnsPerWorkgroup,
  flashAttention,
  flashAttentionGpu,
  flashAttentionPlan,
  KERNELS,
  rowsPerWorkgroup,
  workgroupBytes,
} from "./mod.ts";

// `wide` (512 output columns and 32 rows a workgroup, 25,600 bytes of workgroup memory), held to the
// same cases and goldens as `staged` (flash_attention.test.ts), in a file of its own so that each file
// compiles one kernel; every case runs through it, not only the wide ones.
checkAgainstReference("flashAttention", KERNELS, "wide", cases, flashAttention, flashAttentionGpu, gpuTolerance);

Deno.test("flashAttention: wide declares 32 rows, 512 columns and 25,600 bytes", () => {
  strictEqual(rowsPerWorkgroup(KERNELS.wide), 32);
  strictEqual(columnsPerWorkgroup(KERNELS.wide), 512);
  strictEqual(workgroupBytes(KERNELS.wide), 25600);
});

gpuTest("flashAttention GPU (wide) matches the torch goldens", async (gpu) => {
  const golden = await loadSdpaGolden(new URL("./goldens/flash_attention.json", import.meta.url));
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const out = await flashAttentionGpu(gpu, mha(c.args), { override: "wide" });
    assertClose(out, c.out, gpuTolerance(c.args), `torch ${c.label}`);
  }
});

gpuTest(
  "flashAttention GPU (wide): blocks cut by causal or by S, row tiles of 32, Dv past one tile, token-major",
  async (gpu) => {
    // L = S = 100 causal: 4 row tiles of 32 see 1 or 2 key blocks of 64, cut by causal (at offsets that
    // move the diagonal off block and chunk boundaries) and by S; then Dv = 520 (two column tiles, the
    // second of 2 quads), D = 36 (a staged chunk of 32 and a ragged one), 75 keys; then the VAE's
    // D = Dv = 512 over 130 keys, token-major, with a mask.
    for (const [queryOffset, seed] of [[0, 31], [-37, 32], [45, 33]]) {
      const args = mha(randomCase({ B: 1, H: 2, L: 100, S: 100, D: 32, Dv: 300, causal: true, queryOffset }, seed));
      const out = await flashAttentionGpu(gpu, args, { override: "wide" });
      assertClose(out, flashAttention(args), gpuTolerance(args), `queryOffset ${queryOffset}`);
    }
    const wide = mha(randomCase({ B: 1, H: 1, L: 40, S: 75, D: 36, Dv: 520 }, 34));
    deepStrictEqual(flashAttentionPlan(gpu, wide, { override: "wide" }).workgroups, [2, 1, 2]);
    assertClose(
      await flashAttentionGpu(gpu, wide, { override: "wide" }),
      flashAttention(wide),
      gpuTolerance(wide),
      "Dv 520",
    );
    const vae = {
      ...mha(randomCase({ B: 1, H: 1, L: 33, S: 130, D: 512, maskShape: [1, 1, 1, 130] }, 35)),
      layout: "BLHD" as const,
    };
    assertClose(await flashAttentionGpu(gpu, vae, { override: "wide" }), flashAttention(vae), gpuTolerance(vae), "vae");
  },
);

gpuTest("flashAttention GPU (wide): (row tile, head) pairs past the per-dimension limit fold into y", async (gpu) => {
  // 3 row tiles x 5 heads = 15 pairs at a limit of 4: a 4 x 4 grid whose last workgroup does nothing.
  const narrow = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 4 });
  const args = mha(randomCase({ B: 1, H: 5, L: 70, S: 40, D: 8, causal: true }, 36));
  deepStrictEqual(flashAttentionPlan(narrow, args, { override: "wide" }).workgroups, [4, 4, 1]);
  const out = await flashAttentionGpu(narrow, args, { override: "wide" });
  assertClose(out, flashAttention(args), gpuTolerance(args), "folded 4 x 4 grid");
});
