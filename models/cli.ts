/**
 * What the image models' command lines share (`deno task zimage`, `deno task anima`): `--name value`
 * options checked against the command's list, numbers and byte counts parsed with messages that name
 * the option. Plain functions (no `Deno.` here); the CLIs that use them are Deno-only.
 *
 * @module
 */

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

/**
 * A numeric option's value.
 *
 * @param flags the parsed options
 * @param name the option, without `--`
 * @param integer whether it must be an integer
 * @returns the number, or undefined when the option was not given
 * @throws Error naming the option when its value is not a (finite, or integer) number
 *
 * @example
 * ```ts
 * import { numberFlag } from "./cli.ts";
 * numberFlag(new Map([["cfg", "4.5"]]), "cfg", false); // 4.5
 * numberFlag(new Map(), "steps", true); // undefined
 * ```
 */
export function numberFlag(flags: Map<string, string>, name: string, integer: boolean): number | undefined {
  const text = flags.get(name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (text.trim() === "" || !(integer ? Number.isInteger(value) : Number.isFinite(value))) {
    throw new Error(`--${name} must be ${integer ? "an integer" : "a number"}, got "${text}"`);
  }
  return value;
}

/**
 * A byte count: a number, or one with a KiB, MiB or GiB suffix (`--max-resident`).
 *
 * @param text e.g. `64GiB`
 * @param name the option it came from, for the message
 * @returns bytes
 * @throws Error naming the option when it is neither
 *
 * @example
 * ```ts
 * import { parseBytes } from "./cli.ts";
 * parseBytes("1.5 MiB"); // 1572864
 * ```
 */
export function parseBytes(text: string, name = "max-resident"): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB)?\s*$/.exec(text);
  if (!m) throw new Error(`--${name} must be bytes, e.g. 4294967296 or 4GiB, got "${text}"`);
  return Math.round(Number(m[1]) * { KiB: 2 ** 10, MiB: 2 ** 20, GiB: 2 ** 30, "": 1 }[m[2] ?? ""]!);
}
