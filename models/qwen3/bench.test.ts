import { ok, strictEqual } from "node:assert/strict";
import { gpuTest } from "../../harness/testing.ts";

gpuTest("qwen3 bench: runs at the tiny shape and writes its figures as JSON", async () => {
  const out = await Deno.makeTempFile({ suffix: ".json" });
  try {
    const run = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--quiet",
        new URL("./bench.ts", import.meta.url).pathname,
        "--shape",
        "tiny",
        "--format",
        "q8",
        "--tokens",
        "5",
        "--samples",
        "2",
        "--out",
        out,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!run.success) throw new Error(new TextDecoder().decode(run.stderr));
    const result = JSON.parse(await Deno.readTextFile(out));
    strictEqual(result.format, "q8");
    strictEqual(result.tokens, 5);
    strictEqual(result.wallMs.length, 2);
    ok(result.wallMedianMs > 0 && result.weightBytes > 0 && result.programBytes > 0);
    // GPU time where the adapter has timestamps (null otherwise): at least 5 samples, median among them.
    if (result.gpuMedianMs !== null) {
      ok(result.gpuSamplesMs.length >= 5 && result.gpuSamplesMs.every((ms: number) => ms > 0));
      ok(result.gpuSamplesMs.includes(result.gpuMedianMs) || result.gpuSamplesMs.length % 2 === 0);
    } else strictEqual(result.gpuSamplesMs, null);
  } finally {
    await Deno.remove(out);
  }
});
