/**
 * The roofline page in headless Chromium (see `browser_testing.ts`): it runs the probes and the
 * default ops' quick shapes with no console error, draws the chart with a point per plottable row,
 * and its "Save the result" link downloads a result file that `parseReport` accepts and that
 * `deno task bench --compare` reads, row keys matching the CLI's own. The page's copy of the cases has
 * each op's bench.ts shapes in both size classes.
 */
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { benchMain } from "../harness/bench.ts";
import { parseReport, rowKey, rowLabel } from "../harness/report.ts";
import { BENCH_CASES } from "../ops/registry.ts";
import { pageTest, waitWhileProgressing } from "./browser_testing.ts";

/** The page's default ops, each run at its three quick shapes. */
const OPS = ["elementwise", "softmax", "rmsnorm", "matmul", "transpose"];

pageTest(
  "examples/roofline: the page measures, draws the chart and saves JSON that bench --compare reads",
  "examples/roofline/?sizes=quick&samples=5&warmup=1&autorun",
  async (run) => {
    await waitWhileProgressing(run.page, `document.querySelector("#status[data-done]") !== null`, "the bench");
    await run.screenshot("roofline");
    deepStrictEqual(run.consoleErrors, []);
    ok(/^Adapter: /.test(await run.page.textContent("#adapter") ?? ""), "the page found a WebGPU adapter");

    const [download] = await Promise.all([run.page.waitForEvent("download"), run.page.click("#json")]);
    ok(download.suggestedFilename().endsWith(".json"), download.suggestedFilename());
    const text = await Deno.readTextFile(await download.path());
    const report = parseReport(text, "the page's JSON");
    const userAgent = await run.page.evaluate(() => navigator.userAgent);
    deepStrictEqual([report.device.deno, report.conditions.deno], [`browser: ${userAgent}`, `browser: ${userAgent}`]);
    deepStrictEqual([report.conditions.sizes, report.conditions.repetitions, report.conditions.warmup], [
      "quick",
      5,
      1,
    ]);
    for (const op of OPS) {
      deepStrictEqual(
        report.results.filter((r) => r.op === op).map((r) => r.shape),
        BENCH_CASES.find((c) => c.op === op && c.entry === "kernel")!.shapes.quick.map((s) => s.label),
        `${op}'s rows are its bench.ts quick shapes`,
      );
    }
    // The page defines its cases apart from ops/<op>/bench.ts (those are not published): both size
    // classes must still be the same shapes, so a page row and a CLI row share their keys.
    const pageCases = await run.page.evaluate(() =>
      (globalThis as unknown as { rooflineCases: { op: string; entry: string; gpu: string[]; quick: string[] }[] })
        .rooflineCases
    );
    deepStrictEqual(
      pageCases,
      pageCases.map(({ op, entry }) => {
        const c = BENCH_CASES.find((b) => b.op === op && b.entry === entry);
        return { op, entry, gpu: c?.shapes.gpu.map((s) => s.label), quick: c?.shapes.quick.map((s) => s.label) };
      }),
      "the page's cases have the shapes of the ops' bench.ts",
    );
    deepStrictEqual(pageCases.map((c) => c.op), OPS);
    strictEqual(report.results.length, 3 * OPS.length);
    ok(report.results.every((r) => r.ms > 0 && r.samples === 5), "every row was timed, 5 passes");

    // One point per row that has FLOPs and bytes (transpose moves data only: it is in the table).
    const titles = await run.page.$$eval("#chart svg g > title", (ts) => ts.map((t) => t.textContent ?? ""));
    const plotted = report.results.flatMap((r, i) => r.flops > 0 ? [`${i + 1}. ${rowLabel(r)}:`] : []);
    strictEqual(plotted.length, 3 * (OPS.length - 1));
    deepStrictEqual(titles.map((t) => t.slice(0, t.indexOf(":") + 1)), plotted);
    strictEqual(await run.page.locator("#chart svg circle").count(), plotted.length);
    strictEqual(await run.page.locator("#rows tr").count(), report.results.length + 1);

    // deno task bench --compare reads the page's file: the CLI's row for the same key is matched with it.
    const dir = await Deno.makeTempDir();
    const lines: string[] = [];
    const saved = console.log;
    try {
      const file = `${dir}/browser.json`;
      await Deno.writeTextFile(file, text);
      const key = rowKey(report.results[0]);
      console.log = (...args: unknown[]) => lines.push(args.join(" "));
      const args = ["--quick", "--filter", key, "--samples", "5", "--warmup", "1", "--no-peer"];
      const code = await benchMain([...args, "--json", `${dir}/deno.json`, "--compare", file], BENCH_CASES);
      console.log = saved;
      ok(code === 0 || code === 1, `bench --compare exited ${code}:\n${lines.join("\n")}`);
      const out = lines.join("\n");
      ok(out.includes(`compare: 1 rows matched`), out);
      ok(out.includes(`note: the saved result is from "${report.device.description}"`), out);
      ok(out.includes(`not run now (in the saved result): ${report.results.slice(1).map(rowKey).join(", ")}`), out);
    } finally {
      console.log = saved;
      await Deno.remove(dir, { recursive: true });
    }
  },
);
