import { deepStrictEqual, ok } from "node:assert/strict";
import { ropeAxes, ropeAxesGpu } from "../../ops/rope/mod.ts";
import { gpuTest } from "../../harness/testing.ts";
import { ditRopeSplit } from "./config.ts";
import { ditPositions } from "./rope.ts";
import { eulerStep, guide, guidedEulerCoefficients, sigmaSchedule } from "./sampler.ts";
import { timestepSinusoid } from "./timestep.ts";
import { assertRel, fixture, readInt32 } from "./fixtures_test_util.ts";

const io = await fixture("io");

Deno.test("anima sampler: the shift-3 schedules equal sd-scripts' (6 and 3 steps), last sigma 0", async () => {
  assertRel(sigmaSchedule(6, 3), await io.readFloat32("sampler/sigmas6"), "sigmas6", 1e-7);
  assertRel(sigmaSchedule(3), await io.readFloat32("run/sigmas"), "run sigmas", 1e-7);
  deepStrictEqual(sigmaSchedule(3)[3], 0);
  // The scheduler's timesteps are sigma * 1000; the DiT gets them divided by 1000 again.
  const t6 = await io.readFloat32("sampler/timesteps6");
  assertRel(t6.map((t) => t / 1000), sigmaSchedule(6).subarray(0, 6), "timesteps / 1000", 1e-7);
});

Deno.test("anima sampler: guidance from the uncond side and the Euler step reproduce the run's step 0", async () => {
  const [vc, vu, v, x0, x1] = await Promise.all(
    ["run/step0/v_cond", "run/step0/v_uncond", "run/step0/v", "run/noise", "run/step0/x_next"].map((n) =>
      io.readFloat32(n)
    ),
  );
  const sigmas = sigmaSchedule(3);
  assertRel(guide(vc, vu, 4), v, "v = vu + 4 (vc - vu)", 1e-6);
  assertRel(eulerStep(x0, v, sigmas[0], sigmas[1]), x1, "x + (s1 - s0) v", 1e-6);
  // The guided Euler step as the pipeline computes it: x + a vc + b vu.
  const [a, b] = guidedEulerCoefficients(sigmas[0], sigmas[1], 4);
  assertRel(x0.map((x, i) => x + a * vc[i] + b * vu[i]), x1, "x + a vc + b vu", 1e-6);
  // The alternative, guidance from the cond side (vc + s (vc - vu)), does not.
  const wrong = vc.map((c, i) => c + 4 * (c - vu[i]));
  ok(Math.max(...wrong.map((w, i) => Math.abs(w - v[i]))) > 1e-3);
});

Deno.test("anima timestep: the sinusoid is sigma itself times exp(-ln(1e4) i / half), cos first", async () => {
  assertRel(timestepSinusoid(1, 48), await io.readFloat32("dit/case0/dbg/t_sinusoid"), "tiny sigma 1", 1e-6);
  const sigmas = await io.readFloat32("real/t_sigmas");
  const real = await io.readFloat32("real/t_sinusoid");
  for (let i = 0; i < 3; i++) {
    const ours = timestepSinusoid(sigmas[i], 2048);
    assertRel(ours, real.subarray(2048 * i, 2048 * (i + 1)), `real width, sigma ${sigmas[i]}`, 1e-6);
  }
  // sin first, or sigma * 1000, would not match.
  const swapped = timestepSinusoid(1, 48);
  swapped.set([...swapped.subarray(24), ...swapped.subarray(0, 24)]);
  ok(Math.abs(swapped[0] - timestepSinusoid(1, 48)[0]) > 0.1);
});

/** [1 .. 1 | 0 .. 0] per head: ropeAxes("half") turns it into [cos | sin] of each pair's angle. */
function probe(tokens: number, headDim: number): Float32Array {
  const x = new Float32Array(tokens * headDim);
  for (let t = 0; t < tokens; t++) x.fill(1, t * headDim, t * headDim + headDim / 2);
  return x;
}

/** The golden cos/sin tables `[tokens, headDim]` as ropeAxes's [cos | sin] of the first half. */
function goldenProbe(cos: Float32Array, sin: Float32Array, headDim: number): Float32Array {
  const out = new Float32Array(cos.length);
  const half = headDim / 2;
  for (let r = 0; r < cos.length / headDim; r++) {
    // The halves repeat: cat([t, h, w] * 2).
    for (let i = 0; i < half; i++) {
      if (cos[r * headDim + i] !== cos[r * headDim + half + i]) throw new Error("golden cos halves differ");
      out[r * headDim + i] = cos[r * headDim + i];
      out[r * headDim + half + i] = sin[r * headDim + i];
    }
  }
  return out;
}

gpuTest("anima rope: the tiny grid's tables (t8|h8|w8) and the real 128-wide split (t44|h42|w42)", async (gpu) => {
  // Tiny, case 0: a 4 x 6 patch grid, head_dim 24.
  const tiny = ditRopeSplit(24);
  const positions = ditPositions(1, 4, 6);
  const expected = goldenProbe(
    await io.readFloat32("dit/case0/dbg/rope_cos"),
    await io.readFloat32("dit/case0/dbg/rope_sin"),
    24,
  );
  const shape = { tokens: 24, heads: 1, headDim: 24, axesDims: tiny.dims, theta: tiny.theta, pairing: "half" as const };
  assertRel(ropeAxes({ ...shape, x: probe(24, 24), positions }), expected, "tiny (reference)", 1e-5);
  const out = await ropeAxesGpu(gpu, { ...shape, x: probe(24, 24), positions });
  assertRel(out, expected, "tiny (GPU)", 1e-5);
  // Real: six (h, w) positions of a 64 x 64 grid, t = 0.
  const real = ditRopeSplit(128);
  const hw = await readInt32(io, "real/rope_positions_hw");
  const realPositions = new Int32Array(6 * 3);
  for (let i = 0; i < 6; i++) realPositions.set([0, hw[2 * i], hw[2 * i + 1]], 3 * i);
  const realShape = {
    tokens: 6,
    heads: 1,
    headDim: 128,
    axesDims: real.dims,
    theta: real.theta,
    pairing: "half" as const,
  };
  const realExpected = goldenProbe(await io.readFloat32("real/rope_cos"), await io.readFloat32("real/rope_sin"), 128);
  assertRel(ropeAxes({ ...realShape, x: probe(6, 128), positions: realPositions }), realExpected, "real", 1e-5);
  const realOut = await ropeAxesGpu(gpu, { ...realShape, x: probe(6, 128), positions: realPositions });
  assertRel(realOut, realExpected, "real (GPU)", 1e-5);
});
