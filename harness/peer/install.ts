/**
 * Installs the TF.js peer: `npm ci` from the committed `harness/peer/npm/package-lock.json` into
 * `harness/peer/npm/node_modules`, then prunes that folder to the files the peer loads
 * ({@link TFJS_FILES}: about 2 MB of the 71 MB npm installs), so it can be carried to a machine
 * that reaches no registry. Running it again reinstalls from scratch (`npm ci` empties the folder).
 *
 * Run from the repository root: `deno task peer:install`, i.e.
 * `deno run --allow-run=npm --allow-read=harness/peer/npm --allow-write=harness/peer/npm/node_modules harness/peer/install.ts`
 *
 * @module
 */

import { TFJS_FILES } from "./tfjs.ts";

const USAGE = `usage: deno task peer:install
  Installs TF.js 4.22 (the peer \`deno task bench\` and \`deno task peer\` time) with \`npm ci\` from
  harness/peer/npm/package-lock.json into harness/peer/npm/node_modules, pruned to the ~2 MB it loads.
  --help   this text`;

/** Removes every file under `dir` that is not kept, and each directory left empty. */
async function prune(
  dir: URL,
  prefix: string,
  keep: Set<string>,
  sizes: { kept: number; removed: number },
): Promise<boolean> {
  let empty = true;
  for await (const entry of Deno.readDir(dir)) {
    const path = prefix + entry.name;
    const url = new URL(entry.isDirectory ? `${entry.name}/` : entry.name, dir);
    if (entry.isDirectory && !await prune(url, `${path}/`, keep, sizes)) {
      empty = false;
    } else if (!entry.isDirectory && keep.has(path)) {
      sizes.kept += (await Deno.stat(url)).size;
      empty = false;
    } else {
      sizes.removed += entry.isDirectory ? 0 : (await Deno.lstat(url)).size;
      await Deno.remove(url, { recursive: entry.isDirectory });
    }
  }
  return empty;
}

// Run as a script only: importing this module installs nothing.
if (import.meta.main) {
  if (Deno.args.includes("--help") || Deno.args.includes("-h")) {
    console.log(USAGE);
    Deno.exit(0);
  }
  if (Deno.args.length > 0) {
    console.error(`peer:install: unknown argument ${Deno.args[0]}\n${USAGE}`);
    Deno.exit(2);
  }

  const here = new URL("./npm/", import.meta.url);
  const nodeModules = new URL("node_modules/", here);

  const npm = await new Deno.Command("npm", {
    args: ["ci", "--ignore-scripts", "--no-audit", "--no-fund"],
    cwd: here,
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!npm.success) {
    console.error(`npm ci failed (exit ${npm.code})`);
    Deno.exit(1);
  }

  const sizes = { kept: 0, removed: 0 };
  await prune(nodeModules, "", new Set(TFJS_FILES), sizes);
  for (const file of TFJS_FILES) await Deno.stat(new URL(file, nodeModules)); // throws NotFound naming the file
  const mb = (n: number) => (n / 2 ** 20).toFixed(1);
  console.log(
    `harness/peer/npm/node_modules: kept ${TFJS_FILES.length} files (${mb(sizes.kept)} MiB), removed ${
      mb(sizes.removed)
    } MiB`,
  );
}
