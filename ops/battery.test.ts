/**
 * The hostile-caller battery over the ops and the harness: thousands of bad, edge and concurrent calls,
 * generated from the table of valid calls (`ops/calls_test_util.ts`) and from every op's exports, each
 * sorted by `harness/battery_test_util.ts` into clear / vague / crash / hang / silent / refused / ok.
 * The suite fails on any crash, hang, silent wrong answer or refused valid call, and on more vague
 * refusals than {@link VAGUE_BUDGET}; `BATTERY_SUMMARY=<file>` writes the counts (`ops/battery.json`
 * holds the last ones committed, with those of `llm/battery.test.ts` and `models/battery.test.ts`, and the
 * same battery's counts before the fixes it led to) and `BATTERY_FINDINGS=<file>` every call that was not
 * clear or ok.
 *
 * - device: every entry point whose first parameter is the device, given no device, `null`, numbers,
 *   strings, `{}`, an array, a function, a bare `GPUDevice`, an un-awaited `acquireDevice()`, and devices
 *   lost every way (destroyed by this library, by their owner before `device.lost` settles, after it
 *   settles, and a `withLimits` view of one).
 * - fields: every field of every op's valid call, in the reference, the GPU call and the plan: a size as
 *   0, -1, 2.5, NaN, ±Infinity, "3", 2^40, 1e39, null, true, {} and [3]; a string or boolean field with
 *   wrong values and types; each element of a list of sizes; each array too long, empty, of another
 *   type, a plain array, an ArrayBuffer, null or missing, and a valid array that is a view into a larger
 *   buffer (which must give the same answer). The reference decides what an edge value means (0 rows,
 *   -1 as a dim); the GPU call must agree with it, and when both accept, give its answer.
 * - options: options that are not objects, unknown keys, overrides that are not variant names.
 * - lifecycle and concurrency: every GPU call and plan after its device is destroyed; every GPU call in
 *   flight when its caller destroys the device (its reference's answer or a DeviceLostError, never
 *   zeros); every GPU call at once on one device with bad calls in between (only those fail).
 * - harness: the size helpers, `packParams`, `tensorView`, `alloc`, `upload`, `read`, `withLimits`.
 */
import { ok } from "node:assert/strict";
import { acquireDevice, DeviceLostError, kernelSequence, type ResidentDevice, tensorView } from "../harness/device.ts";
import { checkDispatch, foldWorkgroups, LimitError, workgroupSizeOf } from "../harness/limits.ts";
import { packParams } from "../harness/params.ts";
import { rowLayout, streamWorkgroups } from "../harness/grid.ts";
import { gpuTest } from "../harness/testing.ts";
import { describeAdapter, detectTarget } from "../harness/target.ts";
import { entriesOf, parseVariantName, variantsOf } from "../harness/variants.ts";
import * as bench from "../harness/bench_api.ts";
import { Tally, type Trial, writeSummary } from "../harness/battery_test_util.ts";
import { type AnyArgs, CASES, deviceEntryPoints, type Loose, type OpCase } from "./calls_test_util.ts";
import { channelNormLayout, fusedGemvLayout, gatherBlockRows, packSampleOptions, softmaxPlan } from "../mod.ts";
import { groupNormSplit } from "./group_norm/mod.ts";
import { collapsePermutation } from "./permute/mod.ts";
import {
  KERNELS as FLASH_KERNELS,
  layoutStrides,
  rowsPerWorkgroup,
  visiblePairs,
  workgroupBytes,
} from "./flash_attention/mod.ts";

/** At most this many refusals may fail to name the argument and what was expected (the bar). */
const VAGUE_BUDGET = 20;

const ENTRY_POINTS = await deviceEntryPoints();
const TALLY = new Tally();
const LOST = [DeviceLostError] as const;

/** What `fn` returns or throws, settled. */
async function settle(fn: () => unknown): Promise<{ value: unknown } | { error: unknown }> {
  try {
    return { value: await fn() };
  } catch (error) {
    return { error };
  }
}

/** A description of how `actual` differs from `expected` (typed arrays, numbers, objects of them), or undefined. */
function differs(actual: unknown, expected: unknown, path = "result"): string | undefined {
  if (ArrayBuffer.isView(expected) && ArrayBuffer.isView(actual)) {
    const a = actual as unknown as ArrayLike<number>, e = expected as unknown as ArrayLike<number>;
    if (a.length !== e.length) return `${path}: length ${a.length}, the reference's ${e.length}`;
    for (let i = 0; i < e.length; i++) {
      const [x, y] = [Number(a[i]), Number(e[i])];
      if (Number.isNaN(y) ? !Number.isNaN(x) : !(Math.abs(x - y) <= 1e-4 + 1e-3 * Math.abs(y) || x === y)) {
        return `${path}[${i}] = ${x}, the reference's ${y}`;
      }
    }
    return undefined;
  }
  if (typeof expected === "number" && typeof actual === "number") {
    return Math.abs(actual - expected) <= 1e-4 + 1e-3 * Math.abs(expected) || Object.is(actual, expected)
      ? undefined
      : `${path} = ${actual}, the reference's ${expected}`;
  }
  if (expected !== null && typeof expected === "object" && actual !== null && typeof actual === "object") {
    for (const key of Object.keys(expected)) {
      const d = differs((actual as AnyArgs)[key], (expected as AnyArgs)[key], `${path}.${key}`);
      if (d) return d;
    }
    return undefined;
  }
  return Object.is(actual, expected) ? undefined : `${path} = ${String(actual)}, the reference's ${String(expected)}`;
}

/** Fresh copies of the typed arrays of `args` (an op may write into `out`). */
function fresh(args: AnyArgs): AnyArgs {
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => [k, ArrayBuffer.isView(v) ? (v as Float32Array).slice() : v]),
  );
}

/** A device lost every way, and things that are not devices. */
async function badDevices(): Promise<[string, unknown, boolean][]> {
  const adapter = (await navigator.gpu.requestAdapter())!;
  const own = await acquireDevice({ adapter });
  const view = own.withLimits({});
  own.destroy();
  const settledDevice = await adapter.requestDevice();
  const settled = await acquireDevice({ device: settledDevice });
  settledDevice.destroy();
  await settledDevice.lost;
  const bare = await adapter.requestDevice();
  const callersDevice = await adapter.requestDevice();
  const callers = await acquireDevice({ device: callersDevice });
  callersDevice.destroy(); // device.lost has not settled when the calls run
  const pending = acquireDevice({ adapter });
  pending.then((gpu) => gpu.destroy());
  return [
    ["undefined", undefined, false],
    ["null", null, false],
    ["0", 0, false],
    ["42", 42, false],
    ['"gpu"', "gpu", false],
    ["true", true, false],
    ["{}", {}, false],
    ["[]", [], false],
    ["a function", () => {}, false],
    ["a bare GPUDevice", bare, false],
    ["acquireDevice() not awaited", pending, false],
    ["a device destroyed by destroy()", own, true],
    ["a withLimits view of a destroyed device", view, true],
    ["a caller's device destroyed before lost settles", callers, true],
    ["a caller's device after lost settled", settled, true],
  ];
}

gpuTest("battery: device — every entry point refuses what is not a live ResidentDevice, naming gpu", async () => {
  const devices = await badDevices();
  const trials: Trial[] = [];
  for (const { op, name, fn } of ENTRY_POINTS) {
    const c = CASES.find((c) => c.gpu === fn || c.plan === fn);
    const shape = c ? (fn === c.gpu ? fresh(c.args) : c.shape) : {};
    for (const [what, gpu, lost] of devices) {
      trials.push({
        family: "device",
        label: `${op}: ${name}(${what})`,
        expect: "refuse",
        names: ["gpu"],
        clearAs: lost ? LOST : undefined,
        run: () => fn(gpu, shape),
      });
    }
  }
  await TALLY.run(trials);
});

type Caller = "reference" | "gpu" | "plan";

/** The values a field is bent to, by the type of its valid value, each with whether it must be refused. */
function bends(value: unknown, optional: boolean): [string, unknown, "refuse" | "either"][] {
  const nullable = optional ? "either" : "refuse";
  if (typeof value === "number") {
    return [
      ["0", 0, "either"],
      ["-1", -1, "either"],
      ["2.5", 2.5, "either"],
      ["NaN", NaN, "refuse"],
      ["Infinity", Infinity, "refuse"],
      ["-Infinity", -Infinity, "refuse"],
      ['"3"', "3", "refuse"],
      ["2^40", 2 ** 40, "either"],
      ["1e39", 1e39, "refuse"],
      ["null", null, nullable],
      ["true", true, "refuse"],
      ["{}", {}, "refuse"],
      ["[3]", [3], "either"], // a per-axis size as a list (conv's kernelSize); the reference decides
    ];
  }
  if (typeof value === "boolean") {
    return [["1", 1, "refuse"], ['"true"', "true", "refuse"], ["null", null, nullable], ["{}", {}, "refuse"]];
  }
  if (typeof value === "string") {
    return [
      ['"nope"', "nope", "refuse"],
      ['""', "", "refuse"],
      ["upper case", value.toUpperCase() === value ? value.toLowerCase() : value.toUpperCase(), "refuse"],
      ["3", 3, "refuse"],
      ["null", null, nullable],
      ["{}", {}, "refuse"],
    ];
  }
  if (ArrayBuffer.isView(value)) {
    const a = value as Float32Array;
    const Kind = a.constructor as Float32ArrayConstructor;
    const Other = (Kind === Float32Array ? Int32Array : Float32Array) as unknown as Float32ArrayConstructor;
    return [
      ["one element more", new Kind(a.length + 1), "either"],
      ["empty", new Kind(0), "either"],
      ["a Float64Array", new Float64Array(a.length), "refuse"],
      [`a ${Other.name}`, new Other(a.length), "refuse"],
      ["a plain array", Array.from(a), "refuse"],
      ["an ArrayBuffer", new ArrayBuffer(a.byteLength), "refuse"],
      ["null", null, nullable],
      ["undefined", undefined, nullable],
    ];
  }
  return [["null", null, nullable], ["42", 42, "refuse"], ['"x"', "x", "refuse"]];
}

/** Bent copies of a list of sizes (reduce's shape, permute's dims, rope's axesDims, a convolution's padding). */
function listBends(list: number[]): [string, unknown[], "refuse" | "either"][] {
  const out: [string, unknown[], "refuse" | "either"][] = [];
  for (const i of list.keys()) {
    for (
      const [what, v, expect] of [
        ["NaN", NaN, "refuse"],
        ["-1", -1, "either"],
        ["2.5", 2.5, "refuse"],
        ['"3"', "3", "refuse"],
        ["2^40", 2 ** 40, "either"],
        ["null", null, "refuse"],
      ] as const
    ) out.push([`[${i}] = ${what}`, list.map((x, j) => (i === j ? v : x)), expect]);
  }
  out.push(["[]", [], "either"]);
  return out;
}

/** Whether the reference refused a bent value for its own sake (naming it), not for an array's length. */
function refusedByName(r: { error: unknown } | { value: unknown }, field: string): boolean {
  if (!("error" in r) || !(r.error instanceof Error)) return false;
  const m = r.error.message;
  return new RegExp(`(^|[^\\w])${field}([^\\w.\\[]|$)`).test(m) && !/ have length /.test(m);
}

/** The trials of one op's valid call with one field bent in each of its entry points. */
async function fieldTrials(gpu: ResidentDevice, c: OpCase): Promise<Trial[]> {
  const trials: Trial[] = [];
  const reference = await settle(() => c.reference(fresh(c.args)));
  const base = await settle(() => c.gpu(gpu, fresh(c.args)));
  // The valid call itself: accepted by the three, the GPU call giving the reference's answer.
  trials.push({
    family: "fields",
    label: `${c.op}: the valid call`,
    expect: "accept",
    run: () => c.gpu(gpu, fresh(c.args)),
    check: (v) => "value" in reference ? differs(v, reference.value) : "its reference refuses it",
  });
  const comparable = "value" in reference && "value" in base && differs(base.value, reference.value) === undefined;
  const fields = new Set([...Object.keys(c.args), ...Object.keys(c.shape)]);
  for (const field of fields) {
    const valid = field in c.args ? c.args[field] : c.shape[field];
    const optional = c.optional?.includes(field) ?? false;
    const variants: [string, unknown, "refuse" | "either"][] = Array.isArray(valid) &&
        valid.every((v) => typeof v === "number")
      ? listBends(valid as number[])
      : bends(valid, optional);
    if (ArrayBuffer.isView(valid)) {
      // A valid array that is a view into a larger buffer: the same answer.
      const a = valid as Float32Array;
      const Kind = a.constructor as Float32ArrayConstructor;
      const view = new Kind(a.length + 3).subarray(3);
      view.set(a);
      variants.push(["a view into a larger buffer", view, "either"]);
    }
    for (const [what, value, expect] of variants) {
      const bent = (record: AnyArgs) => ({ ...fresh(record), [field]: value });
      const inArgs = field in c.args;
      const verdict = inArgs ? await settle(() => c.reference(bent(c.args))) : undefined;
      const callers: [Caller, Loose | undefined, AnyArgs][] = [
        ["reference", inArgs ? c.reference : undefined, c.args],
        ["gpu", inArgs ? (a: AnyArgs) => c.gpu(gpu, a) : undefined, c.args],
        ["plan", c.plan && field in c.shape ? (s: AnyArgs) => c.plan!(gpu, s) : undefined, c.shape],
      ];
      for (const [caller, call, record] of callers) {
        if (!call) continue;
        let must: Trial["expect"] = expect;
        let check: Trial["check"];
        if (caller === "gpu" && verdict) {
          // The GPU call agrees with its reference; accepted by both, it gives the reference's answer.
          must = "error" in verdict ? "refuse" : expect === "refuse" ? "refuse" : "accept";
          if ("value" in verdict && comparable) check = (v) => differs(v, verdict.value);
        }
        if (caller === "plan" && verdict && refusedByName(verdict, field)) must = "refuse";
        trials.push({
          family: "fields",
          label: `${c.op}: ${caller}(${field} = ${what})`,
          expect: must,
          names: [field, field.split(".")[0]],
          clearAs: [LimitError],
          run: () => call(bent(record)),
          check,
        });
      }
    }
  }
  return trials;
}

gpuTest("battery: fields — every field of every op's call bent, in the reference, the GPU call and the plan", async (
  gpu,
) => {
  for (const c of CASES) await TALLY.run(await fieldTrials(gpu, c));
});

gpuTest("battery: options — not an object, unknown keys, overrides that name no variant", async (gpu) => {
  const trials: Trial[] = [];
  for (const c of CASES) {
    const callers: [string, Loose][] = [];
    if (c.gpu.length >= 3) callers.push(["gpu", (o: unknown) => c.gpu(gpu, fresh(c.args), o)]);
    if (c.plan && c.plan.length >= 3) callers.push(["plan", (o: unknown) => c.plan!(gpu, c.shape, o)]);
    for (const [caller, call] of callers) {
      const cases: [string, unknown, Trial["expect"], string[]][] = [
        ["42", 42, "refuse", ["options", "option"]],
        ['"kernel"', "kernel", "refuse", ["options", "option"]],
        ["true", true, "refuse", ["options", "option"]],
        ["null", null, "either", ["options", "option"]],
        ["{ override: 42 }", { override: 42 }, "refuse", ["override"]],
        ['{ override: "nope" }', { override: "nope" }, "refuse", ["override", "nope"]],
        ['{ override: "" }', { override: "" }, "refuse", ["override"]],
        ["{ override: {} }", { override: {} }, "refuse", ["override"]],
        ["{ bogus: 1 }", { bogus: 1 }, "refuse", ["bogus"]],
        ["{ override: undefined }", { override: undefined }, "accept", []],
        ...(c.optionKeys ?? []).map((key): [string, unknown, Trial["expect"], string[]] => [
          `{ ${key}: "nope" }`,
          { [key]: "nope" },
          "refuse",
          [key],
        ]),
      ];
      for (const [what, options, expect, names] of cases) {
        trials.push({
          family: "options",
          label: `${c.op}: ${caller}(options = ${what})`,
          expect,
          names,
          run: () => call(options),
        });
      }
    }
  }
  await TALLY.run(trials);
});

gpuTest(
  "battery: lifecycle — every GPU call and plan after destroy(); every GPU call in flight when the caller destroys its device",
  async () => {
    const adapter = (await navigator.gpu.requestAdapter())!;
    const own = await acquireDevice({ adapter });
    own.destroy();
    const trials: Trial[] = [];
    for (const c of CASES) {
      trials.push({
        family: "lifecycle",
        label: `${c.op}: gpu call after destroy()`,
        expect: "refuse",
        clearAs: LOST,
        names: [],
        run: () => c.gpu(own, fresh(c.args)),
      });
      if (c.plan) {
        trials.push({
          family: "lifecycle",
          label: `${c.op}: plan after destroy()`,
          expect: "refuse",
          clearAs: LOST,
          names: [],
          run: () => c.plan!(own, c.shape),
        });
      }
    }
    await TALLY.run(trials);
    // In flight: every call started, then the device destroyed in the same task, by its caller (a
    // GPUDevice given to acquireDevice) and by this library (ResidentDevice.destroy()), and a third time
    // after one macrotask, with some calls' work submitted.
    for (const [who, delay] of [["its caller", 0], ["destroy()", 0], ["destroy() a macrotask later", 1]] as const) {
      const device = await adapter.requestDevice();
      const gpu = who === "its caller" ? await acquireDevice({ device }) : await acquireDevice({ adapter });
      const started = CASES.map((c) => ({ c, promise: settle(() => c.gpu(gpu, fresh(c.args))) }));
      if (delay) await new Promise((resolve) => setTimeout(resolve, 0));
      if (who === "its caller") device.destroy();
      else gpu.destroy();
      if (who !== "its caller") device.destroy();
      for (const { c, promise } of started) {
        const reference = await settle(() => c.reference(fresh(c.args)));
        await TALLY.run([{
          family: "lifecycle",
          label: `${c.op}: gpu call in flight when ${who} destroys its device`,
          expect: "either",
          clearAs: LOST,
          names: [],
          run: async () => {
            const r = await promise;
            if ("error" in r) throw r.error;
            return r.value;
          },
          check: (v) => "value" in reference ? differs(v, reference.value) : undefined,
        }]);
      }
    }
  },
);

gpuTest("battery: concurrency — every GPU call at once, bad calls among them; only the bad ones fail", async (gpu) => {
  const gone = gpu.upload(new Float32Array(12), "gone");
  gone.buffer.destroy();
  const out = gpu.alloc("f32", 12, "out");
  const calls: { trial: Trial; promise: Promise<{ value: unknown } | { error: unknown }> }[] = [];
  for (const [i, c] of CASES.entries()) {
    const reference = await settle(() => c.reference(fresh(c.args)));
    calls.push({
      trial: {
        family: "concurrency",
        label: `${c.op}: a good call among bad ones`,
        expect: "accept",
        run: () => undefined,
        check: (v) => "value" in reference ? differs(v, reference.value) : "its reference refuses it",
      },
      promise: settle(() => c.gpu(gpu, fresh(c.args))),
    });
    const bad = i % 2 === 0
      ? () => c.gpu(gpu, { ...fresh(c.args), colls: 3 })
      : () => gpu.submit([softmaxPlan(gpu, { rows: 3, cols: 4 }), [gone, out]]);
    calls.push({
      trial: {
        family: "concurrency",
        label: `${c.op}: a bad call beside it (${i % 2 === 0 ? "unknown argument" : "a destroyed buffer"})`,
        expect: "refuse",
        names: i % 2 === 0 ? ["colls"] : ["softmax/kernel", "gone"],
        run: () => undefined,
      },
      promise: settle(bad),
    });
  }
  for (const { trial, promise } of calls) {
    const r = await promise;
    await TALLY.run([{
      ...trial,
      run: () => {
        if ("error" in r) throw r.error;
        return r.value;
      },
    }]);
  }
  out.buffer.destroy();
});

gpuTest(
  "battery: limits — every GPU call on a device seen through tiny limits: a LimitError or the right answer",
  async (
    gpu,
  ) => {
    const views: [string, ResidentDevice][] = [
      ["maxStorageBufferBindingSize 16", gpu.withLimits({ maxStorageBufferBindingSize: 16 })],
      ["maxBufferSize 32", gpu.withLimits({ maxBufferSize: 32 })],
      ["maxComputeWorkgroupsPerDimension 1", gpu.withLimits({ maxComputeWorkgroupsPerDimension: 1 })],
      ["maxComputeInvocationsPerWorkgroup 1", gpu.withLimits({ maxComputeInvocationsPerWorkgroup: 1 })],
      ["maxStorageBuffersPerShaderStage 2", gpu.withLimits({ maxStorageBuffersPerShaderStage: 2 })],
    ];
    const trials: Trial[] = [];
    for (const c of CASES) {
      const reference = await settle(() => c.reference(fresh(c.args)));
      for (const [what, view] of views) {
        trials.push({
          family: "limits",
          label: `${c.op}: gpu call under ${what}`,
          expect: "either",
          names: [],
          clearAs: [LimitError],
          run: () => c.gpu(view, fresh(c.args)),
          check: (v) => "value" in reference ? differs(v, reference.value) : "its reference refuses it",
        });
      }
    }
    await TALLY.run(trials);
  },
);

gpuTest("battery: arguments — odd but valid argument objects and arrays give the reference's answer", async (gpu) => {
  const trials: Trial[] = [];
  const shared = (a: Float32Array) => {
    const Kind = a.constructor as Float32ArrayConstructor;
    const out = new Kind(new SharedArrayBuffer(a.byteLength));
    out.set(a);
    return out;
  };
  for (const c of CASES) {
    const reference = await settle(() => c.reference(fresh(c.args)));
    const check = (v: unknown) => "value" in reference ? differs(v, reference.value) : "its reference refuses it";
    const variants: [string, () => AnyArgs][] = [
      ["a frozen arguments object", () => Object.freeze(fresh(c.args))],
      ["an arguments object without a prototype", () => Object.assign(Object.create(null), fresh(c.args))],
      ["an instance of a class", () => Object.assign(new (class Args {})(), fresh(c.args))],
      ["every array over a SharedArrayBuffer", () =>
        Object.fromEntries(
          Object.entries(fresh(c.args)).map(([k, v]) => [k, ArrayBuffer.isView(v) ? shared(v as Float32Array) : v]),
        )],
    ];
    for (const [what, args] of variants) {
      for (
        const [caller, run] of [["reference", () => c.reference(args())], ["gpu", () => c.gpu(gpu, args())]] as const
      ) {
        trials.push({ family: "arguments", label: `${c.op}: ${caller} with ${what}`, expect: "accept", run, check });
      }
    }
  }
  // Tensors of one device used on another: refused naming the call, never zeros.
  const other = await acquireDevice();
  const x = other.upload(new Float32Array(6), "x of another device");
  const out = gpu.alloc("f32", 6, "out");
  trials.push({
    family: "arguments",
    label: "submit on tensors of another device",
    expect: "refuse",
    names: ["softmax/kernel", "x of another device"],
    run: () => gpu.submit([softmaxPlan(gpu, { rows: 2, cols: 3 }), [x, out]]),
  });
  trials.push({
    family: "arguments",
    label: "read of a tensor of another device",
    expect: "refuse",
    names: ["x of another device"],
    run: () => gpu.read(x),
  });
  await TALLY.run(trials);
  other.destroy();
  out.buffer.destroy();
});

gpuTest(
  "battery: device methods — run, submit, bind, program, submitSequence, resolve, kernelSequence with bad arguments",
  async (
    gpu,
  ) => {
    const plan = softmaxPlan(gpu, { rows: 2, cols: 3 });
    const x = gpu.upload(new Float32Array(6), "x");
    const out = gpu.alloc("f32", 6, "out");
    const ints = gpu.alloc("i32", 6, "ints");
    const short = gpu.alloc("f32", 2, "short");
    const BAD: [string, unknown][] = [
      ["undefined", undefined],
      ["null", null],
      ["42", 42],
      ['"x"', "x"],
      ["{}", {}],
      ["[]", []],
    ];
    const trials: Trial[] = [];
    const add = (label: string, run: () => unknown, names: string[] = []) =>
      trials.push({ family: "methods", label, expect: "refuse", names, clearAs: [LimitError], run });
    for (const [what, bad] of BAD) {
      add(`run(plan = ${what})`, () => gpu.run(bad as never, [new Float32Array(6)]), ["plan"]);
      add(`run(plan, inputs = ${what})`, () => gpu.run(plan, bad as never), ["inputs", "x"]);
      add(`run(plan, [${what}])`, () => gpu.run(plan, [bad] as never), ["x"]);
      add(`submit(${what})`, () => gpu.submit(bad as never), ["plan", "step", "tensors"]);
      add(`submit([plan, ${what}])`, () => gpu.submit([plan, bad as never]), ["tensors"]);
      add(`submit([plan, [x, ${what}]])`, () => gpu.submit([plan, [x, bad as never]]), ["binding 1 (out)", "out"]);
      add(`bind(${what}, [x, out])`, () => gpu.bind(bad as never, [x, out]), ["plan"]);
      add(`bind(plan, ${what})`, () => gpu.bind(plan, bad as never), ["tensors"]);
      if (what !== "[]") add(`program("p", ${what})`, () => gpu.program("p", bad as never), ["steps", "step", "p"]);
      add(`program("p", [${what}])`, () => gpu.program("p", [bad] as never), ["step", "p", "plan"]);
      add(`submitSequence(${what}, [x, out])`, () => gpu.submitSequence(bad as never, [x, out]), ["sequence"]);
      add(`resolve(${what}, "kernel")`, () => gpu.resolve(bad as never, "kernel"), ["sources"]);
      if (what !== "[]") {
        add(
          `kernelSequence("op", ${what}, [], [], cost)`,
          () => kernelSequence("op", bad as never, [], [], plan.cost),
          [
            "bindings",
          ],
        );
      }
      add(
        `kernelSequence("op", bindings, [], [{ plan, tensors: ${what} }], cost)`,
        () => kernelSequence("op", plan.bindings, [], [{ plan, tensors: bad as never }], plan.cost),
        ["tensors", "step 0"],
      );
    }
    add("run(plan, [Float32Array(5)])", () => gpu.run(plan, [new Float32Array(5)]), ["x"]);
    add("run(plan, [Int32Array(6)])", () => gpu.run(plan, [new Int32Array(6)]), ["x"]);
    add("run(plan, [])", () => gpu.run(plan, []), ["x", "inputs"]);
    add("submit([plan, [x]])", () => gpu.submit([plan, [x]]), ["tensors", "bindings", "out"]);
    add("submit([plan, [x, ints]])", () => gpu.submit([plan, [x, ints]]), ["out", "binding 1 (out)", "ints"]);
    add("submit([plan, [x, short]])", () => gpu.submit([plan, [x, short]]), ["out", "binding 1 (out)", "short"]);
    add("submit([plan, [x, x]]) (one buffer read and written)", () => gpu.submit([plan, [x, x]]), [
      "x",
      "softmax/kernel",
    ]);
    add('resolve({ kernel }, "nope")', () => gpu.resolve({ kernel: "" }, "nope"), ["nope"]);
    add(
      "kernelSequence with a tensor index past the end",
      () => kernelSequence("op", plan.bindings, [], [{ plan, tensors: [0, 7] }], plan.cost),
      ["binding 1 (out)", "step 0"],
    );
    await TALLY.run(trials);
    for (const t of [x, out, ints, short]) t.buffer.destroy();
  },
);

gpuTest("battery: bench API — the timing, probe and bench entry points with bad devices, arguments and options", async (
  gpu,
) => {
  const plan = softmaxPlan(gpu, { rows: 2, cols: 4 });
  const inputs = () => [new Float32Array(8)];
  const gpuFirst: [string, (g: unknown) => unknown][] = [
    ["warmClocks", (g) => bench.warmClocks(g as never, { ms: 1 })],
    ["timePlan", (g) => bench.timePlan(g as never, plan, inputs, { samples: 5, warmup: 0 })],
    ["timeEncoding", (g) => bench.timeEncoding(g as never, "x", () => {}, { samples: 5 })],
    ["probeAdapter", (g) => bench.probeAdapter(g as never)],
    ["runBench", (g) => bench.runBench(g as never, [], {} as never)],
    ["measureRoofline", (g) => bench.measureRoofline(g as never, { size: "small" })],
  ];
  const trials: Trial[] = [];
  const lost = await acquireDevice();
  lost.destroy();
  for (const [name, call] of gpuFirst) {
    for (const [what, g] of [["undefined", undefined], ["{}", {}], ["42", 42], ["a destroyed device", lost]] as const) {
      trials.push({
        family: "bench",
        label: `${name}(${what})`,
        expect: "refuse",
        names: ["gpu"],
        clearAs: LOST,
        run: () => call(g),
      });
    }
  }
  const refuse = (label: string, run: () => unknown, names: string[]) =>
    trials.push({ family: "bench", label, expect: "refuse", names, run });
  for (
    const [what, options, names] of [
      ["samples 0", { samples: 0 }, ["samples"]],
      ["samples 2.5", { samples: 2.5 }, ["samples"]],
      ['samples "5"', { samples: "5" }, ["samples"]],
      ["samples NaN", { samples: NaN }, ["samples"]],
      ["warmup -1", { warmup: -1 }, ["warmup"]],
      ["a misspelt key", { sampels: 5 }, ["sampels"]],
      ["options 42", 42, ["options"]],
    ] as const
  ) {
    refuse(`timePlan(options = ${what})`, () => bench.timePlan(gpu, plan, inputs, options as never), [...names]);
    refuse(`timeEncoding(options = ${what})`, () => bench.timeEncoding(gpu, "x", () => {}, options as never), [
      ...names,
    ]);
  }
  refuse("warmClocks(a misspelt key)", () => bench.warmClocks(gpu, { msec: 1 } as never), ["msec"]);
  refuse("timePlan(plan = undefined)", () => bench.timePlan(gpu, undefined as never, inputs), ["plan"]);
  refuse("timePlan(makeInputs = undefined)", () => bench.timePlan(gpu, plan, undefined as never), ["makeInputs"]);
  refuse("timePlan(makeInputs giving 3 elements)", () => bench.timePlan(gpu, plan, () => [new Float32Array(3)]), ["x"]);
  refuse("timeEncoding(encode = undefined)", () => bench.timeEncoding(gpu, "x", undefined as never), ["encode"]);
  refuse("timeProgram(program = {})", () => bench.timeProgram(gpu, {} as never), ["program"]);
  refuse("timeResident(plan, sets = undefined)", () => bench.timeResident(gpu, plan, undefined as never), ["sets"]);
  refuse("parseReport(undefined)", () => bench.parseReport(undefined as never, "r.json"), ["text"]);
  refuse('parseReport("{}")', () => bench.parseReport("{}", "r.json"), ["device", "r.json"]);
  refuse("compareReports(undefined, undefined)", () => bench.compareReports(undefined as never, undefined as never), [
    "baseline",
  ]);
  refuse("defineCase(undefined)", () => bench.defineCase(undefined as never), ["spec"]);
  refuse('defaultConfigs("nope")', () => bench.defaultConfigs("nope" as never), ["size"]);
  refuse("randomInput(-1, 1)", () => bench.randomInput(-1, 1), ["length"]);
  await TALLY.run(trials);
});

/** Bad sizes of a helper's numeric argument, with whether each must be refused. */
const SIZES: [string, unknown, "refuse" | "either"][] = [
  ["0", 0, "either"],
  ["-1", -1, "refuse"],
  ["2.5", 2.5, "refuse"],
  ["NaN", NaN, "refuse"],
  ["Infinity", Infinity, "refuse"],
  ['"3"', "3", "refuse"],
  ["2^40", 2 ** 40, "either"],
  ["null", null, "refuse"],
];

gpuTest("battery: harness — size helpers, params, views, alloc, upload, read and withLimits with bad values", async (
  gpu,
) => {
  const t = gpu.alloc("f32", 8, "t");
  const helpers: [string, string[], unknown[], Loose][] = [
    ["rowLayout", ["rows", "cols", "perInvocation", "maxPerDimension"], [4, 8, 1, 65535], rowLayout],
    ["streamWorkgroups", ["elements", "blockElements", "maxPerDimension"], [64, 16, 65535], streamWorkgroups],
    ["foldWorkgroups", ["count", "maxPerDimension"], [100, 65535], foldWorkgroups],
    ["tensorView", ["tensor", "first", "length"], [t, 2, 4], tensorView],
    ["alloc", ["dtype", "length"], ["f32", 4], (d: unknown, n: unknown) => gpu.alloc(d as "f32", n as number)],
    [
      "withLimits",
      ["maxStorageBufferBindingSize"],
      [1024],
      (v: unknown) => gpu.withLimits({ maxStorageBufferBindingSize: v as number }),
    ],
    [
      "packParams",
      ["n"],
      [3],
      (n: unknown) => packParams([{ name: "n", type: "u32" }], { n: n as number }, "demo"),
    ],
    [
      "checkDispatch",
      ["workgroups"],
      [[4, 1, 1]],
      (w: unknown) =>
        checkDispatch(gpu.limits, {
          where: "demo",
          workgroups: w as [number, number, number],
          workgroupSize: [64, 1, 1],
          storage: [],
        }),
    ],
  ];
  const trials: Trial[] = [];
  for (const [name, params, valid, fn] of helpers) {
    trials.push({ family: "harness", label: `${name}(valid)`, expect: "accept", run: () => fn(...valid) });
    for (const [i, param] of params.entries()) {
      const values: [string, unknown, "refuse" | "either"][] = typeof valid[i] === "number"
        ? [...SIZES]
        : [["undefined", undefined, "refuse"], ["null", null, "refuse"], ["42", 42, "refuse"], ["{}", {}, "refuse"]];
      if (typeof valid[i] === "number") {
        values.push(["undefined", undefined, name === "withLimits" ? "either" : "refuse"]);
      }
      for (const [what, value, expect] of values) {
        const args = valid.map((v, j) => (j === i ? value : v));
        trials.push({
          family: "harness",
          label: `${name}(${param} = ${what})`,
          expect,
          names: [param],
          clearAs: [LimitError],
          run: () => fn(...args),
        });
      }
    }
  }
  for (
    const [what, value] of [
      ["undefined", undefined],
      ["null", null],
      ["a plain array", [1, 2]],
      ["a Float64Array", new Float64Array(2)],
      ["an ArrayBuffer", new ArrayBuffer(8)],
      ["a string", "12"],
    ] as const
  ) {
    trials.push({
      family: "harness",
      label: `upload(${what})`,
      expect: "refuse",
      names: ["data"],
      run: () => gpu.upload(value as unknown as Float32Array),
    });
    trials.push({
      family: "harness",
      label: `read(${what})`,
      expect: "refuse",
      names: ["tensor"],
      run: () => gpu.read(value as never),
    });
    trials.push({
      family: "harness",
      label: `packParams(layout = ${what})`,
      expect: "refuse",
      names: ["layout"],
      run: () => packParams(value as never, {}, "demo"),
    });
    trials.push({
      family: "harness",
      label: `workgroupSizeOf(${what})`,
      expect: "refuse",
      names: ["source"],
      run: () => workgroupSizeOf(value as never, "demo"),
    });
    trials.push({
      family: "harness",
      label: `withLimits(${what})`,
      expect: typeof value === "object" && value !== null && !ArrayBuffer.isView(value) && !Array.isArray(value)
        ? "either"
        : "refuse",
      names: ["lowered"],
      run: () => gpu.withLimits(value as never),
    });
  }
  for (
    const [what, options, names] of [
      ["42", 42, ["options"]],
      ['"x"', "x", ["options"]],
      ["{ device: 42 }", { device: 42 }, ["device"]],
      ["{ device: {} }", { device: {} }, ["device"]],
      ["{ adapter: {} }", { adapter: {} }, ["adapter"]],
      ['{ powerPreference: "x" }', { powerPreference: "x" }, ["powerPreference"]],
      ["{ devise: 1 }", { devise: 1 }, ["devise"]],
    ] as const
  ) {
    trials.push({
      family: "harness",
      label: `acquireDevice(${what})`,
      expect: "refuse",
      names: [...names],
      run: () => acquireDevice(options as never),
    });
  }
  for (const [what, value] of [["undefined", undefined], ["null", null], ["42", 42], ['"x"', "x"]] as const) {
    const record = typeof value === "string" ? "either" : "refuse";
    for (
      const [name, run, names] of [
        ["describeAdapter", () => describeAdapter(value as never), ["adapter"]],
        ["detectTarget", () => detectTarget(value as never), ["info"]],
        ["variantsOf", () => variantsOf(value as never, "kernel"), ["sources"]],
        ["entriesOf", () => entriesOf(value as never), ["sources"]],
      ] as const
    ) {
      trials.push({ family: "harness", label: `${name}(${what})`, expect: "refuse", names: [...names], run });
    }
    trials.push({
      family: "harness",
      label: `parseVariantName(${what})`,
      expect: record,
      names: ["fileName", "x"],
      run: () => parseVariantName(value as never),
    });
  }
  await TALLY.run(trials);
  t.buffer.destroy();
});

gpuTest("battery: helpers — the plan-building helpers the ops export, with bad sizes and shapes", async (gpu) => {
  const attention = { B: 1, H: 2, kvHeads: 1, L: 3, S: 4, D: 4, Dv: 4, causal: true, queryOffset: 1, layout: "BHLD" };
  const helpers: [string, string[], unknown[], Loose][] = [
    ["channelNormLayout", ["shape"], [{ N: 1, C: 4, L: 3 }], channelNormLayout],
    ["groupNormSplit", ["shape"], [{ N: 1, C: 4, L: 3, groups: 2 }], groupNormSplit],
    ["collapsePermutation", ["shape", "dims"], [[2, 3, 4], [2, 0, 1]], collapsePermutation],
    ["fusedGemvLayout", ["format", "rows"], ["q8", 64], fusedGemvLayout],
    ["gatherBlockRows", ["gpu", "cols"], [gpu, 8], gatherBlockRows],
    ["visiblePairs", ["shape"], [attention], visiblePairs],
    ["layoutStrides", ["shape"], [attention], layoutStrides],
    ["workgroupBytes", ["source"], [FLASH_KERNELS.tiled], workgroupBytes],
    ["rowsPerWorkgroup", ["source"], [FLASH_KERNELS.tiled], rowsPerWorkgroup],
    ["packSampleOptions", ["options"], [{ temperature: 0.8, topK: 3, seed: 1 }], packSampleOptions],
  ];
  const trials: Trial[] = [];
  for (const [name, params, valid, fn] of helpers) {
    trials.push({ family: "helpers", label: `${name}(valid)`, expect: "accept", run: () => fn(...valid) });
    for (const [i, arg] of valid.entries()) {
      if (arg === gpu) continue;
      const bent = (value: unknown) => valid.map((v, j) => (j === i ? value : v));
      for (const [what, value] of [["undefined", undefined], ["null", null], ["42", 42], ['"x"', "x"]] as const) {
        if (typeof arg === typeof value) continue;
        trials.push({
          family: "helpers",
          label: `${name}(${params[i]} = ${what})`,
          expect: "refuse",
          names: [params[i]],
          run: () => fn(...bent(value)),
        });
      }
      const fields: [string, unknown, (v: unknown) => unknown][] = typeof arg === "number"
        ? [[params[i], arg, (v) => v]]
        : Array.isArray(arg)
        ? arg.map((x, k) => [`${params[i]}[${k}]`, x, (v) => arg.map((y, m) => (m === k ? v : y))])
        : arg !== null && typeof arg === "object"
        ? Object.entries(arg).filter(([, x]) => typeof x === "number").map((
          [key, x],
        ) => [key, x, (v) => ({ ...arg, [key]: v })])
        : [];
      for (const [field, , put] of fields) {
        for (const [what, value, expect] of SIZES) {
          trials.push({
            family: "helpers",
            label: `${name}(${field} = ${what})`,
            expect: what === "2.5" || what === "-1" || what === "null" ? "either" : expect,
            names: [field, params[i]],
            clearAs: [LimitError],
            run: () => fn(...bent(put(value))),
          });
        }
      }
    }
  }
  await TALLY.run(trials);
});

gpuTest("battery: the counts — no crash, hang, silent answer or refused valid call; few vague refusals", async () => {
  const total = TALLY.total();
  const path = Deno.env.get("BATTERY_SUMMARY");
  if (path) await writeSummary(path, "ops", TALLY);
  const findings = Deno.env.get("BATTERY_FINDINGS");
  if (findings) await Deno.writeTextFile(findings, TALLY.report(Infinity) + "\n");
  const bad = total.crash + total.hang + total.silent + total.refused;
  console.log(`ops battery: ${JSON.stringify(total)}`);
  ok(bad === 0 && total.vague <= VAGUE_BUDGET, `${JSON.stringify(total)}\n${TALLY.report()}`);
  ok(total.calls > 5000, `${total.calls} calls`);
});
