/**
 * Uniform parameter packing.
 *
 * A kernel's parameters are one WGSL uniform struct of 4-byte scalars (`u32`, `i32`, `f32`), in
 * declaration order. Each kernel module declares the layout once, beside its WGSL, and packs with
 * it; values are validated (a u32 must be an integer in [0, 2^32), an i32 in [-2^31, 2^31), an f32
 * finite after rounding to f32: 1e39 would be Infinity on the GPU), so a bad value is an error
 * rather than a wrapped integer or an infinity on the GPU.
 *
 * @module
 */

/** One scalar field of a params struct. */
export interface ParamField {
  /** The field name (as in the WGSL struct). */
  name: string;
  /** Its WGSL scalar type. */
  type: "u32" | "i32" | "f32";
  /**
   * The op's arguments the value is made of, as a caller would write them (e.g. `N * C * L`), for
   * a field that is not itself an argument: a value out of the type's range is then refused naming
   * them, not the kernel's internal name. Every derived integer field should say it.
   */
  of?: string;
}

/**
 * Packs values into a uniform buffer image, padded to a multiple of 16 bytes.
 *
 * @param layout the struct's fields in declaration order
 * @param values a value for every field
 * @param op the op name, for error messages
 * @returns the bytes to upload
 * @throws Error naming the field when a value is missing or out of its type's range (naming the
 *   arguments it is made of instead, for a field that says them in `of`)
 *
 * @example
 * ```ts
 * import { packParams } from "@xpu/ops/harness";
 * const bytes = packParams([{ name: "n", type: "u32" }, { name: "alpha", type: "f32" }], { n: 3, alpha: 0.5 }, "demo");
 * bytes.byteLength; // 16
 * ```
 */
export function packParams(
  layout: readonly ParamField[],
  values: Readonly<Record<string, number>>,
  op: string,
): ArrayBuffer {
  if (!Array.isArray(layout) || layout.some((f) => typeof f?.name !== "string")) {
    throw new Error(`${op}: layout must be an array of { name, type } params, got ${shownLayout(layout)}`);
  }
  if (values === null || typeof values !== "object") {
    throw new Error(`${op}: values must be an object of the params' values, got ${String(values)}`);
  }
  const bytes = new ArrayBuffer(Math.max(16, Math.ceil((layout.length * 4) / 16) * 16));
  const view = new DataView(bytes);
  for (const [i, field] of layout.entries()) {
    const v = values[field.name];
    if (typeof v !== "number" || Number.isNaN(v)) {
      throw new Error(`${op}: param "${field.name}" must be a number, got ${v}`);
    }
    if (field.type === "f32") {
      // 1e39 is finite in f64 but rounds to Infinity in f32: check the value the GPU would see.
      if (!Number.isFinite(Math.fround(v))) {
        throw new Error(
          `${op}: param "${field.name}" must be a finite f32 (|value| <= 3.4028234663852886e38), got ${v}`,
        );
      }
      view.setFloat32(i * 4, v, true);
      continue;
    }
    const [lo, hi] = field.type === "u32" ? [0, 2 ** 32 - 1] : [-(2 ** 31), 2 ** 31 - 1];
    if (field.of !== undefined && Number.isInteger(v) && (v < lo || v > hi)) {
      const bound = v > hi ? `<= ${hi} (the largest ${field.type}` : `>= ${lo} (the least ${field.type}`;
      throw new Error(`${op}: ${field.of} must be ${bound}, the kernel's "${field.name}"), got ${v}`);
    }
    if (!Number.isInteger(v) || v < lo || v > hi) {
      throw new Error(`${op}: param "${field.name}" must be a ${field.type} integer in [${lo}, ${hi}], got ${v}`);
    }
    if (field.type === "u32") view.setUint32(i * 4, v, true);
    else view.setInt32(i * 4, v, true);
  }
  return bytes;
}

/** A layout given to {@link packParams}, as its message shows it. */
function shownLayout(layout: unknown): string {
  if (layout === null || typeof layout !== "object") return String(layout);
  return Array.isArray(layout) ? "an array with an element that is no param" : layout.constructor.name;
}
