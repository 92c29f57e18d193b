// The bench CLI's argument checks, run on a case defined here (harness/ imports no op).
import { strictEqual } from "node:assert/strict";
import { benchMain } from "./bench.ts";
import { type BenchCase, defineCase } from "./bench_case.ts";
import { assertThrowsMessage, DOUBLE_WGSL, doublePlan, gpuTest } from "./testing.ts";

const CASES: readonly BenchCase[] = [defineCase({
  op: "double",
  entry: "kernel",
  sources: { kernel: DOUBLE_WGSL },
  gpu: [64],
  quick: [64],
  label: (n) => `${n}`,
  plan: (_gpu, n) => doublePlan(n),
  inputs: (n, seed) => [Float32Array.from({ length: n }, (_, i) => seed + i + 0.5)],
})];

Deno.test("bench --compare refuses an empty or non-JSON result file, naming the file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const empty = `${dir}/empty.json`;
    await Deno.writeTextFile(empty, "");
    await assertThrowsMessage(() => benchMain(["--compare", empty], CASES), `${empty}: the file is empty`);
    const garbled = `${dir}/garbled.json`;
    await Deno.writeTextFile(garbled, "{");
    await assertThrowsMessage(() => benchMain(["--compare", garbled], CASES), `${garbled}: not valid JSON`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

gpuTest("bench --filter matching no case exits 2 with a message, before any probe runs", async () => {
  const errors: string[] = [];
  const saved = console.error;
  console.error = (...args: unknown[]) => errors.push(args.join(" "));
  let code: number;
  try {
    code = await benchMain(["--filter", "no-such-op", "--no-peer", "--quick"], CASES);
  } finally {
    console.error = saved;
  }
  strictEqual(code, 2);
  strictEqual(errors.some((e) => e.startsWith('--filter "no-such-op": no case matches')), true, errors.join("\n"));
});

Deno.test("deno task bench: --peer and --no-peer together are refused, before any GPU work", async () => {
  await assertThrowsMessage(
    () => benchMain(["--peer", "--no-peer"], CASES),
    "--peer and --no-peer contradict each other",
  );
});

Deno.test("bench: an unknown option or a missing value is refused with its message and where the options are", async () => {
  await assertThrowsMessage(() => benchMain(["--bogus"], []), "Unknown option '--bogus' (--help lists the options)");
  await assertThrowsMessage(() => benchMain(["--samples"], []), "argument missing (--help lists the options)");
});

Deno.test("bench and roofline: a bad value or a missing --compare file is one line and exit 2, no stack", async () => {
  await assertThrowsMessage(() => benchMain(["--samples", "2"], CASES), "--samples must be an integer >= 5, got 2");
  await assertThrowsMessage(
    () => benchMain(["--compare", "/no/such/result.json"], CASES),
    "--compare: No such file or directory",
  );
  // The roofline CLI through exitWith, as `deno task roofline` runs it.
  for (
    const [args, line] of [
      [["--samples", "2"], "--samples must be an integer >= 5, got 2"],
      [["--sweep", "--only", "f32,fp16"], '--only: "fp16" is not one of bandwidth, f32, f16, dp4a'],
    ] as const
  ) {
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", new URL("./roofline_cli.ts", import.meta.url).pathname, ...args],
      env: { NODEVICE_SELECT: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    strictEqual(code, 2);
    strictEqual(new TextDecoder().decode(stderr), `${line}\n`);
  }
});
