import { deepStrictEqual, notStrictEqual, ok, strictEqual } from "node:assert/strict";
import { acquireDevice, kernelSequence } from "./device.ts";
import { assertThrowsMessage, gpuTest, randomF32 } from "./testing.ts";
import {
  dispatchTimes,
  MAX_TIMED_PASSES,
  profileByKernel,
  profileProgram,
  rotationSets,
  summarizeNs,
  supportsTimestamps,
  timeEncoding,
  timePlan,
  timeProgram,
  timestampPasses,
  TimestampUnavailableError,
  warmClocks,
  workingSetBytes,
} from "./timing.ts";
import type { KernelPlan } from "./device.ts";
import { packParams } from "./params.ts";

// A plain add of two arrays, written here: the harness's tests use no op (harness/ imports none).
const ADD = `struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<f32>;
@group(0) @binding(3) var<uniform> params: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  if (id.x < params.n) { out[id.x] = a[id.x] + b[id.x]; }
}`;

function addPlan(n: number): KernelPlan {
  return {
    op: "add",
    kernel: { variant: "kernel", source: ADD, rung: "portable", tried: ["kernel"] },
    bindings: [
      { name: "a", dtype: "f32", length: n, role: "input" },
      { name: "b", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams([{ name: "n", type: "u32" }], { n }, "add"),
    workgroups: Math.ceil(n / 64),
    cost: { bytes: 12 * n, flops: n },
  };
}

Deno.test("summarizeNs: median, extremes and quartiles of BigInt nanoseconds, in ms", () => {
  deepStrictEqual(summarizeNs([3_000_000n, 1_000_000n, 2_000_000n]), {
    ms: 2,
    msMin: 1,
    msMax: 3,
    msQ1: 1.5,
    msQ3: 2.5,
  });
  // Even count: the median is the mean of the middle two.
  strictEqual(summarizeNs([4n, 1n, 3n, 2n].map((x) => x * 1_000_000n)).ms, 2.5);
});

Deno.test("summarizeNs: durations are differences of BigInt ticks, exact beyond 2^53", () => {
  const begin = 2n ** 60n + 12_345n;
  const end = begin + 1_234_567n;
  notStrictEqual(Number(end) - Number(begin), 1_234_567); // Numbers are 256 ns apart up here
  strictEqual(summarizeNs([end - begin]).ms, 1.234567);
});

Deno.test("summarizeNs: no samples throws", async () => {
  await assertThrowsMessage(() => summarizeNs([]), "no samples");
});

Deno.test("rotationSets: one set past the cache, at least two below it, within every cap", () => {
  const MiB = 2 ** 20;
  strictEqual(rotationSets(60 * MiB, 20, { cacheBytes: 50 * MiB }), 1);
  strictEqual(rotationSets(40 * MiB, 20, { cacheBytes: 50 * MiB }), 3); // 3 x 40 MiB >= 2 x 50 MiB
  strictEqual(rotationSets(49 * MiB, 20, { cacheBytes: 50 * MiB, maxRotationBytes: 60 * MiB }), 2);
  strictEqual(rotationSets(1024, 13, { cacheBytes: 50 * MiB }), 13); // no more sets than passes
  strictEqual(rotationSets(1024, 500, { cacheBytes: 50 * MiB }), 64); // maxSets
});

Deno.test("rotationSets refuses NaN, fractional and negative sizes, and no passes", async () => {
  for (const bytes of [NaN, -1, 1.5]) {
    await assertThrowsMessage(
      () => rotationSets(bytes, 5),
      `rotationSets: bytes must be an integer >= 0, got ${bytes}`,
    );
  }
  for (const passes of [NaN, 0, -1]) {
    await assertThrowsMessage(
      () => rotationSets(100, passes),
      `rotationSets: passes must be an integer >= 1, got ${passes}`,
    );
  }
});

gpuTest("timePlan: positive medians of a tiny plan, rotating input sets", async (gpu) => {
  ok(supportsTimestamps(gpu), "the test adapter offers timestamp-query");
  const n = 1000;
  const plan = addPlan(n);
  strictEqual(workingSetBytes(plan), 12 * n);
  const t = await timePlan(gpu, plan, (set) => [randomF32(n, 2 * set + 1), randomF32(n, 2 * set + 2)], {
    samples: 5,
    warmup: 1,
  });
  ok(t.ms > 0 && t.msMin > 0, `median ${t.ms} ms, min ${t.msMin} ms`);
  ok(t.msMin <= t.msQ1 && t.msQ1 <= t.ms && t.ms <= t.msQ3 && t.msQ3 <= t.msMax);
  strictEqual(t.samples, 5);
  strictEqual(t.samplesMs.length, 5);
  ok(t.sets >= 2, `a 12 kB working set rotates (${t.sets} sets)`);
  strictEqual(t.cacheResident, true);
  // The GPU intervals lie inside the submission, whose wall time also includes the fence.
  ok(t.samplesMs.reduce((a, b) => a + b, 0) <= t.wallMs, `sum of passes ${t.samplesMs} vs wall ${t.wallMs}`);
});

gpuTest("timePlan: a KernelSequence is timed as one operation, its intermediates allocated", async (gpu) => {
  const n = 1000;
  const first = addPlan(n), second = addPlan(n);
  const [a, b, sum] = first.bindings;
  const out = second.bindings[2];
  // out = (a + b) + b, both dispatches in one pass.
  const seq = kernelSequence("add", [a, b, out], [sum], [
    { plan: first, tensors: [0, 1, 3] },
    { plan: second, tensors: [3, 1, 2] },
  ], { bytes: 12 * n, flops: 2 * n });
  strictEqual(workingSetBytes(seq), 16 * n);
  const t = await timePlan(gpu, seq, (set) => [randomF32(n, 2 * set + 1), randomF32(n, 2 * set + 2)], {
    samples: 5,
    warmup: 1,
  });
  ok(t.ms > 0 && t.samples === 5 && t.sets >= 2, JSON.stringify(t));
  await assertThrowsMessage(
    () => timePlan(gpu, seq, () => [randomF32(n, 1)], { samples: 5 }),
    "add: expected 2 input arrays (a, b)",
  );
});

gpuTest("timePlan: fewer than 5 samples is refused", async (gpu) => {
  const plan = addPlan(4);
  await assertThrowsMessage(
    () => timePlan(gpu, plan, () => [randomF32(4, 1), randomF32(4, 2)], { samples: 4 }),
    "samples must be an integer in [5,",
  );
});

gpuTest("timePlan: without timestamp-query no time is reported", async () => {
  const adapter = await navigator.gpu.requestAdapter();
  const device = await adapter!.requestDevice(); // no optional features
  try {
    const gpu = await acquireDevice({ device });
    strictEqual(supportsTimestamps(gpu), false);
    const plan = addPlan(4);
    let error: unknown;
    try {
      await timePlan(gpu, plan, () => [randomF32(4, 1), randomF32(4, 2)]);
    } catch (e) {
      error = e;
    }
    ok(error instanceof TimestampUnavailableError, `expected TimestampUnavailableError, got ${error}`);
    ok(error.message.includes("timestamp-query"));
  } finally {
    device.destroy();
  }
});

gpuTest("warmClocks: at least the GPU time asked for; nothing for 0; bad values refused", async (gpu) => {
  const spent = await warmClocks(gpu, { ms: 30 });
  ok(spent >= 30, `spent ${spent} ms of GPU time`);
  strictEqual(await warmClocks(gpu, { ms: 0 }), 0);
  await assertThrowsMessage(() => warmClocks(gpu, { ms: -1 }), "ms must be a finite number >= 0");
  await assertThrowsMessage(() => warmClocks(gpu, { ms: NaN }), "ms must be a finite number >= 0");
});

gpuTest("timePlan: warms the clocks before the figure and reports the GPU time it spent", async (gpu) => {
  const n = 1000;
  const plan = addPlan(n);
  const inputs = (set: number) => [randomF32(n, 2 * set + 1), randomF32(n, 2 * set + 2)];
  const warmed = await timePlan(gpu, plan, inputs, { samples: 5, warmup: 1, clockWarmupMs: 25 });
  ok(warmed.clockWarmupMs >= 25, `${warmed.clockWarmupMs} ms of warm-up`);
  strictEqual((await timePlan(gpu, plan, inputs, { samples: 5, warmup: 1, clockWarmupMs: 0 })).clockWarmupMs, 0);
});

gpuTest(
  "timeProgram: a program of two passes (a zeroed binding) is timed from its first pass to its last",
  async (gpu) => {
    const n = 1 << 16;
    const [a, b, mid] = [gpu.upload(randomF32(n, 1)), gpu.upload(randomF32(n, 2)), gpu.alloc("f32", n)];
    const out = gpu.alloc("f32", n);
    // The second step clears its output first, so the program is two compute passes.
    const zeroedAdd: KernelPlan = {
      ...addPlan(n),
      bindings: addPlan(n).bindings.map((b) => b.name === "out" ? { ...b, zeroed: true } : b),
    };
    const one = gpu.program("add", [[addPlan(n), [a, b, mid]]]);
    const two = gpu.program("add, then add into a cleared output", [[addPlan(n), [a, b, mid]], [zeroedAdd, [
      mid,
      b,
      out,
    ]]]);
    try {
      const options = { samples: 7, warmup: 1, clockWarmupMs: 0 };
      const t1 = await timeProgram(gpu, one, options);
      const t2 = await timeProgram(gpu, two, options);
      strictEqual(t2.samples, 7);
      strictEqual(t2.workingSetBytes, 2 * 12 * n);
      ok(t1.ms > 0 && t2.ms > 0);
      // Both passes lie between the timestamps: the two-pass program takes longer than its first pass
      // alone (had the end been written by the first pass, the two would time the same).
      ok(t2.msMin > t1.msMin, `two passes ${t2.msMin} ms, one ${t1.msMin} ms`);
      const [x, y, z] = await Promise.all([gpu.read(a), gpu.read(b), gpu.read(out)]);
      ok(z.every((v, i) => Math.abs(v - (x[i] + 2 * y[i])) < 1e-5), "the timed runs computed the program");
    } finally {
      one.destroy();
      two.destroy();
      for (const t of [a, b, mid, out]) t.buffer.destroy();
    }
  },
);

gpuTest("profileProgram: one entry per dispatch, in order, the larger dispatch taking longer", async (gpu) => {
  const small = 1 << 12, large = 1 << 20;
  const t = (n: number, seed: number) => gpu.upload(randomF32(n, seed));
  const [a, b, c] = [t(large, 5), t(large, 6), gpu.alloc("f32", large)];
  const named = (n: number, op: string): KernelPlan => ({ ...addPlan(n), op });
  const program = gpu.program("small, large, small", [
    [named(small, "small"), [a, b, c]],
    [named(large, "large"), [a, b, c]],
    [named(small, "small"), [b, a, c]],
  ]);
  try {
    const times = await profileProgram(gpu, program, { samples: 3, clockWarmupMs: 0 });
    deepStrictEqual(times.map((x) => [x.index, x.op]), [[0, "small"], [1, "large"], [2, "small"]]);
    deepStrictEqual(times[1].workgroups, [large / 64, 1, 1]);
    strictEqual(times[1].bytes, 12 * large);
    ok(times.every((x) => x.ms >= 0));
    ok(times[1].ms > times[0].ms, `large ${times[1].ms} ms, small ${times[0].ms} ms`);
    const sums = profileByKernel(times);
    deepStrictEqual(sums.map((k) => [k.kernel, k.dispatches]), [["large/kernel", 1], ["small/kernel", 2]]);
    ok(Math.abs(sums[1].ms - (times[0].ms + times[2].ms)) < 1e-9);
    await assertThrowsMessage(() => profileProgram(gpu, program, { samples: 0 }), /samples must be an integer >= 1/);
    await assertThrowsMessage(() => profileProgram(gpu, {} as never), /program must be a Program/);
  } finally {
    program.destroy();
    for (const x of [a, b, c]) x.buffer.destroy();
  }
});

gpuTest(
  "timestampPasses: ticks of every pass in order; a pass count past one query set refused by name",
  async (gpu) => {
    const n = 1 << 20;
    const [a, b, c] = [gpu.upload(randomF32(n, 9)), gpu.upload(randomF32(n, 10)), gpu.alloc("f32", n)];
    const program = gpu.program("add", [[addPlan(n), [a, b, c]]]);
    try {
      const { ticks, wallMs } = await timestampPasses(gpu, "three adds", 3, (encoder, writes) => {
        for (let i = 0; i < 3; i++) program.encode(encoder, writes(i));
      });
      strictEqual(ticks.length, 6);
      ok(
        Number(ticks[5] - ticks[0]) / 1e6 <= wallMs * 1.01 + 0.01,
        `the passes span more than ${wallMs} ms of wall time`,
      );
      for (let i = 0; i < 3; i++) {
        ok(
          ticks[2 * i + 1] >= ticks[2 * i],
          `pass ${i}: ${ticks[2 * i]} -> ${ticks[2 * i + 1]}`,
        );
      }
      const record = () => {};
      for (const passes of [0, MAX_TIMED_PASSES + 1, 1.5]) {
        await assertThrowsMessage(
          () => timestampPasses(gpu, "x", passes, record),
          /passes must be an integer from 1 to 2048/,
        );
      }
    } finally {
      program.destroy();
      for (const x of [a, b, c]) x.buffer.destroy();
    }
  },
);

gpuTest("profileProgram: a program past one query set (2,048 dispatches) is profiled whole", async (gpu) => {
  const n = 256;
  const [a, b, c] = [gpu.upload(randomF32(n, 7)), gpu.upload(randomF32(n, 8)), gpu.alloc("f32", n)];
  const program = gpu.program("many adds", Array.from({ length: 2050 }, () => [addPlan(n), [a, b, c]] as const));
  try {
    const times = await profileProgram(gpu, program, { samples: 1, clockWarmupMs: 0 });
    strictEqual(times.length, 2050);
    ok(times.every((x, i) => x.index === i && x.ms >= 0));
    // Its sample alone: one time per dispatch across the two submissions.
    const ns = await dispatchTimes(gpu, "many adds", program.steps);
    strictEqual(ns.length, 2050);
    ok(ns.every((t) => typeof t === "bigint" && t >= 0n));
  } finally {
    program.destroy();
    for (const x of [a, b, c]) x.buffer.destroy();
  }
});

gpuTest("timeEncoding: whatever an encoding records lies between its timestamps: more work, more time", async (gpu) => {
  const n = 1 << 16;
  const [a, b, mid, out] = [
    gpu.upload(randomF32(n, 3)),
    gpu.upload(randomF32(n, 4)),
    gpu.alloc("f32", n),
    gpu.alloc("f32", n),
  ];
  const add = gpu.program("add", [[addPlan(n), [a, b, mid]]]);
  try {
    const options = { samples: 7, warmup: 1, clockWarmupMs: 0 };
    const once = await timeEncoding(gpu, "one add", (encoder) => add.encode(encoder), options);
    // The same add four times, with a copy after each: work the empty passes around the sample must enclose.
    const more = await timeEncoding(gpu, "four adds and copies", (encoder) => {
      for (let i = 0; i < 4; i++) {
        add.encode(encoder);
        encoder.copyBufferToBuffer(mid.buffer, 0, out.buffer, 0, 4 * n);
      }
    }, options);
    strictEqual(more.samples, 7);
    ok(once.ms > 0 && more.msMin > once.msMin, `four adds ${more.msMin} ms, one ${once.msMin} ms`);
    const [x, y, z] = await Promise.all([gpu.read(a), gpu.read(b), gpu.read(out)]);
    ok(z.every((v, i) => v === Math.fround(x[i] + y[i])), "the timed encodings ran");
  } finally {
    add.destroy();
    for (const t of [a, b, mid, out]) t.buffer.destroy();
  }
});
