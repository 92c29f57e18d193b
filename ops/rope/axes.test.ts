import { deepStrictEqual, ok } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
  randomInt32,
  type Tolerance,
} from "../../harness/testing.ts";
import { KERNELS, ropeAxes, type RopeAxesArgs, ropeAxesGpu } from "./mod.ts";
import type { RopeVariant } from "./kernels.gen.ts";

/** The ropeAxes part of goldens/rope.json (see goldens/gen.py). */
interface AxesGolden {
  axesDims: number[];
  theta: number | number[];
  heads: number;
  positions: number[];
  x: number[];
  out: number[];
}
const loadAxesGolden = () =>
  loadGolden<{ zimage: AxesGolden; cosmos: AxesGolden }>(new URL("./goldens/rope.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);
function maxAbs(xs: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < xs.length; i++) m = Math.max(m, Math.abs(xs[i]));
  return m;
}

/** GPU against the reference: as rope's (an f32 angle, reduced, then a GPU's cos/sin), with |position| as the angle bound. */
function axesTolerance(args: RopeAxesArgs): Tolerance {
  return { atol: 2 * maxAbs(args.x) * (maxAbs(args.positions) * 2 ** -23 + 2 ** -19), rtol: 2 ** -22 };
}

async function checkAxesGolden(
  g: AxesGolden,
  pairing: "adjacent" | "half",
  run: (args: RopeAxesArgs) => Float32Array | Promise<Float32Array>,
  label: string,
) {
  const headDim = g.axesDims.reduce((s, d) => s + d, 0);
  const tokens = g.positions.length / g.axesDims.length;
  const args: RopeAxesArgs = {
    x: f32(g.x),
    tokens,
    heads: g.heads,
    headDim,
    axesDims: g.axesDims,
    theta: g.theta,
    positions: Int32Array.from(g.positions),
    pairing,
  };
  // torch rounds the angle to f32 and takes f32 cos/sin: |x| (|angle| 2^-23 + 2^-22).
  const tol = { atol: 2 * maxAbs(g.x) * (maxAbs(g.positions) * 2 ** -23 + 2 ** -19), rtol: 2 ** -21 };
  assertClose(await run(args), g.out, tol, label);
  return args;
}

Deno.test("ropeAxes reference matches Z-Image's RopeEmbedder + apply_rotary_emb (one theta, adjacent)", async () => {
  const g = (await loadAxesGolden()).zimage;
  const args = await checkAxesGolden(g, "adjacent", ropeAxes, "Z-Image");
  // Normalising the exponent by the head dim instead of the axis's own channel count differs.
  const byHead = ropeAxes({
    ...args,
    axesDims: [args.headDim],
    positions: args.positions.filter((_, i) => i % 3 === 2),
  });
  ok(byHead.some((v, i) => Math.abs(v - g.out[i]) > 1e-3), "the per-axis exponent is what torch computes");
});

Deno.test("ropeAxes reference matches Cosmos-Predict2's 3-D RoPE (theta per axis, pairing half)", async () => {
  const g = (await loadAxesGolden()).cosmos;
  deepStrictEqual(g.axesDims, [44, 42, 42]);
  assertClose(g.theta as number[], [10000, 42870.9, 42870.9], { atol: 0.05, rtol: 0 }, "Anima's thetas");
  const args = await checkAxesGolden(g, "half", ropeAxes, "Cosmos");
  // The alternatives are told apart: adjacent pairing, or one shared theta.
  const adjacent = ropeAxes({ ...args, pairing: "adjacent" });
  ok(adjacent.some((v, i) => Math.abs(v - g.out[i]) > 1e-2), "adjacent pairing differs");
  const shared = ropeAxes({ ...args, theta: 10000 });
  ok(shared.some((v, i) => Math.abs(v - g.out[i]) > 1e-2), "one theta differs");
});

Deno.test("ropeAxes reference: hand-derived values; per-axis exponent; half pairing with one axis is rotate_half", () => {
  // axes [2, 4], theta 100, positions (t, h) = (1, 2): pair 0 (axis 0) turns by 1; pairs 1, 2 (axis 1)
  // by 2 * 100^0 = 2 and 2 * 100^(-2/4) = 0.2 (normalised by the axis's 4 channels, not by 6).
  const out = ropeAxes({
    x: f32([1, 0, 1, 0, 1, 0]),
    tokens: 1,
    heads: 1,
    headDim: 6,
    axesDims: [2, 4],
    theta: 100,
    positions: new Int32Array([1, 2]),
  });
  assertClose(out, [Math.cos(1), Math.sin(1), Math.cos(2), Math.sin(2), Math.cos(0.2), Math.sin(0.2)], {
    atol: 0,
    rtol: 2 ** -23,
  });
  // One axis, pairing half: channel i with i + D/2, the rotate_half of HF Llama.
  const half = ropeAxes({
    x: f32([1, 0, 0, 0]),
    tokens: 1,
    heads: 1,
    headDim: 4,
    axesDims: [4],
    theta: 100,
    positions: new Int32Array([1]),
    pairing: "half",
  });
  assertClose(half, [Math.cos(1), 0, Math.sin(1), 0], { atol: 1e-12, rtol: 2 ** -23 });
  // A negative position turns backwards (no table to wrap around).
  const back = ropeAxes({
    x: f32([1, 0]),
    tokens: 1,
    heads: 1,
    headDim: 2,
    axesDims: [2],
    theta: 100,
    positions: new Int32Array([-1]),
  });
  assertClose(back, [Math.cos(1), -Math.sin(1)], { atol: 0, rtol: 2 ** -23 });
});

async function rejectsBadAxes(run: (args: RopeAxesArgs) => unknown): Promise<void> {
  const x = f32([1, 2, 3, 4, 5, 6]);
  const base = { x, tokens: 1, heads: 1, headDim: 6, theta: 10, positions: new Int32Array([0, 0]) };
  await assertThrowsMessage(() => run({ ...base, axesDims: [3, 3] }), "ropeAxes: axesDims[0] must be even, got 3");
  await assertThrowsMessage(
    () => run({ ...base, axesDims: [2, 2] }),
    "ropeAxes: axesDims must sum to headDim = 6, got 4",
  );
  await assertThrowsMessage(
    () => run({ ...base, axesDims: [2, 4], theta: [10] }),
    "ropeAxes: theta must be a number or one per axis (2), got 10",
  );
  await assertThrowsMessage(
    () => run({ ...base, axesDims: [2, 4], theta: [10, 0] }),
    "ropeAxes: theta[1] must be > 0, got 0",
  );
  await assertThrowsMessage(
    () => run({ ...base, axesDims: [2, 2, 2] }),
    "ropeAxes: positions must have length tokens * axes = 3, got 2",
  );
  await assertThrowsMessage(
    () => run({ ...base, axesDims: [2, 4], positions: f32([0, 0]) as unknown as Int32Array }),
    "ropeAxes: positions must be an Int32Array, got Float32Array",
  );
  await assertThrowsMessage(
    () => run({ ...base, axesDims: [2, 4], pairing: "interleaved" as "half" }),
    'ropeAxes: pairing must be one of "adjacent", "half", got "interleaved"',
  );
}

Deno.test("ropeAxes reference: bad input throws naming the argument", () => rejectsBadAxes(ropeAxes));

gpuTest("ropeAxes GPU: bad input throws before dispatch", async (gpu) => {
  await rejectsBadAxes((args) => ropeAxesGpu(gpu, args));
});

const axesCases: { label: string; args: RopeAxesArgs }[] = [];
for (
  const [tokens, heads, axesDims] of [
    [7, 3, [32, 48, 48]],
    [5, 9, [44, 42, 42]],
    [3, 2, [4, 2, 2]],
    [4, 5, [2, 4]],
    [6, 1, [2, 2, 2]],
    [2, 8, [6, 6]],
  ] as [number, number, number[]][]
) {
  const headDim = axesDims.reduce((s, d) => s + d, 0);
  for (const pairing of ["adjacent", "half"] as const) {
    axesCases.push({
      label: `${tokens}x${heads}x[${axesDims}] ${pairing}`,
      args: {
        x: randomF32(tokens * heads * headDim, tokens * 7 + heads, -2, 2),
        tokens,
        heads,
        headDim,
        axesDims,
        theta: axesDims.map((_, a) => 256 * (a + 1)),
        positions: randomInt32(tokens * axesDims.length, headDim, -20, 200),
        pairing,
      },
    });
  }
}
checkAgainstReference<RopeAxesArgs, RopeVariant>(
  "ropeAxes",
  KERNELS,
  "axes",
  axesCases,
  ropeAxes,
  ropeAxesGpu,
  axesTolerance,
);

gpuTest("ropeAxes GPU matches Z-Image and Cosmos-Predict2", async (gpu) => {
  const golden = await loadAxesGolden();
  await checkAxesGolden(golden.zimage, "adjacent", (args) => ropeAxesGpu(gpu, args), "Z-Image");
  await checkAxesGolden(golden.cosmos, "half", (args) => ropeAxesGpu(gpu, args), "Cosmos");
});
