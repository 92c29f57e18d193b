import { ok } from "node:assert/strict";
import { assertClose, gpuTest, hasAdapter } from "../../harness/testing.ts";
import type { ResidentDevice } from "../../harness/device.ts";
import { gpuTolerance, loadSdpaGolden, mha, randomCase } from "../attention/testing_helpers.ts";
import { cases } from "./cases.ts";
import { flashAttention, flashAttentionGpu, KERNELS, workgroupBytes } from "./mod.ts";
import type { FlashAttentionVariant } from "./kernels.gen.ts";

// The 128-row register-tiled kernels, `tiled` (what the plan takes on the H200) and `buffered` (the
// same with double-buffered q and k chunks, taken only when named), held to the same cases and goldens
// as `staged` (flash_attention.test.ts) and `kernel` (portable.test.ts), in a file of their own. They
// declare 47,104 and 41,984 bytes of workgroup memory: where the adapter grants less (llvmpipe grants
// 32 KiB) the plan refuses them before dispatch, and these tests are reported as ignored, with the
// reason, never as passed.
const adapter = hasAdapter ? await navigator.gpu.requestAdapter({ powerPreference: "high-performance" }) : null;
const granted = adapter?.limits.maxComputeWorkgroupStorageSize ?? 0;

function storageTest(entry: FlashAttentionVariant, name: string, fn: (gpu: ResidentDevice) => Promise<void>): void {
  const needed = workgroupBytes(KERNELS[entry]);
  if (adapter !== null && granted < needed) {
    Deno.test({
      name: `${name} (ignored: the adapter grants ${granted} bytes of workgroup memory, ${entry} needs ${needed})`,
      ignore: true,
      fn: () => {},
    });
  } else {
    gpuTest(name, fn);
  }
}

for (const entry of ["tiled", "buffered"] as const) {
  storageTest(entry, `flashAttention: ${entry} matches the reference`, async (gpu) => {
    for (const { label, args } of cases) {
      const out = await flashAttentionGpu(gpu, args, { override: entry });
      assertClose(out, flashAttention(args), gpuTolerance(args), `flashAttention/${entry} ${label}`);
    }
  });

  storageTest(entry, `flashAttention GPU (${entry}) matches the torch goldens`, async (gpu) => {
    const golden = await loadSdpaGolden(new URL("./goldens/flash_attention.json", import.meta.url));
    ok(golden.cases.length > 0, "the golden file has cases");
    for (const c of golden.cases) {
      const out = await flashAttentionGpu(gpu, mha(c.args), { override: entry });
      assertClose(out, c.out, gpuTolerance(c.args), `torch ${c.label}`);
    }
  });

  storageTest(
    entry,
    `flashAttention GPU (${entry}): full key blocks, blocks cut by causal or by S, skipped blocks, 1 to 33 chunks of D`,
    async (gpu) => {
      // L = S = 300 causal: row tiles of 128 rows see 2 to 5 key blocks of 64, blocks cut by causal (at
      // offsets that move the diagonal off block boundaries) and by S, and chunks of 16 keys past the last
      // row's last key; then 333 keys without causal, D = 20 (a staged chunk of 16 and a ragged one) and
      // Dv = 140 (two column tiles); then D of 4, 16 and 32 (one and two chunks: the double buffer's
      // shortest walks) and 528 (33 chunks, an odd count), token-major.
      for (const [queryOffset, seed] of [[0, 21], [-37, 22], [45, 23]]) {
        const args = mha(randomCase({ B: 1, H: 2, L: 300, S: 300, D: 32, causal: true, queryOffset }, seed));
        const out = await flashAttentionGpu(gpu, args, { override: entry });
        assertClose(out, flashAttention(args), gpuTolerance(args), `queryOffset ${queryOffset}`);
      }
      const wide = mha(randomCase({ B: 1, H: 1, L: 200, S: 333, D: 20, Dv: 140 }, 41));
      assertClose(
        await flashAttentionGpu(gpu, wide, { override: entry }),
        flashAttention(wide),
        gpuTolerance(wide),
        "wide",
      );
      for (const [D, seed] of [[4, 42], [16, 43], [32, 44], [528, 45]]) {
        const args = { ...mha(randomCase({ B: 1, H: 2, L: 130, S: 100, D, Dv: 8 }, seed)), layout: "BLHD" as const };
        const out = await flashAttentionGpu(gpu, args, { override: entry });
        assertClose(out, flashAttention(args), gpuTolerance(args), `D ${D}`);
      }
    },
  );
}
