// Non-finite input: the reference and the GPU entry points refuse it with one message; a plan run on
// resident tensors, which never sees its input on the host, marks what it cannot quantize instead
// (the row, or for packed_q4 the group of 128 columns: scale NaN, codes 0), and every other row or
// group is the reference's, bit for bit.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import { eachVariant, gpuTest, randomF32 } from "../../harness/testing.ts";
import {
  KERNELS,
  quantize,
  type QuantizeArgs,
  quantizeGpu,
  quantizePacked,
  quantizePackedGpu,
  quantizePackedPlan,
  quantizePackedQ4,
  quantizePackedQ4Gpu,
  quantizePackedQ4Plan,
  quantizePlan,
} from "./mod.ts";

const BAD = [NaN, Infinity, -Infinity];

/** The message `fn` throws. */
async function messageOf(fn: () => unknown): Promise<string> {
  try {
    await fn();
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("did not throw");
}

gpuTest("non-finite x: the reference and the GPU entry points refuse it with the same message", async (gpu) => {
  const pairs: [(a: QuantizeArgs) => unknown, (g: ResidentDevice, a: QuantizeArgs) => Promise<unknown>][] = [
    [quantize, quantizeGpu],
    [quantizePacked, quantizePackedGpu],
    [quantizePackedQ4, quantizePackedQ4Gpu],
  ];
  for (const bad of BAD) {
    const x = randomF32(12, 3, -2, 2);
    x[7] = bad;
    const args = { x, rows: 3, cols: 4 };
    for (const [reference, onGpu] of pairs) {
      const expected = `quantize: x must be finite (an int8 code has no value for Inf or NaN), but x[7] is ${bad}`;
      strictEqual(await messageOf(() => reference(args)), expected);
      strictEqual(await messageOf(() => onGpu(gpu, args)), expected);
    }
  }
});

/**
 * x `[4, cols]` with row 0 finite and rows 1-3 each holding one non-finite value (NaN first,
 * +Inf last, -Inf in the middle), and the same x with each of those values' runs of `span` columns
 * (the row, or its group of 128) set to zero: what the reference quantizes to codes 0 and scale 0.
 */
function marked(cols: number, span: number): { x: Float32Array; zeroed: Float32Array; spans: number[] } {
  const x = randomF32(4 * cols, cols, -3, 3);
  const zeroed = x.slice();
  const spans: number[] = [];
  for (const [row, col] of [[1, 0], [2, cols - 1], [3, cols >> 1]]) {
    x[row * cols + col] = BAD[row - 1];
    const first = Math.floor(col / span) * span;
    zeroed.fill(0, row * cols + first, row * cols + Math.min(cols, first + span));
    spans.push(row * Math.ceil(cols / span) + first / span);
  }
  return { x, zeroed, spans };
}

async function runResident(
  gpu: ResidentDevice,
  plan: KernelPlan,
  x: Float32Array,
): Promise<[Uint32Array, Float32Array]> {
  const tensors = [gpu.upload(x), ...plan.bindings.slice(1).map((b) => gpu.alloc(b.dtype, b.length))];
  try {
    await gpu.submit([plan, tensors]);
    return [
      new Uint32Array((await gpu.read(tensors[1])).buffer),
      (await gpu.read(tensors[2])) as Float32Array,
    ];
  } finally {
    for (const t of tensors) t.buffer.destroy();
  }
}

function expectMarks(
  label: string,
  got: [Uint32Array, Float32Array],
  codes: Uint32Array,
  scales: Float32Array,
  spans: number[],
) {
  const want = scales.slice();
  for (const s of spans) want[s] = NaN;
  deepStrictEqual([...got[1]].map(String), [...want].map(String), `${label}: scales (NaN where marked)`);
  deepStrictEqual(got[0], codes, `${label}: codes (0 where marked)`);
}

for (const cols of [8, 260]) {
  eachVariant(KERNELS, "kernel", (variant) => {
    gpuTest(`quantize ${variant} plan, cols ${cols}: a row with Inf or NaN gets scale NaN and codes 0`, async (gpu) => {
      const { x, zeroed, spans } = marked(cols, cols);
      const expected = quantize({ x: zeroed, rows: 4, cols });
      const got = await runResident(gpu, quantizePlan(gpu, { rows: 4, cols }, { override: variant }), x);
      expectMarks(variant, got, new Uint32Array(expected.codes.buffer), expected.scales, spans);
    });
  });
  eachVariant(KERNELS, "packed", (variant) => {
    gpuTest(`quantize ${variant} plan, cols ${cols}: a row with Inf or NaN gets scale NaN and codes 0`, async (gpu) => {
      const { x, zeroed, spans } = marked(cols, cols);
      const expected = quantizePacked({ x: zeroed, rows: 4, cols });
      const got = await runResident(gpu, quantizePackedPlan(gpu, { rows: 4, cols }, { override: variant }), x);
      expectMarks(variant, got, expected.packed, expected.scales, spans);
    });
  });
  eachVariant(KERNELS, "packed_q4", (variant) => {
    gpuTest(`quantize ${variant} plan, cols ${cols}: only the group of 128 with Inf or NaN is marked`, async (gpu) => {
      const { x, zeroed, spans } = marked(cols, 128);
      const expected = quantizePackedQ4({ x: zeroed, rows: 4, cols });
      const got = await runResident(gpu, quantizePackedQ4Plan(gpu, { rows: 4, cols }, { override: variant }), x);
      expectMarks(variant, got, expected.packed, expected.scales, spans);
    });
  });
}
