import { deepStrictEqual as assertEquals, throws as assertThrows } from "node:assert/strict";
import { adapterConfigFromStore, ditConfigFromStore, vaeConfigFromStore } from "./config.ts";
import { checkAdapterLayout, checkDitLayout, checkVaeLayout, ditStores, vaeModules } from "./weights.ts";
import { fixture, goldenIndex, headerStore, realLayout } from "./fixtures_test_util.ts";

Deno.test("anima weights: the golden-tiny checkpoints give the oracle's tiny config and pass the layout checks", async () => {
  const { configs } = await goldenIndex();
  const { dit, adapter } = ditStores(await fixture("weights_dit"));
  const d = ditConfigFromStore(dit);
  const o = configs.dit;
  assertEquals(
    [d.dim, d.blocks, d.heads, d.contextDim, d.adalnLoraDim, d.mlpDim, d.channels],
    [o.model_channels, o.num_blocks, o.num_heads, o.crossattn_emb_channels, o.adaln_lora_dim, 4 * 48, o.in_channels],
  );
  assertEquals(d.ropeDims, [8, 8, 8]);
  // index.json info.dit_rope_split: theta_h = theta_w = 63496.04207872797 (10000 · 4^(8/6)).
  assertEquals(d.ropeTheta.map((t) => t.toFixed(6)), ["10000.000000", "63496.042079", "63496.042079"]);
  checkDitLayout(dit, d);
  const a = adapterConfigFromStore(adapter);
  assertEquals(
    [a.sourceDim, a.targetDim, a.modelDim, a.layers, a.heads, a.vocab, a.inProj],
    [40, 32, 32, 2, 2, 64, false],
  );
  checkAdapterLayout(adapter, a);
  const vaeStore = await fixture("weights_vae");
  const v = vaeConfigFromStore(vaeStore);
  assertEquals([v.dim, v.zDim], [configs.vae.dim, configs.vae.z_dim]);
  checkVaeLayout(vaeStore, v);
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
