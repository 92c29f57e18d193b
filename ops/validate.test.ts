/**
 * One validation per op, checked across every op at once: each `<op>Plan` refuses a bad shape with
 * exactly the message the reference gives for the same bad argument, and a missing argument (the
 * whole object, or one field of it) fails with an error naming the op and the argument, never a
 * TypeError from reading a property of undefined.
 */
import { ok, strictEqual } from "node:assert/strict";
import type { KernelPlan, ResidentDevice } from "../harness/device.ts";
import { assertThrowsMessage, gpuTest } from "../harness/testing.ts";
import * as ops from "../mod.ts";
import { F32_MAX, I32_MAX, requireArgs, requireF32, requireInt, U32_MAX } from "./validate.ts";

const f32 = (n: number) => new Float32Array(n);
const i32 = (n: number) => new Int32Array(n);
const u32 = (n: number) => new Uint32Array(n);

/** Loosely typed, so that the table can hand each entry point what a careless caller would. */
type AnyArgs = Record<string, unknown>;
// deno-lint-ignore no-explicit-any
type Loose = (...args: any[]) => unknown;

interface OpCase {
  /** The name every message of the op starts with. */
  op: string;
  reference: Loose;
  gpu: Loose;
  plan: Loose;
  /** Valid arguments of the reference and the `*Gpu` call. */
  args: AnyArgs;
  /** The valid shape of the plan for the same call. */
  shape: AnyArgs;
  /** A field of both, a bad value for it, and the argument the message must name. */
  bad: [field: string, value: unknown, named: string][];
}

const CASES: OpCase[] = [
  {
    op: "softmax",
    reference: ops.softmax,
    gpu: ops.softmaxGpu,
    plan: ops.softmaxPlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", 2.5, "cols"], ["rows", 2 ** 32, "rows"]],
  },
  {
    op: "rmsnorm",
    reference: ops.rmsnorm,
    gpu: ops.rmsnormGpu,
    plan: ops.rmsnormPlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", -1, "cols"], ["eps", 1e39, "eps"], ["eps", -1, "eps"]],
  },
  {
    op: "layernorm",
    reference: ops.layernorm,
    gpu: ops.layernormGpu,
    plan: ops.layernormPlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", NaN, "cols"], ["eps", 1e39, "eps"], ["eps", Infinity, "eps"]],
  },
  {
    op: "quantize",
    reference: ops.quantize,
    gpu: ops.quantizeGpu,
    plan: ops.quantizePlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", 0, "cols"]],
  },
  {
    op: "elementwise",
    reference: ops.elementwise,
    gpu: ops.elementwiseGpu,
    plan: ops.elementwisePlan,
    args: { op: "add", a: f32(4), b: f32(4) },
    shape: { op: "add", n: 4 },
    bad: [["op", "subtract", "op"]],
  },
  {
    op: "elementwiseRows",
    reference: ops.elementwiseRows,
    gpu: ops.elementwiseRowsGpu,
    plan: ops.elementwiseRowsPlan,
    args: { op: "add", a: f32(6), b: f32(3), rows: 2, cols: 3 },
    shape: { op: "add", rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", 0, "cols"], ["op", "divide", "op"]],
  },
  {
    op: "gather",
    reference: ops.gather,
    gpu: ops.gatherGpu,
    plan: ops.gatherPlan,
    args: { table: f32(6), index: i32(2), rows: 3, cols: 2 },
    shape: { rows: 3, cols: 2, indexLength: 2 },
    bad: [["rows", 0, "rows"], ["rows", 2 ** 31, "rows"], ["cols", 0, "cols"]],
  },
  {
    op: "scatter",
    reference: ops.scatter,
    gpu: ops.scatterGpu,
    plan: ops.scatterPlan,
    args: { src: f32(4), index: i32(4), rows: 2, indexCols: 2, cols: 3 },
    shape: { rows: 2, indexCols: 2, cols: 3 },
    bad: [["rows", -1, "rows"], ["indexCols", 1.5, "indexCols"], ["cols", 0, "cols"]],
  },
  {
    op: "reduce",
    reference: ops.reduce,
    gpu: ops.reduceGpu,
    plan: ops.reducePlan,
    args: { op: "sum", x: f32(6), shape: [2, 3], dim: 1 },
    shape: { op: "sum", shape: [2, 3], dim: 1 },
    bad: [["dim", 2, "dim"], ["shape", [2, -3], "shape[1]"], ["op", "prod", "op"]],
  },
  {
    op: "transpose",
    reference: ops.transpose,
    gpu: ops.transposeGpu,
    plan: ops.transposePlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", -1, "rows"], ["cols", 0.5, "cols"]],
  },
  {
    op: "permute",
    reference: ops.permute,
    gpu: ops.permuteGpu,
    plan: ops.permutePlan,
    args: { x: f32(6), shape: [2, 3], dims: [1, 0] },
    shape: { shape: [2, 3], dims: [1, 0] },
    bad: [["dims", [0, 0], "dims"], ["dims", [0, 2], "dims[1]"], ["shape", [2, 3, 1, 1, 1, 1, 1], "shape"]],
  },
  {
    op: "axpy",
    reference: ops.axpy,
    gpu: ops.axpyGpu,
    plan: ops.axpyPlan,
    args: { alpha: 2, x: f32(3), y: f32(3) },
    shape: { alpha: 2, n: 3 },
    bad: [["alpha", 1e39, "alpha"], ["alpha", NaN, "alpha"]],
  },
  {
    op: "axpy",
    reference: ops.axpy,
    gpu: ops.axpyInplaceGpu,
    plan: ops.axpyInplacePlan,
    args: { alpha: 2, x: f32(3), y: f32(3) },
    shape: { alpha: 2, n: 3 },
    bad: [["alpha", -1e39, "alpha"]],
  },
  {
    op: "activation",
    reference: ops.activation,
    gpu: ops.activationGpu,
    plan: ops.activationPlan,
    args: { kind: "elu", x: f32(3), alpha: 1 },
    shape: { kind: "elu", n: 3, alpha: 1 },
    bad: [["kind", "swish", "kind"], ["alpha", 1e39, "alpha"]],
  },
  {
    op: "dequantize",
    reference: ops.dequantize,
    gpu: ops.dequantizeGpu,
    plan: ops.dequantizePlan,
    args: { acc: i32(6), aScales: f32(2), wScales: f32(3), M: 2, N: 3 },
    shape: { M: 2, N: 3 },
    bad: [["M", 0, "M"], ["N", 2 ** 32, "N"]],
  },
  {
    op: "dequantTranspose",
    reference: ops.dequantTranspose,
    gpu: ops.dequantTransposeGpu,
    plan: ops.dequantTransposePlan,
    args: { weight: u32(2), scales: f32(2), N: 2, K: 4 },
    shape: { N: 2, K: 4 },
    bad: [["N", 0, "N"], ["K", -4, "K"]],
  },
  {
    op: "matvec",
    reference: ops.matvec,
    gpu: ops.matvecGpu,
    plan: ops.matvecPlan,
    args: { weight: f32(6), x: f32(3), N: 2, K: 3 },
    shape: { N: 2, K: 3 },
    bad: [["N", 0, "N"], ["K", 0, "K"]],
  },
  {
    op: "matvecQ8",
    reference: ops.matvecQ8,
    gpu: ops.matvecQ8Gpu,
    plan: ops.matvecQ8Plan,
    args: { weight: u32(2), scales: f32(2), x: f32(3), N: 2, K: 3 },
    shape: { N: 2, K: 3 },
    bad: [["N", 0, "N"], ["K", 1.5, "K"]],
  },
  {
    op: "matvecQ4G128",
    reference: ops.matvecQ4G128,
    gpu: ops.matvecQ4G128Gpu,
    plan: ops.matvecQ4G128Plan,
    args: { weight: u32(2), scales: f32(2), x: f32(3), N: 2, K: 3 },
    shape: { N: 2, K: 3 },
    bad: [["N", -2, "N"], ["K", 0, "K"]],
  },
  {
    op: "matmul",
    reference: ops.matmul,
    gpu: ops.matmulGpu,
    plan: ops.matmulPlan,
    args: { a: f32(6), b: f32(6), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["M", 0, "M"], ["N", 0, "N"], ["K", 0, "K"]],
  },
  {
    op: "matmulQ8",
    reference: ops.matmulQ8,
    gpu: ops.matmulQ8Gpu,
    plan: ops.matmulQ8Plan,
    args: { a: f32(6), weight: u32(2), scales: f32(2), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["M", 0, "M"], ["K", 2 ** 32, "K"]],
  },
  {
    op: "matmulQ4G128",
    reference: ops.matmulQ4G128,
    gpu: ops.matmulQ4G128Gpu,
    plan: ops.matmulQ4G128Plan,
    args: { a: f32(6), weight: u32(2), scales: f32(2), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["N", 0, "N"]],
  },
  {
    op: "matmulF16",
    reference: ops.matmulF16,
    gpu: ops.matmulF16Gpu,
    plan: ops.matmulF16Plan,
    args: { a: u32(3), b: u32(3), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["M", 0, "M"], ["K", NaN, "K"]],
  },
];

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
      if (field === "alpha") continue; // optional
      const message = await messageOf(() => c.reference(without(c.args, field)), `${c.op} without ${field}`);
      ok(message.startsWith(`${c.op}: `) && message.includes(field), `${c.op} without ${field}: ${message}`);
    }
  }
});

gpuTest("every plan refuses what its reference refuses, with the same message", async (gpu: ResidentDevice) => {
  for (const c of CASES) {
    const plan = c.plan(gpu, c.shape) as KernelPlan;
    ok(plan.bindings.length > 0, `${c.op}: a plan for the valid shape`);
    for (const missing of [undefined, null]) {
      const message = await messageOf(() => c.plan(gpu, missing), `${c.op}Plan(${missing})`);
      ok(message.startsWith(`${c.op}: shape must be an object {`), `${c.op}Plan(${missing}): ${message}`);
    }
    for (const [field, value, named] of c.bad) {
      const label = `${c.op} with ${field} = ${JSON.stringify(value) ?? String(value)}`;
      const fromReference = await messageOf(() => c.reference({ ...c.args, [field]: value }), `${label} (reference)`);
      const fromPlan = await messageOf(() => c.plan(gpu, { ...c.shape, [field]: value }), `${label} (plan)`);
      const fromGpu = await messageOf(() => c.gpu(gpu, { ...c.args, [field]: value }), `${label} (gpu)`);
      strictEqual(fromPlan, fromReference, `${label}: the plan and the reference disagree`);
      strictEqual(fromGpu, fromReference, `${label}: the GPU call and the reference disagree`);
      ok(fromReference.startsWith(`${c.op}: `) && fromReference.includes(named), `${label}: ${fromReference}`);
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
