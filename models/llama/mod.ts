/**
 * Llama (transformers' `LlamaForCausalLM`) on the GPU: {@link LlamaEngine} generates with f32, q8 or
 * q4g128 weights, every dispatch an op's plan bound once into programs replayed each step (prefill in
 * chunks, decode one token a step with the KV cache, the next token chosen on the GPU).
 *
 * - {@link parseLlamaConfig}: a Hugging Face `config.json` (Llama 2 and 3, RoPE scaling by the
 *   config's `rope_scaling`), refusing by name what the engine does not compute.
 * - {@link llamaWeightSpecs}, {@link planLoad}, {@link loadWeights}: the checkpoint's tensors (HF
 *   names), checked against the config before any data is read, and loaded one at a time in a weight
 *   format (llm/weights), from a Hugging Face checkpoint or one converted ahead of time.
 * - {@link LlamaEngine}: the forward and generation (greedy or seeded sampling, a token constraint),
 *   with {@link estimateResidentBytes} / {@link checkResidentBudget} saying what a load will hold
 *   before it reads anything.
 * - {@link LlamaReference}: the same forward in plain TypeScript, f64 sums: the definition the GPU is
 *   held to, itself held to transformers' logits for tiny random checkpoints (`models/llama/fixtures/`).
 *
 * What it matches: RMSNorm, rotate-half RoPE (the Q and K rows permuted once, on load or by the
 * converter, so that ops/rope's adjacent pairs compute it), GQA, SwiGLU, no biases, the embedding as
 * the head when tied. The text around it (tokenizers, the sampler, constraints, safetensors, the weight
 * cache, perplexity) is `@xpu/ops/llm`; the converter and the generation and bench command lines are
 * this folder's `convert.ts`, `generate.ts` and `bench.ts` (`deno task convert`, `generate`, `bench:llm`).
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { LlamaEngine, parseLlamaConfig } from "@xpu/ops/models/llama";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const dir = "models/fortune";
 * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
 * const { store, close } = await openCheckpointDir(dir);
 * const engine = await LlamaEngine.load(await acquireDevice(), store, config, { format: "q8", maxSeq: 32 });
 * close();
 * for await (const id of engine.generate([1, 320], { maxTokens: 4 })) console.log(id);
 * engine.destroy();
 * ```
 *
 * @module
 */

export * from "./config.ts";
export * from "./weights.ts";
export {
  type GenerateOptions,
  type GenerateStats,
  LlamaEngine,
  type LlamaEngineOptions,
  type PrefillActivations,
  type SamplerSpec,
} from "./engine.ts";
export { checkResidentBudget, estimateResidentBytes, type EstimateSizes, type ResidentEstimate } from "./estimate.ts";
export { dequantizeWeight, LlamaReference, type LlamaReferenceOptions } from "./reference.ts";
export { ropeCosSin, type RopeFrequencies, ropeFrequencies } from "./rope.ts";
