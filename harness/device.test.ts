import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { acquireDevice, type KernelPlan, kernelSequence } from "./device.ts";
import { type GuardedLimits, LimitError } from "./limits.ts";
import { assertThrowsMessage, DOUBLE_WGSL, doublePlan, gpuTest } from "./testing.ts";

function throwsMessage(f: () => unknown, message: string): void {
  let thrown: unknown;
  try {
    f();
  } catch (e) {
    thrown = e;
  }
  strictEqual(
    thrown instanceof Error && thrown.message.includes(message),
    true,
    `expected "${message}", got ${thrown}`,
  );
}

gpuTest("ResidentDevice.run uploads, dispatches and reads back", async (gpu) => {
  const [out] = await gpu.run(doublePlan(100), [Float32Array.from({ length: 100 }, (_, i) => i - 50)]);
  deepStrictEqual([...out], Array.from({ length: 100 }, (_, i) => 2 * (i - 50)));
});

gpuTest("resident tensors stay on the device across submits", async (gpu) => {
  const x = gpu.upload(new Float32Array([1, 2, 3]), "x");
  const y = gpu.alloc("f32", 3, "y");
  const z = gpu.alloc("f32", 3, "z");
  await gpu.submit([doublePlan(3), [x, y]], [doublePlan(3), [y, z]]);
  deepStrictEqual([...await gpu.read(z)], [4, 8, 12]);
  for (const t of [x, y, z]) t.buffer.destroy();
});

gpuTest(
  "a KernelSequence runs its steps in order through its intermediates, and refuses what does not fit",
  async (gpu) => {
    const first = doublePlan(3), second = doublePlan(3, DOUBLE_WGSL, "kernel.second");
    const [x, mid] = first.bindings;
    const out = second.bindings[1];
    const seq = kernelSequence("double", [x, out], [mid], [
      { plan: first, tensors: [0, 2] },
      { plan: second, tensors: [2, 1] },
    ], { bytes: 24, flops: 3 });
    strictEqual(seq.variant, "kernel+kernel.second");
    const tensors = [
      gpu.upload(new Float32Array([1, 2, 3]), "x"),
      gpu.alloc("f32", 3, "out"),
      gpu.alloc("f32", 3, "mid"),
    ];
    await gpu.submitSequence(seq, tensors);
    deepStrictEqual([...await gpu.read(tensors[1])], [4, 8, 12]);
    await assertThrowsMessage(
      () => gpu.submitSequence(seq, tensors.slice(0, 2)),
      "double/kernel+kernel.second: expected 3 tensors, got 2",
    );
    for (const t of tensors) t.buffer.destroy();
    const step = (tensors: number[]) => [{ plan: first, tensors }];
    const cost = { bytes: 0, flops: 0 };
    throwsMessage(
      () => kernelSequence("double", [x, out], [], step([0]), cost),
      "double: step 0 (double/kernel) has 2 bindings, so tensors must hold 2 indices, given 1",
    );
    throwsMessage(
      () => kernelSequence("double", [x], [], step([0, 1]), cost),
      "double: step 0 (double/kernel): binding 1 (out) expects 3 f32",
    );
    const short = { ...out, length: 2 };
    throwsMessage(() => kernelSequence("double", [x, short], [], step([0, 1]), cost), "binding 1 (out) expects 3 f32");
    const cleared = { ...first, bindings: [x, { ...mid, zeroed: true }] };
    throwsMessage(
      () => kernelSequence("double", [x, out], [mid], [...step([0, 2]), { plan: cleared, tensors: [0, 2] }], cost),
      "double: step 1 (double/kernel): binding 1 (out) is cleared, so not in one pass",
    );
  },
);

gpuTest("a dispatch beyond a limit throws LimitError before anything is encoded", async (gpu) => {
  const plan = { ...doublePlan(4), workgroups: gpu.limits.maxComputeWorkgroupsPerDimension + 1 };
  let error: unknown;
  try {
    await gpu.run(plan, [new Float32Array(4)]);
  } catch (e) {
    error = e;
  }
  strictEqual(error instanceof LimitError, true, String(error));
  strictEqual((error as Error).message.startsWith("double/kernel: dispatch dimension x"), true);
});

gpuTest("a WebGPU validation error is thrown with the op, variant and sizes, never read back as zeros", async (gpu) => {
  const broken = DOUBLE_WGSL.replace("2.0 * x[id.x]", "2.0 * undefined_name[id.x]");
  await assertThrowsMessage(
    () => gpu.run(doublePlan(4, broken, "kernel.broken"), [new Float32Array(4)]),
    /WebGPU rejected double\/kernel\.broken \[x: 4 f32, out: 4 f32\]/,
  );
});

gpuTest("resolveAmong: the chosen entry point, or the one an override belongs to if it is among them", async (gpu) => {
  const sources = { big: "// big", "big.nvidia": "// big, NVIDIA", small: "// small", other: "// other" };
  const target = gpu.adapter.target;
  strictEqual(gpu.resolveAmong(sources, "demo", ["big", "small"], "small").variant, "small");
  strictEqual(
    gpu.resolveAmong(sources, "demo", ["big", "small"], "big").variant,
    target === "nvidia" ? "big.nvidia" : "big",
  );
  strictEqual(gpu.resolveAmong(sources, "demo", ["big", "small"], "big", { override: "small" }).variant, "small");
  strictEqual(
    gpu.resolveAmong(sources, "demo", ["big", "small"], "small", { override: "big.nvidia" }).variant,
    "big.nvidia",
  );
  await assertThrowsMessage(
    () => gpu.resolveAmong(sources, "demo", ["big", "small"], "big", { override: "other" }),
    'demo: override "other" is not a variant of entry point "big" or "small"',
  );
});

gpuTest(
  "resolveAmong never returns an entry point outside its list, nor an f16 variant the device cannot run",
  async (gpu) => {
    const sources = { big: "// big", "big.f16": "// big, f16", small: "// small", other: "// other" };
    // A chosen entry point that is not one of the plan's: refused, not resolved.
    await assertThrowsMessage(
      () => gpu.resolveAmong(sources, "demo", ["big", "small"], "other"),
      'demo: the chosen entry point "other" is not among big, small',
    );
    // An override naming an f16 variant: returned only where f16 is verified (else it cannot compile).
    const f16 = () => gpu.resolveAmong(sources, "demo", ["big", "small"], "small", { override: "big.f16" });
    if (gpu.f16Verified) strictEqual(f16().variant, "big.f16");
    else await assertThrowsMessage(f16, 'override "big.f16" is an f16 variant, but this device\'s f16 is not verified');
    // The same f16 request without an override falls back to the portable kernel where f16 is not verified.
    const asked = gpu.resolveAmong(sources, "demo", ["big", "small"], "big", { dtype: "f16" });
    strictEqual(asked.variant, gpu.f16Verified ? "big.f16" : "big");
    // A bare entry name as override is that entry's portable kernel, even when a dtype is asked for.
    strictEqual(
      gpu.resolveAmong(sources, "demo", ["big", "small"], "small", { override: "big", dtype: "f16" }).variant,
      "big",
    );
  },
);

gpuTest("withLimits refuses NaN, fractional, negative and unknown limits", async (gpu) => {
  for (const value of [NaN, -1, 2.5]) {
    await assertThrowsMessage(
      () => gpu.withLimits({ maxComputeWorkgroupsPerDimension: value }),
      `withLimits: maxComputeWorkgroupsPerDimension must be a non-negative integer, got ${value}`,
    );
  }
  await assertThrowsMessage(
    () => gpu.withLimits({ maxBindGroups: 2 } as unknown as Partial<GuardedLimits>),
    "withLimits: maxBindGroups is not a guarded limit",
  );
});

gpuTest("withErrorScopes: a rejected command is an error naming the work; a thrown one passes through", async (gpu) => {
  const invalid = () => gpu.device.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
  await assertThrowsMessage(
    () => gpu.withErrorScopes(() => "a mapped storage buffer", invalid),
    /^WebGPU rejected a mapped storage buffer: /,
  );
  await assertThrowsMessage(() =>
    gpu.withErrorScopes(() => "unused", () => {
      throw new Error("thrown inside");
    }), "thrown inside");
  // Both scopes were popped each time: valid work afterwards returns its value and raises nothing.
  strictEqual(await gpu.withErrorScopes(() => "unused", () => 42), 42);
});

gpuTest("inputs that do not match the plan's bindings are refused", async (gpu) => {
  const plan = doublePlan(4);
  await assertThrowsMessage(() => gpu.run(plan, [new Float32Array(3)]), "double: x must be 4 f32 elements, got 3 f32");
  await assertThrowsMessage(() => gpu.run(plan, [new Int32Array(4)]), "got 4 i32");
  await assertThrowsMessage(() => gpu.run(plan, []), "expected 1 input arrays (x), got 0");
  await assertThrowsMessage(
    () => gpu.run(plan, [undefined as unknown as Float32Array]),
    "double: x must be 4 f32 elements, got [object Undefined]",
  );
});

gpuTest("the pipeline cache refuses one key compiled from two sources", async (gpu) => {
  await gpu.run(doublePlan(2, DOUBLE_WGSL, "kernel.cache"), [new Float32Array(2)]);
  await assertThrowsMessage(
    () => gpu.run(doublePlan(2, DOUBLE_WGSL.replace("2.0 *", "3.0 *"), "kernel.cache"), [new Float32Array(2)]),
    "pipeline cache: double/kernel.cache was already compiled from a different source",
  );
});

gpuTest("a caller's device is never destroyed by the library", async (gpu) => {
  const device = await (await navigator.gpu.requestAdapter())!.requestDevice();
  const wrapped = await acquireDevice({ device });
  strictEqual(wrapped.adapter.description, gpu.adapter.description);
  wrapped.destroy();
  // Still usable: the wrapper did not destroy it.
  const again = await acquireDevice({ device });
  const [out] = await again.run(doublePlan(2), [new Float32Array([5, 6])]);
  deepStrictEqual([...out], [10, 12]);
  device.destroy();
});

gpuTest("describeAdapter reports the adapter and the target reasoning", (gpu) => {
  strictEqual(typeof gpu.adapter.description, "string");
  strictEqual(gpu.adapter.reason.length > 0, true);
  if (gpu.adapter.isFallbackAdapter) strictEqual(gpu.adapter.target, undefined);
  // f16 variants are only trusted after the known-answer check.
  if (!gpu.features.includes("shader-f16")) strictEqual(gpu.f16Verified, false);
});

gpuTest("a zeroed binding is cleared before its dispatch, so a reused accumulator starts from zero", async (gpu) => {
  const accumulate = DOUBLE_WGSL.replace("out[id.x] = 2.0 * x[id.x];", "out[id.x] = out[id.x] + x[id.x];");
  const plan = (zeroed: boolean): KernelPlan => {
    const p = doublePlan(3, accumulate, zeroed ? "kernel.zeroed" : "kernel.accumulate");
    return { ...p, bindings: [p.bindings[0], { ...p.bindings[1], zeroed }] };
  };
  const x = gpu.upload(new Float32Array([1, 2, 3]), "x");
  const out = gpu.alloc("f32", 3, "out");
  await gpu.submit([plan(false), [x, out]], [plan(false), [x, out]]);
  deepStrictEqual([...await gpu.read(out)], [2, 4, 6]);
  await gpu.submit([plan(true), [x, out]]);
  deepStrictEqual([...await gpu.read(out)], [1, 2, 3]);
  // In one submission (one compute pass, a new one where a dispatch's zeroed bindings are cleared):
  // each dispatch sees the one before it, and the clear lands between the second and the third.
  await gpu.submit([plan(false), [x, out]], [plan(true), [x, out]], [plan(false), [x, out]], [plan(false), [x, out]]);
  deepStrictEqual([...await gpu.read(out)], [3, 6, 9]);
  for (const t of [x, out]) t.buffer.destroy();
});

gpuTest("poisoned outputs expose unwritten elements and writes past the end", async (gpu) => {
  strictEqual(gpu.poisonOutputs, true);
  const skipsLast = DOUBLE_WGSL.replace("if (id.x < params.n)", "if (id.x + 1u < params.n)");
  const [out] = await gpu.run(doublePlan(3, skipsLast, "kernel.skips_last"), [new Float32Array([1, 2, 3])]);
  deepStrictEqual([out[0], out[1], Number.isNaN(out[2])], [2, 4, true]);
  const overruns = DOUBLE_WGSL.replace("if (id.x < params.n)", "if (id.x < params.n + 1u)");
  await assertThrowsMessage(
    () => gpu.run(doublePlan(3, overruns, "kernel.overruns"), [new Float32Array(3)]),
    "double/kernel.overruns: wrote past the end of out (element 3 of 3)",
  );
});

gpuTest("withLimits lowers limits for planning and running, and refuses to raise them", async (gpu) => {
  const low = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 5 });
  strictEqual(low.limits.maxComputeWorkgroupsPerDimension, 5);
  strictEqual(low.limits.maxStorageBufferBindingSize, gpu.limits.maxStorageBufferBindingSize);
  await assertThrowsMessage(
    () => low.run({ ...doublePlan(4), workgroups: 6 }, [new Float32Array(4)]),
    "maxComputeWorkgroupsPerDimension >= 6, but this device allows 5",
  );
  const [out] = await low.run(doublePlan(4), [new Float32Array([1, 2, 3, 4])]);
  deepStrictEqual([...out], [2, 4, 6, 8]);
  low.destroy(); // a view never destroys the device
  const [again] = await gpu.run(doublePlan(1), [new Float32Array([7])]);
  deepStrictEqual([...again], [14]);
  await assertThrowsMessage(
    () => gpu.withLimits({ maxBufferSize: gpu.limits.maxBufferSize + 1 }),
    "withLimits: maxBufferSize",
  );
});

gpuTest(
  "memory counts live buffers and their peak: alloc, destroy, transient buffers, views, the device's end",
  async (gpu) => {
    const before = gpu.memory;
    const a = gpu.alloc("f32", 1000, "a");
    const b = gpu.upload(new Float32Array(256), "b");
    // Sizes as created: 1000 f32 elements and 256, whatever the rounding a driver does.
    strictEqual(gpu.memory.bytes - before.bytes, a.buffer.size + b.buffer.size);
    strictEqual(gpu.memory.buffers - before.buffers, 2);
    strictEqual(gpu.withLimits({}).memory.bytes, gpu.memory.bytes, "a view shares its device's count");
    deepStrictEqual(gpu.liveBuffers(before.made), [`a (${a.buffer.size})`, `b (${b.buffer.size})`]);
    a.buffer.destroy();
    a.buffer.destroy(); // a second destroy is not counted twice
    deepStrictEqual(gpu.liveBuffers(before.made), [`b (${b.buffer.size})`]);
    strictEqual(gpu.memory.bytes - before.bytes, b.buffer.size);
    strictEqual(gpu.memory.buffers - before.buffers, 1);
    const peak = gpu.memory.peakBytes;
    strictEqual(peak >= before.bytes + a.buffer.size + b.buffer.size, true);
    // run() makes inputs, outputs, params and staging buffers and destroys them all before it returns.
    const live = gpu.memory.bytes;
    await gpu.run(doublePlan(4096), [new Float32Array(4096)]);
    strictEqual(gpu.memory.bytes, live, "run() leaves no buffer behind");
    strictEqual(gpu.memory.peakBytes >= live + 2 * 4096 * 4, true, "run()'s input and output were counted while alive");
    gpu.resetPeakMemory();
    strictEqual(gpu.memory.peakBytes, gpu.memory.bytes);
    b.buffer.destroy();
    strictEqual(gpu.memory.bytes, before.bytes);
    deepStrictEqual(gpu.liveBuffers(before.made), []);

    const own = await acquireDevice();
    own.alloc("f32", 64);
    strictEqual(own.memory.bytes >= 256, true);
    own.destroy();
    deepStrictEqual([own.memory.bytes, own.memory.buffers], [0, 0]);
  },
);
