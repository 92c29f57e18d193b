import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { KernelPlan, ResidentDevice } from "../harness/device.ts";
import { gpuTest } from "../harness/testing.ts";
import { BENCH_CASES } from "./registry.ts";
import { BENCH_PEER_MAP, type PeerCall, peerFor } from "../harness/peer/bench_map.ts";
import { peerCase } from "../harness/peer/cases.ts";
import { activationPlan } from "./activation/mod.ts";
import { axpyInplacePlan, axpyPlan } from "./axpy/mod.ts";
import { elementwisePlan, elementwiseRowsPlan } from "./elementwise/mod.ts";
import { gatherPlan } from "./gather/mod.ts";
import { matmulPlan } from "./matmul/mod.ts";
import { matvecPlan } from "./matvec/mod.ts";
import { permutePlan } from "./permute/mod.ts";
import { reducePlan } from "./reduce/mod.ts";
import { scatterPlan } from "./scatter/mod.ts";
import { softmaxPlan } from "./softmax/mod.ts";
import { transposePlan } from "./transpose/mod.ts";

/**
 * One sample per table entry, its shape typed by the op's own plan function (so a renamed field
 * fails to compile here), the peer call it must map to, and the plan to hold the call to.
 */
interface Sample {
  key: string;
  shape: object;
  call: PeerCall;
  plan: (gpu: ResidentDevice) => KernelPlan;
}

function sample<S extends object>(
  key: string,
  shape: S,
  call: PeerCall,
  plan: (gpu: ResidentDevice, shape: S) => KernelPlan,
): Sample {
  return { key, shape, call, plan: (gpu) => plan(gpu, shape) };
}

const SAMPLES: Sample[] = [
  sample("elementwise/kernel", { op: "add" as const, n: 77 }, { op: "add", args: [77] }, elementwisePlan),
  sample("elementwise/kernel", { op: "multiply" as const, n: 77 }, { op: "mul", args: [77] }, elementwisePlan),
  sample("elementwise/rows", { op: "add" as const, rows: 5, cols: 33 }, {
    op: "addRows",
    args: { rows: 5, cols: 33 },
  }, elementwiseRowsPlan),
  sample("axpy/kernel", { alpha: 0.5, n: 1001 }, { op: "axpy", args: [1001] }, axpyPlan),
  sample("axpy/inplace", { alpha: 0.5, n: 1001 }, { op: "axpy", args: [1001] }, axpyInplacePlan),
  sample("activation/kernel", { kind: "relu2" as const, n: 129 }, { op: "relu2", args: [129] }, activationPlan),
  sample("activation/kernel", { kind: "silu" as const, n: 129 }, { op: "silu", args: [129] }, activationPlan),
  sample("activation/kernel", { kind: "elu" as const, n: 129 }, { op: "elu", args: [129] }, activationPlan),
  sample("activation/kernel", { kind: "tanh" as const, n: 129 }, { op: "tanh", args: [129] }, activationPlan),
  sample("softmax/kernel", { rows: 7, cols: 300 }, { op: "softmax", args: { rows: 7, cols: 300 } }, softmaxPlan),
  sample("reduce/kernel", { op: "sum" as const, shape: [3, 5, 7], dim: 1 }, {
    op: "sum",
    args: { shape: [3, 5, 7], axis: 1 },
  }, reducePlan),
  sample("reduce/kernel", { op: "max" as const, shape: [3, 5, 7], dim: -1 }, {
    op: "max",
    args: { shape: [3, 5, 7], axis: -1 },
  }, reducePlan),
  sample("reduce/kernel", { op: "mean" as const, shape: [6, 5], dim: 0 }, {
    op: "mean",
    args: { shape: [6, 5], axis: 0 },
  }, reducePlan),
  sample("transpose/kernel", { rows: 17, cols: 65 }, {
    op: "transpose",
    args: { rows: 17, cols: 65 },
  }, transposePlan),
  sample("permute/kernel", { shape: [2, 3, 4, 5], dims: [0, 2, -3, 3] }, {
    op: "permute",
    args: { shape: [2, 3, 4, 5], perm: [0, 2, 1, 3] },
  }, permutePlan),
  sample("gather/kernel", { rows: 10, cols: 7, indexLength: 13 }, {
    op: "gather",
    args: { rows: 10, cols: 7, indices: 13 },
  }, gatherPlan),
  sample(
    "scatter/kernel",
    { rows: 3, indexCols: 20, cols: 4 },
    { op: "scatter", args: { rows: 3, cols: 4, k: 20 } },
    scatterPlan,
  ),
  sample("matmul/kernel", { M: 7, N: 5, K: 13 }, { op: "matMul", args: { m: 7, k: 13, n: 5 } }, matmulPlan),
  sample("matmul/tile64", { M: 7, N: 5, K: 13 }, { op: "matMul", args: { m: 7, k: 13, n: 5 } }, matmulPlan),
  sample("matvec/kernel", { N: 9, K: 33 }, { op: "matvec", args: { n: 9, k: 33 } }, matvecPlan),
];

/**
 * Whether the peer case has the plan's sizes: an output (or inout) binding with as many elements
 * as the peer's output, and for every f32 input binding a peer input of the same length.
 */
function sizeMismatch(plan: Pick<KernelPlan, "bindings">, call: PeerCall): string | null {
  const c = peerCase(call.op, call.args);
  const out = c.outShape.reduce((p, d) => p * d, 1);
  const outputs = plan.bindings.filter((b) => b.role !== "input").map((b) => b.length);
  if (!outputs.includes(out)) return `peer output has ${out} elements, the plan's outputs ${outputs.join(", ")}`;
  const peerInputs = c.inputs.filter((x) => x.data instanceof Float32Array).map((x) => x.data.length);
  for (const b of plan.bindings.filter((b) => b.role === "input" && b.dtype === "f32")) {
    if (!peerInputs.includes(b.length)) {
      return `plan input ${b.name} has ${b.length} elements, no f32 peer input does (${peerInputs.join(", ")})`;
    }
  }
  return null;
}

Deno.test("bench map: each sample maps to its peer call, and every table entry has a sample", () => {
  for (const s of SAMPLES) {
    const [op, entry] = s.key.split("/");
    deepStrictEqual(peerFor(op, entry, s.shape), { call: s.call, reason: null }, s.key);
  }
  deepStrictEqual([...new Set(SAMPLES.map((s) => s.key))].sort(), Object.keys(BENCH_PEER_MAP).sort());
});

Deno.test("bench map: no counterpart, an unknown key or a malformed shape is a reason, never a throw", () => {
  const reason = (op: string, entry: string, shape: unknown) => {
    const r = peerFor(op, entry, shape);
    strictEqual(r.call, null, `${op}/${entry} ${JSON.stringify(shape)} mapped`);
    return r.reason ?? "";
  };
  ok(reason("activation", "kernel", { kind: "gelu", n: 8 }).includes("no GELU"));
  ok(reason("activation", "kernel", { kind: "gelu_tanh", n: 8 }).includes("no GELU"));
  ok(reason("activation", "kernel", { kind: "elu", n: 8, alpha: 0.5 }).includes("alpha 1 only"));
  ok(reason("activation", "kernel", { kind: "swish2", n: 8 }).includes('kind "swish2" has no peer mapping'));
  ok(reason("rmsnorm", "kernel", { rows: 4, cols: 8, eps: 1e-6 }).includes("no RMSNorm"));
  ok(reason("matvec", "q4g128", { N: 4, K: 128 }).includes("int4"));
  ok(reason("newop", "kernel", { n: 4 }).includes("no peer mapping for newop/kernel"));
  ok(reason("matmul", "kernel", { M: 4, N: 4 }).includes('"K" is not a positive integer (absent)'));
  ok(reason("matmul", "kernel", { M: 4, N: 4, K: "4" }).includes('"K" is not a positive integer ("4")'));
  ok(reason("reduce", "kernel", { op: "sum", shape: [4, 4], dim: 2 }).includes('"dim" is not an axis'));
  ok(reason("reduce", "kernel", { op: "prod", shape: [4], dim: 0 }).includes('reduce op "prod"'));
  ok(reason("permute", "kernel", { shape: [2, 3] }).includes('"dims"'));
  ok(reason("elementwise", "kernel", { op: "subtract", n: 4 }).includes('"subtract"'));
  ok(reason("softmax", "kernel", null).includes("not an object"));
  ok(reason("softmax", "kernel", [4, 8]).includes("not an object"));
  ok(reason("toString", "", {}).includes("no peer mapping"));
});

Deno.test("bench map: every bench case at every shape gets a call or a reason", () => {
  let mapped = 0;
  for (const c of BENCH_CASES) {
    for (const shape of [...c.shapes.gpu, ...c.shapes.quick]) {
      const r = peerFor(c.op, c.entry, shape.value);
      ok(r.call !== null || r.reason.length > 0, `${c.op}/${c.entry}/${shape.label}`);
      if (r.call) mapped++;
    }
  }
  ok(mapped > 0, "no bench case maps to the peer");
});

gpuTest("bench map: a mapped call has the sizes of the op's plan (samples and every quick bench shape)", (gpu) => {
  for (const s of SAMPLES) strictEqual(sizeMismatch(s.plan(gpu), s.call), null, `${s.key} ${JSON.stringify(s.shape)}`);
  for (const c of BENCH_CASES) {
    for (const shape of c.shapes.quick) {
      const { call } = peerFor(c.op, c.entry, shape.value);
      if (call) strictEqual(sizeMismatch(shape.plan(gpu, {}), call), null, `${c.op}/${c.entry}/${shape.label}`);
    }
  }
});
