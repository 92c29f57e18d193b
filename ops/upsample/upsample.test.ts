import { deepStrictEqual, ok } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import {
  KERNELS,
  nearestSourceIndex,
  nearestUpsample2d,
  type NearestUpsample2dArgs,
  nearestUpsample2dGpu,
  nearestUpsample2dPlan,
} from "./mod.ts";
import type { UpsampleVariant } from "./kernels.gen.ts";

/** What goldens/gen.py writes: outputs of inputs valued plane * 10000 + h * 100 + w. */
interface Golden {
  meta: { torch: string };
  cases: { label: string; N: number; C: number; H: number; W: number; outH: number; outW: number; out: number[] }[];
  rows: Record<string, number[]>;
  align_corners: { raised: boolean; message: string };
}
const loadUpsampleGolden = () => loadGolden<Golden>(new URL("./goldens/upsample.json", import.meta.url));
/** The input gen.py builds: each value encodes its position. */
const encoded = ({ N, C, H, W }: { N: number; C: number; H: number; W: number }) =>
  Float32Array.from({ length: N * C * H * W }, (_, e) => {
    const w = e % W, h = Math.floor(e / W) % H, plane = Math.floor(e / (W * H));
    return plane * 10000 + h * 100 + w;
  });
/** A golden case's arguments: its sizes and the encoded input. */
const argsOf = ({ N, C, H, W, outH, outW }: Golden["cases"][number]) => ({
  N,
  C,
  H,
  W,
  outH,
  outW,
  x: encoded({ N, C, H, W }),
});
const sourceRows = (h: number, outH: number) =>
  Array.from({ length: outH }, (_, oy) => nearestSourceIndex(oy, h, outH));

Deno.test("upsample reference: hand-derived 2x and 1 -> 3", () => {
  const x = new Float32Array([1, 2, 3, 4]);
  deepStrictEqual(
    [...nearestUpsample2d({ x, N: 1, C: 1, H: 2, W: 2, outH: 4, outW: 4 })],
    [1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4],
  );
  deepStrictEqual([...nearestUpsample2d({ x, N: 1, C: 4, H: 1, W: 1, outH: 1, outW: 3 })], [
    1,
    1,
    1,
    2,
    2,
    2,
    3,
    3,
    3,
    4,
    4,
    4,
  ]);
});

Deno.test("upsample reference: the f32 source index (H = 14 -> 46, row 23 copies row 6, not 7)", async () => {
  deepStrictEqual(nearestSourceIndex(23, 14, 46), 6);
  // Exact integer arithmetic and half-pixel centres ("nearest-exact") both say 7.
  deepStrictEqual(Math.floor((23 * 14) / 46), 7);
  deepStrictEqual(Math.floor((23 + 0.5) * (14 / 46)), 7);
  const golden = await loadUpsampleGolden();
  deepStrictEqual(sourceRows(14, 46), golden.rows["14 -> 46 size"], "torch's size= rows");
  deepStrictEqual(golden.rows["14 -> 46 size"][23], 6);
  ok(golden.rows["14 -> 46 nearest-exact"][23] === 7, "nearest-exact maps row 23 to 7 in torch");
  // The size= path, not scale_factor=: at H = 3 they map four output rows differently in torch.
  deepStrictEqual(sourceRows(3, 4), golden.rows["3 -> 4 size"]);
  ok(
    JSON.stringify(golden.rows["3 -> 4 scale_factor 1.6"]) !== JSON.stringify(golden.rows["3 -> 4 size"]),
    "scale_factor 1.6 maps rows differently",
  );
  ok(golden.align_corners.raised, `torch refuses align_corners with mode="nearest" (${golden.align_corners.message})`);
});

// torch's nearest_neighbor_compute_source_index computes floorf(dst_index * scale) in float, so the
// product rounds to f32 too: 25 * f32(2 / 50) is 0.99999998 in f64 but 1 in f32. No golden row holds
// such a case yet (goldens/gen.py's rows would need "2 -> 50 size"); the value is derived by hand.
gpuTest("upsample: the product dst * scale rounds to f32 (H = 2 -> 50, row 25 copies row 1, not 0)", async (gpu) => {
  deepStrictEqual(nearestSourceIndex(25, 2, 50), 1);
  deepStrictEqual(Math.floor(25 * Math.fround(2 / 50)), 0, "an f64 product would give row 0");
  const args = { x: new Float32Array([10, 20]), N: 1, C: 1, H: 2, W: 1, outH: 50, outW: 1 };
  const expected = Array.from({ length: 50 }, (_, oy) => (oy < 25 ? 10 : 20));
  deepStrictEqual([...nearestUpsample2d(args)], expected, "reference");
  deepStrictEqual([...await nearestUpsample2dGpu(gpu, args)], expected, "kernel");
});

Deno.test("upsample reference matches the torch goldens", async () => {
  const golden = await loadUpsampleGolden();
  ok(golden.cases.length > 0 && golden.meta.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    deepStrictEqual([...nearestUpsample2d(argsOf(c))], c.out, `torch ${c.label}`);
  }
});

gpuTest("upsample GPU matches the torch goldens", async (gpu) => {
  const golden = await loadUpsampleGolden();
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    deepStrictEqual([...await nearestUpsample2dGpu(gpu, argsOf(c))], c.out, `torch ${c.label}`);
  }
});

Deno.test("upsample reference: downsampling and bad input throw naming the argument", async () => {
  const x = new Float32Array(16);
  const base = { x, N: 1, C: 1, H: 4, W: 4, outH: 8, outW: 8 };
  await assertThrowsMessage(() => nearestUpsample2d({ ...base, outH: 3 }), "upsampling only), got 4x4 -> 3x8");
  await assertThrowsMessage(() => nearestUpsample2d({ ...base, outW: 2 }), "outH >= H and outW >= W expected");
  await assertThrowsMessage(
    () => nearestUpsample2d({ ...base, C: 2 }),
    "x must have length N * C * H * W = 32, got 16",
  );
  await assertThrowsMessage(() => nearestUpsample2d({ ...base, H: 0 }), "nearestUpsample2d: H must be an integer >= 1");
  await assertThrowsMessage(() => nearestUpsample2d({ ...base, outW: 2 ** 24 }), "must be < 2^24");
});

gpuTest("upsample GPU: downsampling and bad input throw before dispatch", async (gpu) => {
  const x = new Float32Array(16);
  const base = { x, N: 1, C: 1, H: 4, W: 4, outH: 8, outW: 8 };
  await assertThrowsMessage(() => nearestUpsample2dGpu(gpu, { ...base, outH: 2 }), "upsampling only");
  await assertThrowsMessage(() => nearestUpsample2dGpu(gpu, { ...base, W: 5 }), "x must have length");
  await assertThrowsMessage(
    () => nearestUpsample2dGpu(gpu, base, { override: "kernel.amd" as never }),
    'override "kernel.amd"',
  );
});

// Copies: exact. Rows of outW % 4 == 0 (tiles of two rows) and not (the stream), a partial last
// vec4, 1-element axes. Of the tiles: [3, 2, 5, 7] -> 13x20 has tiles that straddle two planes (13
// rows a plane) and pairs whose rows copy different source rows (5 -> 13); [1, 1, 3, 3] -> 7x4 ends
// on a tile of one row. The last two are past one block (4,096 output elements), so whole blocks of
// the stream take its four-vec4 path ([1, 3, 20, 21] -> 40x42) and the tiles span several workgroups.
const shapes = [
  [1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 3, 5],
  [2, 3, 14, 14, 46, 46],
  [1, 4, 7, 9, 16, 24],
  [3, 2, 5, 6, 11, 13],
  [1, 1, 33, 1, 67, 7],
  [1, 2, 32, 32, 64, 64],
  [1, 1, 3, 3, 3, 3],
  [3, 2, 5, 7, 13, 20],
  [1, 1, 3, 3, 7, 4],
  [1, 3, 20, 21, 40, 42],
  [2, 2, 16, 16, 32, 32],
];
checkAgainstReference<NearestUpsample2dArgs, UpsampleVariant>(
  "upsample",
  KERNELS,
  "kernel",
  shapes.map(([N, C, H, W, outH, outW], i) => ({
    label: `[${N}, ${C}, ${H}, ${W}] -> ${outH}x${outW}`,
    args: { x: randomF32(N * C * H * W, 50 + i), N, C, H, W, outH, outW },
  })),
  nearestUpsample2d,
  nearestUpsample2dGpu,
  { atol: 0, rtol: 0 },
);

gpuTest("upsample GPU: the tiles of two rows fold into y", async (gpu) => {
  // 2 x 3 planes of 61 x 40: 366 rows, 183 tiles of 10 vec4 columns, 1,830 invocations in 8 workgroups.
  const args = { x: randomF32(2 * 3 * 30 * 10, 7), N: 2, C: 3, H: 30, W: 10, outH: 61, outW: 40 };
  const plan = nearestUpsample2dPlan(gpu, args);
  deepStrictEqual(plan.workgroups, [8, 1, 1]);
  const [out] = await gpu.run({ ...plan, workgroups: foldWorkgroups(8, 3) }, [args.x]);
  assertClose(out, nearestUpsample2d(args), { atol: 0, rtol: 0 }, "folded 3 x 3 grid");
});
