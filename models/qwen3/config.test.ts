import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { parseQwen3Config } from "./config.ts";

const QWEN3_4B = {
  architectures: ["Qwen3ForCausalLM"],
  attention_bias: false,
  attention_dropout: 0.0,
  bos_token_id: 151643,
  eos_token_id: 151645,
  head_dim: 128,
  hidden_act: "silu",
  hidden_size: 2560,
  initializer_range: 0.02,
  intermediate_size: 9728,
  max_position_embeddings: 40960,
  max_window_layers: 36,
  model_type: "qwen3",
  num_attention_heads: 32,
  num_hidden_layers: 36,
  num_key_value_heads: 8,
  rms_norm_eps: 1e-6,
  rope_scaling: null,
  rope_theta: 1000000,
  sliding_window: null,
  tie_word_embeddings: true,
  torch_dtype: "bfloat16",
  transformers_version: "4.51.0",
  use_cache: true,
  use_sliding_window: false,
  vocab_size: 151936,
};

Deno.test("qwen3 config: Qwen3-4B's keys (transformers 4.x layout) parse, head_dim independent of hidden / heads", () => {
  deepStrictEqual(parseQwen3Config(QWEN3_4B), {
    numHiddenLayers: 36,
    hiddenSize: 2560,
    numAttentionHeads: 32,
    numKeyValueHeads: 8,
    headDim: 128,
    intermediateSize: 9728,
    vocabSize: 151936,
    ropeTheta: 1000000,
    rmsNormEps: 1e-6,
    tieWordEmbeddings: true,
    bosTokenId: 151643,
    eosTokenIds: [151645],
    maxPositionEmbeddings: 40960,
  });
});

Deno.test("qwen3 config: transformers 5's rope_parameters and layer_types", () => {
  const { rope_theta: _, rope_scaling: __, ...rest } = QWEN3_4B;
  const c = parseQwen3Config({
    ...rest,
    rope_parameters: { rope_type: "default", rope_theta: 1000000 },
    layer_types: Array(36).fill("full_attention"),
    eos_token_id: [151645, 151643],
  });
  strictEqual(c.ropeTheta, 1000000);
  deepStrictEqual(c.eosTokenIds, [151645, 151643]);
});

Deno.test("qwen3 config: what the port does not compute is refused by name", () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ model_type: "qwen2" }, /model_type must be "qwen3"/],
    [{ hidden_act: "gelu" }, /hidden_act must be "silu"/],
    [{ attention_bias: true }, /attention_bias must be false/],
    [{ use_sliding_window: true }, /use_sliding_window must be false/],
    [{ rope_scaling: { rope_type: "yarn", factor: 4 } }, /rope_scaling.rope_type "yarn" is not implemented/],
    [{ layer_types: Array(36).fill("sliding_attention") }, /layer_types must list "full_attention"/],
    [{ quantization_config: {} }, /quantization_config is not implemented/],
    [{ head_dim: undefined }, /head_dim must be an integer >= 1, got undefined/],
    [{ head_dim: 126 }, /head_dim must be a multiple of 4/],
    [{ tie_word_embeddings: undefined }, /tie_word_embeddings must be given as a boolean/],
    [{ num_key_value_heads: 5 }, /num_key_value_heads \(5\) must divide num_attention_heads \(32\)/],
    [{ rope_parameters: { rope_theta: 10 } }, /rope_theta 1000000 disagrees with rope_parameters.rope_theta 10/],
  ];
  for (const [change, message] of bad) throws(() => parseQwen3Config({ ...QWEN3_4B, ...change }), message);
  throws(() => parseQwen3Config("{"), /qwen3 config: the text is not JSON/);
});
