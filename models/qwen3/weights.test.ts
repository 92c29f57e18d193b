import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { encodeSafetensors } from "../../llm/safetensors_write.ts";
import { SafetensorsFile, type TensorStore } from "../../llm/safetensors.ts";
import { bytesSource } from "../../llm/safetensors_sources.ts";
import { scopedStore } from "../../llm/weights/checkpoint.ts";
import { animaTiny } from "./fixtures_test_util.ts";
import { openQwen3Checkpoint, qwen3Tensors } from "./weights.ts";

/** The fixture's tensors (shapes only, zero data) renamed and filtered, plus extra ones. */
async function variant(
  store: TensorStore,
  rename: (name: string) => string | null,
  extra: { name: string; shape: number[] }[] = [],
): Promise<TensorStore> {
  const tensors = [
    ...store.tensors.flatMap((t) => {
      const name = rename(t.name);
      return name === null ? [] : [{ name, shape: [...t.shape] }];
    }),
    ...extra,
  ].map(({ name, shape }) => ({
    name,
    dtype: "F32" as const,
    shape,
    data: new Uint8Array(4 * shape.reduce((p, d) => p * d, 1)),
  }));
  return await SafetensorsFile.open(bytesSource(encodeSafetensors(tensors)));
}

Deno.test("qwen3 weights: Qwen3ForCausalLM names (model.) and bare Qwen3Model names resolve to the same tensors", async () => {
  const { config, store } = await animaTiny();
  const causal = openQwen3Checkpoint(store, config);
  strictEqual(causal.layout, "Qwen3ForCausalLM");
  strictEqual(causal.lmHead, null);
  const bare = openQwen3Checkpoint(scopedStore(store, "model."), config);
  strictEqual(bare.layout, "Qwen3Model");
  const names = (s: TensorStore) => s.tensors.map((t) => t.name).sort();
  deepStrictEqual(names(causal.model), names(bare.model));
  deepStrictEqual(names(causal.model), qwen3Tensors(config).map((t) => t.name).sort());
  deepStrictEqual(await causal.model.readFloat32("norm.weight"), await store.readFloat32("model.norm.weight"));
});

Deno.test("qwen3 weights: inv_freq buffers and a tied lm_head are tolerated; an untied head must be there", async () => {
  const { config, store } = await animaTiny();
  const withExtras = await variant(store, (n) => n, [
    { name: "model.layers.0.self_attn.rotary_emb.inv_freq", shape: [8] },
    { name: "lm_head.weight", shape: [128, 40] },
  ]);
  strictEqual(openQwen3Checkpoint(withExtras, config).lmHead, null);
  const untied = { ...config, tieWordEmbeddings: false };
  strictEqual(openQwen3Checkpoint(withExtras, untied).lmHead, "lm_head.weight");
  throws(() => openQwen3Checkpoint(store, untied), /1 tensor missing: lm_head.weight/);
});

Deno.test("qwen3 weights: missing, mis-shaped and unexpected tensors are named before any data is read", async () => {
  const { config, store } = await animaTiny();
  const broken = await variant(
    store,
    (n) => n === "model.layers.1.self_attn.k_norm.weight" ? null : n,
    [{ name: "model.layers.2.mlp.up_proj.weight", shape: [96, 40] }],
  );
  throws(
    () => openQwen3Checkpoint(broken, config),
    /1 tensor missing: model.layers.1.self_attn.k_norm.weight\. 1 tensor not expected: model.layers.2.mlp.up_proj.weight/,
  );
  // The config's head_dim read from q_proj's rows: a config with head_dim 20 mis-shapes q, k, v, o and the norms.
  throws(
    () => openQwen3Checkpoint(store, { ...config, headDim: 20 }),
    /mis-shaped: model.layers.0.self_attn.q_proj.weight is \[32, 40\], expected \[40, 40\]/,
  );
  throws(
    () => openQwen3Checkpoint(store, { ...config, numHiddenLayers: 1_000_000 }),
    /qwen3 \(Qwen3ForCausalLM\): the config has 1000000 layers \(num_hidden_layers\), the checkpoint 2/,
  );
  const renamed = await variant(store, (n) => n.replace("embed_tokens", "wte"));
  throws(
    () => openQwen3Checkpoint(renamed, config),
    /neither model.embed_tokens.weight/,
  );
});
