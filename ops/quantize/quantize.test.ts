import { deepStrictEqual, notDeepStrictEqual, strictEqual } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  eachVariant,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import type { ResidentDevice } from "../../harness/device.ts";
import { packQ8 } from "../matvec/reference.ts";
import {
  KERNELS,
  quantize,
  type QuantizeArgs,
  quantizeGpu,
  quantizePacked,
  quantizePackedGpu,
  quantizePackedPlan,
  quantizePlan,
} from "./mod.ts";

interface Golden {
  meta: { torch: string };
  cases: { label: string; rows: number; cols: number; x: number[]; codes: number[]; scales: number[] }[];
}
const golden = () => loadGolden<Golden>(new URL("./goldens/quantize.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);
const row = (xs: number[]) => quantize({ x: f32(xs), rows: 1, cols: xs.length });

// Codes are decided exactly everywhere: they must agree exactly.
const exact = { atol: 0, rtol: 0 };

Deno.test("quantize reference: hand-derived values", () => {
  // absmax 4 (a negative element), so codes are x * 127 / 4: 1 -> 31.75 -> 32.
  const { codes, scales } = row([-4, 1, 0, 4]);
  deepStrictEqual([...codes], [-127, 32, 0, 127]);
  deepStrictEqual([...scales], [Math.fround(4 / 127)]);
  // Rows are independent; -63.5 and 63.5 are ties, both rounded up.
  const two = quantize({ x: f32([1, -0.5, 10, 5]), rows: 2, cols: 2 });
  deepStrictEqual([...two.codes], [127, -63, 127, 64]);
  deepStrictEqual([...two.scales], [Math.fround(1 / 127), Math.fround(10 / 127)]);
});

Deno.test("quantize reference: ties go toward +Infinity (2.5 -> 3, -2.5 -> -2, 0.5 -> 1)", () => {
  // absmax 127 makes each quotient x itself.
  const x = [127, 2.5, -2.5, 0.5, -0.5, 1.5, -1.5, 3.5];
  const expected = [127, 3, -2, 1, 0, 2, -1, 4];
  deepStrictEqual([...row(x).codes], expected);
  // Ties to even (torch.round) and ties away from zero (C's round) each give something else.
  const toEven = x.map((v) => v - Math.floor(v) === 0.5 ? 2 * Math.round(v / 2) : Math.round(v));
  const awayFromZero = x.map((v) => Math.sign(v) * Math.floor(Math.abs(v) + 0.5));
  notDeepStrictEqual(toEven, expected);
  notDeepStrictEqual(awayFromZero, expected);
  deepStrictEqual([toEven[1], awayFromZero[2]], [2, -3]);
});

Deno.test("quantize reference: the quotient is exact, not an f32 quotient", () => {
  const x = Math.fround(0.5 / 127);
  deepStrictEqual([...row([1, x]).codes], [127, 0]);
  // x * 127 / 1 is 0.49999999813735485; each f32 way of forming it rounds to 0.5, whose code is 1.
  strictEqual(x * 127, 0.49999999813735485);
  strictEqual(Math.fround(x * Math.fround(127 / 1)), 0.5);
  strictEqual(Math.fround(x / Math.fround(1 / 127)), 0.5);
});

Deno.test("quantize reference: a row of zeros gets scale 0 and codes 0, not NaN", () => {
  const { codes, scales } = quantize({ x: f32([0, 0, 0, 1, -0, 0]), rows: 2, cols: 3 });
  deepStrictEqual([...codes], [0, 0, 0, 127, 0, 0]);
  deepStrictEqual([...scales], [0, Math.fround(1 / 127)]);
});

Deno.test("quantize reference: bad input throws naming the argument", async () => {
  const x = f32([1, 2, 3, 4, 5, 6]);
  await assertThrowsMessage(() => quantize({ x, rows: 4, cols: 2 }), "x must have length rows * cols = 8, got 6");
  await assertThrowsMessage(() => quantize({ x, rows: 0, cols: 6 }), "rows must be an integer >= 1, got 0");
  await assertThrowsMessage(() => quantize({ x, rows: -2, cols: -3 }), "rows must be an integer >= 1, got -2");
  await assertThrowsMessage(() => quantize({ x, rows: 2, cols: 1.5 }), "cols must be an integer >= 1, got 1.5");
  await assertThrowsMessage(
    () => quantize({ x: f32([1, Infinity]), rows: 1, cols: 2 }),
    "x must be finite (an int8 code has no value for Inf or NaN), but x[1] is Infinity",
  );
  await assertThrowsMessage(
    () => quantize({ x: new Int32Array(6) as unknown as Float32Array, rows: 2, cols: 3 }),
    "x must be a Float32Array, got Int32Array",
  );
});

Deno.test("quantize reference matches goldens", async () => {
  const { meta, cases } = await golden();
  for (const c of cases) {
    const { codes, scales } = quantize({ x: f32(c.x), rows: c.rows, cols: c.cols });
    assertClose(codes, c.codes, exact, `torch ${meta.torch} ${c.label} codes`);
    // absmax / 127 in f32, correctly rounded on both sides.
    assertClose(scales, f32(c.scales), exact, `torch ${meta.torch} ${c.label} scales`);
  }
});

gpuTest("quantize GPU matches goldens", async (gpu) => {
  for (const c of (await golden()).cases) {
    const { codes, scales } = await quantizeGpu(gpu, { x: f32(c.x), rows: c.rows, cols: c.cols });
    assertClose(codes, c.codes, exact, `${c.label} codes`);
    assertClose(scales, f32(c.scales), exact, `${c.label} scales`);
  }
});

gpuTest("quantize GPU: plans fold past 65,535 workgroups and state their cost", (gpu) => {
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  // [rows, cols, rows per workgroup of kernel.nvidia]: a row of whole vec4s up to 8192 columns takes the
  // least power of two of invocations holding it in 8 vec4s each (cols / 32 for cols a power of two);
  // longer or misaligned rows take a workgroup each. The portable kernel always takes one row.
  const shapes = [
    [3, 5, 1],
    [70_000, 2, 1],
    [300, 8, 256],
    [37, 132, 32],
    [5, 4096, 2],
    [4, 8192, 1],
    [3, 8196, 1],
    [20_000_000, 4, 256],
    [70_000, 8192, 1],
  ];
  for (const [rows, cols, rowsPerWorkgroup] of shapes) {
    const portable = quantizePlan(gpu, { rows, cols }, { override: "kernel" });
    const nvidia = quantizePlan(gpu, { rows, cols }, { override: "kernel.nvidia" });
    deepStrictEqual(portable.workgroups, foldWorkgroups(rows, max), `kernel rows=${rows} cols=${cols}`);
    deepStrictEqual(
      nvidia.workgroups,
      foldWorkgroups(Math.ceil(rows / rowsPerWorkgroup), max),
      `nvidia rows=${rows} cols=${cols}`,
    );
    for (const plan of [portable, nvidia]) {
      deepStrictEqual(plan.cost, { bytes: 8 * rows * cols + 4 * rows, flops: 3 * rows * cols + rows });
    }
  }
});

gpuTest("quantize GPU: bad input throws before dispatch", async (gpu) => {
  const x = f32([1, 2, 3, 4]);
  await assertThrowsMessage(
    () => quantizeGpu(gpu, { x, rows: 3, cols: 2 }),
    "x must have length rows * cols = 6, got 4",
  );
  await assertThrowsMessage(() => quantizeGpu(gpu, { x, rows: 2, cols: 0 }), "cols must be an integer >= 1");
  await assertThrowsMessage(() => quantizeGpu(gpu, { x: f32([NaN]), rows: 1, cols: 1 }), "x must be finite");
  await assertThrowsMessage(
    () => quantizeGpu(gpu, { x, rows: 1, cols: 4 }, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant of entry point "kernel"',
  );
});

// Rows of 1, 255, 256, 257 and 4099 columns (shorter and longer than the 256-wide workgroup, so
// the strided loop and the reduction both matter), rows of 8192 and 8196 (the longest kernel.nvidia
// holds in registers, and just past it), short rows that kernel.nvidia packs several to a workgroup
// with the last workgroup part empty (300 x 8: 256 a workgroup; 37 x 132: 32; 5 x 4096: 2), then
// three rows of 600: zeros; random with the absmax as its last element; and exact ties (absmax 127,
// so each quotient is the value itself) interleaved with values just above and just below them;
// then rows whose absmax is below 2^-100 or above 2^126 (where kernel.nvidia divides exactly
// throughout), one with subnormal elements; and a row of values within a few ulps of ties under an
// absmax whose 127 / absmax is inexact (where kernel.nvidia's f32 quotient must hand over to the
// exact division). The last two also padded with zeros to 8196 columns and to an odd width, so
// each of kernel.nvidia's paths (held in registers, two passes over vec4s, two passes over single
// elements) takes them.
function cases(): { label: string; args: QuantizeArgs }[] {
  const shapes = [
    [1, 1],
    [1, 255],
    [3, 256],
    [2, 257],
    [1, 4099],
    [7, 33],
    [2, 8192],
    [1, 8196],
    [3, 4],
    [300, 8],
    [37, 132],
    [5, 4096],
  ];
  const random = shapes.map(([rows, cols]) => ({
    label: `rows=${rows} cols=${cols}`,
    args: { x: randomF32(rows * cols, rows + cols, -3, 3), rows, cols },
  }));
  const cols = 600;
  const zeros = new Float32Array(cols);
  const lastIsLargest = randomF32(cols, 9, -1, 1);
  lastIsLargest[cols - 1] = -7;
  const ties = Float32Array.from({ length: cols }, (_, k) => {
    const tie = (k % 254) - 126.5;
    // Scaling by 1 +- 2^-23 moves a value by one or two ulps, never zero.
    return k % 3 === 0 ? tie : tie * (1 + (k % 3 === 1 ? 2 ** -23 : -(2 ** -23)));
  });
  ties[cols - 1] = 127;
  const special = new Float32Array([...zeros, ...lastIsLargest, ...ties]);
  // Exact ties through a row of 1024: 256 vec4s, all eight of kernel.nvidia's register slots full
  // (the 600-wide rows above fill five), so each slot's hand-over to the exact division is tested.
  const slotTies = Float32Array.from({ length: 1024 }, (_, k) => (k % 254) - 126.5);
  slotTies[1023] = 127;
  // Within 4 ulps of every tie (k - 0.5) * absmax / 127, absmax f32(1.4384): 127 / absmax is not
  // an f32, and for six of these an f32 quotient lands on the other side of the tie than the exact
  // one (and for others exactly on it).
  const absmax = Math.fround(1.4384);
  const nearTies = new Float32Array(1144);
  const bits = new Int32Array(nearTies.buffer);
  for (let k = 1; k <= 127; k++) {
    for (let d = -4; d <= 4; d++) {
      const i = (k - 1) * 9 + d + 4;
      nearTies[i] = ((k - 0.5) * absmax) / 127;
      bits[i] += d;
      if (i % 2 === 1) nearTies[i] = -nearTies[i];
    }
  }
  nearTies[1143] = absmax;
  const tiny = randomF32(64, 5, -1, 1).map((v, k) => v * (k % 2 ? 1e-33 : 1e-40));
  const huge = randomF32(64, 6, -1, 1).map((v) => v * 3e38);
  const extremes = new Float32Array([...tiny, ...huge]);
  // Each of rows rows of x ([rows, cols]) followed by zeros to `width` columns.
  const padded = (x: Float32Array, rows: number, cols: number, width: number) => {
    const out = new Float32Array(rows * width);
    for (let r = 0; r < rows; r++) out.set(x.subarray(r * cols, (r + 1) * cols), r * width);
    return out;
  };
  return [
    ...random,
    { label: "zeros, last-element absmax, ties", args: { x: special, rows: 3, cols } },
    { label: "ties in every register slot, cols=1024", args: { x: slotTies, rows: 1, cols: 1024 } },
    ...[1144, 8196, 1145].map((width) => ({
      label: `near ties under an inexact 127 / absmax, cols=${width}`,
      args: { x: padded(nearTies, 1, 1144, width), rows: 1, cols: width },
    })),
    ...[64, 8196, 65].map((width) => ({
      label: `absmax below 2^-100 (with subnormals), above 2^126, cols=${width}`,
      args: { x: padded(extremes, 2, 64, width), rows: 2, cols: width },
    })),
  ];
}
checkAgainstReference("quantize codes", KERNELS, "kernel", cases(), (a) => quantize(a).codes, async (gpu, a, o) => {
  return (await quantizeGpu(gpu, a, o)).codes;
}, exact);
checkAgainstReference("quantize scales", KERNELS, "kernel", cases(), (a) => quantize(a).scales, async (gpu, a, o) => {
  return (await quantizeGpu(gpu, a, o)).scales;
}, exact);

// A device that allows 2 workgroups per dimension, so a grid of 3 or 4 workgroups folds into
// [2, 2, 1] (with 3, one workgroup has no rows). It poisons outputs like the shared one.
function twoWorkgroups(gpu: ResidentDevice): ResidentDevice {
  const low = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 2 });
  low.poisonOutputs = true;
  return low;
}
// [cols, rows per workgroup of kernel.nvidia] (the portable kernel takes one row per workgroup): a row
// per workgroup, and 256 and 2 sharing one.
const FOLDED_WIDTHS = [[257, 1], [8, 256], [4096, 2]];
eachVariant(KERNELS, "kernel", (variant) => {
  gpuTest(`quantize: ${variant} matches the reference on a folded grid`, async (gpu) => {
    const low = twoWorkgroups(gpu);
    for (const [cols, nvidiaRows] of FOLDED_WIDTHS) {
      const perWorkgroup = variant === "kernel.nvidia" ? nvidiaRows : 1;
      for (const rows of [3 * perWorkgroup, 4 * perWorkgroup - 1]) {
        const args = { x: randomF32(rows * cols, rows + cols, -3, 3), rows, cols };
        const label = `${variant} rows=${rows} cols=${cols}`;
        deepStrictEqual(quantizePlan(low, args, { override: variant }).workgroups, [2, 2, 1], label);
        const expected = quantize(args);
        const { codes, scales } = await quantizeGpu(low, args, { override: variant });
        assertClose(codes, expected.codes, exact, `${label} codes`);
        assertClose(scales, expected.scales, exact, `${label} scales`);
      }
    }
  });
});

// The packed entry point: the same codes, in packQ8's words (rows whose length is not a multiple of
// 4 end in a padded word), held exactly to the reference over every case above.
checkAgainstReference(
  "quantize packed",
  KERNELS,
  "packed",
  cases(),
  (a) => quantizePacked(a).packed,
  async (gpu, a, o) => {
    return (await quantizePackedGpu(gpu, a, o)).packed;
  },
  exact,
);
// Its scales are decided exactly too (exact_scale.wgsl), subnormal ones included.
checkAgainstReference(
  "quantize packed scales",
  KERNELS,
  "packed",
  cases(),
  (a) => quantizePacked(a).scales,
  async (gpu, a, o) => {
    return (await quantizePackedGpu(gpu, a, o)).scales;
  },
  exact,
);

Deno.test("quantize reference: packed is packQ8 of the codes, least significant byte first", () => {
  const args = { x: new Float32Array([127, 2.5, -2.5, 0.5, 1, 0, 0, 0, -127, 1, 1, 1, 1, 1]), rows: 2, cols: 7 };
  const { packed, scales } = quantizePacked(args);
  deepStrictEqual([...packed], [0x01fe037f, 0x00000001, 0x01018100, 0x00010101]);
  deepStrictEqual(packed, packQ8(quantize(args).codes, 2, 7));
  deepStrictEqual(scales, quantize(args).scales);
});

gpuTest(
  "quantize GPU: packed pieces written at a row offset fill one matrix, rows elsewhere untouched",
  async (gpu) => {
    const rows = 5, cols = 9, words = 3;
    const x = randomF32(rows * cols, 77, -2, 2);
    const expected = quantizePacked({ x, rows, cols });
    const packed = gpu.alloc("u32", (rows + 1) * words, "packed");
    const scales = gpu.alloc("f32", rows + 1, "scales");
    try {
      // A sentinel row at the end, then rows 0..1 and 2..4 from two pieces of x.
      const sentinel = gpu.upload(new Uint32Array(words).fill(0xdeadbeef), "sentinel");
      const enc = gpu.device.createCommandEncoder();
      enc.copyBufferToBuffer(sentinel.buffer, 0, packed.buffer, rows * words * 4, words * 4);
      gpu.device.queue.submit([enc.finish()]);
      for (const [first, count] of [[0, 2], [2, 3]]) {
        const piece = gpu.upload(x.slice(first * cols, (first + count) * cols), "piece");
        const plan = quantizePackedPlan(gpu, { rows: count, cols, rowOffset: first });
        await gpu.submit([plan, [piece, packed, scales]]);
        piece.buffer.destroy();
      }
      const got = (await gpu.read(packed)) as Uint32Array;
      deepStrictEqual([...got.subarray(0, rows * words)], [...expected.packed]);
      deepStrictEqual([...got.subarray(rows * words)], [0xdeadbeef, 0xdeadbeef, 0xdeadbeef]);
      assertClose(((await gpu.read(scales)) as Float32Array).subarray(0, rows), expected.scales, exact);
      sentinel.buffer.destroy();
    } finally {
      packed.buffer.destroy();
      scales.buffer.destroy();
    }
  },
);
