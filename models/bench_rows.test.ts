import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import {
  type Baseline,
  type BenchRow,
  foldedTokenizer,
  listOption,
  mergeBaseline,
  runStages,
  writeBaseline,
} from "./bench_rows.ts";

const row = (stage: string, width: number | null, format: string, ms: number, extra: Partial<BenchRow> = {}) =>
  ({ stage, width, height: width, format, ms, peakBytes: 1, ...extra }) as BenchRow;
const baseline = (adapter: string, date: string, rows: BenchRow[]): Baseline => ({ adapter, runtime: "r", date, rows });

Deno.test("bench rows: a run's rows replace those of the same key, keep the others and their torch figures", () => {
  const old = baseline("GPU X (vendor 1), Vulkan", "d0", [
    row("dit-step", 1024, "q4g128", 9, { torchFp32Ms: 5, torchBf16Ms: 1 }),
    row("vae-decode", 1024, "f32", 4, { torchFp32Ms: 3 }),
    row("dit-step", 1024, "f32", 7, { blocks: 28 }),
  ]);
  const fresh = baseline("GPU X", "d1", [
    row("dit-step", 1024, "q4g128", 8),
    row("dit-step", 1024, "q8", 6), // new key: torch's figure of the stage at the size, whatever the format
    row("vae-decode", 1024, "f32", 2, { torchFp32Ms: 2.5 }), // its own torch figure wins
    row("dit-step", 1024, "f32", 5, { blocks: 52 }), // another model: a new row
    row("text-encoder", null, "q8", 1),
  ]);
  const merged = mergeBaseline(old, fresh);
  strictEqual(merged.adapter, "GPU X (vendor 1), Vulkan");
  strictEqual(merged.date, "d1");
  deepStrictEqual(merged.rows, [
    row("dit-step", 1024, "q4g128", 8, { torchFp32Ms: 5, torchBf16Ms: 1 }),
    row("vae-decode", 1024, "f32", 2, { torchFp32Ms: 2.5 }),
    row("dit-step", 1024, "f32", 7, { blocks: 28 }),
    row("dit-step", 1024, "q8", 6, { torchFp32Ms: 5, torchBf16Ms: 1 }),
    row("dit-step", 1024, "f32", 5, { blocks: 52 }),
    row("text-encoder", null, "q8", 1),
  ]);
  deepStrictEqual(mergeBaseline(null, fresh), fresh);
  throws(
    () => mergeBaseline(old, baseline("GPU Y", "d1", [])),
    /taken on "GPU X \(vendor 1\), Vulkan", this run's on "GPU Y"/,
  );
});

Deno.test("bench rows: writeBaseline merges into the file there and refuses one that is not a baseline", async () => {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.remove(path);
    await writeBaseline(path, baseline("G", "d0", [row("a", 1, "f32", 1), row("b", 1, "f32", 1)]));
    await writeBaseline(path, baseline("G", "d1", [row("b", 1, "f32", 2)]));
    const written = JSON.parse(await Deno.readTextFile(path));
    deepStrictEqual(written.rows.map((r: BenchRow) => [r.stage, r.ms]), [["a", 1], ["b", 2]]);
    await Deno.writeTextFile(path, '{"rows": 3}');
    await writeBaseline(path, baseline("G", "d1", [])).then(
      () => Promise.reject(new Error("accepted a file that is not a baseline")),
      (e) => strictEqual((e as Error).message, `${path}: not a baseline (no adapter string and rows array)`),
    );
  } finally {
    await Deno.remove(path).catch(() => {});
  }
});

Deno.test("bench rows: list options and folded tokenizers", () => {
  deepStrictEqual(listOption("512, 1024,512", "sizes", (v) => /^\d+$/.test(v)), ["512", "1024"]);
  throws(
    () => listOption("f32,q3", "formats", ["f32", "q8"]),
    /--formats must be a comma-separated list: each one of f32, q8; got "f32,q3"/,
  );
  throws(() => listOption("", "sizes", () => true), /--sizes must be a comma-separated list/);
  const real = {
    vocabSize: 1000,
    encode: (text: string, options?: { addEos: boolean }) =>
      [...text].map((c) => c.charCodeAt(0) * 7).concat(options?.addEos ? [1] : []),
  };
  const folded = foldedTokenizer(real, 100);
  strictEqual(folded.vocabSize, 100);
  deepStrictEqual(folded.encode("ab", { addEos: true }), [(97 * 7) % 100, (98 * 7) % 100, 1]);
  strictEqual(foldedTokenizer(real, 1000), real);
});

Deno.test("bench rows: runStages writes each stage as it ends and refuses another card's file before any stage", async () => {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(path, JSON.stringify(baseline("G", "d0", [row("kept", 1, "f32", 1)])));
    const ran: string[] = [];
    const header = { adapter: "G", runtime: "r", date: "d1" };
    const make = {
      one: () => (ran.push("one"), Promise.resolve([row("one", 1, "f32", 2)])),
      two: () => (ran.push("two"), Promise.reject(new Error("device lost"))),
    };
    const torch = [(r: BenchRow) => r.stage === "one" ? { torchFp32Ms: 7 } : undefined];
    await runStages({ stages: ["one", "two"], make, header, torch, json: path }).then(
      () => Promise.reject(new Error("a failing stage passed")),
      (e) => strictEqual((e as Error).message, "device lost"),
    );
    const written = JSON.parse(await Deno.readTextFile(path));
    deepStrictEqual(written.rows, [row("kept", 1, "f32", 1), row("one", 1, "f32", 2, { torchFp32Ms: 7 })]);
    ran.length = 0;
    await runStages({ stages: ["one"], make, header: { ...header, adapter: "H" }, torch, json: path }).then(
      () => Promise.reject(new Error("merged into another card's file")),
      (e) => strictEqual((e as Error).message, `baseline: its rows were taken on "G", this run's on "H"`),
    );
    deepStrictEqual(ran, []);
  } finally {
    await Deno.remove(path);
  }
});
