import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { ResidentDevice } from "../device.ts";
import { assertClose, assertThrowsMessage, gpuTest } from "../testing.ts";
import { peerCase } from "./cases.ts";
import {
  _checkSampled,
  createTfjsPeer,
  missingTfjsFile,
  type PeerOp,
  type PeerShape,
  samplePicks,
  type TfjsPeer,
} from "./tfjs.ts";

Deno.test("tfjs peer: the output check rejects a wrong element, and NaN", async () => {
  const expect = (i: number): [number, number] => [i, i];
  const tol = { atol: 1e-6, rtol: 1e-6 };
  strictEqual(_checkSampled([0, 1, 2, 3], expect, tol, "right"), 4);
  strictEqual(_checkSampled(Float32Array.from({ length: 10000 }, (_, i) => i), expect, tol, "sampled"), 513);
  await assertThrowsMessage(() => _checkSampled([0, 1, 2.001, 3], expect, tol, "wrong"), "wrong: element 2 is 2.001");
  await assertThrowsMessage(() => _checkSampled([0, 1, NaN, 3], expect, tol, "wrong"), "wrong: element 2 is NaN");
});

Deno.test("tfjs peer: a large output is checked at 513 picks, listed without touching the rest", () => {
  deepStrictEqual(samplePicks(3), [0, 1, 2]);
  strictEqual(samplePicks(4096).length, 4096);
  const n = 2 ** 32; // far more than any array could hold: only the picks may be listed
  const picks = samplePicks(n);
  strictEqual(picks.length, 513);
  ok(picks.every((i) => Number.isInteger(i) && i >= 0 && i < n) && picks.includes(n - 1), "picks out of range");
});

Deno.test("tfjs peer: building a case at GPU sizes is quick (inputs by xorshift, no per-element closures)", () => {
  // 2^24 elements here; the cost is linear, so 64 Mi is four times this.
  const t0 = performance.now();
  for (const [op, args] of [["scatter", [4096, 4096, 1024]], ["matMul", [2048, 2048, 2048]]] as const) {
    const c = peerCase(op, [...args]);
    const n = c.outShape.reduce((p, d) => p * d, 1);
    for (const i of samplePicks(n)) ok(Number.isFinite(c.expect(i)[0]));
  }
  const ms = performance.now() - t0;
  ok(ms < 20_000, `took ${ms.toFixed(0)} ms`);
});

Deno.test("tfjs peer: arguments are validated, naming the argument", async () => {
  await assertThrowsMessage(() => peerCase("matMul", [0, 2, 2]), "m must be a positive integer, got 0");
  await assertThrowsMessage(() => peerCase("matvec", { n: 4 }), "k must be a positive integer, got undefined");
  await assertThrowsMessage(() => peerCase("sum", { shape: [2, 3], axis: 2 }), "axis must be an integer in [-2, 2)");
  await assertThrowsMessage(() => peerCase("permute", { shape: [2, 3], perm: [0, 0] }), "perm must be a permutation");
  await assertThrowsMessage(() => peerCase("addRows", [2, 3, 4]), "expected [rows, cols], got [2, 3, 4]");
});

Deno.test("tfjs peer: CPU expectations of the cases, by hand", () => {
  const t = peerCase("transpose", [2, 3]);
  const x = t.inputs[0].data;
  deepStrictEqual([0, 1, 2, 3, 4, 5].map((i) => t.expect(i)[0]), [x[0], x[3], x[1], x[4], x[2], x[5]]);
  const s = peerCase("sum", { shape: [2, 3], axis: 0 });
  const y = s.inputs[0].data;
  strictEqual(s.expect(2)[0], y[2] + y[5]);
  const g = peerCase("scatter", [1, 2, 6]); // six updates into two columns: the colliding ones add up
  const [pairs, src] = [g.inputs[0].data, g.inputs[1].data];
  for (const column of [0, 1]) {
    const updates = [...src].filter((_, e) => pairs[2 * e + 1] === column);
    strictEqual(g.expect(column)[0], updates.reduce((p, v) => p + v, 0));
  }
  ok([0, 1].some((column) => [...pairs].filter((v, j) => j % 2 === 1 && v === column).length > 1), "no collision");
});

const missing = await missingTfjsFile();
let shared: Promise<TfjsPeer> | undefined;

/**
 * A GPU test given the shared peer. When the peer is not installed it is ignored with the reason,
 * except under `CI=true` (where `.ci/run` installs it), where it fails.
 */
function peerTest(name: string, fn: (peer: TfjsPeer, gpu: ResidentDevice) => Promise<void>): void {
  if (missing && Deno.env.get("CI") === "true") {
    Deno.test(name, () => {
      throw new Error(`CI=true but ${missing} is missing: .ci/run installs it (deno task peer:install)`);
    });
    return;
  }
  if (missing) {
    Deno.test({ name: `${name} (ignored: ${missing} is missing; deno task peer:install)`, ignore: true, fn() {} });
    return;
  }
  gpuTest(name, async (gpu) => await fn(await (shared ??= createTfjsPeer(gpu.device)), gpu));
}

peerTest("tfjs peer: initialises on our device, once, and restores the globals it hid", async (peer, gpu) => {
  strictEqual(peer.device, gpu.device);
  strictEqual((peer.tf.backend() as { device: GPUDevice }).device, gpu.device);
  strictEqual(peer.version, "4.22.0");
  await assertThrowsMessage(() => createTfjsPeer(gpu.device), "one already exists");
  strictEqual(typeof (globalThis as Record<string, unknown>).window, "undefined", "window stub left behind");
  ok("process" in globalThis, "process not restored");
});

peerTest("tfjs peer: refuses a device without timestamp-query", async () => {
  const bare = await (await navigator.gpu.requestAdapter())!.requestDevice();
  try {
    await assertThrowsMessage(() => createTfjsPeer(bare), "no timestamp-query feature");
  } finally {
    bare.destroy();
  }
});

peerTest("tfjs peer: add, softmax and matMul give hand-derived values", async ({ tf }) => {
  const before = tf.memory().numTensors;
  const t = (v: number[], shape: number[]) => tf.tensor(new Float32Array(v), shape, "float32");
  const inputs = [[1, 2, 3], [10, 20, 30], [0, Math.LN2, 2 * Math.LN2], [1, 2, 3, 4], [5, 6, 7, 8]];
  const [a, b, l, m, n] = inputs.map((v, i) => t(v, i < 2 ? [3] : i === 2 ? [1, 3] : [2, 2]));
  const run = async (out: ReturnType<typeof t>) => {
    const values = [...await out.data()];
    out.dispose();
    return values;
  };
  deepStrictEqual(await run(tf.add(a, b)), [11, 22, 33]);
  assertClose(await run(tf.softmax(l)), [1 / 7, 2 / 7, 4 / 7], { atol: 1e-6, rtol: 1e-5 }, "softmax");
  deepStrictEqual(await run(tf.matMul(m, n)), [19, 22, 43, 50]);
  for (const x of [a, b, l, m, n]) x.dispose();
  strictEqual(tf.memory().numTensors, before);
});

peerTest("tfjs peer: every op agrees with the CPU at small, awkward shapes", async (peer) => {
  const shapes: Record<PeerOp, PeerShape> = {
    add: [3, 77],
    mul: [1],
    addRows: [5, 33],
    mulRows: { rows: 1, cols: 257 },
    axpy: [1001],
    relu: [129],
    relu2: [129],
    elu: [129],
    tanh: [129],
    sigmoid: [129],
    silu: [129],
    softmax: [7, 300],
    sum: [3, 5, 7],
    max: { shape: [3, 5, 7], axis: 1 },
    min: { shape: [3, 5, 7], axis: 0 },
    mean: { shape: [3, 5, 7], axis: -1 },
    transpose: [17, 65],
    permute: { shape: [2, 3, 4, 5], perm: [0, 2, 1, 3] },
    gather: [10, 7, 13],
    scatter: [3, 4, 20], // 20 updates into 4 columns per row: colliding indices must add up
    matMul: [7, 13, 5],
    matvec: [9, 33],
  };
  for (const [op, args] of Object.entries(shapes)) {
    const checked = await peer.check(op, args);
    ok(checked !== undefined && checked > 0, `${op}: nothing checked`);
  }
  strictEqual(await peer.check("gelu", [4]), undefined);
});

peerTest("tfjs peer: time() returns GPU times that grow with the work", async (peer) => {
  const tiny = await peer.time("add", [3]);
  ok(tiny && tiny.ms > 0 && tiny.kernels === 1, `add [3] did not run on the GPU: ${JSON.stringify(tiny)}`);
  const cases = [["axpy", [4096], 2], ["softmax", [16, 64], 1], ["matMul", [32, 32, 32], 1]] as const;
  for (const [op, args, kernels] of cases) {
    const t = await peer.time(op, [...args], 5);
    ok(t && t.samplesMs.length === 5 && t.samplesMs.every((s) => s > 0) && t.ms > 0, `${op}: ${JSON.stringify(t)}`);
    strictEqual(t.kernels, kernels, `${op}: ${t.programs}`);
  }
  // 2^24 elements: past any cache and far past launch latency even on an H200, where 2^20 (12 MB,
  // L2-resident) measured 6.9 us against 4.8 us for 2^12.
  const [few, many] = [await peer.time("add", [1 << 12]), await peer.time("add", [1 << 24])];
  ok(few && many && many.ms > 2 * few.ms, `add: 4096x the elements took ${many?.ms} ms against ${few?.ms} ms`);
  strictEqual(await peer.time("gelu", [4]), undefined);
  await assertThrowsMessage(() => peer.time("add", [4], 4), "samples must be an integer >= 5, got 4");
});

peerTest("tfjs peer: inputs rotate over sets below the cache size, as our timing does", async (peer) => {
  const rotated = await peer.time("add", [4096], { samples: 5, warmup: 1 });
  ok(rotated && rotated.sets === 6 && rotated.workingSetBytes === 3 * 4 * 4096, JSON.stringify(rotated));
  const single = await peer.time("add", [4096], { samples: 5, cacheBytes: 1024 });
  ok(single && single.sets === 1 && single.warmup === 3, JSON.stringify(single));
});

peerTest("tfjs peer: after a timing, TF.js's pool of freed buffers is destroyed, not kept", async (peer) => {
  const pool = () => (peer.tf.backend() as { bufferManager: { getNumFreeBuffers(): number } }).bufferManager;
  ok(await peer.time("matMul", [64, 64, 64], 5));
  strictEqual(pool().getNumFreeBuffers(), 0);
  strictEqual(await peer.check("add", [1 << 16]), 513);
  strictEqual(pool().getNumFreeBuffers(), 0);
  strictEqual(await peer.check("add", [7]), 7, "TF.js still pools and reuses after a release");
});

peerTest("tfjs peer: dispose leaves our device working, and a new peer can start", async (peer, gpu) => {
  peer.dispose();
  shared = undefined;
  const x = gpu.upload(new Float32Array([1, 2, 3]));
  deepStrictEqual([...await gpu.read(x)], [1, 2, 3]);
  x.buffer.destroy();
  const again = await createTfjsPeer(gpu.device);
  strictEqual(await again.check("add", [5]), 5);
  again.dispose();
});

Deno.test("peer CLIs: peer and peer:install refuse an unknown argument by name, before any device or npm", async () => {
  for (
    const [file, args, first] of [
      ["tfjs.ts", ["tiny"], "peer: unknown argument tiny"],
      ["tfjs.ts", ["small", "large"], "peer: unknown argument large"],
      ["install.ts", ["--force"], "peer:install: unknown argument --force"],
    ] as const
  ) {
    // No permissions: the refusal must come before the peer's files, the adapter or npm are reached.
    const { code, stderr } = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", new URL(`./${file}`, import.meta.url).pathname, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const message = new TextDecoder().decode(stderr);
    strictEqual(code, 2, message);
    strictEqual(message.split("\n")[0], first);
  }
});
