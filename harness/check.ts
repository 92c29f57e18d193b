/**
 * `deno task check`: the static checks CI runs before the tests, in order, stopping at the first
 * that fails: `deno check` of every module (models and examples included), `deno lint`, `deno fmt --check`,
 * and `deno doc --lint` of every entry point `deno.json` exports (what JSR's score reads). Tooling,
 * Deno only, not published.
 *
 *     deno task check [--help]
 *
 * @module
 */

const USAGE = `usage: deno task check     (deno run --allow-read --allow-run harness/check.ts)
  Runs, in order, stopping at the first failure:
    deno check mod.ts harness/ ops/ llm/ models/ examples/*.ts    type-check every module
    deno lint                                             lint
    deno fmt --check                                      formatting
    deno doc --lint <every export of deno.json>           documentation of the public entry points
  --help   this text`;

/**
 * The commands, each as arguments to `deno`.
 *
 * @param root the repository root
 * @returns the commands in the order they run
 */
export async function checkCommands(root: URL): Promise<string[][]> {
  const config = JSON.parse(await Deno.readTextFile(new URL("deno.json", root)));
  const entries = Object.values(config.exports as Record<string, string>).map((p) => p.replace(/^\.\//, ""));
  const examples: string[] = [];
  for await (const e of Deno.readDir(new URL("examples/", root))) {
    if (e.isFile && e.name.endsWith(".ts")) examples.push(`examples/${e.name}`);
  }
  return [
    ["check", "mod.ts", "harness/", "ops/", "llm/", "models/", ...examples.sort()],
    ["lint"],
    ["fmt", "--check"],
    ["doc", "--lint", ...entries],
  ];
}

if (import.meta.main) {
  if (Deno.args.includes("--help") || Deno.args.includes("-h")) {
    console.log(USAGE);
    Deno.exit(0);
  }
  if (Deno.args.length > 0) {
    console.error(`check: unknown argument ${Deno.args[0]}\n${USAGE}`);
    Deno.exit(2);
  }
  const root = new URL("../", import.meta.url);
  for (const args of await checkCommands(root)) {
    console.error(`check: deno ${args.length > 6 ? `${args.slice(0, 6).join(" ")} …` : args.join(" ")}`);
    const { code } = await new Deno.Command(Deno.execPath(), { args, cwd: root, stdout: "inherit", stderr: "inherit" })
      .output();
    if (code !== 0) {
      console.error(`check: deno ${args[0]} failed (exit ${code})`);
      Deno.exit(1);
    }
  }
}
