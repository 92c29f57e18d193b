import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { gpuTest } from "../../harness/testing.ts";
import type { BenchRow } from "../bench_rows.ts";
import { TINY, torchFigures } from "./bench.ts";
import { textEncoderWeightBytes } from "./pipeline.ts";
import { checkBenchCommandLine } from "../bench_cli_test_util.ts";

gpuTest("zimage bench: the tiny config's every stage in one run, rows merged into the baseline there", async (gpu) => {
  const dir = await Deno.makeTempDir();
  try {
    const json = `${dir}/baseline.json`, torch = `${dir}/torch.json`;
    // A row the run does not take stays; the run's rows of a stage and size take torch's figures.
    const kept = { stage: "dit-step", width: 1024, height: 1024, format: "q4g128", ms: 1, peakBytes: null };
    const description = gpu.adapter.description || gpu.adapter.vendor; // the bench's own device's
    await Deno.writeTextFile(json, JSON.stringify({ adapter: description, runtime: "r", date: "d", rows: [kept] }));
    await Deno.writeTextFile(
      torch,
      JSON.stringify({
        device: "cpu",
        torch: "2.13",
        rows: [
          { component: "dit", size: 16, mode: "fp32", median_ms: 3 },
          { component: "dit", size: 16, mode: "bf16", median_ms: 1 },
          { component: "vae_decode", size: 16, mode: "tf32", median_ms: 2 },
        ],
      }),
    );
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--quiet",
        new URL("./bench.ts", import.meta.url).pathname,
        "--config",
        "tiny",
        "--stages",
        "text-encoder,dit-step,vae-decode,total",
        "--sizes",
        "16",
        "--formats",
        "q8",
        "--activations",
        "f32,int8",
        "--caption",
        "8",
        "--steps",
        "2",
        "--prompt",
        "a red fox in fresh snow",
        "--torch",
        torch,
        "--json",
        json,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!run.success) throw new Error(new TextDecoder().decode(run.stderr));
    const baseline = JSON.parse(await Deno.readTextFile(json));
    strictEqual(baseline.adapter, description);
    const rows: BenchRow[] = baseline.rows;
    deepStrictEqual(rows[0], kept);
    const stages = rows.slice(1).map((r) => [r.stage, r.width, r.format, r.activations]);
    deepStrictEqual(stages, [
      ["text-encoder", null, "q8", undefined],
      ["dit-step", 16, "q8", undefined],
      ["caption-refiner", 16, "q8", undefined],
      ["dit-step", 16, "q8", "int8"], // the same rows on int8 activations, kept apart by their mark
      ["caption-refiner", 16, "q8", "int8"],
      ["vae-decode", 16, "f32", undefined],
      ["total", 16, "q8", undefined],
      ["total", 16, "q8", "int8"],
    ]);
    for (const row of rows.slice(1)) {
      ok(row.ms > 0 && Number.isFinite(row.ms), `${row.stage}: ms ${row.ms}`);
      ok(typeof row.peakBytes === "number" && row.peakBytes > 0, `${row.stage}: peakBytes ${row.peakBytes}`);
    }
    const [te, dit, , , , vae, total] = rows.slice(1);
    // A stage row's peak counts its weights (live when the peak restarts) and its program's buffers.
    for (const row of [te, dit, vae]) {
      ok((row.weightBytes as number) > 0 && row.peakBytes! > (row.weightBytes as number), `${row.stage}`);
    }
    strictEqual(te.weightBytes, textEncoderWeightBytes(TINY.textEncoder, "q8"));
    strictEqual(te.tokens, 8);
    deepStrictEqual([dit.torchFp32Ms, dit.torchTf32Ms, dit.torchBf16Ms], [3, undefined, 1]);
    deepStrictEqual([vae.torchFp32Ms, vae.torchTf32Ms], [undefined, 2]);
    // The whole image held its text encoder and DiT at once (the tiny model fits the default budget).
    deepStrictEqual(total.resident, { textEncoder: true, dit: true, vae: true, ditStreamed: false });
    const weights = total.stageWeightBytes as { textEncoder: number; dit: number };
    strictEqual(weights.dit, dit.weightBytes);
    ok(total.peakBytes! >= weights.textEncoder + weights.dit, `total peak ${total.peakBytes}`);
    strictEqual(total.steps, 2);
    ok((total.stepMs as number) > 0 && (total.firstStepMs as number) > 0 && (total.afterStepsMs as number) > 0);
    ok((total.weightReadMs as number) > 0 && (total.weightReadMs as number) < total.ms, `${total.weightReadMs}`);
    ok((total.captionTokens as number) > 5);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("zimage bench: the H100 torch log's figures land on the rows of their stage and size, any format", async () => {
  const log = JSON.parse(
    await Deno.readTextFile(new URL("./baselines/nvidia-h100-log/torch-timing.json", import.meta.url)),
  );
  const figures = torchFigures(log);
  const row = (stage: string, width: number | null, format = "q8") =>
    ({ stage, width, height: width, format, ms: 1, peakBytes: 1 }) as BenchRow;
  deepStrictEqual(figures(row("dit-step", 1024, "q4g128")), {
    torchFp32Ms: 1365.21,
    torchTf32Ms: 437.51,
    torchBf16Ms: 142.34,
  });
  deepStrictEqual(figures(row("dit-step", 1024, "f32")), figures(row("dit-step", 1024, "q8")));
  deepStrictEqual(figures(row("vae-decode", 1024, "f32")), {
    torchFp32Ms: 409.11,
    torchTf32Ms: 119.92,
    torchBf16Ms: 102.02,
  });
  strictEqual(figures(row("dit-step", 512)), undefined);
  strictEqual(figures(row("text-encoder", null)), undefined); // the log has no text encoder row
});

Deno.test("zimage bench: --help lists every option; an unknown option or config is refused by name, without a stack trace", async () => {
  await checkBenchCommandLine(new URL("./bench.ts", import.meta.url), 16, [
    [["--sizez", "32"], "zimage bench: unknown option --sizez\nusage:"],
    [["--config", "big"], "zimage bench: --config must be turbo or tiny, got big\n"],
    [
      ["--formats", "f32", "--activations", "int8"],
      "zimage bench: --activations int8 needs a q8 or q4g128 format, but --formats is f32\n",
    ],
  ]);
});
