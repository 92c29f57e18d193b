/**
 * One validation per op, checked across every op at once: each `<op>Plan` refuses a bad shape with
 * exactly the message the reference gives for the same bad argument, and a missing argument (the
 * whole object, or one field of it) fails with an error naming the op and the argument, never a
 * TypeError from reading a property of undefined. A plan that returns several plans (attention's
 * `{ scores, weightedSum }`, gqa's and group_norm's `{ path, steps }`) is called through a `plan` that
 * returns its first; melSpectrogram has no plan of its own (it submits stft's, powerSpectrum's and mel's).
 */
import { ok, strictEqual } from "node:assert/strict";
import type { KernelPlan, ResidentDevice } from "../harness/device.ts";
import { assertThrowsMessage, gpuTest } from "../harness/testing.ts";
import { type AnyArgs, CASES } from "./calls_test_util.ts";
import { F32_MAX, I32_MAX, requireArgs, requireF32, requireInt, U32_MAX } from "./validate.ts";

/** The message `fn` throws, failing if it returns or throws something other than an Error. */
async function messageOf(fn: () => unknown, label: string): Promise<string> {
  try {
    await fn();
  } catch (error) {
    ok(error instanceof Error, `${label}: threw ${String(error)}, not an Error`);
    ok(!(error instanceof TypeError), `${label}: a raw TypeError: ${error.message}`);
    return error.message;
  }
  throw new Error(`${label}: did not throw`);
}

/** Whether `message` names `field` as a word (so "D" is not found inside "Dv" or "Float32Array"). */
function names(message: string, field: string): boolean {
  const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`(^|[^A-Za-z0-9_])${escaped}([^A-Za-z0-9_]|$)`).test(message);
}

/** A copy of `record` without `field`. */
function without(record: AnyArgs, field: string): AnyArgs {
  const copy = { ...record };
  delete copy[field];
  return copy;
}

Deno.test("every reference: valid arguments pass, and a missing argument is named", async () => {
  for (const c of CASES) {
    c.reference(c.args);
    for (const missing of [undefined, null, 7]) {
      const message = await messageOf(() => c.reference(missing), `${c.op}(${missing})`);
      ok(message.startsWith(`${c.op}: args must be an object {`), `${c.op}(${missing}): ${message}`);
    }
    for (const field of Object.keys(c.args)) {
      if (c.optional?.includes(field)) continue;
      const message = await messageOf(() => c.reference(without(c.args, field)), `${c.op} without ${field}`);
      ok(message.startsWith(`${c.op}: `) && names(message, field), `${c.op} without ${field}: ${message}`);
    }
  }
});

gpuTest("every plan refuses what its reference refuses, with the same message", async (gpu: ResidentDevice) => {
  for (const c of CASES) {
    const plan = c.plan;
    if (plan) {
      ok((plan(gpu, c.shape) as KernelPlan).bindings.length > 0, `${c.op}: a plan for the valid shape`);
      for (const missing of [undefined, null]) {
        const message = await messageOf(() => plan(gpu, missing), `${c.op}Plan(${missing})`);
        ok(message.startsWith(`${c.op}: shape must be an object {`), `${c.op}Plan(${missing}): ${message}`);
      }
    }
    for (const [field, value, named] of c.bad) {
      const label = `${c.op} with ${field} = ${JSON.stringify(value) ?? String(value)}`;
      const fromReference = await messageOf(() => c.reference({ ...c.args, [field]: value }), `${label} (reference)`);
      if (plan) {
        const fromPlan = await messageOf(() => plan(gpu, { ...c.shape, [field]: value }), `${label} (plan)`);
        strictEqual(fromPlan, fromReference, `${label}: the plan and the reference disagree`);
      }
      const fromGpu = await messageOf(() => c.gpu(gpu, { ...c.args, [field]: value }), `${label} (gpu)`);
      strictEqual(fromGpu, fromReference, `${label}: the GPU call and the reference disagree`);
      ok(fromReference.startsWith(`${c.op}: `) && names(fromReference, named), `${label}: ${fromReference}`);
    }
  }
});

gpuTest("every GPU call: a missing argument is named before any GPU work", async (gpu: ResidentDevice) => {
  for (const c of CASES) {
    for (const missing of [undefined, {}]) {
      const label = `${c.op}Gpu(gpu, ${JSON.stringify(missing)})`;
      const message = await messageOf(() => c.gpu(gpu, missing), label);
      ok(message.startsWith(`${c.op}: `), `${label}: ${message}`);
    }
  }
});

Deno.test("requireF32: finite in f64 is not enough; the value must be finite as an f32", async () => {
  strictEqual(requireF32("op", "eps", F32_MAX), F32_MAX);
  strictEqual(requireF32("op", "eps", -1e-45), -1e-45); // rounds to -0 or a subnormal, both finite
  await assertThrowsMessage(() => requireF32("op", "eps", 1e39), `op: eps must be a finite f32 (|eps| <= ${F32_MAX})`);
  // Halfway between F32_MAX and the next power of two rounds up to Infinity.
  await assertThrowsMessage(() => requireF32("op", "eps", 2 ** 128 - 2 ** 103), "got 3.4028235677973366e+38");
  await assertThrowsMessage(() => requireF32("op", "eps", "1"), "op: eps must be a finite f32");
});

Deno.test("requireInt: a bound that is a WGSL type's limit is named only when exceeded", async () => {
  strictEqual(requireInt("op", "rows", U32_MAX, 1, U32_MAX), U32_MAX);
  await assertThrowsMessage(() => requireInt("op", "rows", 0, 1, U32_MAX), "op: rows must be an integer >= 1, got 0");
  await assertThrowsMessage(
    () => requireInt("op", "rows", 2 ** 32, 1, U32_MAX),
    "op: rows must be an integer <= 4294967295 (the largest u32), got 4294967296",
  );
  await assertThrowsMessage(
    () => requireInt("op", "cols", 2 ** 31, 1, I32_MAX),
    "op: cols must be an integer <= 2147483647 (the largest i32), got 2147483648",
  );
  await assertThrowsMessage(() => requireInt("op", "dim", 3, -2, 1), "op: dim must be an integer in [-2, 1], got 3");
});

Deno.test("requireArgs: anything but an object is named with the fields expected", async () => {
  requireArgs("op", "args", {}, "{ x }");
  for (const missing of [undefined, null, 3, "x"]) {
    await assertThrowsMessage(
      () => requireArgs("op", "args", missing, "{ x }"),
      "op: args must be an object { x }, got",
    );
  }
});

gpuTest("every op refuses an unknown argument or option by name, in the reference, the plan and the GPU call", async (
  gpu: ResidentDevice,
) => {
  for (const c of CASES) {
    const argument = `${c.op}: unknown argument "colls" (expected `;
    const fromReference = await messageOf(() => c.reference({ ...c.args, colls: 3 }), `${c.op} with colls`);
    ok(fromReference.startsWith(argument), `${c.op} reference: ${fromReference}`);
    const fromGpu = await messageOf(() => c.gpu(gpu, { ...c.args, colls: 3 }), `${c.op}Gpu with colls`);
    ok(fromGpu.startsWith(argument), `${c.op} GPU: ${fromGpu}`);
    if (c.plan) {
      const fromPlan = await messageOf(() => c.plan!(gpu, { ...c.shape, colls: 3 }), `${c.op}Plan with colls`);
      ok(fromPlan.startsWith(argument), `${c.op} plan: ${fromPlan}`);
    }
    // A misspelt optional argument is refused rather than replaced by its default.
    strictEqual(
      c.reference({ ...c.args, colls: undefined }) !== undefined,
      true,
      `${c.op}: an undefined key is absent`,
    );
    if (c.gpu.length < 3) continue; // melSpectrogramGpu takes no options
    const option = `${c.op}: unknown option "overide" (expected ${["override", ...c.optionKeys ?? []].join(", ")})`;
    const options = { overide: "kernel" };
    strictEqual(await messageOf(() => c.gpu(gpu, c.args, options), `${c.op}Gpu options`), option);
    if (c.plan && c.plan.length >= 3) {
      strictEqual(await messageOf(() => c.plan!(gpu, c.shape, options), `${c.op}Plan options`), option);
    }
  }
});

Deno.test('shown: a string given for a number is quoted, so M: "2" cannot read as 2', async () => {
  await assertThrowsMessage(() => requireInt("op", "M", "2", 1, U32_MAX), 'op: M must be an integer >= 1, got "2"');
  await assertThrowsMessage(() => requireInt("op", "M", 2.5, 1, U32_MAX), "op: M must be an integer >= 1, got 2.5");
  await assertThrowsMessage(() => requireF32("op", "eps", "1e-5"), 'got "1e-5"');
  await assertThrowsMessage(() => requireArgs("op", "args", "x", "{ x }"), 'op: args must be an object { x }, got "x"');
});
