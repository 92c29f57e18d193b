import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { assertThrowsMessage } from "../../harness/testing.ts";
import { type LlamaConfig, parseLlamaConfig, SARASHINA_2_2_1B_CONFIG, TINY_CONFIG } from "./config.ts";
import { fixturePath } from "./fixtures_test_util.ts";

const readConfig = async (dir: string) => parseLlamaConfig(await Deno.readTextFile(`${fixturePath(dir)}/config.json`));

/** The smallest legacy (transformers 4.x) config this reads. */
const LEGACY = {
  model_type: "llama",
  num_hidden_layers: 2,
  hidden_size: 64,
  num_attention_heads: 4,
  intermediate_size: 128,
  vocab_size: 256,
  rms_norm_eps: 1e-6,
  rope_theta: 10000,
};

Deno.test("config: the transformers-written fixtures read as the named tiny config and its variants", async () => {
  for (const dtype of ["f32", "bf16"]) assertEquals(await readConfig(`tiny-gqa/${dtype}`), TINY_CONFIG);
  const headDim = await readConfig("tiny-headdim/bf16");
  assertEquals(headDim, { ...TINY_CONFIG, headDim: 16, numKeyValueHeads: 1 });
  assertEquals(await readConfig("tiny-tied/bf16"), { ...TINY_CONFIG, tieWordEmbeddings: true });
  assertEquals((await readConfig("tiny-llama3/bf16")).ropeScaling, {
    ropeType: "llama3",
    factor: 8,
    lowFreqFactor: 1,
    highFreqFactor: 4,
    originalMaxPositionEmbeddings: 32,
  });
});

Deno.test("config: defaults are transformers' (KV heads = heads, head_dim = hidden / heads, no scaling)", () => {
  const c: LlamaConfig = parseLlamaConfig(LEGACY);
  assertEquals([c.numKeyValueHeads, c.headDim, c.ropeScaling, c.tieWordEmbeddings], [
    4,
    16,
    { ropeType: "none" },
    false,
  ]);
  assertEquals([c.bosTokenId, c.eosTokenIds, c.maxPositionEmbeddings], [null, [], 2048]);
  assertEquals(parseLlamaConfig({ ...LEGACY, eos_token_id: [2, 7], bos_token_id: 0 }).eosTokenIds, [2, 7]);
  assertEquals(parseLlamaConfig(JSON.stringify({ ...LEGACY, eos_token_id: 5 })).eosTokenIds, [5]);
});

Deno.test("config: every rope_scaling type reads its fields, legacy and rope_parameters alike", () => {
  const legacy = (s: unknown) => parseLlamaConfig({ ...LEGACY, rope_scaling: s }).ropeScaling;
  assertEquals(legacy(null), { ropeType: "none" });
  assertEquals(legacy({ type: "linear", factor: 2 }), { ropeType: "linear", factor: 2 });
  assertEquals(legacy({ rope_type: "dynamic", factor: 4 }), {
    ropeType: "dynamic",
    factor: 4,
    originalMaxPositionEmbeddings: 2048,
  });
  assertEquals(legacy({ rope_type: "yarn", factor: 4, original_max_position_embeddings: 4096 }), {
    ropeType: "yarn",
    factor: 4,
    originalMaxPositionEmbeddings: 4096,
    attentionFactor: null,
    betaFast: 32,
    betaSlow: 1,
    mscale: null,
    mscaleAllDim: null,
    truncate: true,
  });
  const v5 = parseLlamaConfig({
    ...LEGACY,
    rope_theta: undefined,
    rope_parameters: { rope_type: "yarn", rope_theta: 5e5, factor: 2, beta_fast: 16, truncate: false, mscale: 0.5 },
  });
  assertEquals(v5.ropeTheta, 500000);
  assertEquals(v5.ropeScaling, {
    ropeType: "yarn",
    factor: 2,
    originalMaxPositionEmbeddings: 2048,
    attentionFactor: null,
    betaFast: 16,
    betaSlow: 1,
    mscale: 0.5,
    mscaleAllDim: null,
    truncate: false,
  });
});

Deno.test("config: fields not implemented are refused by name", async () => {
  const refused = (extra: Record<string, unknown>, message: string) =>
    assertThrowsMessage(() => parseLlamaConfig({ ...LEGACY, ...extra }), `llama config: ${message}`);
  await refused({ attention_bias: true }, "attention_bias = true is not implemented (only false)");
  await refused({ mlp_bias: true }, "mlp_bias = true is not implemented");
  await refused({ sliding_window: 4096 }, "sliding_window = 4096 is not implemented (only null)");
  await refused({ hidden_act: "gelu" }, `hidden_act = "gelu" is not implemented (only "silu")`);
  await refused({ model_type: "mistral" }, `model_type = "mistral" is not implemented`);
  await refused({ model_type: undefined }, "model_type is missing");
  await refused({ architectures: ["MistralForCausalLM"] }, "architectures =");
  await refused({ partial_rotary_factor: 0.5 }, "partial_rotary_factor = 0.5");
  await refused({ layer_types: ["full_attention", "sliding_attention"] }, "layer_types =");
  await refused({ quantization_config: { bits: 4 } }, "quantization_config is not implemented by this engine");
  await refused(
    { rope_scaling: { rope_type: "longrope", factor: 2 } },
    `rope_scaling.rope_type "longrope" is not implemented`,
  );
  await refused(
    { rope_scaling: { type: "linear", factor: 2, finetuned: true } },
    "rope_scaling.finetuned is not implemented for rope_type linear",
  );
  await refused(
    { rope_scaling: { rope_type: "llama3", factor: 8, low_freq_factor: 1, high_freq_factor: 4 } },
    "rope_scaling.original_max_position_embeddings is required",
  );
  await refused(
    { rope_scaling: { type: "linear", factor: 2 }, rope_parameters: { rope_type: "default" } },
    "rope_scaling and rope_parameters are both set",
  );
  await refused(
    { rope_parameters: { rope_theta: 1 } },
    "rope_theta (10000) disagrees with rope_parameters.rope_theta (1)",
  );
});

Deno.test("config: malformed sizes are refused by name", async () => {
  const refused = (extra: Record<string, unknown>, message: string) =>
    assertThrowsMessage(() => parseLlamaConfig({ ...LEGACY, ...extra }), `llama config: ${message}`);
  await refused({ num_hidden_layers: 0 }, "num_hidden_layers must be an integer >= 1, got 0");
  await refused({ vocab_size: undefined }, "vocab_size must be an integer >= 1, got undefined");
  await refused({ num_key_value_heads: 3 }, "num_key_value_heads (3) must divide num_attention_heads (4)");
  await refused({ hidden_size: 66 }, "head_dim is absent and hidden_size 66 is not a multiple of 4 heads");
  await refused({ head_dim: 15 }, "head_dim must be even for RoPE, got 15");
  await refused({ rms_norm_eps: -1 }, "rms_norm_eps must be a finite number > 0");
  await refused({ eos_token_id: [2, -1] }, "eos_token_id must be a token id");
  await refused({ eos_token_id: [2, 1e6] }, "eos_token_id (1000000) must be a token id below vocab_size");
  await refused({ bos_token_id: 1e6 }, "bos_token_id (1000000) must be a token id below vocab_size");
  await refused({ tie_word_embeddings: "yes" }, "tie_word_embeddings must be a boolean");
  await assertThrowsMessage(() => parseLlamaConfig([]), "llama config: config.json must be a JSON object");
  await assertThrowsMessage(() => parseLlamaConfig("{"), "llama config: config.json is not JSON (");
});

Deno.test("config: the Sarashina2.2-1B shape is the issue's", () => {
  const { numHiddenLayers, hiddenSize, numAttentionHeads, numKeyValueHeads, headDim, intermediateSize, vocabSize } =
    SARASHINA_2_2_1B_CONFIG;
  assertEquals(
    [numHiddenLayers, hiddenSize, numAttentionHeads, numKeyValueHeads, headDim, intermediateSize, vocabSize],
    [24, 1792, 16, 8, 112, 6272, 102400],
  );
  assertEquals([SARASHINA_2_2_1B_CONFIG.ropeTheta, SARASHINA_2_2_1B_CONFIG.tieWordEmbeddings], [500000, false]);
});
