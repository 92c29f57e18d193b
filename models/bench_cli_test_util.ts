/**
 * Deno only (a test helper): what each model bench's command line owes its user, checked the same way
 * for every bench. `--help` exits 0 and lists every option the bench's module doc names in its
 * synopsis (each `deno run -A models/<model>/bench.ts [...]` line); each refused command line exits 2
 * with a message that starts as expected and carries no stack trace.
 *
 * @module
 */

import { ok, strictEqual } from "node:assert/strict";

/**
 * Runs a bench's `--help` and each refused command line in a process of its own and checks them.
 *
 * @param bench the bench's module (`new URL("./bench.ts", import.meta.url)`)
 * @param minOptions the fewest options its synopsis names (a floor that catches a synopsis the
 *   pattern no longer finds)
 * @param refusals command lines and the start of the message each must end in
 */
export async function checkBenchCommandLine(
  bench: URL,
  minOptions: number,
  refusals: readonly [args: string[], expected: string][],
): Promise<void> {
  const run = (...args: string[]) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", bench.pathname, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
  const help = await run("--help");
  strictEqual(help.code, 0);
  const usage = new TextDecoder().decode(help.stdout);
  const model = /models\/(\w+)\/bench\.ts$/.exec(bench.pathname)![1];
  const source = await Deno.readTextFile(bench);
  const lines = [
    ...source.matchAll(new RegExp(`deno run -A models/${model}/bench\\.ts (\\[[\\s\\S]*?)\\n \\*\\n`, "g")),
  ];
  ok(lines.length > 0, `the module doc of ${bench.pathname} has a synopsis`);
  const options = new Set(lines.flatMap(([, synopsis]) => [...synopsis.matchAll(/--([a-z-]+)/g)].map((m) => m[1])));
  ok(options.size >= minOptions, `the synopsis names ${options.size} options`);
  for (const option of options) ok(usage.includes(`--${option} `), `--help lists --${option}`);
  for (const [args, expected] of refusals) {
    const refused = await run(...args);
    strictEqual(refused.code, 2, args.join(" "));
    const message = new TextDecoder().decode(refused.stderr);
    ok(message.startsWith(expected), message);
    ok(!message.includes("Uncaught") && !message.includes("    at "), message);
  }
}
