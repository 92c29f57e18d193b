// fused_gemv: the reference against torch (goldens/gen.py), its conventions, and every layout with every
// input and output step against the reference on the GPU: both paths of each quantised format, rows not
// a multiple of a workgroup's, an output offset, a grid folded into two dimensions.
import { deepStrictEqual as assertEquals } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  eachVariant,
  gpuTest,
  loadGolden,
  randomF32,
  randomInt32,
} from "../../harness/testing.ts";
import { gatedActivation } from "../activation/reference.ts";
import { packQ4, packQ8 } from "../matvec/reference.ts";
import {
  FUSED_GEMV_LAYOUTS,
  fusedGemv,
  type FusedGemvArgs,
  type FusedGemvFormat,
  fusedGemvGpu,
  type FusedGemvInput,
  fusedGemvLayout,
  type FusedGemvOutput,
  fusedGemvPlan,
  KERNELS,
} from "./mod.ts";

const EPS = 1e-5;

/** A weight as stored: f32, or codes packed with their scales. */
function weightOf(format: FusedGemvFormat, N: number, K: number, seed: number) {
  if (format === "f32") return { weight: randomF32(N * K, seed) };
  if (format === "q8") {
    return { weight: packQ8(randomInt32(N * K, seed, -127, 128), N, K), scales: randomF32(N, seed + 1, 0.001, 0.01) };
  }
  const scales = randomF32(N * Math.ceil(K / 128), seed + 1, 0.01, 0.2);
  return { weight: packQ4(randomInt32(N * K, seed, -7, 8), N, K), scales };
}

interface Golden {
  cases: {
    label: string;
    N: number;
    K: number;
    input: FusedGemvInput;
    output: FusedGemvOutput;
    out0: number;
    eps: number;
    weight: number[];
    x: number[];
    g: number[];
    before: number[];
    after: number[];
  }[];
}

Deno.test("fusedGemv reference matches torch: F.linear of x or F.rms_norm(x), stored, added, or SwiGLU of row pairs", async () => {
  const { cases } = await loadGolden<Golden>(new URL("./goldens/fused_gemv.json", import.meta.url));
  const f = (v: number[]) => Float32Array.from(v);
  for (const c of cases) {
    const { N, K, input, output, out0, eps } = c;
    const got = fusedGemv({
      N,
      K,
      input,
      output,
      out0,
      eps,
      format: "f32",
      weight: f(c.weight),
      x: f(c.x),
      normWeight: f(c.g),
      out: f(c.before),
    });
    assertClose(got, f(c.after), { atol: 1e-6, rtol: 1e-5 }, c.label);
  }
});

Deno.test("fusedGemv reference: SwiGLU takes row 2j as the gate (activation's swiglu of it), not row 2j + 1", () => {
  // W = I (4 x 4): y = x; pairs (x0, x1), (x2, x3).
  const weight = Float32Array.from({ length: 16 }, (_, i) => (i % 5 === 0 ? 1 : 0));
  const x = new Float32Array([-1, 3, 2, 0.5]);
  const got = fusedGemv({
    format: "f32",
    weight,
    x,
    out: new Float32Array(2),
    N: 4,
    K: 4,
    input: "plain",
    output: "swiglu",
  });
  const want = gatedActivation({ kind: "swiglu", gate: new Float32Array([-1, 2]), up: new Float32Array([3, 0.5]) });
  assertClose(got, want, { atol: 0, rtol: 1e-7 }, "gate first");
});

Deno.test("fusedGemv: bad sizes are refused by name, before any GPU work", async () => {
  const base = {
    format: "f32",
    weight: new Float32Array(12),
    x: new Float32Array(4),
    out: new Float32Array(3),
  } as const;
  await assertThrowsMessage(
    () => fusedGemv({ ...base, N: 3, K: 4, input: "plain", output: "swiglu" }),
    'fusedGemv: N must be even with output "swiglu"',
  );
  await assertThrowsMessage(
    () =>
      fusedGemv({
        ...base,
        weight: new Float32Array(9),
        x: new Float32Array(3),
        N: 3,
        K: 3,
        input: "plain",
        output: "store",
      }),
    "fusedGemv: K must be a multiple of 4",
  );
  await assertThrowsMessage(
    () => fusedGemv({ ...base, N: 3, K: 4, input: "norm", output: "store" }),
    "fusedGemv: normWeight must be a Float32Array",
  );
  await assertThrowsMessage(
    () => fusedGemv({ ...base, N: 3, K: 4, out0: 1, input: "plain", output: "add" }),
    "fusedGemv: out.length must be an integer >= 4, got 3",
  );
});

Deno.test("fusedGemv: a weight takes its format's first layout whose minRows it reaches", () => {
  for (const format of ["f32", "q8", "q4g128"] as const) {
    const entries = FUSED_GEMV_LAYOUTS[format];
    assertEquals(entries.at(-1)!.minRows, 0, `${format}: every weight has a layout`);
    for (const [i, e] of entries.entries()) {
      assertEquals(fusedGemvLayout(format, e.minRows), e.entry, `${format} at ${e.minRows} rows`);
      if (i > 0) assertEquals(fusedGemvLayout(format, entries[i - 1].minRows - 1), e.entry);
    }
  }
});

/** Shapes: both paths of each quantised format (aligned rows and word by word, q4g128's half-padded last word), several tiles, rows not a multiple of a workgroup's. */
const SHAPES: Record<FusedGemvFormat, [number, number][]> = {
  f32: [[38, 36], [22, 1040]],
  q8: [[38, 48], [22, 36], [10, 4160]],
  q4g128: [[38, 64], [22, 48], [18, 36], [10, 4352]],
};
const MODES: [FusedGemvInput, FusedGemvOutput][] = [
  ["norm", "store"],
  ["plain", "add"],
  ["norm", "swiglu"],
  ["plain", "swiglu"],
  ["plain", "store"],
  ["norm", "add"],
];

for (const format of ["f32", "q8", "q4g128"] as const) {
  for (const { entry } of FUSED_GEMV_LAYOUTS[format]) {
    eachVariant(KERNELS, entry, (variant) => {
      gpuTest(
        `fused_gemv/${variant}: every input and output step, at an offset, on a folded grid, match the reference`,
        async (gpu) => {
          // The grid folded into two dimensions (3 workgroups across), as past 65,535 workgroups.
          const folded = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 3 });
          let seed = 1;
          for (const [N, K] of SHAPES[format]) {
            for (const [input, output] of MODES) {
              const label = `${variant} ${N}x${K} ${input}>${output}`;
              const out0 = 3;
              const written = output === "swiglu" ? N / 2 : N;
              const args: FusedGemvArgs = {
                format,
                N,
                K,
                input,
                output,
                out0,
                eps: EPS,
                ...weightOf(format, N, K, seed++),
                x: randomF32(K, seed++, -2, 2),
                normWeight: randomF32(K, seed++, 0.5, 1.5),
                out: randomF32(out0 + written + 5, seed++),
              };
              const got = await fusedGemvGpu(folded, args, { override: variant });
              // f32 sums of K terms of order 1 in another order: a few ulps of the row's magnitude.
              assertClose(got, fusedGemv(args), { atol: 4e-7 * K, rtol: 1e-5 }, label);
              // Outside its rows (or pairs) the output keeps what it held, bit for bit.
              assertEquals(
                [...got.subarray(0, out0), ...got.subarray(out0 + written)],
                [...args.out.subarray(0, out0), ...args.out.subarray(out0 + written)],
                label,
              );
            }
          }
        },
      );
    });
  }
}

gpuTest(
  "fusedGemvPlan: the layout by rows (a block's whole weight with layoutRows), NORM and OUTPUT as pipeline constants",
  async (gpu) => {
    const shape = { format: "q8", N: 2048, K: 2048, input: "norm", output: "swiglu" } as const;
    const plan = fusedGemvPlan(gpu, shape);
    assertEquals([plan.kernel.variant, plan.constants], ["q8_lanes128", { NORM: 1, OUTPUT: 2 }]);
    assertEquals(fusedGemvPlan(gpu, { ...shape, layoutRows: 16384 }).kernel.variant, "q8_lanes32");
    assertEquals(plan.workgroups, [256, 1, 1]); // 8 rows a workgroup
    await assertThrowsMessage(
      () => fusedGemvPlan(gpu, shape, { override: "q4_tiled" }),
      'fusedGemv: override "q4_tiled" is not a layout of format q8 (q8_lanes32, q8_lanes64, q8_lanes128)',
    );
  },
);
