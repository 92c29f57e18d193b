// Errors land on the call that caused them (concurrency), reads and tensors are checked against their
// buffers, a lost device fails every later call at once, and the runtime without WebGPU says so.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  acquireDevice,
  DeviceLostError,
  type GpuTensor,
  requireDevice,
  type ResidentDevice,
  tensorView,
} from "./device.ts";
import { LimitError } from "./limits.ts";
import { assertThrowsMessage, DOUBLE_WGSL, doublePlan, gpuTest } from "./testing.ts";

// The same kernel with a fixed-size output of 64 elements: WebGPU requires every buffer bound to
// `out` to hold at least 256 bytes. A plan that declares 4 elements passes every check of ours (its
// dtypes, lengths and limits are consistent) and only WebGPU's validation catches it.
const FIXED_OUT = DOUBLE_WGSL.replace("array<f32>;\n@group(0) @binding(2)", "array<f32, 64>;\n@group(0) @binding(2)");

const ramp = (n: number, from: number) => Float32Array.from({ length: n }, (_, i) => from + i);

gpuTest("concurrent runs: only the bad call rejects, and every good call returns its own result", async (gpu) => {
  strictEqual(FIXED_OUT.includes("array<f32, 64>"), true);
  const bad = doublePlan(4, FIXED_OUT, "kernel.fixed_out");
  const good = Array.from({ length: 6 }, (_, k) => ({ n: 50 + 13 * k, from: 100 * k }));
  const calls = [
    ...good.slice(0, 3).map(({ n, from }) => gpu.run(doublePlan(n), [ramp(n, from)])),
    gpu.run(bad, [ramp(4, 0)]),
    ...good.slice(3).map(({ n, from }) => gpu.run(doublePlan(n), [ramp(n, from)])),
  ];
  const settled = await Promise.allSettled(calls);
  const rejected = settled.flatMap((s, i) => (s.status === "rejected" ? [i] : []));
  deepStrictEqual(rejected, [3], `rejected calls: ${rejected.join(", ")}`);
  const reason = String((settled[3] as PromiseRejectedResult).reason);
  strictEqual(reason.includes("WebGPU rejected double/kernel.fixed_out [x: 4 f32, out: 4 f32]"), true, reason);
  const results = settled.filter((_, i) => i !== 3) as PromiseFulfilledResult<Float32Array[]>[];
  for (const [k, { n, from }] of good.entries()) {
    deepStrictEqual([...results[k].value[0]], [...ramp(n, from)].map((v) => 2 * v), `good call ${k}`);
  }
});

gpuTest("concurrent submits and reads on resident tensors: the error lands on the bad submit only", async (gpu) => {
  const n = 40;
  const x = gpu.upload(ramp(n, 1), "x");
  const outs = Array.from({ length: 4 }, (_, k) => gpu.alloc("f32", n, `out ${k}`));
  const small = gpu.alloc("f32", 4, "small out");
  try {
    const settled = await Promise.allSettled([
      gpu.submit([doublePlan(n), [x, outs[0]]]),
      gpu.submit([doublePlan(n), [x, outs[1]]]),
      gpu.submit([doublePlan(4, FIXED_OUT, "kernel.fixed_out"), [x, small]]),
      gpu.submit([doublePlan(n), [x, outs[2]]]),
      gpu.submit([doublePlan(n), [x, outs[3]]]),
    ]);
    deepStrictEqual(settled.map((s) => s.status), ["fulfilled", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
    const reads = await Promise.all(outs.map((t) => gpu.read(t)));
    for (const r of reads) deepStrictEqual([...r], [...ramp(n, 1)].map((v) => 2 * v));
  } finally {
    for (const t of [x, small, ...outs]) t.buffer.destroy();
  }
});

gpuTest("read refuses a tensor longer than its buffer, naming the buffer and the sizes", async (gpu) => {
  const t = gpu.alloc("f32", 4, "short buffer");
  try {
    await assertThrowsMessage(
      () => gpu.read({ ...t, length: 4096 }),
      'read of "short buffer": the tensor claims 4096 f32 elements (16384 bytes), but its buffer "short buffer" holds 16 bytes',
    );
  } finally {
    t.buffer.destroy();
  }
});

gpuTest("read of a destroyed buffer throws, naming it, instead of returning zeros", async (gpu) => {
  const t = gpu.upload(new Float32Array([1, 2, 3, 4]), "destroyed buffer");
  t.buffer.destroy();
  await assertThrowsMessage(
    () => gpu.read(t),
    /^WebGPU rejected read of "destroyed buffer" \(4 f32: 16 bytes of its 16\)/,
  );
  // The device still works afterwards.
  const u = gpu.upload(new Float32Array([5, 6]), "after");
  deepStrictEqual([...await gpu.read(u)], [5, 6]);
  u.buffer.destroy();
});

gpuTest("read of another device's buffer throws, naming it", async (gpu) => {
  const other = await acquireDevice();
  try {
    const foreign = other.upload(new Float32Array([1, 2, 3]), "other device's buffer");
    await assertThrowsMessage(() => gpu.read(foreign), /^WebGPU rejected read of "other device's buffer"/);
  } finally {
    other.destroy();
  }
});

gpuTest("encode refuses a tensor that claims more elements than its buffer holds, naming the binding", async (gpu) => {
  const n = 4096;
  const x = gpu.upload(ramp(n, 0), "x");
  const tiny = gpu.alloc("f32", 4, "tiny");
  try {
    const liar: GpuTensor = { buffer: tiny.buffer, dtype: "f32", length: n };
    await assertThrowsMessage(
      () => gpu.submit([doublePlan(n), [x, liar]]),
      'double/kernel: binding 1 (out): the tensor claims 4096 f32 elements (16384 bytes), but its buffer "tiny" holds 16 bytes',
    );
    await assertThrowsMessage(
      () => gpu.submit([doublePlan(n), [x, { ...x, dtype: "i32" }]]),
      "double/kernel: binding 1 (out) expects 4096 f32, got 4096 i32",
    );
    await assertThrowsMessage(
      () => gpu.submit([doublePlan(n), [x, { ...x, length: -1 }]]),
      "double/kernel: binding 1 (out): length must be a non-negative integer, got -1",
    );
  } finally {
    x.buffer.destroy();
    tiny.buffer.destroy();
  }
});

gpuTest("alloc refuses a dtype that is not a TensorDtype", (gpu) => {
  for (const dtype of ["f64", "f16", "", undefined]) {
    let error: unknown;
    try {
      gpu.alloc(dtype as "f32", 4, "wide");
    } catch (e) {
      error = e;
    }
    strictEqual(String(error), `Error: wide: dtype must be one of f32, i32, u32, got ${String(dtype)}`);
  }
});

/** Every call of a lost device must fail at once with a DeviceLostError, "device lost: <reason>". */
async function assertAllRefused(gpu: ResidentDevice, resident: GpuTensor, reason: RegExp): Promise<void> {
  const calls: [string, () => unknown][] = [
    ["upload", () => gpu.upload(new Float32Array(4), "late")],
    ["alloc", () => gpu.alloc("f32", 4, "late")],
    ["read", () => gpu.read(resident)],
    ["run", () => gpu.run(doublePlan(4), [new Float32Array(4)])],
    ["submit", () => gpu.submit([doublePlan(4), [resident, resident]])],
  ];
  for (const [name, call] of calls) {
    let error: unknown;
    try {
      await call();
    } catch (e) {
      error = e;
    }
    strictEqual(error instanceof DeviceLostError && reason.test(error.message), true, `${name}: ${String(error)}`);
    strictEqual(reason.test(`device lost: ${(error as DeviceLostError).reason}`), true, `${name}: its reason`);
    strictEqual((error as Error).message.includes("acquireDevice()"), true, `${name} says how to get a new device`);
  }
}

gpuTest("after destroy(), every call fails at once with 'device lost: destroyed'", async () => {
  // A device of its own: the shared test device must survive this test.
  const gpu = await acquireDevice();
  const t = gpu.upload(new Float32Array([1, 2, 3, 4]), "t");
  strictEqual(gpu.lost, undefined);
  gpu.destroy();
  const lost = gpu.lost as string | undefined;
  strictEqual(lost?.startsWith("destroyed"), true, String(lost));
  await assertAllRefused(gpu, t, /^device lost: destroyed/);
  // A view made before the loss shares it.
  await assertThrowsMessage(() => gpu.withLimits({}).alloc("f32", 1), /^device lost: destroyed/);
});

gpuTest("a caller's device that is lost: device.lost is watched and every later call fails", async () => {
  const device = await (await navigator.gpu.requestAdapter())!.requestDevice();
  const gpu = await acquireDevice({ device });
  const view = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 100 });
  const t = gpu.upload(new Float32Array([1, 2, 3, 4]), "t");
  device.destroy(); // the caller's doing: our wrapper learns of it only through device.lost
  const info = await device.lost;
  strictEqual(gpu.lost !== undefined, true);
  strictEqual(gpu.lost!.startsWith(String(info.reason)), true, `${gpu.lost} vs ${info.reason}`);
  await assertAllRefused(gpu, t, /^device lost: /);
  await assertAllRefused(view, t, /^device lost: /);
});

gpuTest(
  "a caller's device destroyed by the caller: every call refused at once, before device.lost settles",
  async () => {
    const device = await (await navigator.gpu.requestAdapter())!.requestDevice();
    const gpu = await acquireDevice({ device });
    const t = gpu.upload(new Float32Array([1, 2, 3, 4]), "t");
    const program = gpu.program("double", [[doublePlan(4), [t, gpu.alloc("f32", 4)]]]);
    let settled = false;
    device.lost.then(() => settled = true);
    device.destroy(); // no await after it: device.lost settles a macrotask later
    strictEqual(settled, false);
    strictEqual(gpu.lost, "destroyed (GPUDevice.destroy())");
    await assertAllRefused(gpu, t, /^device lost: destroyed \(GPUDevice\.destroy\(\)\)/);
    // A replayed program would otherwise run on nothing and read back nothing, silently.
    await assertThrowsMessage(
      () => program.run(),
      /^device lost: destroyed \(GPUDevice\.destroy\(\)\) \(program "double"/,
    );
    // A second view over the same device, made after its loss, knows it too.
    await assertThrowsMessage(async () => (await acquireDevice({ device })).alloc("f32", 1), /^device lost: destroyed/);
    strictEqual(settled, false, "all of the above was refused before device.lost settled");
  },
);

gpuTest(
  "requireDevice: anything but a live ResidentDevice is named as gpu, a lost one is DeviceLostError",
  async () => {
    const device = await (await navigator.gpu.requestAdapter())!.requestDevice();
    const cases: [unknown, string][] = [
      [undefined, "op: gpu must be a ResidentDevice (from acquireDevice()), got undefined"],
      [null, "op: gpu must be a ResidentDevice (from acquireDevice()), got null"],
      ["gpu", 'op: gpu must be a ResidentDevice (from acquireDevice()), got "gpu"'],
      [{}, "op: gpu must be a ResidentDevice (from acquireDevice()), got an object without the device's members"],
      [
        device,
        "op: gpu must be a ResidentDevice (from acquireDevice()), got a GPUDevice: wrap it once with acquireDevice({ device })",
      ],
    ];
    for (const [gpu, message] of cases) await assertThrowsMessage(() => requireDevice("op", gpu), message);
    const gpu = await acquireDevice({ device });
    requireDevice("op", gpu);
    device.destroy();
    let error: unknown;
    try {
      requireDevice("softmax", gpu);
    } catch (e) {
      error = e;
    }
    strictEqual(error instanceof DeviceLostError, true, String(error));
    strictEqual(
      (error as Error).message,
      "device lost: destroyed (GPUDevice.destroy()) (softmax refused; acquireDevice() gives a new device)",
    );
  },
);

gpuTest("a caller's device without adapterInfo (an older runtime) is described, not a TypeError", async (gpu) => {
  const real = gpu.device;
  const old = {
    features: new Set<string>(), // no shader-f16: the known-answer f16 check is not run on this stand-in
    limits: real.limits,
    lost: new Promise<GPUDeviceLostInfo>(() => {}),
  } as unknown as GPUDevice;
  const wrapped = await acquireDevice({ device: old });
  strictEqual(wrapped.adapter.description, "unknown (the device has no adapterInfo)");
  strictEqual(wrapped.adapter.target, undefined);
});

Deno.test("acquireDevice without navigator.gpu says there is no WebGPU in this runtime", async () => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, "navigator")!;
  for (const stand of [undefined, {}]) {
    Object.defineProperty(globalThis, "navigator", { value: stand, configurable: true, writable: true });
    try {
      await assertThrowsMessage(() => acquireDevice(), /^no WebGPU in this runtime \(navigator\.gpu is undefined\)/);
    } finally {
      Object.defineProperty(globalThis, "navigator", saved);
    }
  }
  strictEqual(typeof navigator.gpu, "object");
});

gpuTest("withErrorScopes refuses asynchronous work, whose later part would escape the scopes", async (gpu) => {
  await assertThrowsMessage(
    () => gpu.withErrorScopes(() => "async work", () => Promise.resolve(1)),
    "withErrorScopes (async work): work must be synchronous",
  );
  strictEqual(await gpu.withErrorScopes(() => "unused", () => 7), 7);
});

gpuTest(
  "every ResidentDevice method refuses what is not a plan, a step, a tensor list or an encoder, by name",
  async (gpu) => {
    const t = gpu.alloc("f32", 4, "t");
    const plan = doublePlan(4);
    const calls: [string, () => unknown, string][] = [
      ["run(undefined)", () => gpu.run(undefined as never, []), "ResidentDevice.run: plan must be a KernelPlan"],
      ["run({})", () => gpu.run({} as never, []), "ResidentDevice.run: plan must be a KernelPlan"],
      [
        "run(plan, undefined)",
        () => gpu.run(plan, undefined as never),
        "double/kernel: inputs must be an array of host arrays",
      ],
      [
        "submit(undefined)",
        () => gpu.submit(undefined as never),
        "ResidentDevice.submit: step 0 must be a [plan, tensors] pair",
      ],
      [
        "submit([{}, []])",
        () => gpu.submit([{} as never, []]),
        "ResidentDevice.submit: step 0: plan must be a KernelPlan",
      ],
      [
        "submit([plan, 1])",
        () => gpu.submit([plan, 1 as never]),
        "ResidentDevice.submit: step 0: tensors must be an array",
      ],
      ["bind(undefined, [])", () => gpu.bind(undefined as never, []), "ResidentDevice: plan must be a KernelPlan"],
      ["bind(plan, undefined)", () => gpu.bind(plan, undefined as never), "double/kernel: tensors must be an array"],
      [
        "program(x, undefined)",
        () => gpu.program("x", undefined as never),
        'ResidentDevice.program "x": steps must be an array',
      ],
      [
        "program(x, [7])",
        () => gpu.program("x", [7 as never]),
        'ResidentDevice.program "x": step 0 must be a bound dispatch',
      ],
      [
        "encode(undefined, ...)",
        () => gpu.encode(undefined as never, plan, [t, t]),
        "ResidentDevice.encode: encoder must be",
      ],
      [
        "submitSequence(undefined)",
        () => gpu.submitSequence(undefined as never, []),
        "ResidentDevice: sequence must be",
      ],
      ["upload(undefined)", () => gpu.upload(undefined as never, "u"), 'upload of "u": data must be a Float32Array'],
      ["withLimits(undefined)", () => gpu.withLimits(undefined as never), "withLimits: lowered must be an object"],
      ["resolve(undefined)", () => gpu.resolve(undefined as never, "kernel"), "resolve: sources must be"],
      ["withErrorScopes(1, 2)", () => gpu.withErrorScopes(1 as never, 2 as never), "withErrorScopes: what and work"],
    ];
    for (const [what, call, message] of calls) {
      let error: unknown;
      try {
        await call();
      } catch (e) {
        error = e;
      }
      strictEqual(error instanceof Error && !(error instanceof TypeError), true, `${what}: ${String(error)}`);
      strictEqual((error as Error).message.startsWith(message), true, `${what}: ${(error as Error).message}`);
    }
    t.buffer.destroy();
  },
);

gpuTest("tensorView, withLimits and alloc name the argument they refuse", async (gpu) => {
  const t = gpu.alloc("f32", 8, "t");
  for (const tensor of [undefined, null, {}, 42]) {
    await assertThrowsMessage(() => tensorView(tensor as never, 0, 1), "tensorView: tensor must be a GpuTensor");
  }
  await assertThrowsMessage(
    () => tensorView(t, 6, 4),
    "tensorView: elements [6, 10) are not within the tensor's 8 (first + length must be <= 8)",
  );
  await assertThrowsMessage(() => gpu.withLimits([1] as never), "withLimits: lowered must be an object of limits");
  await assertThrowsMessage(
    () => gpu.alloc("f32", 2 ** 40, "big"),
    "big: length 1099511627776 (f32) needs maxBufferSize",
  );
  const narrow = gpu.withLimits({ maxBufferSize: 32 });
  const error = (() => {
    try {
      narrow.alloc("f32", 16, "x");
    } catch (e) {
      return e;
    }
  })();
  ok(error instanceof LimitError && error.limit === "maxBufferSize", String(error));
  t.buffer.destroy();
});
