import { deepStrictEqual } from "node:assert/strict";
import type { GpuTensor } from "../../harness/device.ts";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { AnimaDit, patchIndex } from "./dit.ts";
import { Graph } from "./graph.ts";
import { timestepSinusoid } from "./timestep.ts";
import { ditStores } from "./weights.ts";
import {
  assertRel,
  condContext,
  fixture,
  GOLDEN_SETS,
  relativeDiff,
  reorderedBlocks,
  spatial,
} from "./fixtures_test_util.ts";

// The tiny set's, for the tests of mechanisms (formats, streaming, limits).
const io = await fixture("io");
const { dit: store } = ditStores(await fixture("weights_dit"));

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

Deno.test("anima DiT: the patchify index is channel-slowest (feature c*4 + m*2 + n)", () => {
  const index = patchIndex(2, 2, 4, 1); // 2 channels, 2 x 4 latent: 2 tokens of 8 features
  // Token 0 covers rows 0-1, columns 0-1; channel 1 starts at element 8.
  deepStrictEqual([...index.subarray(0, 8)], [0, 1, 4, 5, 8, 9, 12, 13]);
  deepStrictEqual([...index.subarray(8, 16)], [2, 3, 6, 7, 10, 11, 14, 15]);
});

Deno.test("anima DiT: the cond context is the adapter's cond output zero-padded to 512 rows (tiny stores both)", async () => {
  deepStrictEqual(await condContext(io), await io.readFloat32("adapter/cond/context"));
});

for (const set of GOLDEN_SETS) {
  const io = await fixture("io", set);
  const { dit: store } = ditStores(await fixture("weights_dit", set));
  const [h0, w0] = spatial(io, "dit/case0/x");

  gpuTest(
    `anima DiT (${set}): case 0 (${h0} x ${w0} latent, sigma 1) stage by stage: t path, patch embed, block 0 parts, final`,
    async (gpu) => {
      const dit = await AnimaDit.load(gpu, store);
      const g = new Graph(gpu, "anima DiT test");
      const inputs = [
        gpu.upload(await io.readFloat32("dit/case0/x")),
        gpu.upload(timestepSinusoid(1, dit.config.dim)),
        gpu.upload(await condContext(io)),
      ];
      const geometry = dit.geometry(h0, w0, 1);
      try {
        const taps = new Map<string, GpuTensor>();
        const out = dit.build(
          g,
          { batch: 1, height: h0, width: w0, latent: inputs[0], sinusoid: inputs[1], context: inputs[2] },
          geometry,
          (name, t) => {
            g.pin(t);
            taps.set(name, t);
          },
        );
        const program = g.program();
        await program.run();
        program.destroy();
        const read = async (name: string) => await gpu.read(taps.get(name)!) as Float32Array;
        const golden = (name: string) => io.readFloat32(`dit/case0/dbg/${name}`);
        const results: [string, number][] = [];
        const check = async (label: string, ours: Float32Array, expected: Promise<Float32Array>) => {
          results.push([label, assertRel(ours, await expected, label)]);
        };
        await check("t_emb_norm", await read("t_emb_norm"), golden("t_emb_norm"));
        await check(
          "adaln_lora",
          concat(await Promise.all([0, 1, 2].map((i) => read(`adaln_lora${i}`)))),
          golden("adaln_lora"),
        );
        await check("x_embed", await read("x_embed"), golden("x_embed"));
        await check(
          "block0 adaln_self_attn raw",
          concat(await Promise.all([0, 1, 2].map((i) => read(`block0_adaln_self_attn_raw${i}`)))),
          golden("block0_adaln_self_attn_raw"),
        );
        for (const part of ["self_attn", "cross_attn", "mlp"]) {
          await check(`block0 ${part}`, await read(`block0_${part}`), golden(`block0_${part}`));
        }
        await check("block0_out", await read("block0_out"), golden("block0_out"));
        await check("block_last_out", await read("block_last_out"), golden("block_last_out"));
        await check("final_layer", await read("final_layer"), golden("final_layer"));
        await check("out", await gpu.read(out) as Float32Array, io.readFloat32("dit/case0/out"));
        console.log(`${set}: ${results.map(([l, r]) => `${l} ${r.toExponential(2)}`).join(", ")}`);
      } finally {
        g.destroy();
        for (const t of [...inputs, geometry.patchIndex, geometry.positions]) t.buffer.destroy();
        dit.destroy();
      }
    },
  );

  gpuTest(`anima DiT (${set}): cases 1-3 (a second sigma; a second latent size at both sigmas)`, async (gpu) => {
    const dit = await AnimaDit.load(gpu, store);
    try {
      const context = await condContext(io);
      for (const i of [1, 2, 3]) {
        const [h, w] = spatial(io, `dit/case${i}/x`);
        const [sigma] = await io.readFloat32(`dit/case${i}/sigma`);
        const out = await dit.run(await io.readFloat32(`dit/case${i}/x`), sigma, context, h, w);
        const rel = assertRel(out, await io.readFloat32(`dit/case${i}/out`), `case ${i}`);
        console.log(`${set} case ${i} (${h} x ${w}, sigma ${sigma}): ${rel.toExponential(2)}`);
      }
    } finally {
      dit.destroy();
    }
  });
}

gpuTest("anima DiT: q8 block products (int8 codes, a scale per row) stay near the f32 goldens", async (gpu) => {
  const dit = await AnimaDit.load(gpu, store, { format: "q8" });
  const f32 = await AnimaDit.load(gpu, store);
  try {
    const context = await io.readFloat32("adapter/cond/context");
    const out = await dit.run(await io.readFloat32("dit/case0/x"), 1, context, 8, 12);
    const rel = relativeDiff(out, await io.readFloat32("dit/case0/out"));
    console.log(`q8 case 0: ${rel.toExponential(2)}; bytes ${dit.residentBytes} against ${f32.residentBytes}`);
    // Per-row int8 of these random weights moves the velocity by under 1% (measured 7.7e-3); a
    // mis-wired product (codes against the wrong scales or a transposed weight) is off by O(1).
    assertRel(out, await io.readFloat32("dit/case0/out"), "q8 case 0", 2e-2);
    deepStrictEqual(dit.residentBytes < f32.residentBytes, true);
  } finally {
    dit.destroy();
    f32.destroy();
  }
});

gpuTest("anima DiT: streamed blocks (two slots rewritten per forward) equal the resident DiT", async (gpu) => {
  // Four blocks from the tiny two, as 0, 1, 1, 0: a slot not rewritten would run 0, 1, 0, 1.
  const deeper = reorderedBlocks(store, [0, 1, 1, 0]);
  const resident = await AnimaDit.load(gpu, deeper);
  const streamed = await AnimaDit.load(gpu, deeper, { stream: true });
  const twoBlocks = await AnimaDit.load(gpu, store, { stream: true });
  try {
    deepStrictEqual([resident.streamed, streamed.streamed], [false, true]);
    deepStrictEqual(streamed.residentBytes < resident.residentBytes, true);
    const x = await io.readFloat32("dit/case0/x"), context = await io.readFloat32("adapter/cond/context");
    const expected = await resident.run(x, 1, context, 8, 12);
    for (let run = 0; run < 2; run++) {
      deepStrictEqual([...await streamed.run(x, 1, context, 8, 12)], [...expected], `streamed run ${run}`);
    }
    // From its host copy (the slots read back, the host blocks shared), the original freed first.
    const copy = await streamed.hostCopy();
    streamed.destroy();
    const restored = copy.restore();
    try {
      deepStrictEqual(restored.streamed, true);
      deepStrictEqual([...await restored.run(x, 1, context, 8, 12)], [...expected], "restored from the host copy");
    } finally {
      restored.destroy();
    }
    // What slots never rewritten would compute differs: the comparison above can fail.
    const stale = await AnimaDit.load(gpu, reorderedBlocks(store, [0, 1, 0, 1]));
    const staleOut = await stale.run(x, 1, context, 8, 12);
    stale.destroy();
    deepStrictEqual(relativeDiff(staleOut, expected) > 1e-3, true);
    assertRel(await twoBlocks.run(x, 1, context, 8, 12), await io.readFloat32("dit/case0/out"), "streamed tiny case 0");
  } finally {
    resident.destroy();
    streamed.destroy(); // a second destroy of its buffers is harmless
    twoBlocks.destroy();
  }
});

gpuTest(
  "anima DiT: tiny2's three blocks streamed through two slots (the odd one in slot 0) match case 0",
  async (gpu) => {
    const io2 = await fixture("io", "tiny2");
    const dit = await AnimaDit.load(gpu, ditStores(await fixture("weights_dit", "tiny2")).dit, { stream: true });
    try {
      deepStrictEqual([dit.streamed, dit.config.blocks], [true, 3]);
      const [h, w] = spatial(io2, "dit/case0/x");
      const out = await dit.run(await io2.readFloat32("dit/case0/x"), 1, await condContext(io2), h, w);
      console.log(
        `tiny2 streamed case 0: ${assertRel(out, await io2.readFloat32("dit/case0/out"), "streamed").toExponential(2)}`,
      );
    } finally {
      dit.destroy();
    }
  },
);

gpuTest("anima DiT: a binding over the device's limit is refused, named, before anything runs", async (gpu) => {
  // The MLP weight (36,864 bytes) does not fit a 16 KiB binding: the load refuses it by name.
  await assertThrowsMessage(
    () => AnimaDit.load(gpu.withLimits({ maxStorageBufferBindingSize: 16384 }), store),
    "blocks.0.mlp.layer1.weight: the weight [192, 48] is 36864 bytes in f32, over this device's binding limit of 16384",
  );
  // Every weight fits 48 KiB bindings, the context (512 x 32 f32, 65,536 bytes) does not: the run
  // refuses it, naming the binding and the limit, before anything is submitted.
  const small = gpu.withLimits({ maxStorageBufferBindingSize: 49152 });
  const dit = await AnimaDit.load(small, store);
  try {
    await assertThrowsMessage(
      () => dit.run(new Float32Array(16 * 8 * 12), 1, new Float32Array(512 * 32), 8, 12),
      /binding \d+ \(a\) needs maxStorageBufferBindingSize >= 65536, but this device allows 49152/,
    );
  } finally {
    dit.destroy();
  }
});
