import { deepStrictEqual as assertEquals, throws as assertThrows } from "node:assert/strict";
import { adapterConfigFromStore, ditConfigFromStore, vaeConfigFromStore } from "./config.ts";
import { checkAdapterLayout, checkDitLayout, checkVaeLayout, ditStores, vaeModules } from "./weights.ts";
import { fixture, GOLDEN_SETS, goldenIndex, headerStore, realLayout } from "./fixtures_test_util.ts";

for (const set of GOLDEN_SETS) {
  Deno.test(`anima weights: the ${set} checkpoints give the oracle's config and pass the layout checks`, async () => {
    const index = await goldenIndex(set);
    const { dit, adapter } = ditStores(await fixture("weights_dit", set));
    const d = ditConfigFromStore(dit);
    const o = index.configs.dit as Record<string, number>;
    assertEquals(
      [d.dim, d.blocks, d.heads, d.contextDim, d.adalnLoraDim, d.mlpDim, d.channels],
      [
        o.model_channels,
        o.num_blocks,
        o.num_heads,
        o.crossattn_emb_channels,
        o.adaln_lora_dim,
        o.mlp_ratio * o.model_channels,
        o.in_channels,
      ],
    );
    // index.json's info.dit_rope_split: tiny t8|h8|w8, theta_h = theta_w = 63496.04207872797 (10000 · 4^(8/6));
    // tiny2 the uneven t12|h10|w10, 56568.54249492381 (10000 · 4^(10/8)).
    const split = (index as unknown as { info: { dit_rope_split: Record<string, number> } }).info.dit_rope_split;
    assertEquals(d.ropeDims, [split.t, split.h, split.w]);
    assertEquals(
      d.ropeTheta.map((t) => t.toFixed(6)),
      [split.theta_t, split.theta_h, split.theta_w].map((t) => t.toFixed(6)),
    );
    checkDitLayout(dit, d);
    const a = adapterConfigFromStore(adapter);
    const oa = index.configs.adapter as Record<string, number>;
    assertEquals(
      [a.sourceDim, a.targetDim, a.modelDim, a.layers, a.heads, a.vocab, a.inProj],
      [oa.source_dim, oa.target_dim, oa.model_dim, oa.num_layers, oa.num_heads, oa.vocab, false],
    );
    checkAdapterLayout(adapter, a);
    const vaeStore = await fixture("weights_vae", set);
    const v = vaeConfigFromStore(vaeStore);
    assertEquals([v.dim, v.zDim], [index.configs.vae.dim, index.configs.vae.z_dim]);
    checkVaeLayout(vaeStore, v);
  });
}

Deno.test("anima weights: the sets' configs are the oracle README's tiny and tiny2", async () => {
  const [tiny, tiny2] = await Promise.all(GOLDEN_SETS.map(async (set) => {
    const d = ditConfigFromStore(ditStores(await fixture("weights_dit", set)).dit);
    const a = adapterConfigFromStore(ditStores(await fixture("weights_dit", set)).adapter);
    const v = vaeConfigFromStore(await fixture("weights_vae", set));
    return [d.dim, d.heads, d.headDim, d.blocks, ...d.ropeDims, a.sourceDim, a.modelDim, a.layers, a.heads, v.dim];
  }));
  assertEquals(tiny, [48, 2, 24, 2, 8, 8, 8, 40, 32, 2, 2, 4]);
  assertEquals(tiny2, [64, 2, 32, 3, 12, 10, 10, 24, 48, 3, 3, 8]);
});

Deno.test("anima weights: the real layouts (52 and 28 blocks, VAE) give the real configs and pass", async () => {
  const layout = await realLayout();
  for (const blocks of [52, 28]) {
    const entries = layout.dit52.filter(([name]) => {
      const m = /^net\.blocks\.(\d+)\./.exec(name);
      return !m || Number(m[1]) < blocks;
    });
    const { dit, adapter } = ditStores(headerStore(entries));
    const d = ditConfigFromStore(dit);
    assertEquals(
      [d.blocks, d.dim, d.heads, d.headDim, d.contextDim, d.adalnLoraDim, d.mlpDim, d.channels],
      [blocks, 2048, 16, 128, 1024, 256, 8192, 16],
    );
    assertEquals(d.ropeDims, [44, 42, 42]);
    // The oracle's info.real_rope_theta: h = w = 42870.938501451725.
    assertEquals(d.ropeTheta[1].toFixed(9), "42870.938501452");
    checkDitLayout(dit, d);
    const a = adapterConfigFromStore(adapter);
    assertEquals(
      [a.layers, a.sourceDim, a.targetDim, a.modelDim, a.heads, a.headDim, a.mlpDim, a.vocab, a.inProj],
      [6, 1024, 1024, 1024, 16, 64, 4096, 32128, false],
    );
    checkAdapterLayout(adapter, a);
  }
  const vae = headerStore(layout.vae);
  const v = vaeConfigFromStore(vae);
  assertEquals([v.dim, v.zDim], [96, 16]);
  checkVaeLayout(vae, v);
  // Stage widths 384, 384, 384, 192, 96 (the oracle's channels_per_stage).
  const widths = vaeModules(v).filter((m) => m.kind === "residual").map((m) => (m as { cout: number }).cout);
  assertEquals([...new Set(widths)], [384, 192, 96]);
});

Deno.test("anima weights: a missing, mis-shaped or extra tensor is named", async () => {
  const layout = await realLayout();
  const without = layout.dit52.filter(([n]) => n !== "net.blocks.7.cross_attn.k_norm.weight");
  const { dit } = ditStores(headerStore(without));
  const config = ditConfigFromStore(dit);
  assertThrows(() => checkDitLayout(dit, config), /1 tensor missing: blocks\.7\.cross_attn\.k_norm\.weight/);
  const misshaped = layout.dit52.map(([n, s]): [string, number[]] =>
    n === "net.blocks.3.mlp.layer2.weight" ? [n, [8192, 2048]] : [n, s]
  );
  const view = ditStores(headerStore(misshaped)).dit;
  assertThrows(
    () => checkDitLayout(view, config),
    /blocks\.3\.mlp\.layer2\.weight is \[8192, 2048\], expected \[2048, 8192\]/,
  );
  const extra = ditStores(headerStore([...layout.dit52, ["net.blocks.0.extra.weight", [4]]])).dit;
  assertThrows(() => checkDitLayout(extra, config), /not expected: blocks\.0\.extra\.weight/);
  // A hole in the numbering is not read as fewer blocks.
  const holed = ditStores(headerStore(layout.dit52.filter(([n]) => !n.startsWith("net.blocks.5.")))).dit;
  assertThrows(() => ditConfigFromStore(holed), /block 5 is missing/);
  const vae = layout.vae.filter(([n]) => n !== "decoder.upsamples.11.resample.1.bias");
  assertThrows(
    () => checkVaeLayout(headerStore(vae), vaeConfigFromStore(headerStore(vae))),
    /missing: decoder\.upsamples\.11\.resample\.1\.bias/,
  );
});
