/**
 * Tokenizers in plain TypeScript, no wasm and no dependency: SentencePiece `.model` files
 * (unigram and BPE; T5's spiece.model among them) and Hugging Face `tokenizer.json` byte-level
 * BPE (Qwen's from its vocab.json + merges.txt too, with its chat prompt), behind one
 * {@link Tokenizer} interface with a streaming decoder. Each is held to its reference package
 * (sentencepiece 0.2.2, tokenizers 0.23.2, transformers 5.17) on committed fixtures; see each
 * module's doc for what it implements and what it refuses.
 *
 * @module
 */
export type { DecodeStream, EncodeOptions, Tokenizer } from "./tokenizer.ts";
export { SentencePieceTokenizer } from "./sentencepiece.ts";
export {
  type NormalizerSpec,
  type PieceType,
  readSentencePieceModel,
  type SentencePiece,
  type SentencePieceModel,
} from "./sentencepiece_model.ts";
export { ByteLevelBpeTokenizer } from "./byte_level_bpe.ts";
export {
  loadQwenTokenizer,
  QWEN_PRETOKENIZE_REGEX,
  qwenChatPrompt,
  type QwenTokenizerFiles,
  type QwenTokenizerJson,
  qwenTokenizerJson,
  type TokenizerFileContents,
} from "./qwen.ts";
export { type ProtoField, readProtoFields } from "./protobuf.ts";
