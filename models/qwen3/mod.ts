/**
 * Qwen3 (transformers 5.17's `Qwen3Model` / `Qwen3ForCausalLM`) as programs of the library's ops: the
 * text encoder of Z-Image (Qwen3-4B, `hidden_states[-2]`) and Anima (Qwen3-0.6B, `last_hidden_state`).
 *
 * - {@link parseQwen3Config}: a Hugging Face `config.json`, refusing what the port does not compute.
 * - {@link openQwen3Checkpoint}: the checkpoint's layout (`model.`-prefixed or bare names), checked
 *   exactly against the config before any data is read.
 * - {@link Qwen3Encoder}: one causal forward over a prompt, returning transformers' hidden state of
 *   choice for every token, in f32 or q8 (per-row int8 weights, quantised on the GPU while loading).
 * - {@link Qwen3ForCausalLM}: greedy generation with a KV cache, the loop kept on the GPU (prefill and
 *   decode programs, each ending in ops/sample's argmax, whose id the next decode step reads; steps
 *   submitted back to back, ids read back in groups), with {@link qwen3ChatPrompt} and
 *   {@link qwen3StopIds} for a chat turn; its `prepare` gives one generation's programs
 *   ({@link Qwen3Generation}) to time or drive by hand.
 * - {@link Qwen3Reference}: the same forward in plain TypeScript, f64 sums: the definition the GPU is
 *   held to, itself held to transformers' outputs.
 *
 * What it matches: RMSNorm `x / sqrt(mean(x²) + eps) · w` (eps from the config, q_norm and k_norm per
 * head over head_dim, before RoPE), rotate-half RoPE with base `rope_theta` and no scaling, GQA with
 * query head j reading KV head `j / (heads / kvHeads)`, causal attention from position 0, SwiGLU, no
 * biases, `head_dim` independent of the hidden size, the embedding as the head when tied. It refuses
 * (naming the key) sliding windows, RoPE scaling, biases and any config key it does not know, and any
 * checkpoint whose tensors are not exactly the config's.
 *
 * @module
 */

export * from "./config.ts";
export * from "./weights.ts";
export { QWEN3_FORMATS, type Qwen3Format } from "./linear.ts";
export { type Qwen3HostWeights, Qwen3Reference, readQwen3Weights } from "./reference.ts";
export { Qwen3Encoder, type Qwen3EncoderOptions, resolveHiddenState } from "./encoder.ts";
export {
  QWEN3_STOP_TOKENS,
  type Qwen3CausalLMOptions,
  qwen3ChatPrompt,
  Qwen3ForCausalLM,
  type Qwen3GenerateOptions,
  type Qwen3Generation,
  qwen3StopIds,
} from "./causal_lm.ts";
