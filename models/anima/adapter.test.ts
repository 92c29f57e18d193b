import { deepStrictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { LlmAdapter } from "./adapter.ts";
import { ditStores } from "./weights.ts";
import { assertRel, fixture, readInt32 } from "./fixtures_test_util.ts";

const io = await fixture("io");
const { adapter: store } = ditStores(await fixture("weights_dit"));

gpuTest(
  "anima adapter: the cond (7 T5 ids x 9 Qwen rows) and uncond (1 x 1) outputs match the goldens",
  async (gpu) => {
    const adapter = await LlmAdapter.load(gpu, store);
    try {
      for (const key of ["cond", "uncond"]) {
        const out = await adapter.run(
          await io.readFloat32(`adapter/${key}/qwen_states`),
          await readInt32(io, `adapter/${key}/t5_ids`),
        );
        const rel = assertRel(out, await io.readFloat32(`adapter/${key}/out`), `adapter ${key}`);
        console.log(`adapter ${key}: relative difference ${rel.toExponential(2)}`);
      }
    } finally {
      adapter.destroy();
    }
  },
);

gpuTest(
  "anima adapter: the padded form with target and source masks gives the same valid rows, padded rows zero",
  async (gpu) => {
    const adapter = await LlmAdapter.load(gpu, store);
    try {
      const target = await readInt32(io, "adapter/masked/t5_mask");
      const source = await readInt32(io, "adapter/masked/qwen_mask");
      const out = await adapter.run(
        await io.readFloat32("adapter/masked/qwen_states"),
        await readInt32(io, "adapter/masked/t5_ids"),
        { target, source },
      );
      const expected = await io.readFloat32("adapter/masked/out");
      const rel = assertRel(out, expected, "adapter masked");
      console.log(`adapter masked: relative difference ${rel.toExponential(2)}`);
      deepStrictEqual([...out.subarray(7 * 32)].every((v) => v === 0), true);
      // Without the source mask the padded (zero) Qwen rows take softmax weight: a different result.
      const unmasked = await adapter.run(
        await io.readFloat32("adapter/masked/qwen_states"),
        await readInt32(io, "adapter/masked/t5_ids"),
        { target },
      );
      deepStrictEqual(assertRelFails(unmasked, expected), true);
    } finally {
      adapter.destroy();
    }
  },
);

gpuTest("anima adapter: bad inputs are refused before any GPU work", async (gpu) => {
  const adapter = await LlmAdapter.load(gpu, store);
  try {
    await assertThrowsMessage(
      () => adapter.run(new Float32Array(40), new Int32Array([64])),
      "outside the vocabulary [0, 64)",
    );
    await assertThrowsMessage(
      () => adapter.run(new Float32Array(41), new Int32Array([1])),
      "qwenStates must be [Ls >= 1, 40]",
    );
    await assertThrowsMessage(
      () => adapter.run(new Float32Array(40), new Int32Array([1, 2]), { target: [1] }),
      "the target mask has 1 entries, expected 2",
    );
  } finally {
    adapter.destroy();
  }
});

function assertRelFails(actual: Float32Array, expected: Float32Array): boolean {
  try {
    assertRel(actual, expected, "");
    return false;
  } catch {
    return true;
  }
}
