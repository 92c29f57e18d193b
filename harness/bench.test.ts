// The bench CLI's argument checks, run on a case defined here (harness/ imports no op).
import { strictEqual } from "node:assert/strict";
import { benchMain } from "./bench.ts";
import { type BenchCase, defineCase } from "./bench_case.ts";
import { assertThrowsMessage, gpuTest } from "./testing.ts";

const DOUBLE = `@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) { if (id.x < arrayLength(&out)) { out[id.x] = 2.0 * x[id.x]; } }`;

const CASES: readonly BenchCase[] = [defineCase({
  op: "double",
  entry: "kernel",
  sources: { kernel: DOUBLE },
  gpu: [64],
  quick: [64],
  label: (n) => `${n}`,
  plan: (_gpu, n) => ({
    op: "double",
    kernel: { variant: "kernel", source: DOUBLE, rung: "portable", tried: ["kernel"] },
    bindings: [{ name: "x", dtype: "f32", length: n, role: "input" }, {
      name: "out",
      dtype: "f32",
      length: n,
      role: "output",
    }],
    workgroups: Math.ceil(n / 64),
    cost: { bytes: 8 * n, flops: n },
  }),
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

gpuTest("deno task bench: --peer and --no-peer together are refused", async () => {
  await assertThrowsMessage(
    () => benchMain(["--peer", "--no-peer"], CASES),
    "--peer and --no-peer contradict each other",
  );
});
