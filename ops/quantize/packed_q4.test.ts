import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { ResidentDevice } from "../../harness/device.ts";
import { assertClose, checkAgainstReference, gpuTest, randomF32 } from "../../harness/testing.ts";
import { packQ4, quantizeQ4G128 } from "../matvec/reference.ts";
import { KERNELS, type QuantizeArgs, quantizePackedQ4, quantizePackedQ4Gpu, quantizePackedQ4Plan } from "./mod.ts";

// Codes and scales are decided exactly everywhere (scales in integer arithmetic, not by WGSL's
// division, which is allowed 2.5 ULP): both must agree exactly.
const exact = { atol: 0, rtol: 0 };
const f32 = (xs: number[]) => new Float32Array(xs);
/** A value rounded to bf16 (to nearest even), as a checkpoint's weights are. */
const bf16 = (v: number) => {
  const bits = new Uint32Array(f32([v]).buffer)[0];
  return new Float32Array(new Uint32Array([(bits + 0x7fff + ((bits >>> 16) & 1)) & 0xffff0000]).buffer)[0];
};

Deno.test("quantize reference: packed_q4 is quantizeQ4G128 in packQ4's words, a scale per 128 columns", () => {
  // Row 0: absmax 7 in group 0, so codes are the values; 3.5 -> 4 and -3.5 -> -3 (ties toward
  // +Infinity); group 1 (columns 128..129) has absmax 14. Row 1: zeros, then a lone 1 at column 129.
  const x = new Float32Array(2 * 130);
  x.set([7, 3.5, -3.5, 0.5, -0.5, 1, 0, 0, -7], 0);
  x.set([14, -7], 128);
  x[130 + 129] = 1;
  const { packed, scales } = quantizePackedQ4({ x, rows: 2, cols: 130 });
  // 17 words a row: 7, 4, -3, 1, 0, 1, 0, 0 -> 0x00101d47; -7 alone -> 0x9; group 1: 7 and
  // -7 * 7 / 14 = -3.5 -> -3, so 0xd7. Row 1's 1 is the second code of its last word: 0x70.
  strictEqual(packed.length, 34);
  deepStrictEqual([packed[0], packed[1], packed[16]], [0x00101d47, 0x9, 0xd7]);
  deepStrictEqual([...packed.subarray(2, 16)], new Array(14).fill(0));
  deepStrictEqual([...packed.subarray(17)], [...new Array(16).fill(0), 0x70]);
  deepStrictEqual([...scales], [1, 2, 0, 1 / 7].map(Math.fround));
  const q = quantizeQ4G128({ x, rows: 2, cols: 130 });
  deepStrictEqual(packed, packQ4(q.codes, 2, 130));
  deepStrictEqual(scales, q.scales);
});

// Random rows of awkward widths: 1 column; under a word (7); not a multiple of 8 (9, 37, 300, 1001);
// exactly a group (128) and just past it (129: a last group of one column); 4099 (33 groups); rows
// that share a workgroup with their neighbours' groups (37 x 37: 37 groups, so three workgroups,
// the last part empty), one row, and 300 rows of 8 (19 workgroups). Then groups built on ties.
function cases(): { label: string; args: QuantizeArgs }[] {
  const shapes = [[1, 1], [1, 7], [2, 9], [37, 37], [3, 128], [2, 129], [2, 300], [1, 1001], [1, 4099], [300, 8]];
  const random = shapes.map(([rows, cols]) => ({
    label: `rows=${rows} cols=${cols}`,
    args: { x: randomF32(rows * cols, 3 * rows + cols, -3, 3), rows, cols },
  }));
  // Group 0: absmax 7, every tie k + 0.5 (k in -7..6) and values one ulp either side of each.
  // Groups 1..8: bf16 weights with absmax drawn at random (rounded to bf16) and every other element
  // at exactly half of it (the exact tie 3.5 or -3.5), where w * (7 / absmax), the reciprocal
  // rounded first, lands on either side of the tie for some absmax (0.04711914 and 0.20605469 among
  // the fortune model's); the rest random bf16 values below it. Group 9: zeros. Group 10 (44
  // columns): absmax subnormal.
  const ties: number[] = [7];
  for (let k = -7; k < 7; k++) {
    const tie = k + 0.5;
    ties.push(tie, tie * (1 + 2 ** -23), tie * (1 - 2 ** -23));
  }
  while (ties.length < 128) ties.push(0.25 * (ties.length % 7));
  const halves: number[] = [];
  const draws = randomF32(8 * 128, 11, -1, 1);
  for (let g = 0; g < 8; g++) {
    const absmax = g === 0 ? 0.04711914 : g === 1 ? 0.20605469 : bf16(0.01 + 0.3 * Math.abs(draws[128 * g]));
    halves.push(g % 2 ? -absmax : absmax);
    for (let i = 1; i < 128; i++) {
      halves.push(i % 2 ? (i % 4 === 1 ? 0.5 : -0.5) * absmax : bf16(draws[128 * g + i] * absmax));
    }
  }
  const subnormal = Array.from({ length: 44 }, (_, i) => (i % 2 ? -1 : 1) * (i + 1) * 2 ** -140);
  const row = f32([...ties, ...halves, ...new Array(128).fill(0), ...subnormal]);
  const width = row.length; // 10 * 128 + 44
  const huge = randomF32(300, 8, -1, 1).map((v) => v * 3e38);
  return [
    ...random,
    { label: `ties, bf16 halves, zeros, subnormals (cols=${width})`, args: { x: row, rows: 1, cols: width } },
    {
      label: "the same row cut at 300 twice, and a row near f32's largest (cols=300)",
      args: { x: f32([...row.subarray(0, 300), ...row.subarray(width - 300), ...huge]), rows: 3, cols: 300 },
    },
  ];
}
checkAgainstReference("quantize packed_q4", KERNELS, "packed_q4", cases(), (a) => quantizePackedQ4(a).packed, async (
  gpu,
  a,
  o,
) => (await quantizePackedQ4Gpu(gpu, a, o)).packed, exact);
checkAgainstReference(
  "quantize packed_q4 scales",
  KERNELS,
  "packed_q4",
  cases(),
  (a) => quantizePackedQ4(a).scales,
  async (
    gpu,
    a,
    o,
  ) => (await quantizePackedQ4Gpu(gpu, a, o)).scales,
  exact,
);

// A device that allows 2 workgroups per dimension, so 3 or 4 workgroups of 16 groups (48, 64 and 54
// groups of 128 columns below) fold into [2, 2, 1] (with 3, one has nothing to do). It poisons
// outputs, so an unwritten word shows.
gpuTest("quantize GPU: packed_q4 matches the reference on a folded grid", async (gpu) => {
  const low: ResidentDevice = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 2 });
  low.poisonOutputs = true;
  for (const [rows, cols] of [[24, 129], [64, 100], [9, 700]]) {
    const args = { x: randomF32(rows * cols, rows * cols, -2, 2), rows, cols };
    const label = `rows=${rows} cols=${cols}`;
    deepStrictEqual(quantizePackedQ4Plan(low, args).workgroups, [2, 2, 1], label);
    const expected = quantizePackedQ4(args);
    const got = await quantizePackedQ4Gpu(low, args);
    assertClose(got.packed, expected.packed, exact, `${label} packed`);
    assertClose(got.scales, expected.scales, exact, `${label} scales`);
  }
});

gpuTest(
  "quantize GPU: packed_q4 pieces written at a row offset fill one matrix, rows elsewhere untouched",
  async (gpu) => {
    const rows = 5, cols = 300, words = 38, groups = 3;
    const x = randomF32(rows * cols, 78, -2, 2);
    const expected = quantizePackedQ4({ x, rows, cols });
    const packed = gpu.alloc("u32", (rows + 1) * words, "packed");
    const scales = gpu.alloc("f32", (rows + 1) * groups, "scales");
    const sentinel = gpu.upload(new Uint32Array(words).fill(0xdeadbeef), "sentinel");
    try {
      // A sentinel row at the end (words and scales), then rows 0..1 and 2..4 from two pieces of x.
      const enc = gpu.device.createCommandEncoder();
      enc.copyBufferToBuffer(sentinel.buffer, 0, packed.buffer, rows * words * 4, words * 4);
      enc.copyBufferToBuffer(sentinel.buffer, 0, scales.buffer, rows * groups * 4, groups * 4);
      gpu.device.queue.submit([enc.finish()]);
      for (const [first, count] of [[0, 2], [2, 3]]) {
        const piece = gpu.upload(x.slice(first * cols, (first + count) * cols), "piece");
        const plan = quantizePackedQ4Plan(gpu, { rows: count, cols, rowOffset: first });
        await gpu.submit([plan, [piece, packed, scales]]);
        piece.buffer.destroy();
      }
      const got = (await gpu.read(packed)) as Uint32Array;
      deepStrictEqual([...got.subarray(0, rows * words)], [...expected.packed]);
      deepStrictEqual([...got.subarray(rows * words)], new Array(words).fill(0xdeadbeef));
      const gotScales = (await gpu.read(scales)) as Float32Array;
      assertClose(gotScales.subarray(0, rows * groups), expected.scales, exact);
      deepStrictEqual([...new Uint32Array(gotScales.slice(rows * groups).buffer)], new Array(groups).fill(0xdeadbeef));
    } finally {
      for (const t of [packed, scales, sentinel]) t.buffer.destroy();
    }
  },
);
