/**
 * A language model's parts around the GPU: its configuration (a Hugging Face `config.json`), its
 * weights (our safetensors reader over memory, a Blob or a URL with ranges, sharded checkpoints,
 * the f32 / q8 / q4g128 formats and the loader that streams them tensor by tensor), and text in and
 * out: tokenizers (SentencePiece and byte-level BPE), the CPU sampler with its seeded counter-based
 * draw, and token-level constraints; and the weight cache that keeps downloaded model files (Cache API
 * or IndexedDB in a page). Files on disk are read through `@xpu/ops/llm/file` and cached in a
 * directory through `@xpu/ops/llm/cache/directory` (both Deno only).
 *
 * @example
 * ```ts ignore
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
