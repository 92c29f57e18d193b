import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { gpuTest } from "../../harness/testing.ts";
import type { BenchRow } from "../bench_rows.ts";
import { torchFigures } from "./bench.ts";
import { checkBenchCommandLine } from "../bench_cli_test_util.ts";

const row = (stage: string, width: number | null, extra: Partial<BenchRow> = {}) =>
  ({ stage, width, height: width, format: "f32", ms: 1, peakBytes: 1, ...extra }) as BenchRow;

gpuTest("anima bench: the tiny config's every stage in one run, rows merged into the baseline there", async (gpu) => {
  const dir = await Deno.makeTempDir();
  try {
    const json = `${dir}/baseline.json`, torch = `${dir}/torch.json`;
    const kept = row("dit-step", 1024, { blocks: 52, batch: 1, torchFp32Ms: 742 });
    const adapter = gpu.adapter.description || gpu.adapter.vendor; // the bench's own device's
    await Deno.writeTextFile(json, JSON.stringify({ adapter, runtime: "r", date: "d", rows: [kept] }));
    await Deno.writeTextFile(
      torch,
      JSON.stringify({
        device: "cpu",
        torch: "2.13",
        qwen3: { fp32: { median_ms: 2 }, bf16: { median_ms: 1 } },
        adapter: { fp32: { median_ms: 0.5 }, fp32_tf32: { median_ms: 0.25 }, bf16: { median_ms: 0.125 } },
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
        "32",
        "--formats",
        "f32",
        "--text",
        "8",
        "--steps",
        "2",
        "--prompt",
        "a cat on a mat",
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
    const rows: BenchRow[] = baseline.rows;
    deepStrictEqual(rows[0], kept);
    deepStrictEqual(rows.slice(1).map((r) => [r.stage, r.width, r.format, r.blocks, r.batch]), [
      ["text-encoder", null, "f32", undefined, undefined],
      ["adapter", null, "f32", undefined, undefined],
      ["dit-step-cfg", 32, "f32", 2, 2],
      ["dit-step", 32, "f32", 2, 1],
      ["vae-decode", 32, "f32", undefined, undefined],
      ["total", 32, "f32", 2, undefined],
    ]);
    for (const r of rows.slice(1)) {
      ok(r.ms > 0 && Number.isFinite(r.ms), `${r.stage}: ms ${r.ms}`);
      ok(typeof r.peakBytes === "number" && r.peakBytes > 0, `${r.stage}: peakBytes ${r.peakBytes}`);
    }
    const [te, ad, cfg, one, vae, total] = rows.slice(1);
    // A stage row's peak counts its weights (live when the peak restarts) and its program's buffers.
    for (const r of [te, ad, cfg, one, vae]) ok(r.peakBytes! > (r.weightBytes as number), `${r.stage}`);
    ok((te.weightBytes as number) > (ad.weightBytes as number));
    strictEqual(cfg.weightBytes, one.weightBytes);
    ok(cfg.peakBytes! > one.peakBytes!, "two CFG passes hold more activations than one");
    // Torch: Qwen3 plus the adapter for the text encoder (modes both have), the adapter alone.
    deepStrictEqual([te.torchFp32Ms, te.torchTf32Ms, te.torchBf16Ms], [2.5, undefined, 1.125]);
    deepStrictEqual([ad.torchFp32Ms, ad.torchTf32Ms, ad.torchBf16Ms], [0.5, 0.25, 0.125]);
    // The whole image: the tiny model fits the default budget, so its DiT stayed resident beside the rest.
    deepStrictEqual(total.residency, { maxResidentBytes: 4 * 2 ** 30, keepsAllStages: true, streamsDitBlocks: false });
    ok(total.peakBytes! >= (one.weightBytes as number) + (vae.weightBytes as number), `total peak ${total.peakBytes}`);
    deepStrictEqual([total.steps, total.cfg, total.qwenTokens], [2, 3.5, 5]);
    ok((total.firstStepMs as number) > 0 && (total.stepMs as number) > 0 && (total.afterStepsMs as number) > 0);
    ok((total.weightReadMs as number) >= 0 && (total.weightReadMs as number) < total.ms);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("anima bench: the H100 torch log's figures land on the 52-block batch-1 DiT and the VAE at 1024", async () => {
  const log = JSON.parse(
    await Deno.readTextFile(new URL("./baselines/nvidia-h100-log/torch-timing.json", import.meta.url)),
  );
  const figures = torchFigures(log);
  deepStrictEqual(figures(row("dit-step", 1024, { blocks: 52, batch: 1, format: "q8" })), {
    torchFp32Ms: 742.485,
    torchTf32Ms: 319.135,
    torchBf16Ms: 108.161,
  });
  deepStrictEqual(figures(row("vae-decode", 1024)), {
    torchFp32Ms: 415.731,
    torchTf32Ms: 132.218,
    torchBf16Ms: 68.466,
  });
  for (
    const other of [
      row("dit-step", 1024, { blocks: 28, batch: 1 }),
      row("dit-step-cfg", 1024, { blocks: 52, batch: 2 }),
      row("vae-decode", 512),
    ]
  ) {
    deepStrictEqual(figures(other), undefined, other.stage);
  }
  strictEqual(figures(row("text-encoder", null)), undefined, "the log has no qwen3 or adapter part");
});

Deno.test("anima bench: --help lists every option; an unknown one is refused by name, without a stack trace", async () => {
  await checkBenchCommandLine(new URL("./bench.ts", import.meta.url), 16, [
    [["--sizez", "32"], "anima bench: unknown option --sizez\nusage:"],
  ]);
});
