/**
 * A Llama engine that generates on the GPU (`LlamaEngine`: f32, q8 and q4g128 weights, held to
 * `LlamaReference`, a plain-TypeScript forward) and the parts around it: the configuration (a
 * Hugging Face `config.json`); the weights (our safetensors reader over memory, a Blob or a URL with
 * ranges, sharded checkpoints, the three formats and the loader that streams them tensor by
 * tensor); text in and out (SentencePiece and byte-level BPE tokenizers, the CPU sampler with its
 * seeded counter-based draw, token-level constraints); and the weight cache that keeps downloaded
 * model files (Cache API or IndexedDB in a page). Files on disk are read through
 * `@xpu/ops/llm/file` and cached in a directory through `@xpu/ops/llm/cache/directory` (both Deno
 * only).
 *
 * @example
 * ```ts ignore
 * // ignore: needs a model's tokenizer.model (not in the repository) and the logits of a forward pass
 * import { SentencePieceTokenizer, sampleNext } from "@xpu/ops/llm";
 * const tokenizer = new SentencePieceTokenizer(await Deno.readFile("tokenizer.model"));
 * const prompt = tokenizer.encode("こんにちは");
 * const next = sampleNext(logits, [], { mode: "sample", temperature: 0.8, topP: 0.95, seed: 1 });
 * ```
 *
 * @module
 */
export * from "./tokenizer/mod.ts";
export * from "./constraints/mod.ts";
export {
  type Candidates,
  drawFromCandidates,
  drawUniform,
  pcgHash,
  sampleNext,
  type SamplerOptions,
  samplingCandidates,
} from "./sampler.ts";
export * from "./config.ts";
export * from "./safetensors.ts";
export * from "./safetensors_sources.ts";
export * from "./safetensors_sharded.ts";
export * from "./safetensors_write.ts";
export * from "./weights/format.ts";
export * from "./weights/load.ts";
export * from "./cache/mod.ts";
export {
  type GenerateOptions,
  type GenerateStats,
  LlamaEngine,
  type LlamaEngineOptions,
  type SamplerSpec,
} from "./engine/engine.ts";
export { dequantizeWeight, LlamaReference } from "./engine/reference.ts";
export { ropeCosSin, type RopeFrequencies, ropeFrequencies } from "./engine/rope.ts";
