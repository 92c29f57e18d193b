// The op registry: every op directory with a bench.ts is listed, and the bench runs end to end over it.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { benchMain } from "../harness/bench.ts";
import { missingTfjsFile } from "../harness/peer/tfjs.ts";
import { parseReport } from "../harness/report.ts";
import { gpuTest } from "../harness/testing.ts";
import { BENCH_CASES, OPS } from "./registry.ts";

Deno.test("the registry lists every op directory that has a bench.ts, once, with cases", async () => {
  const withBench: string[] = [];
  for await (const e of Deno.readDir(new URL("./", import.meta.url))) {
    if (!e.isDirectory) continue;
    try {
      await Deno.stat(new URL(`./${e.name}/bench.ts`, import.meta.url));
      withBench.push(e.name);
    } catch {
      // no bench.ts: not a benchmarked op (yet)
    }
  }
  const listed = OPS.map((op) => op.name);
  deepStrictEqual([...listed].sort(), withBench.sort(), "ops/registry.ts OPS vs ops/*/bench.ts");
  strictEqual(new Set(listed).size, listed.length, "an op is listed twice");
  for (const op of OPS) ok(op.bench.length > 0, `${op.name} has no bench cases`);
  strictEqual(BENCH_CASES.length, OPS.reduce((n, op) => n + op.bench.length, 0));
});

/** The first quick shape of elementwise/kernel, as its row key on an adapter that resolves `kernel`. */
const QUICK_ADD = (() => {
  const c = BENCH_CASES.find((c) => c.op === "elementwise" && c.entry === "kernel");
  return `elementwise/kernel/kernel/${c?.shapes.quick[0].label}`;
})();
const PEER_INSTALLED = (await missingTfjsFile()) === undefined;

gpuTest("deno task bench --quick writes the JSON and HTML, and --compare exits 1 on a regression", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const json = `${dir}/bench.json`;
    const args = ["--quick", "--filter", QUICK_ADD, "--samples", "5", "--warmup", "1"];
    // The peer is on by default where it is installed.
    strictEqual(await benchMain([...args, "--peer-all", "--json", json], BENCH_CASES), 0);
    const text = await Deno.readTextFile(json);
    const data = JSON.parse(text);
    parseReport(text, json);
    for (const key of ["method", "repetitions", "warmup", "timestamps", "date", "deno"]) ok(key in data.conditions);
    strictEqual(data.results.length, 1);
    const r = data.results[0];
    strictEqual(`elementwise/kernel/kernel/${r.shape}`, QUICK_ADD);
    ok(r.ms > 0 && data.device.bandwidthGBps > 0 && data.device.computeTFLOPs > 0);
    if (PEER_INSTALLED) {
      strictEqual(r.peer.name, "tfjs-webgpu 4.22.0");
      strictEqual(r.peer.call, `add [${r.shape}]`);
      ok(r.peer.ms > 0 && r.peer.kernels === 1, JSON.stringify(r.peer));
      strictEqual(r.vsPeer, r.ms / r.peer.ms);
      ok(data.conditions.peer.startsWith("tfjs-webgpu 4.22.0, on the same device"));
    } else {
      deepStrictEqual([r.peer, r.vsPeer], [null, null]);
      ok(data.conditions.peer.startsWith("off ("));
    }
    ok((await Deno.readTextFile(`${dir}/bench.html`)).includes("<svg"));
    // A saved result where this row reached far more of its roofline than any run can now.
    // Its spread is zero, so the threshold is the current run's own spread (noisy on a busy software
    // adapter) or the 0.05 floor: far below the drop.
    Object.assign(data.results[0], { fraction: 50, msQ1: data.results[0].ms, msQ3: data.results[0].ms });
    await Deno.writeTextFile(`${dir}/better.json`, JSON.stringify(data));
    const again = `${dir}/again.json`;
    strictEqual(
      await benchMain([...args, "--no-peer", "--json", again, "--compare", `${dir}/better.json`], BENCH_CASES),
      1,
    );
    const off = JSON.parse(await Deno.readTextFile(again));
    deepStrictEqual([off.results[0].peer, off.results[0].vsPeer, off.conditions.peer], [null, null, "off (--no-peer)"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
