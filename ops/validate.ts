/**
 * Argument checks shared by every op's reference and GPU entry point, so bad input gets the same
 * clear error from both: the op, the argument, what was expected and what was given. Plain
 * TypeScript with no imports, like the references that use it.
 *
 * @module
 */

/** The largest WGSL `u32`, `2^32 - 1`: the bound of every size that reaches a kernel as a `u32`. */
export const U32_MAX = 4294967295;

/** The largest WGSL `i32`, `2^31 - 1`. */
export const I32_MAX = 2147483647;

/**
 * A value as a message shows it: a string quoted (`"2"`, so it cannot pass for the number 2), an
 * array or plain object as JSON, anything else as `String` gives it (`NaN`, `undefined`, `1e+39`).
 *
 * @param value the value given
 * @returns its text for an error message
 *
 * @example
 * ```ts
 * import { shown } from "./validate.ts";
 * shown("2"); // '"2"'
 * shown(2); // "2"
 * shown([2, -3]); // "[2,-3]"
 * ```
 */
export function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value) || (value !== null && typeof value === "object" && value.constructor === Object)) {
    try {
      return JSON.stringify(value);
    } catch {
      return String(value);
    }
  }
  return String(value);
}

/**
 * Refuses keys an object should not carry, naming each: a misspelt optional argument (`esp` for
 * `eps`, `overide` for `override`) would otherwise be ignored and its default used without a word.
 * `undefined` passes (an omitted options object), and so does a key whose value is `undefined` (the
 * same as leaving it out); anything else that is not an object is refused.
 *
 * @param op the op, for the message
 * @param what what the object is, for the message: `"argument"` for an op's shape or arguments,
 *   `"option"` for its options
 * @param value the object given
 * @param allowed every key it may carry
 * @throws Error naming the op, the unknown key(s) and the keys allowed
 *
 * @example
 * ```ts
 * import { checkKeys } from "./validate.ts";
 * checkKeys("softmax", "option", { override: "kernel" }, ["override"]); // passes
 * checkKeys("softmax", "option", undefined, ["override"]); // passes: no options
 * try {
 *   checkKeys("softmax", "option", { overide: "kernel" }, ["override"]);
 * } catch (e) {
 *   (e as Error).message; // 'softmax: unknown option "overide" (expected override)'
 * }
 * ```
 */
export function checkKeys(op: string, what: string, value: unknown, allowed: readonly string[]): void {
  if (value === undefined) return;
  if (value === null || typeof value !== "object") {
    throw new Error(`${op}: ${what}s must be an object, got ${shown(value)}`);
  }
  const given = Object.entries(value).filter(([, v]) => v !== undefined).map(([key]) => key);
  const unknown = given.filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    const names = unknown.map((key) => JSON.stringify(key)).join(", ");
    throw new Error(`${op}: unknown ${what}${unknown.length > 1 ? "s" : ""} ${names} (expected ${allowed.join(", ")})`);
  }
}

/** The keys of the options every `<op>Plan` and `<op>Gpu` takes (harness/options.ts's `KernelOptions`). */
export const KERNEL_OPTION_KEYS: readonly string[] = ["override"];

/**
 * Refuses an options object of a plan or GPU entry point that carries anything but `override`
 * (or the op's own extra keys), before any GPU work: {@link checkKeys} over {@link KERNEL_OPTION_KEYS}.
 *
 * @param op the op, for the message
 * @param options the options given (`undefined` passes)
 * @param extra keys the op's options add to `override`
 * @throws Error naming the op and the unknown option
 *
 * @example
 * ```ts
 * import { checkOptions } from "./validate.ts";
 * checkOptions("softmax", { override: "kernel" }); // passes
 * try {
 *   checkOptions("softmax", { overide: "kernel" });
 * } catch (e) {
 *   (e as Error).message; // 'softmax: unknown option "overide" (expected override)'
 * }
 * ```
 */
export function checkOptions(op: string, options: unknown, extra: readonly string[] = []): void {
  checkKeys(op, "option", options, [...KERNEL_OPTION_KEYS, ...extra]);
}

/**
 * Requires the arguments object itself, so a call without it (`softmax()`, `softmax(undefined)`)
 * fails naming what is missing instead of with a TypeError from reading a property of undefined.
 *
 * @param op the op, for the message
 * @param name what the object is (`args` or `shape`)
 * @param value the value given
 * @param fields the fields it should carry, for the message (e.g. `"{ x, rows, cols }"`)
 * @param allowed when given, every key the object may carry (an op's shape and arrays together, so
 *   that a plan can be given the arguments object too): any other key is refused by name
 *   ({@link checkKeys})
 * @throws Error naming the op and the fields expected, or an unknown key
 */
export function requireArgs(
  op: string,
  name: string,
  value: unknown,
  fields: string,
  allowed?: readonly string[],
): void {
  if (value === null || typeof value !== "object") {
    throw new Error(`${op}: ${name} must be an object ${fields}, got ${shown(value)}`);
  }
  if (allowed) checkKeys(op, "argument", value, allowed);
}

/**
 * Requires an integer in `[min, max]`.
 *
 * @param op the op, for the message
 * @param name the argument
 * @param value the value given
 * @param min smallest allowed value
 * @param max largest allowed value
 * @returns the value
 * @throws Error naming the argument and the range
 */
export function requireInt(op: string, name: string, value: unknown, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${op}: ${name} must be an integer ${describeRange(value, min, max)}, got ${shown(value)}`);
  }
  return value;
}

/**
 * The range a {@link requireInt} message states. A bound that is only a WGSL type's limit (u32, i32)
 * is named when the value passes it, and left out otherwise: `rows: 0` reads "must be an integer
 * >= 1", `rows: 2 ** 32` reads "must be an integer <= 4294967295 (the largest u32)".
 */
function describeRange(value: unknown, min: number, max: number): string {
  const typeLimit = max === U32_MAX ? "u32" : max === I32_MAX ? "i32" : undefined;
  if (max === Number.MAX_SAFE_INTEGER) return `>= ${min}`;
  if (typeLimit === undefined) return `in [${min}, ${max}]`;
  if (typeof value === "number" && value > max) return `<= ${max} (the largest ${typeLimit})`;
  return `>= ${min}`;
}

/** The largest finite f32, `(2 - 2^-23) * 2^127`. */
export const F32_MAX = 3.4028234663852886e38;

/**
 * Requires a number a WGSL `f32` holds as a finite value: finite in f64 and within ±{@link F32_MAX}
 * after rounding to f32 (1e39 passes `Number.isFinite` but is Infinity on the GPU).
 *
 * @param op the op, for the message
 * @param name the argument
 * @param value the value given
 * @returns the value
 * @throws Error naming the argument and the f32 range
 */
export function requireF32(op: string, name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isFinite(Math.fround(value))) {
    throw new Error(`${op}: ${name} must be a finite f32 (|${name}| <= ${F32_MAX}), got ${shown(value)}`);
  }
  return value;
}

/**
 * Requires one of a fixed set of strings.
 *
 * @param op the op, for the message
 * @param name the argument
 * @param value the value given
 * @param choices the allowed values
 * @returns the value
 * @throws Error listing the choices and the value given, a string quoted ({@link shown})
 *
 * @example
 * ```ts
 * import { requireOneOf } from "./validate.ts";
 * requireOneOf("pad", "mode", "reflect", ["constant", "reflect"]); // "reflect"
 * try {
 *   requireOneOf("pad", "mode", "circular", ["constant", "reflect"]);
 * } catch (e) {
 *   (e as Error).message; // 'pad: mode must be one of "constant", "reflect", got "circular"'
 * }
 * ```
 */
export function requireOneOf<T extends string>(op: string, name: string, value: unknown, choices: readonly T[]): T {
  if (!(choices as readonly unknown[]).includes(value)) {
    throw new Error(`${op}: ${name} must be one of ${choices.map((c) => `"${c}"`).join(", ")}, got ${shown(value)}`);
  }
  return value as T;
}

type ArrayKind = "Float32Array" | "Int32Array" | "Uint32Array";
const KINDS = { Float32Array, Int32Array, Uint32Array } as const;

/**
 * Requires a typed array of a given kind and, when `length` is given, of that length.
 *
 * @param op the op, for the message
 * @param name the argument
 * @param value the value given
 * @param kind the typed array type required
 * @param length the required length, with how it was derived (e.g. `[12, "rows * cols"]`)
 * @throws Error naming the argument, the expected type and length, and what was given
 */
export function requireArray(
  op: string,
  name: string,
  value: unknown,
  kind: ArrayKind,
  length?: readonly [number, string],
): void {
  if (!(value instanceof KINDS[kind])) {
    const got = value === null || typeof value !== "object" ? shown(value) : value.constructor.name;
    throw new Error(`${op}: ${name} must be ${kind === "Int32Array" ? "an" : "a"} ${kind}, got ${got}`);
  }
  if (length && value.length !== length[0]) {
    throw new Error(`${op}: ${name} must have length ${length[1]} = ${length[0]}, got ${value.length}`);
  }
}

/**
 * Requires a shape: an array of `minRank` to `maxRank` integer dimensions, each in `[0, 2^32 - 1]`
 * (a WGSL `u32`).
 *
 * @param op the op, for the message
 * @param name the argument
 * @param value the value given
 * @param minRank fewest dimensions allowed
 * @param maxRank most dimensions allowed
 * @returns the element count (the product of the dimensions)
 * @throws Error naming the argument, or the bad dimension as `name[i]`
 */
export function requireShape(op: string, name: string, value: unknown, minRank = 1, maxRank = Infinity): number {
  if (!Array.isArray(value) || value.length < minRank || value.length > maxRank) {
    const ranks = maxRank === Infinity ? `at least ${minRank}` : `${minRank} to ${maxRank}`;
    throw new Error(`${op}: ${name} must be an array of ${ranks} dimensions, got ${JSON.stringify(value)}`);
  }
  value.forEach((d, i) => requireInt(op, `${name}[${i}]`, d, 0, U32_MAX));
  return value.reduce((p: number, d: number) => p * d, 1);
}

/**
 * adaLN modulation of a batch of items (rmsnorm's and layernorm's `modulation`): row n of a
 * `[rows, cols]` result is multiplied by `1 + scale[b]` and shifted by `shift[b]`,
 * b = ⌊n / rowsPerItem⌋.
 */
export interface Modulation {
  /** Rows of one item (>= 1); rows must be a multiple of it. */
  rowsPerItem: number;
  /** `[items, cols]`, items = rows / rowsPerItem: the result is multiplied by `1 + scale[b, c]`. */
  scale: Float32Array;
  /** Optional `[items, cols]`, added after the scale. Absent means zeros. */
  shift?: Float32Array;
}

/** The keys a modulation may carry (a plan's `shift` is a boolean, a call's the array). */
const MODULATION_KEYS: readonly string[] = ["rowsPerItem", "scale", "shift"];

/**
 * Requires a modulation's shape: `rowsPerItem` an integer >= 1 that divides `rows`.
 *
 * @param op the op, for the message
 * @param rows the rows being modulated
 * @param modulation `{ rowsPerItem, shift? }`
 * @returns the number of items, rows / rowsPerItem
 * @throws Error naming `modulation` or `modulation.rowsPerItem`, or an unknown key of it
 */
export function requireModulationShape(
  op: string,
  rows: number,
  modulation: { rowsPerItem: number; shift?: unknown },
): number {
  requireArgs(op, "modulation", modulation, "{ rowsPerItem, scale, shift? }", MODULATION_KEYS);
  const per = requireInt(op, "modulation.rowsPerItem", modulation.rowsPerItem, 1, U32_MAX);
  if (rows % per !== 0) {
    throw new Error(`${op}: rows must be a multiple of modulation.rowsPerItem = ${per}, got rows = ${rows}`);
  }
  return rows / per;
}

/**
 * Requires a modulation's arrays: `scale` and the optional `shift`, each a Float32Array of
 * items * cols.
 *
 * @param op the op, for the message
 * @param rows the rows being modulated
 * @param cols their length
 * @param modulation `{ rowsPerItem, scale, shift? }`
 * @returns the number of items
 * @throws Error naming the bad field
 */
export function requireModulation(op: string, rows: number, cols: number, modulation: Modulation): number {
  const items = requireModulationShape(op, rows, modulation);
  requireArray(op, "modulation.scale", modulation.scale, "Float32Array", [items * cols, "items * cols"]);
  if (modulation.shift !== undefined) {
    requireArray(op, "modulation.shift", modulation.shift, "Float32Array", [items * cols, "items * cols"]);
  }
  return items;
}
