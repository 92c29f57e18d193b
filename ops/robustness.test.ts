/**
 * The robustness suite: what a careless or hostile caller does to every op, the device and its
 * programs, answered with a clear Error naming the argument (or a right result), never a TypeError,
 * a hang or a silent zero. Generated from `ops/registry.ts`, so it grows with every op:
 *
 * - Bad device, every entry point: each function an op's `mod.ts` exports whose first parameter is
 *   `gpu: ResidentDevice` (its plans, GPU calls and plan helpers), called with no device, `null`, a
 *   string, `{}`, a bare `GPUDevice`, a device its owner destroyed, and one destroyed by the caller
 *   who owns it (a macrotask before `device.lost` settles): "<op>: gpu must be a ResidentDevice", or
 *   a DeviceLostError, before anything else is looked at.
 * - Bad sizes, every bench case's plan: each numeric field of a case's first quick shape (and each
 *   element of a field that is a list of sizes) set to NaN, ±Infinity, -1, 1.5, a string, `null` or
 *   `undefined`, then to 2^31, 2^32, 2^40 and 1e300, and all sizes scaled by 2^11 and 2^16 at once
 *   (products past every WGSL type): an Error starting with the op's name, never a raw JavaScript
 *   error, never a kernel's internal parameter name; NaN, Infinity and -1 are refused (or ignored,
 *   when the plan made is the valid shape's own).
 * - Lifecycle: programs and tensors used after their device, their own destroy() or their buffer's.
 * - Concurrency: calls of several ops in flight at once, one of them failing in WebGPU's validation:
 *   only it rejects, naming its op, and every other returns its reference's result.
 *
 * Arguments of the `*Gpu` calls (arrays, their lengths and types) are held to one validation per op
 * by `ops/validate.test.ts`, from a table of valid calls; this suite needs no such table.
 */
import { ok, strictEqual } from "node:assert/strict";
import { acquireDevice, DeviceLostError, type KernelPlan, type ResidentDevice } from "../harness/device.ts";
import { LimitError } from "../harness/limits.ts";
import { isSequence, type Timed } from "../harness/timing.ts";
import { assertClose, gpuTest } from "../harness/testing.ts";
import { BENCH_CASES, OPS } from "./registry.ts";
import { deviceEntryPoints } from "./calls_test_util.ts";
import { elementwise, elementwiseGpu, elementwisePlan, softmax, softmaxGpu, softmaxPlan } from "../mod.ts";

const ENTRY_POINTS = await deviceEntryPoints();

/** What `fn` throws or rejects with, or `undefined` when it returns. */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** A clear refusal: an Error (not a TypeError, RangeError or ReferenceError) whose message starts with a name. */
function assertClear(error: unknown, label: string): asserts error is Error {
  ok(error instanceof Error, `${label}: threw ${String(error)}, not an Error`);
  ok(
    !(error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError),
    `${label}: a raw ${error.name}: ${error.message}`,
  );
  ok(
    /^[\w.]+(\/[\w.]+)?: |^WebGPU rejected \w+/.test(error.message),
    `${label}: the message does not start with the op: ${error.message}`,
  );
  ok(!/param "/.test(error.message), `${label}: the message names a kernel's internal parameter: ${error.message}`);
}

/** A device and a caller's GPUDevice destroyed (by this library and by the caller), made once. */
async function lostDevices(): Promise<{ own: ResidentDevice; callers: ResidentDevice }> {
  const own = await acquireDevice();
  own.destroy();
  const device = await (await navigator.gpu.requestAdapter())!.requestDevice();
  const callers = await acquireDevice({ device });
  device.destroy(); // no await after it: device.lost has not settled when the calls below run
  return { own, callers };
}

Deno.test("the suite finds every op's entry points: at least a plan and a GPU call per registered op", () => {
  for (const { name: op } of OPS) {
    const names = ENTRY_POINTS.filter((e) => e.op === op).map((e) => e.name);
    ok(names.some((n) => n.endsWith("Plan") || n.endsWith("Plans")), `${op}: no plan found among ${names}`);
    ok(names.some((n) => n.endsWith("Gpu")), `${op}: no GPU call found among ${names}`);
  }
  ok(ENTRY_POINTS.length >= 2 * OPS.length);
});

gpuTest("every entry point refuses a bad device first, naming gpu; a lost one with DeviceLostError", async () => {
  const { own, callers } = await lostDevices();
  const bare = await (await navigator.gpu.requestAdapter())!.requestDevice();
  try {
    const bad: [string, unknown, RegExp][] = [
      ["undefined", undefined, /^\w+: gpu must be a ResidentDevice \(from acquireDevice\(\)\), got undefined$/],
      ["null", null, /^\w+: gpu must be a ResidentDevice \(from acquireDevice\(\)\), got null$/],
      ["a string", "gpu", /^\w+: gpu must be a ResidentDevice \(from acquireDevice\(\)\), got "gpu"$/],
      ["{}", {}, /^\w+: gpu must be a ResidentDevice \(from acquireDevice\(\)\), got an object without/],
      ["a GPUDevice", bare, /^\w+: gpu must be a ResidentDevice .*, got a GPUDevice: wrap it once with acquireDevice/],
    ];
    for (const { op, name, fn } of ENTRY_POINTS) {
      for (const [what, gpu, message] of bad) {
        const label = `${op}: ${name}(${what}, {})`;
        const error = await thrown(() => fn(gpu, {}));
        assertClear(error, label);
        ok(message.test(error.message), `${label}: ${error.message}`);
      }
      for (const [what, gpu] of [["destroyed by destroy()", own], ["destroyed by its owner", callers]] as const) {
        const label = `${op}: ${name}(a device ${what}, {})`;
        const error = await thrown(() => fn(gpu, {}));
        ok(error instanceof DeviceLostError, `${label}: ${String(error)}`);
        ok(
          /^device lost: destroyed \(.*\) \(\w+ refused; acquireDevice\(\) gives a new device\)$/.test(error.message),
          label,
        );
      }
    }
  } finally {
    bare.destroy();
  }
});

/** A plan's observable description, to tell a plan made from a bad shape from the valid shape's own. */
function describe(timed: Timed): string {
  const plans: KernelPlan[] = isSequence(timed) ? timed.steps.map((s) => s.plan) : [timed];
  return JSON.stringify(plans.map((p) => ({
    variant: p.kernel.variant,
    bindings: p.bindings,
    workgroups: p.workgroups,
    params: p.params ? [...new Uint8Array(p.params)] : [],
  })));
}

/** The first quick shape of each op's entry point: a valid shape the suite bends. */
const SHAPES = (() => {
  const seen = new Set<string>();
  return BENCH_CASES.flatMap((c) => {
    const key = `${c.op}/${c.entry}`;
    if (seen.has(key)) return [];
    seen.add(key);
    return [{ key, case: c, shape: c.shapes.quick[0].value as Record<string, unknown> }];
  });
})();

/** Values a size must be refused for (NaN survives any arithmetic a bench case does with it). */
const REFUSED: [string, unknown][] = [["NaN", NaN], ["Infinity", Infinity], ["-Infinity", -Infinity], ["-1", -1]];
/** Values that must give a clear answer, whatever it is (a default for undefined, a plan for a size that fits). */
const ANSWERED: [string, unknown][] = [
  ["1.5", 1.5],
  ['"2"', "2"],
  ["null", null],
  ["undefined", undefined],
  ["2^31", 2 ** 31],
  ["2^32", 2 ** 32],
  ["2^40", 2 ** 40],
  ["1e300", 1e300],
];

gpuTest("every plan: bad and huge sizes are refused by name or answered, never a raw error or a kernel's name", (
  gpu,
) => {
  let calls = 0;
  for (const { key, case: c, shape } of SHAPES) {
    // A shape this device cannot run (flash_attention's tiled entry past its workgroup memory) is
    // refused by a LimitError; a bent shape must then be refused too, never planned.
    let base: string | undefined;
    try {
      base = describe(c.plan(gpu, shape, {}));
    } catch (e) {
      ok(e instanceof LimitError, `${key}: its own shape: ${String(e)}`);
    }
    const numeric = Object.keys(shape).filter((k) => typeof shape[k] === "number");
    const trials: [string, Record<string, unknown>, boolean][] = [];
    for (const field of numeric) {
      for (const [what, value] of REFUSED) trials.push([`${field} = ${what}`, { ...shape, [field]: value }, true]);
      for (const [what, value] of ANSWERED) trials.push([`${field} = ${what}`, { ...shape, [field]: value }, false]);
    }
    // Sizes held in arrays (reduce's and permute's shape, a convolution's per-axis kernelSize): each
    // element bent alike.
    const lists = Object.keys(shape).filter((k) =>
      Array.isArray(shape[k]) && (shape[k] as unknown[]).every((v) => typeof v === "number")
    );
    for (const field of lists) {
      const list = shape[field] as number[];
      for (const i of list.keys()) {
        const at = (value: unknown) => ({ ...shape, [field]: list.map((v, j) => (j === i ? value : v)) });
        for (const [what, value] of REFUSED) trials.push([`${field}[${i}] = ${what}`, at(value), true]);
        for (const [what, value] of ANSWERED) trials.push([`${field}[${i}] = ${what}`, at(value), false]);
      }
    }
    for (const scale of [2 ** 11, 2 ** 16]) {
      const scaled = Object.fromEntries(
        Object.entries(shape).map(([k, v]) => [
          k,
          typeof v === "number" ? v * scale : lists.includes(k) ? (v as number[]).map((x) => x * scale) : v,
        ]),
      );
      trials.push([`every size x ${scale}`, scaled, false]);
    }
    for (const [what, bent, refused] of trials) {
      const label = `${key} with ${what}`;
      calls++;
      let made: Timed | undefined;
      let error: unknown;
      try {
        made = c.plan(gpu, bent, {});
      } catch (e) {
        error = e;
      }
      if (error === undefined) {
        // A shape a bench case coerced or an op ignored: only a refused value must not make a new plan.
        if (refused) strictEqual(describe(made!), base, `${label}: a plan was made from it`);
        continue;
      }
      assertClear(error, label);
      if (error instanceof LimitError) continue; // names the limit, the value and the op
      // It names a size of the shape (or one the op derives from it, with what was expected).
      const named = Object.keys(shape).some((k) => new RegExp(`(^|[^\\w])${k}([^\\w]|$)`).test(error.message));
      ok(
        named || / must | needs | exceed| refused| over | required| expected| no samples/.test(error.message),
        `${label}: names no size and says nothing expected: ${error.message}`,
      );
    }
  }
  ok(calls > 20 * SHAPES.length, `${calls} calls`);
});

gpuTest("lifecycle: programs and tensors after their device, their destroy() or their buffer's", async () => {
  const gpu = await acquireDevice();
  const x = gpu.upload(new Float32Array([1, 2, 3, 4, 5, 6]), "x");
  const out = gpu.alloc("f32", 6, "out");
  const program = gpu.program("softmax", [[softmaxPlan(gpu, { rows: 2, cols: 3 }), [x, out]]]);
  await program.run();
  assertClose(
    await gpu.read(out) as Float32Array,
    softmax({ x: new Float32Array([1, 2, 3, 4, 5, 6]), rows: 2, cols: 3 }),
    {
      atol: 1e-6,
      rtol: 0,
    },
  );
  // A destroyed program refuses, naming itself.
  const other = gpu.program("twice", [[softmaxPlan(gpu, { rows: 2, cols: 3 }), [x, out]]]);
  other.destroy();
  other.destroy(); // twice is harmless
  strictEqual(String(await thrown(() => other.run())), 'Error: program "twice" was destroyed');
  // A tensor whose buffer was destroyed: its read and a submit on it name it, never zeros.
  const gone = gpu.upload(new Float32Array(6), "gone");
  gone.buffer.destroy();
  const read = await thrown(() => gpu.read(gone));
  assertClear(read, "read of a destroyed buffer");
  ok(read.message.startsWith('WebGPU rejected read of "gone"'), read.message);
  const submitted = await thrown(() => gpu.submit([softmaxPlan(gpu, { rows: 2, cols: 3 }), [gone, out]]));
  assertClear(submitted, "submit on a destroyed buffer");
  ok(submitted.message.startsWith("WebGPU rejected softmax/"), submitted.message);
  // The device destroyed: the program, a plan, a read and a one-shot call all say so.
  gpu.destroy();
  for (
    const [what, call] of [
      ["program.run", () => program.run()],
      ["softmaxPlan", () => softmaxPlan(gpu, { rows: 2, cols: 3 })],
      ["softmaxGpu", () => softmaxGpu(gpu, { x: new Float32Array(6), rows: 2, cols: 3 })],
      ["read", () => gpu.read(out)],
      ["upload", () => gpu.upload(new Float32Array(2))],
    ] as const
  ) {
    const error = await thrown(call);
    ok(error instanceof DeviceLostError, `${what}: ${String(error)}`);
  }
  program.destroy();
});

gpuTest(
  "lifecycle: a caller's device destroyed by the caller refuses work at once, never reads back zeros",
  async () => {
    const device = await (await navigator.gpu.requestAdapter())!.requestDevice();
    const gpu = await acquireDevice({ device });
    const a = gpu.upload(new Float32Array([1, 2, 3, 4]), "a");
    const sum = gpu.alloc("f32", 4, "sum");
    const program = gpu.program("add", [[elementwisePlan(gpu, { op: "add", n: 4 }), [a, a, sum]]]);
    device.destroy();
    // Each of these used to be accepted (upload, alloc, a program's run) or to fail with WebGPU's
    // bare "validation error occurred" (the one-shot call and the read).
    for (
      const [what, call] of [
        ["upload", () => gpu.upload(new Float32Array(4))],
        ["alloc", () => gpu.alloc("f32", 4)],
        ["program.run", () => program.run()],
        ["submit", () => gpu.submit([elementwisePlan(gpu, { op: "add", n: 4 }), [a, a, sum]])],
        ["elementwiseGpu", () => elementwiseGpu(gpu, { op: "add", a: new Float32Array(4), b: new Float32Array(4) })],
        ["read", () => gpu.read(sum)],
      ] as const
    ) {
      const error = await thrown(call);
      ok(error instanceof DeviceLostError, `${what}: ${String(error)}`);
      ok(error.message.startsWith("device lost: destroyed (GPUDevice.destroy())"), error.message);
    }
    program.destroy();
  },
);

gpuTest("concurrency: calls of several ops in flight at once; the failing one rejects alone, naming its op", async (
  gpu,
) => {
  const data = (n: number, seed: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(seed + i));
  const gone = gpu.upload(new Float32Array(12), "gone");
  gone.buffer.destroy();
  const out = gpu.alloc("f32", 12, "out");
  const calls: [string, Promise<unknown>, (() => Float32Array) | undefined][] = [];
  for (let k = 0; k < 4; k++) {
    const x = data(12, k);
    calls.push([`softmax ${k}`, softmaxGpu(gpu, { x, rows: 3, cols: 4 }), () => softmax({ x, rows: 3, cols: 4 })]);
    const a = data(12, 10 + k), b = data(12, 20 + k);
    calls.push([`add ${k}`, elementwiseGpu(gpu, { op: "add", a, b }), () => elementwise({ op: "add", a, b })]);
    if (k === 2) {
      // In flight between good calls: a submit on a destroyed buffer, which only WebGPU's validation sees.
      calls.push(["the bad submit", gpu.submit([softmaxPlan(gpu, { rows: 3, cols: 4 }), [gone, out]]), undefined]);
    }
  }
  const settled = await Promise.allSettled(calls.map(([, p]) => p));
  for (const [i, [what, , reference]] of calls.entries()) {
    const s = settled[i];
    if (reference === undefined) {
      ok(s.status === "rejected", `${what} was not refused`);
      assertClear(s.reason, what);
      ok(s.reason.message.startsWith("WebGPU rejected softmax/"), s.reason.message);
      continue;
    }
    ok(s.status === "fulfilled", `${what}: ${s.status === "rejected" ? s.reason : ""}`);
    assertClose(s.value as Float32Array, reference(), { atol: 1e-6, rtol: 1e-6 }, what);
  }
  // Programs replayed concurrently keep their own results.
  const x1 = gpu.upload(data(8, 1)), x2 = gpu.upload(data(8, 2));
  const y1 = gpu.alloc("f32", 8), y2 = gpu.alloc("f32", 8);
  const p1 = gpu.program("one", [[softmaxPlan(gpu, { rows: 2, cols: 4 }), [x1, y1]]]);
  const p2 = gpu.program("two", [[softmaxPlan(gpu, { rows: 2, cols: 4 }), [x2, y2]]]);
  await Promise.all([p1.run(), p2.run(), p1.run(), p2.run()]);
  assertClose(await gpu.read(y1) as Float32Array, softmax({ x: data(8, 1), rows: 2, cols: 4 }), {
    atol: 1e-6,
    rtol: 0,
  });
  assertClose(await gpu.read(y2) as Float32Array, softmax({ x: data(8, 2), rows: 2, cols: 4 }), {
    atol: 1e-6,
    rtol: 0,
  });
  p1.destroy();
  p2.destroy();
  for (const t of [out, x1, x2, y1, y2]) t.buffer.destroy();
});
