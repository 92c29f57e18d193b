import { deepStrictEqual, notStrictEqual, ok, strictEqual } from "node:assert/strict";
import { LimitError } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import type { ResidentDevice } from "../../harness/device.ts";
import {
  activation,
  ACTIVATION_KINDS,
  type ActivationArgs,
  activationGpu,
  type ActivationKind,
  activationPlan,
  erf,
  erfc,
  GATED_ACTIVATION_KINDS,
  gatedActivation,
  type GatedActivationArgs,
  gatedActivationGpu,
  type GatedActivationKind,
  gatedActivationPlan,
  KERNELS,
  swigluPairs,
  swigluPairsGpu,
} from "./mod.ts";

interface Golden {
  meta: { torch: string; gelu_gap: { x: number; gelu: number; gelu_tanh: number } };
  inputs: Record<string, number[]>;
  cases: { input: string; kind: ActivationKind; alpha?: number; out: number[] }[];
  /** torch's results at [NaN, +inf, -inf] in float32 on the CPU (elu at alpha 0.5), as Python's str(): "nan", "1.0". */
  nonfinite: Record<ActivationKind, string[]>;
  /** f(gate) * up for named inputs (gates `special`, `random7`, `random257`; ups `up_<gate>`). */
  gated: { gate: string; up: string; kind: GatedActivationKind; out: number[] }[];
  /** torch's f(gate) * up at gates [NaN, +inf, -inf, +inf, 1] and ups [2, 2, 2, 0, NaN], float32 on the CPU. */
  gated_nonfinite: Record<GatedActivationKind, string[]>;
}
const golden = () => loadGolden<Golden>(new URL("./goldens/activation.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);
const one = (kind: ActivationKind, x: number, alpha?: number) => activation({ kind, x: f32([x]), alpha })[0];

// Reference vs torch in float64, both rounded to f32: one f32 ulp (2^-23 relative) where the two
// f64 values straddle a rounding boundary, and 1e-12 absolute for torch's own f64 cancellation in
// the far tails of gelu and gelu_tanh (it returns 0 where the true value is below 1e-22).
const referenceTolerance = { atol: 1e-12, rtol: 2 ** -23 };
// Kernel vs reference: the kernel evaluates in f32 with WGSL's exp (accurate to 3 + 2|x| ULP) and
// division (2.5 ULP), and its own erfc (1.2e-7 relative) and expm1; a few f32 ulps on values of
// order 1 (measured on llvmpipe: 1.3e-7 relative beyond 1e-7 absolute), so 1e-6 relative leaves
// room for less accurate exp. 1e-7 absolute covers the tails, where values are tiny and exp of
// a large negative argument is least accurate in relative terms.
const kernelTolerance = { atol: 1e-7, rtol: 1e-6 };

Deno.test("erf and erfc: known values to 1e-15", () => {
  const erfs = [
    [0.5, 0.5204998778130465],
    [1, 0.8427007929497149],
    [2, 0.9953222650189527],
    [3, 0.9999779095030014],
  ];
  for (const [z, value] of erfs) {
    assertClose([erf(z)], [value], { atol: 1e-15, rtol: 0 }, `erf(${z})`);
    assertClose([erf(-z)], [-value], { atol: 1e-15, rtol: 0 }, `erf(${-z})`);
  }
  strictEqual(erf(0), 0);
  // erfc keeps its relative precision in the tail, where 1 - erf(z) is 0 in f64.
  const erfcs = [
    [0.5, 0.4795001221869535],
    [3, 2.209049699858544e-5],
    [5, 1.5374597944280349e-12],
    [10, 2.088487583762545e-45],
  ];
  for (const [z, value] of erfcs) assertClose([erfc(z)], [value], { atol: 0, rtol: 1e-13 }, `erfc(${z})`);
  strictEqual(1 - erf(10), 0);
  assertClose([erfc(-3)], [2 - 2.209049699858544e-5], { atol: 1e-15, rtol: 0 }, "erfc(-3)");
});

Deno.test("activation reference: hand-derived values", () => {
  deepStrictEqual([...activation({ kind: "relu2", x: f32([-2, -0, 0.5, 3]) })], [0, 0, 0.25, 9]);
  strictEqual(one("silu", 0), 0);
  // 1 / (1 + e^-1), tanh(1/2), Phi(1) and the tanh form at 1, each rounded to f32.
  strictEqual(one("silu", 1), Math.fround(0.7310585786300049));
  strictEqual(one("tanh", 0.5), Math.fround(0.46211715726000974));
  strictEqual(one("gelu", 1), Math.fround(0.8413447460685429));
  strictEqual(one("gelu_tanh", 1), Math.fround(0.8411919906082767));
});

Deno.test("activation reference: gelu is the erf form; gelu_tanh differs by 4.73e-4 at x = 2.699", () => {
  const x = Math.fround(2.699);
  const gap = one("gelu", x) - one("gelu_tanh", x);
  ok(gap < -4.73e-4 && gap > -4.74e-4, `gelu - gelu_tanh at 2.699 is ${gap}`);
  // Far beyond every tolerance here, so a kernel computing one kind for the other cannot pass.
  ok(Math.abs(gap) > 100 * (kernelTolerance.atol + kernelTolerance.rtol * 3));
});

Deno.test("activation reference: gelu keeps its tail (x * Phi(x), not x/2 * (1 + erf) which is 0)", () => {
  // -10 * Phi(-10) = -7.619853024160527e-23.
  assertClose([one("gelu", -10)], [-7.619853024160527e-23], { atol: 0, rtol: 2 ** -23 }, "gelu(-10)");
  strictEqual(-10 * 0.5 * (1 + erf(-10 / Math.SQRT2)), -0);
});

Deno.test("activation reference: elu's alpha is applied, defaults to 1 and is rounded to f32", () => {
  strictEqual(one("elu", -1), Math.fround(Math.expm1(-1)));
  strictEqual(one("elu", -1, 0.5), Math.fround(0.5 * Math.expm1(-1)));
  strictEqual(one("elu", 2, 0.5), 2);
  // alpha = 0.1 is used as f32(0.1), as torch casts it; kept in f64 it gives another f32 here.
  const x = Math.fround(-0.001);
  strictEqual(one("elu", x, 0.1), Math.fround(Math.fround(0.1) * Math.expm1(x)));
  notStrictEqual(one("elu", x, 0.1), Math.fround(0.1 * Math.expm1(x)));
});

Deno.test("activation reference: large |x| gives limits, never NaN or Infinity", () => {
  const x = f32([100, -100, 1e4, -1e4, 3e38, -3e38]);
  deepStrictEqual([...activation({ kind: "tanh", x })], [1, -1, 1, -1, 1, -1]);
  for (const kind of ["silu", "gelu", "gelu_tanh", "elu"] as const) {
    const out = activation({ kind, x });
    deepStrictEqual([out[0], out[2], out[4]], [100, 1e4, Math.fround(3e38)], kind);
    ok([out[1], out[3], out[5]].every((v) => v <= 0 && v > -1.01), `${kind}: ${out}`);
  }
});

Deno.test("activation reference: bad input throws naming the argument", async () => {
  const x = f32([1, 2]);
  await assertThrowsMessage(() => activation({ kind: "gelu", x, alpha: 1 }), 'alpha applies only to kind "elu"');
  await assertThrowsMessage(() => activation({ kind: "swish" as ActivationKind, x }), 'kind must be one of "relu2"');
  await assertThrowsMessage(() => activation({ kind: "elu", x, alpha: NaN }), "alpha must be a finite f32");
  // 1e39 is finite in f64 but Infinity in the kernel's f32 uniform.
  await assertThrowsMessage(
    () => activation({ kind: "elu", x, alpha: 1e39 }),
    "activation: alpha must be a finite f32 (|alpha| <= 3.4028234663852886e+38), got 1e+39",
  );
  await assertThrowsMessage(
    () => activation({ kind: "relu2", x: [1, 2] as unknown as Float32Array }),
    "x must be a Float32Array, got Array",
  );
});

/**
 * At NaN, +Infinity and -Infinity the kernels give what torch gives (the goldens' `nonfinite`, torch's
 * float32 CPU kernels), with one exception: gelu(+Infinity) is +Infinity here, the function's limit
 * and what `x * 0.5 * (1 + erf(x / sqrt 2))` gives, where torch's CPU kernel gives NaN. Refusing
 * non-finite input, or a "safe" 0 at -Infinity for silu and the gelus, are the alternatives the test
 * would catch.
 */
const NON_FINITE = f32([NaN, Infinity, -Infinity]);
const alphaFor = (kind: ActivationKind) => kind === "elu" ? 0.5 : undefined;
const fromPython = (v: string) => v === "nan" ? NaN : v === "inf" ? Infinity : v === "-inf" ? -Infinity : Number(v);
async function expectedNonFinite(kind: ActivationKind): Promise<number[]> {
  const torch = (await golden()).nonfinite[kind].map(fromPython);
  if (kind !== "gelu") return torch;
  ok(Number.isNaN(torch[1]), `torch's gelu(+inf) is ${torch[1]}, no longer NaN: drop the exception`);
  return [torch[0], Infinity, torch[2]];
}

Deno.test("activation reference: NaN and ±Infinity give what torch gives (gelu at +Infinity: the limit)", async () => {
  for (const kind of ACTIVATION_KINDS) {
    const out = activation({ kind, x: NON_FINITE, alpha: alphaFor(kind) });
    assertClose(out, await expectedNonFinite(kind), { atol: 0, rtol: 0 }, kind);
  }
});

function goldenArgs(g: Golden, c: Golden["cases"][number]): ActivationArgs {
  return { kind: c.kind, x: f32(g.inputs[c.input]), alpha: c.alpha };
}

Deno.test("activation reference matches torch goldens", async () => {
  const g = await golden();
  for (const c of g.cases) {
    const label = `torch ${g.meta.torch} ${c.kind} alpha=${c.alpha} on ${c.input}`;
    assertClose(activation(goldenArgs(g, c)), f32(c.out), referenceTolerance, label);
  }
  const { x, gelu, gelu_tanh } = g.meta.gelu_gap;
  assertClose([one("gelu", x), one("gelu_tanh", x)], f32([gelu, gelu_tanh]), referenceTolerance, "gelu gap");
});

gpuTest("activation GPU matches torch goldens", async (gpu) => {
  const g = await golden();
  for (const c of g.cases) {
    const label = `${c.kind} alpha=${c.alpha} on ${c.input}`;
    assertClose(await activationGpu(gpu, goldenArgs(g, c)), f32(c.out), kernelTolerance, label);
  }
});

gpuTest("activation GPU: gelu and gelu_tanh are told apart at x = 2.699", async (gpu) => {
  const x = f32([2.699]);
  const [gelu] = await activationGpu(gpu, { kind: "gelu", x });
  const [geluTanh] = await activationGpu(gpu, { kind: "gelu_tanh", x });
  ok(gelu - geluTanh < -4.7e-4, `gelu ${gelu}, gelu_tanh ${geluTanh}`);
});

gpuTest("activation GPU: large |x| gives no NaN or Infinity", async (gpu) => {
  const x = f32([100, -100, 1e4, -1e4, 88.7, -88.7, 89, -89, 3e38, -3e38]);
  for (const kind of ["silu", "elu", "tanh", "gelu", "gelu_tanh"] as const) {
    const out = await activationGpu(gpu, { kind, x });
    ok(out.every(Number.isFinite), `${kind}: ${out}`);
    assertClose(out, activation({ kind, x }), kernelTolerance, kind);
  }
});

gpuTest("activation GPU: NaN and ±Infinity give what torch gives (gelu at +Infinity: the limit)", async (gpu) => {
  // Nine elements: two whole vec4s through the streaming loop and one through the tail.
  const x = f32([...NON_FINITE, ...NON_FINITE, ...NON_FINITE]);
  for (const kind of ACTIVATION_KINDS) {
    const out = await activationGpu(gpu, { kind, x, alpha: alphaFor(kind) });
    const once = await expectedNonFinite(kind);
    const expected = [...once, ...once, ...once];
    assertClose(out, expected, { atol: 0, rtol: 0 }, kind);
  }
});

gpuTest("activation GPU: bad input throws before dispatch", async (gpu) => {
  const x = f32([1, 2]);
  await assertThrowsMessage(
    () => activationGpu(gpu, { kind: "tanh", x, alpha: 2 }),
    'alpha applies only to kind "elu"',
  );
  await assertThrowsMessage(() => activationGpu(gpu, { kind: "nope" as ActivationKind, x }), "kind must be one of");
  await assertThrowsMessage(
    () => activationGpu(gpu, { kind: "relu2", x }, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
});

// Every kind on lengths around the kernel's geometry (4 elements per vec4, 2048 per workgroup block:
// 1..3 and 4099 end in a partial vec4, 2048 and 4096 are whole blocks, 5001 ends in a partial block
// and a partial vec4), spread over
// [-8, 8), plus points near 0 (where expm1 and tanh must not cancel) and far out (where exp would
// overflow if it were taken of a positive argument); neighbours in one vec4 take different sides of
// the piecewise definitions.
const SPECIAL = f32([0, 1e-7, -1e-7, 1e-3, -1e-3, 0.3, -0.3, -0.6, 2.699, 20, -20, 88.7, -88.7, 100, -100, 1e4, -1e4]);
const cases = ACTIVATION_KINDS.flatMap((kind) => {
  const alpha = kind === "elu" ? 0.7 : undefined;
  return [
    ...[1, 2, 3, 4, 255, 256, 257, 2048, 4096, 4099, 5001].map((n) => ({
      label: `${kind} n=${n}`,
      args: { kind, x: randomF32(n, n, -8, 8), alpha },
    })),
    { label: `${kind} special`, args: { kind, x: SPECIAL, alpha } },
  ];
});
checkAgainstReference("activation", KERNELS, "kernel", cases, activation, activationGpu, kernelTolerance);

// A device that allows 2 workgroups per dimension, so the grid-stride loop takes several blocks per
// workgroup (the full-size grid needs over 2^27 elements to loop), for every kind (each has its own
// copy of the loop). It poisons outputs like the shared one.
function twoWorkgroups(gpu: ResidentDevice): ResidentDevice {
  const low = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 2 });
  low.poisonOutputs = true;
  return low;
}
checkAgainstReference(
  "activation, grid-stride over 2 workgroups",
  KERNELS,
  "kernel",
  ACTIVATION_KINDS.flatMap((kind) =>
    [3, 4097, 5 * 4096 + 7, 8 * 4096].map((n) => ({
      label: `${kind} n=${n}`,
      args: { kind, x: randomF32(n, n, -8, 8), alpha: kind === "elu" ? 0.7 : undefined },
    }))
  ),
  activation,
  (gpu, args, options) => activationGpu(twoWorkgroups(gpu), args, options),
  kernelTolerance,
);

gpuTest("activation GPU: plans use a 1-D grid of 2048-element blocks, capped, and state their cost", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  for (const [n, groups] of [[0, 0], [1, 1], [2048, 1], [2049, 2], [2 ** 26, 2 ** 15], [2 ** 30, max]]) {
    const plan = activationPlan(gpu, { kind: "gelu", n });
    deepStrictEqual([plan.workgroups, plan.cost], [groups, { bytes: 8 * n, flops: 30 * n }], `n=${n}`);
  }
});

// ---------------------------------------------------------------- gated (swiglu, geglu)

const gatedOf = (g: Golden, c: Golden["gated"][number]): GatedActivationArgs => ({
  kind: c.kind,
  gate: f32(g.inputs[c.gate]),
  up: f32(g.inputs[c.up]),
});

Deno.test("gatedActivation reference: hand-derived values", () => {
  // silu(1) * 2 and gelu(1) * 2 (Phi(1) = 0.8413447460685429), each rounded once.
  deepStrictEqual([...gatedActivation({ kind: "swiglu", gate: f32([1, 0]), up: f32([2, 7]) })], [
    Math.fround(2 * 0.7310585786300049),
    0,
  ]);
  deepStrictEqual([...gatedActivation({ kind: "geglu", gate: f32([1]), up: f32([2]) })], [
    Math.fround(2 * 0.8413447460685429),
  ]);
  strictEqual(gatedActivation({ kind: "swiglu", gate: f32([]), up: f32([]) }).length, 0);
});

Deno.test("gatedActivation reference matches torch goldens; the activation is of the gate, and geglu's gelu is the erf form", async () => {
  const g = await golden();
  ok(g.gated.length === 6, "swiglu and geglu on three inputs");
  let swapped = 0, tanhForm = 0;
  for (const c of g.gated) {
    const args = gatedOf(g, c), expected = f32(c.out);
    assertClose(gatedActivation(args), expected, referenceTolerance, `torch ${c.kind} on ${c.gate}`);
    // The alternatives: the activation of up times the gate; geglu through gelu_tanh.
    const f = c.kind === "swiglu" ? "silu" : "gelu";
    const other = activation({ kind: f, x: args.up }).map((v, i) => v * args.gate[i]);
    swapped = Math.max(swapped, ...other.map((v, i) => Math.abs(v - expected[i])));
    if (c.kind === "geglu") {
      const tanh = activation({ kind: "gelu_tanh", x: args.gate }).map((v, i) => v * args.up[i]);
      tanhForm = Math.max(tanhForm, ...tanh.map((v, i) => Math.abs(v - expected[i]) / (1 + Math.abs(expected[i]))));
    }
  }
  ok(swapped > 1, `activating up instead of the gate must differ, differs by ${swapped}`);
  ok(tanhForm > 1e-4, `geglu through gelu_tanh must differ, differs by ${tanhForm}`);
});

/** torch's gated results at non-finite points, but geglu at gate +Infinity: the limit (gelu(+inf) = inf, see above). */
async function expectedGatedNonFinite(kind: GatedActivationKind): Promise<number[]> {
  const torch = (await golden()).gated_nonfinite[kind].map(fromPython);
  if (kind === "swiglu") return torch;
  ok(Number.isNaN(torch[1]), `torch's geglu at gate +inf is ${torch[1]}, no longer NaN: drop the exception`);
  return [torch[0], Infinity, ...torch.slice(2)];
}
const GATED_GATE = f32([NaN, Infinity, -Infinity, Infinity, 1]), GATED_UP = f32([2, 2, 2, 0, NaN]);

Deno.test("gatedActivation reference: NaN and ±Infinity give what torch gives (geglu at gate +Infinity: the limit)", async () => {
  for (const kind of GATED_ACTIVATION_KINDS) {
    const out = gatedActivation({ kind, gate: GATED_GATE, up: GATED_UP });
    assertClose(out, await expectedGatedNonFinite(kind), { atol: 0, rtol: 0 }, kind);
  }
});

async function rejectsBadGated(run: (args: GatedActivationArgs) => unknown): Promise<void> {
  const gate = f32([1, 2, 3]);
  await assertThrowsMessage(
    () => run({ kind: "swiglu", gate, up: f32([1, 2]) }),
    "gatedActivation: up must have length gate.length = 3, got 2",
  );
  await assertThrowsMessage(
    () => run({ kind: "reglu" as GatedActivationKind, gate, up: gate }),
    'gatedActivation: kind must be one of "swiglu", "geglu", got "reglu"',
  );
  await assertThrowsMessage(
    () => run({ kind: "geglu", gate: [1] as unknown as Float32Array, up: gate }),
    "gatedActivation: gate must be a Float32Array, got Array",
  );
  await assertThrowsMessage(() => run(undefined as unknown as GatedActivationArgs), "gatedActivation: args must be");
}

Deno.test("gatedActivation reference: bad input throws naming the argument", () => rejectsBadGated(gatedActivation));

gpuTest("gatedActivation GPU: bad input throws before dispatch; the plan's bindings, grid and cost", async (gpu) => {
  await rejectsBadGated((args) => gatedActivationGpu(gpu, args));
  await assertThrowsMessage(
    () => gatedActivationPlan(gpu, { kind: "swiglu", n: 4 }, { override: "kernel" }),
    'override "kernel" is not a variant of entry point "gated"',
  );
  const plan = gatedActivationPlan(gpu, { kind: "swiglu", n: 4099 });
  deepStrictEqual(plan.bindings.map((b) => [b.name, b.length, b.role]), [
    ["gate", 4099, "input"],
    ["up", 4099, "input"],
    ["out", 4099, "output"],
  ]);
  deepStrictEqual([plan.workgroups, plan.cost], [3, { bytes: 12 * 4099, flops: 5 * 4099 }]);
  deepStrictEqual(gatedActivationPlan(gpu, { kind: "geglu", n: 0 }).workgroups, 0);
});

gpuTest("gatedActivation GPU matches torch goldens, and NaN and ±Infinity as the reference", async (gpu) => {
  const g = await golden();
  for (const c of g.gated) {
    assertClose(await gatedActivationGpu(gpu, gatedOf(g, c)), f32(c.out), kernelTolerance, `${c.kind} on ${c.gate}`);
  }
  // Ten elements: two whole vec4s through the streaming loop and two through the tail.
  const gate = f32([...GATED_GATE, ...GATED_GATE]), up = f32([...GATED_UP, ...GATED_UP]);
  for (const kind of GATED_ACTIVATION_KINDS) {
    const once = await expectedGatedNonFinite(kind);
    assertClose(await gatedActivationGpu(gpu, { kind, gate, up }), [...once, ...once], { atol: 0, rtol: 0 }, kind);
  }
});

// Lengths around the kernel's geometry (as for `kernel`: partial vec4s, whole and partial 2048-element
// blocks), gates over [-8, 8) and ups over [-2, 2), and the points where the gate's activation goes
// wrong first. The product's rounding adds half an ULP to the activation's error, which the kernel
// tolerance covers.
const gatedCases = GATED_ACTIVATION_KINDS.flatMap((kind) => [
  ...[1, 3, 4, 5, 2047, 2048, 2049, 4099, 5001].map((n) => ({
    label: `${kind} n=${n}`,
    args: { kind, gate: randomF32(n, n, -8, 8), up: randomF32(n, n + 1, -2, 2) },
  })),
  { label: `${kind} special`, args: { kind, gate: SPECIAL, up: randomF32(SPECIAL.length, 9, -2, 2) } },
]);
checkAgainstReference(
  "gatedActivation",
  KERNELS,
  "gated",
  gatedCases,
  gatedActivation,
  gatedActivationGpu,
  kernelTolerance,
);
checkAgainstReference(
  "gatedActivation, grid-stride over 2 workgroups",
  KERNELS,
  "gated",
  GATED_ACTIVATION_KINDS.flatMap((kind) =>
    [3, 5 * 4096 + 7].map((n) => ({
      label: `${kind} n=${n}`,
      args: { kind, gate: randomF32(n, n, -8, 8), up: randomF32(n, n + 1, -2, 2) },
    }))
  ),
  gatedActivation,
  (gpu, args, options) => gatedActivationGpu(twoWorkgroups(gpu), args, options),
  kernelTolerance,
);

gpuTest(
  "activation GPU: a tensor past maxStorageBufferBindingSize is refused, naming it, before upload",
  async (gpu) => {
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 1024 });
    const x = randomF32(512, 1); // 2,048 bytes
    const refusal = async (run: () => Promise<unknown>, expected: string) => {
      let error: unknown;
      try {
        await run();
      } catch (e) {
        error = e;
      }
      ok(error instanceof LimitError, `expected a LimitError, got ${error}`);
      strictEqual(error.message, expected);
    };
    await refusal(
      () => activationGpu(small, { kind: "silu", x }),
      "activation/kernel: binding 0 (x) needs maxStorageBufferBindingSize >= 2048, but this device allows 1024",
    );
    await refusal(
      () => gatedActivationGpu(small, { kind: "swiglu", gate: x, up: x }),
      "activation/gated: binding 0 (gate) needs maxStorageBufferBindingSize >= 2048, but this device allows 1024",
    );
  },
);

Deno.test("swigluPairs reference: gate at even columns, up at odd ones, placed at col0; swiglu's function", () => {
  const x = new Float32Array([0, 5, 1, 2, -1, 3, 2, -4]);
  const out = new Float32Array([9, 9, 9, 9, 9, 9]);
  const got = swigluPairs({ x, out, rows: 2, pairs: 2, outCols: 3, col0: 1 });
  const want = gatedActivation({
    kind: "swiglu",
    gate: new Float32Array([0, 1, -1, 2]),
    up: new Float32Array([5, 2, 3, -4]),
  });
  deepStrictEqual([...got], [9, want[0], want[1], 9, want[2], want[3]]);
  // Read as (up, gate) instead, the pairs give other values.
  notStrictEqual(
    got[2],
    gatedActivation({ kind: "swiglu", gate: new Float32Array([2]), up: new Float32Array([1]) })[0],
  );
});

checkAgainstReference(
  "swigluPairs",
  KERNELS,
  "gated_pairs",
  [
    { rows: 1, pairs: 1, outCols: 1, col0: 0 },
    { rows: 3, pairs: 300, outCols: 700, col0: 257 },
    { rows: 2, pairs: 513, outCols: 513, col0: 0 },
  ].map((shape, i) => ({
    label: `${shape.rows}x${shape.pairs} pairs into ${shape.outCols} at ${shape.col0}`,
    args: {
      ...shape,
      x: randomF32(2 * shape.rows * shape.pairs, 40 + i, -8, 8),
      out: randomF32(shape.rows * shape.outCols, 50 + i),
    },
  })),
  swigluPairs,
  swigluPairsGpu,
  kernelTolerance,
);
