/**
 * What every text model shares: the weights (our safetensors reader over memory, a Blob or a URL
 * with ranges, sharded checkpoints, the writer, the weight formats f32, q8 and q4g128 with the
 * per-tensor transform the converter and quantise-on-load share, quantise-on-load on the GPU, a name
 * prefix's view of a checkpoint and the exact layout check); text in and out (SentencePiece and
 * byte-level BPE tokenizers, the CPU sampler with its seeded counter-based draw, token-level
 * constraints); the readback of a generation loop kept on the GPU (`TokenRing`: the ids its sampler
 * writes, read back in groups, and `ErrorScopeBatch`: its submissions' error scopes, examined before
 * each readback); perplexity over token windows; and the weight cache that keeps
 * downloaded model files (Cache API or IndexedDB in a page). Files on disk are read through `@xpu/ops/llm/file` and cached in
 * a directory through `@xpu/ops/llm/cache/directory` (both Deno only). The models are
 * `@xpu/ops/models/<name>`: the Llama engine (`LlamaEngine`, `parseLlamaConfig`, `LlamaReference`)
 * is `@xpu/ops/models/llama`.
 *
 * @example
 * ```ts
 * import { SentencePieceTokenizer, sampleNext } from "@xpu/ops/llm";
 * // A small model from the repository's goldens; in practice a checkpoint's tokenizer.model.
 * const model = await Deno.readFile("llm/tokenizer/goldens/sp_unigram_nfkc.model");
 * const tokenizer = new SentencePieceTokenizer(model);
 * const prompt = tokenizer.encode("こんにちは");
 * const logits = new Float32Array(tokenizer.vocabSize); // in practice: the engine's forward over `prompt`
 * logits[prompt[0]] = 1;
 * const next = sampleNext(logits, prompt, { mode: "sample", temperature: 0.8, topP: 0.95, seed: 1 });
 * tokenizer.decode([...prompt, next]);
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
export * from "./safetensors.ts";
export * from "./safetensors_sources.ts";
export * from "./safetensors_sharded.ts";
export * from "./safetensors_write.ts";
export * from "./weights/format.ts";
export * from "./weights/load.ts";
export * from "./weights/checkpoint.ts";
export * from "./cache/mod.ts";
export * from "./perplexity.ts";
export * from "./token_ring.ts";
export * from "./error_scopes.ts";
