/**
 * Tokenizers in plain TypeScript, no wasm and no dependency: SentencePiece `.model` files
 * (unigram and BPE) and Hugging Face `tokenizer.json` byte-level BPE, behind one
 * {@link Tokenizer} interface with a streaming decoder. Each is held to its reference package
 * (sentencepiece 0.2.2, tokenizers 0.23.2) on committed fixtures; see each module's doc for what
 * it implements and what it refuses.
 *
 * @module
 */
export type { DecodeStream, Tokenizer } from "./tokenizer.ts";
export { SentencePieceTokenizer } from "./sentencepiece.ts";
export {
  type NormalizerSpec,
  type PieceType,
  readSentencePieceModel,
  type SentencePiece,
  type SentencePieceModel,
} from "./sentencepiece_model.ts";
export { ByteLevelBpeTokenizer } from "./byte_level_bpe.ts";
export { type ProtoField, readProtoFields } from "./protobuf.ts";
