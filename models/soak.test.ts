// The memory soak (models/soak.ts) at a small size, as CI runs it: a process of its own, so that
// `--v8-flags=--expose-gc` gives it gc() and the heap is read after collection. It holds every model
// to giving back exactly the buffers it made (each destroy returns the device's live bytes and
// buffers to those before the load), the fortune engine to making none per generation once a
// generation of the same shape has run, and the host's heap plus external memory (ArrayBuffers) to
// growing less than HEAP_BOUND.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { hasAdapter } from "../harness/testing.ts";
import type { SoakReport } from "./soak.ts";

/**
 * Growth of the host's heap plus external memory allowed per phase, first quarter of the samples to
 * the last, after gc: 4 MiB. Measured on the software adapter at these sizes: 0.03 to 0.06 MiB over
 * the generations, 0.4 to 0.6 MiB from the first cycle's end to the second's (V8's and the runtime's
 * own warm-up); an 8 MiB array kept by every Qwen3 encoder load (three a cycle) made it 24 MiB.
 */
const HEAP_BOUND = 4 * 2 ** 20;

const SIZES = { generations: 8, cycles: 2, deviceCycles: 1, prompts: 2, maxTokens: 12 };
const COMPONENTS = ["fortune LlamaEngine", "Qwen3Encoder", "Qwen3ForCausalLM", "ZImage", "Anima"];

async function runSoak(): Promise<{ report: SoakReport; log: string; code: number }> {
  const out = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const args = [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL("./soak.ts", import.meta.url).pathname,
      "--generations",
      String(SIZES.generations),
      "--cycles",
      String(SIZES.cycles),
      "--device-cycles",
      String(SIZES.deviceCycles),
      "--every",
      "1",
      "--prompts",
      String(SIZES.prompts),
      "--max-tokens",
      String(SIZES.maxTokens),
      "--heap-bound",
      String(HEAP_BOUND),
      "--out",
      out,
    ];
    const { code, stderr } = await new Deno.Command(Deno.execPath(), { args, stdout: "piped", stderr: "piped" })
      .output();
    const log = new TextDecoder().decode(stderr);
    const text = await Deno.readTextFile(out);
    if (text === "") throw new Error(`the soak wrote no report (exit ${code}):\n${log}`);
    return { report: JSON.parse(text), log, code };
  } finally {
    await Deno.remove(out);
  }
}

Deno.test({
  name: hasAdapter
    ? "memory soak: every destroy gives back every buffer, generations add none, the heap stays under 4 MiB"
    : "memory soak (ignored: no WebGPU adapter)",
  // Under CI=true a missing adapter fails inside the soak (acquireDevice throws), never a skip.
  ignore: !hasAdapter && Deno.env.get("CI") !== "true",
  fn: async () => {
    const { report, log, code } = await runSoak();
    const { leftovers, checked, growth, series } = report;
    // Exact: nothing a generation or a destroy left behind, with the labels of what was.
    deepStrictEqual(leftovers, [], log);
    // Every generation was checked exactly (the warm-up made every shape first), and every destroy:
    // the engine after the generations, then five components per cycle on both kinds of device.
    strictEqual(checked.generations, SIZES.generations);
    strictEqual(checked.firstOfShape, 3 * SIZES.prompts);
    strictEqual(checked.destroys, 1 + COMPONENTS.length * (SIZES.cycles + SIZES.deviceCycles));
    deepStrictEqual(Object.keys(report.seconds).filter((k) => COMPONENTS.includes(k)).sort(), [...COMPONENTS].sort());
    // Constant across generations: every sample (one after each) holds the first one's live buffers.
    const generations = series.filter((s) => s.phase === "generations");
    strictEqual(generations.length, SIZES.generations + 1);
    for (const s of generations) {
      deepStrictEqual(
        [s.gpuBytes, s.gpuBuffers],
        [generations[0].gpuBytes, generations[0].gpuBuffers],
        `${s.iteration}`,
      );
    }
    // Between cycles the shared device holds nothing at all (the engine of the generations included).
    for (const s of series.filter((s) => s.phase === "cycles")) {
      deepStrictEqual([s.gpuBytes, s.gpuBuffers], [0, 0], `cycle ${s.iteration}`);
    }
    for (const phase of ["generations", "cycles", "device-cycles"] as const) {
      ok(growth[phase].host < HEAP_BOUND, `${phase}: the heap and external memory grew by ${growth[phase].host} bytes`);
    }
    strictEqual(report.conditions.gc, true, "the soak ran with gc()");
    deepStrictEqual([report.verdict, code], [{ pass: true, reasons: [] }, 0], log);
  },
});
