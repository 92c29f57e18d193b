/**
 * Token-level constraints: the {@link Constraint} interface the sampler takes, the
 * {@link TokenCodec} a constraint sees a tokenizer through, and {@link LineFormatConstraint}.
 *
 * @module
 */
export type { Constraint, TokenCodec } from "./constraint.ts";
export { LineFormatConstraint, type LineFormatSpec, type LineSegment } from "./line_format.ts";
