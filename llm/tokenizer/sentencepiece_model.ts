/**
 * Reads a SentencePiece `.model` file (the `ModelProto` of sentencepiece_model.proto) into plain
 * data: the pieces with their scores and types, and the fields of `TrainerSpec` and
 * `NormalizerSpec` that encoding and decoding depend on. Field numbers are sentencepiece's own;
 * fields that only training reads are skipped.
 *
 * @module
 */
import { type ProtoField, readProtoFields } from "./protobuf.ts";

/** A piece's type, as `ModelProto.SentencePiece.Type` numbers them. */
export type PieceType = "normal" | "unknown" | "control" | "user_defined" | "unused" | "byte";
const PIECE_TYPES: Record<number, PieceType> = {
  1: "normal",
  2: "unknown",
  3: "control",
  4: "user_defined",
  5: "unused",
  6: "byte",
};
const MODEL_TYPES: Record<number, string> = { 1: "unigram", 2: "bpe", 3: "word", 4: "char" };

/** One vocabulary entry. */
export interface SentencePiece {
  /** The piece text (U+2581 for a space). */
  readonly piece: string;
  /** The f32 score the file stores (unigram: log probability; BPE: minus the merge order). */
  readonly score: number;
  /** How encode and decode treat the piece. */
  readonly type: PieceType;
}

/** What a `.model` file says, reduced to what encode and decode read. */
export interface SentencePieceModel {
  /** The vocabulary; a piece's id is its index. */
  readonly pieces: readonly SentencePiece[];
  /** `TrainerSpec.model_type`: "unigram", "bpe", "word" or "char". */
  readonly modelType: string;
  /** `TrainerSpec.byte_fallback`: unknown characters become byte pieces. */
  readonly byteFallback: boolean;
  /** `TrainerSpec.treat_whitespace_as_suffix`. */
  readonly treatWhitespaceAsSuffix: boolean;
  /** `TrainerSpec.unk_piece`. */
  readonly unkPiece: string;
  /** `TrainerSpec.bos_piece`. */
  readonly bosPiece: string;
  /** `TrainerSpec.eos_piece`. */
  readonly eosPiece: string;
  /** `TrainerSpec.pad_piece`. */
  readonly padPiece: string;
  /** Text `decode` gives an unknown piece (default " ⁇ "). */
  readonly unkSurface: string;
  /** `ModelProto.normalizer_spec`. */
  readonly normalizer: NormalizerSpec;
  /** `ModelProto.denormalizer_spec`, when the file has one. */
  readonly denormalizer: NormalizerSpec | null;
}

/** `NormalizerSpec`: the rule's name, its compiled character map, and the whitespace switches. */
export interface NormalizerSpec {
  /** `normalization_rule_name`: "nfkc", "nmt_nfkc", "identity", ... */
  readonly name: string;
  /** The compiled rule (empty for "identity"). */
  readonly precompiledCharsmap: Uint8Array;
  /** Prepend a space to the text. */
  readonly addDummyPrefix: boolean;
  /** Drop leading, trailing and repeated spaces. */
  readonly removeExtraWhitespaces: boolean;
  /** Write spaces as U+2581. */
  readonly escapeWhitespaces: boolean;
  /** A custom rule's source text (training-time only; the charsmap is what applies). */
  readonly normalizationRuleTsv: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function text(bytes: Uint8Array, f: ProtoField): string {
  return utf8.decode(bytes.subarray(f.start, f.end));
}

function readNormalizer(bytes: Uint8Array): NormalizerSpec {
  let name = "";
  let precompiledCharsmap = new Uint8Array(0);
  let addDummyPrefix = true;
  let removeExtraWhitespaces = true;
  let escapeWhitespaces = true;
  let normalizationRuleTsv = "";
  for (const f of readProtoFields(bytes)) {
    if (f.field === 1) name = text(bytes, f);
    else if (f.field === 2) precompiledCharsmap = bytes.slice(f.start, f.end);
    else if (f.field === 3) addDummyPrefix = f.int32 !== 0;
    else if (f.field === 4) removeExtraWhitespaces = f.int32 !== 0;
    else if (f.field === 5) escapeWhitespaces = f.int32 !== 0;
    else if (f.field === 6) normalizationRuleTsv = text(bytes, f);
  }
  return { name, precompiledCharsmap, addDummyPrefix, removeExtraWhitespaces, escapeWhitespaces, normalizationRuleTsv };
}

/**
 * Parses a `.model` file.
 *
 * @param bytes The file's contents.
 * @returns The pieces and specs; no check of their meaning (SentencePieceTokenizer does that).
 * @example
 * ```ts
 * import { readSentencePieceModel } from "@xpu/ops/llm";
 * // A small unigram model of the repository's goldens; in practice, a model's tokenizer.model.
 * const model = readSentencePieceModel(await Deno.readFile("llm/tokenizer/goldens/sp_unigram_nfkc.model"));
 * model.pieces.length; // 1000: the vocabulary size
 * ```
 */
export function readSentencePieceModel(bytes: Uint8Array): SentencePieceModel {
  const pieces: SentencePiece[] = [];
  let trainer: Uint8Array = new Uint8Array(0);
  let normalizer: NormalizerSpec | null = null;
  let denormalizer: NormalizerSpec | null = null;
  for (const f of readProtoFields(bytes)) {
    if (f.field === 1) {
      const body = bytes.subarray(f.start, f.end);
      const bodyView = new DataView(body.buffer, body.byteOffset, body.byteLength);
      let piece = "";
      let score = 0;
      let type: PieceType = "normal";
      for (const g of readProtoFields(body)) {
        if (g.field === 1) piece = text(body, g);
        else if (g.field === 2 && g.wireType === 5) score = bodyView.getFloat32(g.start, true);
        else if (g.field === 3) {
          const known = PIECE_TYPES[g.int32];
          if (!known) throw new Error(`SentencePiece model: piece ${pieces.length} has unknown type ${g.int32}`);
          type = known;
        }
      }
      pieces.push({ piece, score, type });
    } else if (f.field === 2) trainer = bytes.subarray(f.start, f.end);
    else if (f.field === 3) normalizer = readNormalizer(bytes.subarray(f.start, f.end));
    else if (f.field === 5) denormalizer = readNormalizer(bytes.subarray(f.start, f.end));
  }
  let modelType = "unigram";
  let byteFallback = false;
  let treatWhitespaceAsSuffix = false;
  let unkPiece = "<unk>", bosPiece = "<s>", eosPiece = "</s>", padPiece = "<pad>";
  let unkSurface = " \u2047 ";
  for (const f of readProtoFields(trainer)) {
    if (f.field === 3) modelType = MODEL_TYPES[f.int32] ?? `model type ${f.int32}`;
    else if (f.field === 35) byteFallback = f.int32 !== 0;
    else if (f.field === 24) treatWhitespaceAsSuffix = f.int32 !== 0;
    else if (f.field === 45) unkPiece = text(trainer, f);
    else if (f.field === 46) bosPiece = text(trainer, f);
    else if (f.field === 47) eosPiece = text(trainer, f);
    else if (f.field === 48) padPiece = text(trainer, f);
    else if (f.field === 44) unkSurface = text(trainer, f);
  }
  return {
    pieces,
    modelType,
    byteFallback,
    treatWhitespaceAsSuffix,
    unkPiece,
    bosPiece,
    eosPiece,
    padPiece,
    unkSurface,
    normalizer: normalizer ?? readNormalizer(new Uint8Array(0)),
    denormalizer,
  };
}
