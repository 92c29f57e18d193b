/**
 * Text in and out of a language model: tokenizers (SentencePiece and byte-level BPE), the CPU
 * sampler with its seeded counter-based draw, and token-level constraints.
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
