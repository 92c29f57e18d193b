/**
 * What the image models' command lines share (`deno task zimage`, `deno task anima`): `--name value`
 * options checked against the command's list, numbers (with their ranges), choices and byte counts
 * parsed with messages that name the option, and paths checked before anything is read. Deno only
 * where a function says so ({@link checkPath}); the CLIs that use them are Deno-only.
 *
 * @module
 */

import { dirname } from "node:path";

/** A command line's options: which take a value, which are required, and the usage text. */
export interface CliSpec {
  /** Every option, without `--`; each takes one value. */
  valued: readonly string[];
  /** The options that must be given. */
  required: readonly string[];
  /** The usage text, appended to every error. */
  usage: string;
}

/**
 * The command line's `--name value` pairs, refusing anything else by name.
 *
 * @param args the arguments
 * @param spec the command's options and usage
 * @returns each option's value, or "help" when `--help` or `-h` is among them
 * @throws Error naming an unknown option, a missing value, a missing required option or a
 *   positional argument, followed by the usage
 *
 * @example
 * ```ts
 * import { parseCliFlags } from "./cli.ts";
 * const spec = { valued: ["out", "steps"], required: ["out"], usage: "usage: ..." };
 * parseCliFlags(["--out", "a.png", "--steps", "4"], spec); // Map { "out" => "a.png", "steps" => "4" }
 * parseCliFlags(["--help"], spec); // "help"
 * ```
 */
export function parseCliFlags(args: readonly string[], spec: CliSpec): Map<string, string> | "help" {
  if (args.includes("--help") || args.includes("-h")) return "help";
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("--")) throw new Error(`unexpected argument "${arg}"\n${spec.usage}`);
    const name = arg.slice(2);
    if (!spec.valued.includes(name)) throw new Error(`unknown option ${arg}\n${spec.usage}`);
    if (i + 1 >= args.length) throw new Error(`${arg} needs a value\n${spec.usage}`);
    flags.set(name, args[++i]);
  }
  for (const required of spec.required) {
    if (!flags.has(required)) throw new Error(`--${required} is required\n${spec.usage}`);
  }
  return flags;
}

/** The values a numeric option may take: `min <= v <= max`, and `v > above`. */
export interface NumberRange {
  /** The least value allowed. */
  min?: number;
  /** The greatest value allowed. */
  max?: number;
  /** A bound the value must exceed. */
  above?: number;
}

/**
 * A numeric option's value.
 *
 * @param flags the parsed options
 * @param name the option, without `--`
 * @param integer whether it must be an integer
 * @param range the values allowed (default: any finite number, or any integer)
 * @returns the number, or undefined when the option was not given
 * @throws Error naming the option, what was expected and what was given when its value is not a
 *   finite number, not an integer, or out of the range
 *
 * @example
 * ```ts
 * import { numberFlag } from "./cli.ts";
 * numberFlag(new Map([["cfg", "4.5"]]), "cfg", false); // 4.5
 * numberFlag(new Map(), "steps", true); // undefined
 * numberFlag(new Map([["steps", "8"]]), "steps", true, { min: 1, max: 1000 }); // 8
 * ```
 */
export function numberFlag(
  flags: Map<string, string>,
  name: string,
  integer: boolean,
  range: NumberRange = {},
): number | undefined {
  const text = flags.get(name);
  if (text === undefined) return undefined;
  const value = Number(text);
  const { min, max, above } = range;
  const bounds = min !== undefined && max !== undefined
    ? [` in [${min}, ${max}]`]
    : [min !== undefined ? ` >= ${min}` : "", max !== undefined ? ` <= ${max}` : ""].filter((b) => b);
  if (above !== undefined) bounds.push(` > ${above}`);
  const fits = text.trim() !== "" && (integer ? Number.isInteger(value) : Number.isFinite(value)) &&
    (min === undefined || value >= min) && (max === undefined || value <= max) &&
    (above === undefined || value > above);
  if (!fits) {
    throw new Error(
      `--${name} must be ${integer ? "an integer" : "a finite number"}${bounds.join(" and")}, got "${text}"`,
    );
  }
  return value;
}

/**
 * An option whose value is one of a list.
 *
 * @param flags the parsed options
 * @param name the option, without `--`
 * @param choices the values allowed
 * @returns the value, or undefined when the option was not given
 * @throws Error naming the option and the choices when its value is none of them
 *
 * @example
 * ```ts
 * import { choiceFlag } from "./cli.ts";
 * choiceFlag(new Map([["format", "q8"]]), "format", ["f32", "q8"]); // "q8"
 * ```
 */
export function choiceFlag<T extends string>(
  flags: Map<string, string>,
  name: string,
  choices: readonly T[],
): T | undefined {
  const text = flags.get(name);
  if (text === undefined || (choices as readonly string[]).includes(text)) return text as T | undefined;
  throw new Error(`--${name} must be one of ${choices.join(", ")}, got "${text}"`);
}

/**
 * A byte count of at least one byte: a number, or one with a KiB, MiB or GiB suffix (`--max-resident`).
 *
 * @param text e.g. `64GiB`
 * @param name the option it came from, for the message
 * @returns bytes
 * @throws Error naming the option when it is neither, or when it comes to 0 bytes
 *
 * @example
 * ```ts
 * import { parseBytes } from "./cli.ts";
 * parseBytes("1.5 MiB"); // 1572864
 * ```
 */
export function parseBytes(text: string, name = "max-resident"): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB)?\s*$/.exec(text);
  const bytes = m ? Math.round(Number(m[1]) * { KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, "": 1 }[m[2] ?? ""]!) : 0;
  if (!(bytes >= 1)) throw new Error(`--${name} must be bytes >= 1, e.g. 4294967296 or 4GiB, got "${text}"`);
  return bytes;
}

/**
 * Deno only: checks a path option before anything is read: an existing file, an existing directory,
 * or (`output`) a file to write whose directory exists and which is not itself a directory.
 *
 * @param name the option, without `--`
 * @param path its value
 * @param kind what the path must be
 * @throws Error naming the option, the path and what was expected
 *
 * @example
 * ```ts
 * import { checkPath } from "./cli.ts";
 * await checkPath("out", "image.png", "output"); // the current directory exists: no error
 * await checkPath("model", "no/such/dir", "directory").catch((e) => e.message); // "--model: no directory no/such/dir"
 * ```
 */
export async function checkPath(name: string, path: string, kind: "file" | "directory" | "output"): Promise<void> {
  const stat = (p: string) => Deno.stat(p).catch(() => undefined);
  if (kind === "output") {
    const dir = dirname(path);
    if (!(await stat(dir))?.isDirectory) throw new Error(`--${name}: the directory ${dir} of ${path} does not exist`);
    if ((await stat(path))?.isDirectory) throw new Error(`--${name}: ${path} is a directory, not a file to write`);
    return;
  }
  const found = await stat(path);
  if (!(kind === "file" ? found?.isFile : found?.isDirectory)) {
    throw new Error(
      `--${name}: no ${kind} ${path}${found ? ` (it is a ${kind === "file" ? "directory" : "file"})` : ""}`,
    );
  }
}
