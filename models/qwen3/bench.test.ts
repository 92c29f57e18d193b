import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { mergeLlmRows, type Qwen3BenchRow } from "./bench.ts";
import { checkBenchCommandLine } from "../bench_cli_test_util.ts";

const BENCH = new URL("./bench.ts", import.meta.url).pathname;
const BASELINE = new URL("../../harness/baselines/nvidia-h200-llm.json", import.meta.url).pathname;

/**
 * The committed baseline without the Qwen3 rows it holds (as this bench writes it, one space an
 * indent): the file the tests merge into, whatever Qwen3 rows a GPU run has merged into the real one.
 */
async function sarashinaBaseline(): Promise<string> {
  const file = JSON.parse(await Deno.readTextFile(BASELINE));
  const rows = file.rows.filter((row: { shape?: string }) => !String(row.shape ?? "").startsWith("Qwen3"));
  ok(rows.length > 0, "the baseline holds Sarashina rows");
  return JSON.stringify({ ...file, rows }, null, 1) + "\n";
}

/** Runs the bench with `args`; its stderr on failure. */
async function bench(args: string[]): Promise<{ success: boolean; stderr: string }> {
  const run = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", BENCH, ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { success: run.success, stderr: new TextDecoder().decode(run.stderr) };
}

/** The bench at the tiny shape with `args`, its `--out` file parsed. */
async function tinyRun(args: string[]) {
  const out = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const run = await bench([
      "--shape",
      "tiny",
      "--tokens",
      "5",
      "--decode",
      "3",
      "--samples",
      "2",
      "--read-every",
      "2",
      "--in-flight",
      "3",
      ...args,
      "--out",
      out,
    ]);
    if (!run.success) throw new Error(run.stderr);
    return JSON.parse(await Deno.readTextFile(out));
  } finally {
    await Deno.remove(out);
  }
}

// The tiny shape's sizes, written out here: hidden 64, FFN 96, 3 layers, 4 heads and 2 KV heads of 32, vocab 300.
const [H, F, L, QD, KVD, D, V] = [64, 96, 3, 4 * 32, 2 * 32, 32, 300];
/** Bytes of `layers` decoder layers: norms f32, the seven matrices f32 or q8 (a byte a weight, an f32 scale a row). */
function layerBytes(format: "f32" | "q8", layers: number): number {
  const matrices: [number, number][] = [[QD, H], [KVD, H], [KVD, H], [H, QD], [F, H], [F, H], [H, F]];
  const norms = 4 * (2 * H + 2 * D);
  const weights = matrices.reduce((s, [n, k]) => s + (format === "f32" ? 4 * n * k : n * k + 4 * n), 0);
  return layers * (norms + weights);
}

/** A row's figures: present for the modes run, null otherwise, and consistent with each other. */
function checkRow(row: Qwen3BenchRow, format: "f32" | "q8", modes: ("encoder" | "generate")[]) {
  strictEqual(row.format, format);
  strictEqual(row.shape, "tiny");
  strictEqual(row.bench, "models/qwen3/bench.ts");
  strictEqual(row.config.hidden_size, H);
  ok(typeof row.adapter === "string" && row.runtime.startsWith("Deno "));
  const e = row.encoder;
  if (!modes.includes("encoder")) strictEqual(e, null);
  else {
    ok(e !== null);
    strictEqual(e.tokens, 5);
    strictEqual(e.hiddenState, -2);
    strictEqual(e.layers, 2, "hidden_states[-2] of 3 layers is the output of the second");
    strictEqual(e.wallSamplesMs.length, 2);
    ok(e.wallSamplesMs.includes(e.wallMs) && e.wallMs > 0);
    // The embedding (f32 whatever the format) and two layers; no final norm.
    strictEqual(e.weightBytes, 4 * V * H + layerBytes(format, 2));
    ok(e.programBytes > 0 && e.peakBytes >= e.weightBytes + e.programBytes, "the peak holds weights and program");
    ok(e.loadMs > 0);
    if (e.gpuMs === null) strictEqual(e.gpuSamplesMs, null);
    else ok(e.gpuSamplesMs!.length >= 5 && e.gpuSamplesMs!.includes(e.gpuMs) && e.gpuMs > 0);
  }
  const p = row.prefill, d = row.decode;
  if (!modes.includes("generate")) {
    deepStrictEqual([p, d, row.weightBytes, row.loadMs, row.peakBytes], [null, null, null, null, null]);
    return;
  }
  ok(p !== null && d !== null);
  // The whole model: the tied embedding, three layers, the final norm.
  strictEqual(row.weightBytes, 4 * V * H + layerBytes(format, L) + 4 * H);
  // At least the weights and the KV cache of the decode run (5 + 3 positions) were live at once.
  ok(row.peakBytes! >= row.weightBytes! + L * 2 * KVD * 8 * 4, `peak ${row.peakBytes}`);
  strictEqual(p.tokens, 5);
  ok(p.wallMs > 0 && p.prepareMs > 0);
  ok(Math.abs(p.wallTokPerS - 5 / (p.wallMs / 1000)) <= 1e-9 * p.wallTokPerS);
  strictEqual(d.tokens, 3);
  strictEqual(d.cacheCapacity, 8);
  ok(Number.isFinite(d.wallTokPerS) && d.wallTokPerS > 0);
  ok(/^gpu: each step's argmax/.test(d.loop), "the row says the decode loop is kept on the GPU");
  deepStrictEqual([d.readEvery, d.inFlight], [2, 3], "the readbacks' grouping asked for");
  // The tiny shape's decode step: the mask write, one gather (one block), 3 layers of 21 dispatches
  // (2 norms, q, k, v, 2 head norms, 2 RoPEs, 2 cache writes, attention and its combine, o, 2 residual
  // adds, gate, up, silu, multiply, down), the final norm, the head (one block) and the argmax.
  strictEqual(d.dispatches, 1 + 1 + L * 21 + 3);
  if (p.gpuMs === null) deepStrictEqual([p.gpuTokPerS, d.gpuMsPerToken, d.gpuTokPerS], [null, null, null]);
  else {
    ok(p.gpuMs > 0 && Math.abs(p.gpuTokPerS! - 5 / (p.gpuMs / 1000)) <= 1e-9 * p.gpuTokPerS!);
    ok(d.gpuMsPerToken! > 0 && Math.abs(d.gpuTokPerS! - 1000 / d.gpuMsPerToken!) <= 1e-9 * d.gpuTokPerS!);
  }
}

gpuTest(
  "qwen3 bench: the tiny shape, both formats, encoder and generation, writes a well-formed row each",
  async () => {
    const result = await tinyRun(["--format", "f32,q8"]);
    strictEqual(result.bench, "qwen3");
    ok(result.elapsedSeconds > 0 && typeof result.adapter.description === "string");
    deepStrictEqual(result.rows.map((r: Qwen3BenchRow) => r.format), ["f32", "q8"]);
    checkRow(result.rows[0], "f32", ["encoder", "generate"]);
    checkRow(result.rows[1], "q8", ["encoder", "generate"]);
  },
);

gpuTest("qwen3 bench: the encoder alone, and generation alone, leave the other's figures null", async () => {
  const encoder = await tinyRun(["--format", "q8", "--mode", "encoder"]);
  strictEqual(encoder.rows.length, 1);
  checkRow(encoder.rows[0], "q8", ["encoder"]);
  const generation = await tinyRun(["--format", "f32", "--mode", "generate"]);
  strictEqual(generation.rows.length, 1);
  checkRow(generation.rows[0], "f32", ["generate"]);
});

/** A row as the bench writes one, its figures made up (only the merge reads it). */
const fakeRow = (shape: string, format: string, wallTokPerS: number) => ({
  format,
  shape,
  prefill: { tokens: 512, wallTokPerS },
  decode: { tokens: 256, wallTokPerS },
  encoder: null,
});

Deno.test("qwen3 bench merge: Qwen3 rows join a <card>-llm.json, the Sarashina rows' text kept byte for byte", async () => {
  const before = await sarashinaBaseline();
  const original = JSON.parse(before);
  const a = fakeRow("Qwen3-4B", "q8", 1), b = fakeRow("Qwen3-0.6B", "f32", 2);
  const once = mergeLlmRows(before, [a, b]);
  // Everything up to the end of the rows array is unchanged; the new rows follow.
  ok(once.startsWith(before.slice(0, before.lastIndexOf("\n ]\n}"))), "the file's text up to its last row is kept");
  const merged = JSON.parse(once);
  deepStrictEqual(merged.rows.slice(0, original.rows.length), original.rows);
  deepStrictEqual(merged.rows.slice(original.rows.length), [a, b]);
  deepStrictEqual({ ...merged, rows: null }, { ...original, rows: null });
  // Merged again: a row of the same shape and format is replaced in place, not added.
  const a2 = fakeRow("Qwen3-4B", "q8", 3), c = fakeRow("Qwen3-4B", "f32", 4);
  const twice = JSON.parse(mergeLlmRows(once, [a2, c]));
  deepStrictEqual(twice.rows.slice(original.rows.length), [a2, b, c]);
  // A file not yet written.
  deepStrictEqual(JSON.parse(mergeLlmRows(null, [a])), { bench: "llm", rows: [a] });
});

Deno.test("qwen3 bench merge: tiny rows, other formats and a file without rows are refused by name", async () => {
  const before = await sarashinaBaseline();
  await assertThrowsMessage(
    () => mergeLlmRows(before, [fakeRow("tiny", "f32", 1)]),
    'only rows of Qwen3-0.6B and Qwen3-4B go into a baseline, got shape "tiny"',
  );
  await assertThrowsMessage(() => mergeLlmRows(before, [fakeRow("Qwen3-4B", "q4g128", 1)]), 'got "q4g128"');
  await assertThrowsMessage(() => mergeLlmRows("[]", [fakeRow("Qwen3-4B", "q8", 1)]), "with a rows array");
});

Deno.test("qwen3 bench: --merge-only merges a rows file into a copy of the baseline; bad merges fail first", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const target = `${dir}/card-llm.json`, rowsFile = `${dir}/rows.json`;
    const before = await sarashinaBaseline();
    await Deno.writeTextFile(target, before);
    const rows = [fakeRow("Qwen3-0.6B", "q8", 5)];
    await Deno.writeTextFile(rowsFile, JSON.stringify({ bench: "qwen3", rows }));
    const run = await bench(["--merge-only", rowsFile, "--merge-into", target]);
    ok(run.success, run.stderr);
    const after = JSON.parse(await Deno.readTextFile(target));
    deepStrictEqual(after.rows, [...JSON.parse(before).rows, ...rows]);
    // Refused before any GPU work: no target, and tiny rows meant for a baseline.
    const alone = await bench(["--merge-only", rowsFile]);
    ok(!alone.success && alone.stderr.includes("--merge-only needs --merge-into"), alone.stderr);
    const tiny = await bench(["--shape", "tiny", "--merge-into", target]);
    ok(!tiny.success && tiny.stderr.includes("--merge-into takes rows of Qwen3-0.6B and Qwen3-4B only"), tiny.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("qwen3 bench: --help lists every option; an unknown option or value is refused by name, without a stack trace", async () => {
  await checkBenchCommandLine(new URL("./bench.ts", import.meta.url), 11, [
    [["--sizez", "32"], "qwen3 bench: unknown option --sizez\nusage:"],
    [["--tokens", "0"], 'qwen3 bench: --tokens must be an integer >= 1, got "0"\n'],
  ]);
});
