import { deepStrictEqual, ok } from "node:assert/strict";
import { ropeAxes, ropeAxesGpu } from "../../ops/rope/mod.ts";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { ditRopeSplit } from "./config.ts";
import { ditPositions } from "./rope.ts";
import { gaussianNoise } from "../noise.ts";
import {
  ANIMA_SAMPLERS,
  denoisedLatent,
  erSdeSigmas,
  eulerStep,
  guide,
  guidedEulerCoefficients,
  resMultistepStep,
  sampleErSde,
  sampleEuler,
  sampleResMultistep,
  samplerSteps,
  sigmaSchedule,
} from "./sampler.ts";
import { timestepSinusoid } from "./timestep.ts";
import {
  assertRel,
  fixture,
  GOLDEN_SETS,
  goldenIndex,
  readInt32,
  relativeDiff,
  spatial,
} from "./fixtures_test_util.ts";

const io = await fixture("io");

Deno.test("anima sampler: the shift-3 schedules equal sd-scripts' (6 and 3 steps), last sigma 0", async () => {
  assertRel(sigmaSchedule(6, 3), await io.readFloat32("sampler/sigmas6"), "sigmas6", 1e-7);
  assertRel(sigmaSchedule(3), await io.readFloat32("run/sigmas"), "run sigmas", 1e-7);
  deepStrictEqual(sigmaSchedule(3)[3], 0);
  // The scheduler's timesteps are sigma * 1000; the DiT gets them divided by 1000 again.
  const t6 = await io.readFloat32("sampler/timesteps6");
  assertRel(t6.map((t) => t / 1000), sigmaSchedule(6).subarray(0, 6), "timesteps / 1000", 1e-7);
});

for (const set of GOLDEN_SETS) {
  Deno.test(`anima sampler (${set}): guidance from the uncond side and the Euler step reproduce the run's step 0`, async () => {
    const io = await fixture("io", set);
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
}

Deno.test("anima timestep: the sinusoid is sigma itself times exp(-ln(1e4) i / half), cos first", async () => {
  assertRel(timestepSinusoid(1, 48), await io.readFloat32("dit/case0/dbg/t_sinusoid"), "tiny sigma 1", 1e-6);
  const io2 = await fixture("io", "tiny2");
  assertRel(timestepSinusoid(1, 64), await io2.readFloat32("dit/case0/dbg/t_sinusoid"), "tiny2 sigma 1", 1e-6);
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

for (const set of GOLDEN_SETS) {
  gpuTest(`anima rope (${set}): case 0's tables, from the config's split of head_dim`, async (gpu) => {
    const io = await fixture("io", set);
    const { dit } = (await goldenIndex(set)).configs as { dit: { model_channels: number; num_heads: number } };
    const headDim = dit.model_channels / dit.num_heads;
    const split = ditRopeSplit(headDim);
    // tiny: head_dim 24 -> t8|h8|w8; tiny2: head_dim 32 -> t12|h10|w10, uneven like the real t44|h42|w42.
    deepStrictEqual(split.dims, set === "tiny" ? [8, 8, 8] : [12, 10, 10]);
    const [h, w] = spatial(io, "dit/case0/x");
    const tokens = (h / 2) * (w / 2);
    const positions = ditPositions(1, h / 2, w / 2);
    const expected = goldenProbe(
      await io.readFloat32("dit/case0/dbg/rope_cos"),
      await io.readFloat32("dit/case0/dbg/rope_sin"),
      headDim,
    );
    const shape = { tokens, heads: 1, headDim, axesDims: split.dims, theta: split.theta, pairing: "half" as const };
    assertRel(ropeAxes({ ...shape, x: probe(tokens, headDim), positions }), expected, `${set} (reference)`, 1e-5);
    const out = await ropeAxesGpu(gpu, { ...shape, x: probe(tokens, headDim), positions });
    assertRel(out, expected, `${set} (GPU)`, 1e-5);
    // An even split of the uneven head (t and h swapped) would not match tiny2's table.
    if (set === "tiny2") {
      const swapped = ropeAxes({ ...shape, axesDims: [10, 12, 10], x: probe(tokens, headDim), positions });
      ok(relativeDiff(swapped, expected) > 1e-2);
    }
  });
}

gpuTest("anima rope: the real 128-wide split (t44|h42|w42) at six positions of a 64 x 64 grid", async (gpu) => {
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

// ---- res_multistep and er_sde: the references against values derived independently ----

/** max |a − b| / max |b| */
function maxRel(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let d = 0, s = 0;
  for (let i = 0; i < b.length; i++) d = Math.max(d, Math.abs(a[i] - b[i])), s = Math.max(s, Math.abs(b[i]));
  return d / Math.max(s, 1e-300);
}

/** The exact denoiser of 1-D Gaussian data N(mu, sd^2) under x_σ = (1 − σ) x0 + σ ε, elementwise. */
function gaussianData(mu: number, sd: number) {
  const mean = (s: number) => (1 - s) * mu, std = (s: number) => Math.sqrt((1 - s) ** 2 * sd * sd + s * s);
  return {
    denoiser: (x: Float64Array, s: number) => x.map((xi) => mu + ((1 - s) * sd * sd / std(s) ** 2) * (xi - mean(s))),
    /** The flow ODE's solution at σ from x(1) = z: quantiles are kept, x_σ = mean + std · z. */
    exact: (z: ArrayLike<number>, s: number) => Float64Array.from(z, (zi) => mean(s) + std(s) * zi),
  };
}

Deno.test("anima res_multistep: a constant D is integrated exactly, x_next = (σn/σ) x + (1 − σn/σ) D", async () => {
  const x = [1.5, -0.25, 3], d = [0.2, -1, 0.7];
  for (const [prev, s, next] of [[0.9, 0.7, 0.4], [1, 0.857, 0.6], [0.3, 0.1, 0.01], [0.6, 0.4, 0]]) {
    const expected = x.map((xi, j) => (next / s) * xi + (1 - next / s) * d[j]);
    ok(maxRel(resMultistepStep(x, d, { denoised: d, sigma: prev }, s, next), expected) < 1e-14, `${prev} ${s} ${next}`);
  }
  // Through the loop: every step from x to the next is the exact one, the last returns D.
  const sigmas = sigmaSchedule(5);
  const seen: Float64Array[] = [];
  const out = await sampleResMultistep(x, sigmas, (xi) => (seen.push(Float64Array.from(xi)), d));
  for (let i = 0; i + 1 < seen.length; i++) {
    const r = sigmas[i + 1] / sigmas[i];
    ok(maxRel(seen[i + 1], seen[i].map((v, j) => r * v + (1 - r) * d[j])) < 1e-12, `step ${i}`);
  }
  ok(maxRel(out, d) < 1e-15);
});

Deno.test("anima res_multistep: one step by hand (the formulas written out) and by quadrature of D linear in t", () => {
  const sPrev = 0.8, s = 0.5, sNext = 0.25;
  const x = [1, -2, 0.5], d = [0.3, 0.1, -0.7], dOld = [0.5, -0.4, -0.2];
  // ComfyUI's res_multistep with eta = 0, written out: t = -log σ, h = t_next − t, c2 = (t_prev − t_old) / h
  // where t_old, the previous step's target σ, is σ itself.
  const t = -Math.log(s), tNext = -Math.log(sNext), tPrev = -Math.log(sPrev);
  const h = tNext - t; // ln 2
  const c2 = (tPrev - t) / h; // ln(0.625) / ln 2, about −0.678
  const phi1 = (Math.exp(-h) - 1) / -h; // 0.5 / ln 2
  const phi2 = (phi1 - 1) / -h;
  const b1 = phi1 - phi2 / c2, b2 = phi2 / c2;
  const byHand = x.map((xi, j) => Math.exp(-h) * xi + h * (b1 * d[j] + b2 * dOld[j]));
  const got = resMultistepStep(x, d, { denoised: dOld, sigma: sPrev }, s, sNext);
  ok(maxRel(got, byHand) < 1e-14, `${got} vs ${byHand}`);
  // Independently: dx/dt = D(t) − x in t = −log σ, so x_next = e^{−h} x + ∫_0^h e^{−(h−u)} D(t + u) du,
  // with D the line through (t_prev, D_old) and (t, D): Simpson's rule on 2000 intervals.
  const line = (j: number, u: number) => d[j] + (u * (d[j] - dOld[j])) / (t - tPrev);
  const quadrature = x.map((xi, j) => {
    const n = 2000, du = h / n;
    let sum = 0;
    for (let k = 0; k <= n; k++) {
      const w = k === 0 || k === n ? 1 : k % 2 === 1 ? 4 : 2;
      sum += w * Math.exp(-(h - k * du)) * line(j, k * du);
    }
    return Math.exp(-h) * xi + (sum * du) / 3;
  });
  ok(maxRel(got, quadrature) < 1e-10, `${got} vs ${quadrature}`);
  // c2 with the other sign (t − t_prev) would extrapolate the wrong way.
  const flipped = x.map((xi, j) => Math.exp(-h) * xi + h * ((phi1 + phi2 / c2) * d[j] - (phi2 / c2) * dOld[j]));
  ok(maxRel(flipped, quadrature) > 1e-2);
});

Deno.test("anima res_multistep: the first step and the step to 0 are Euler, the middle ones use the previous D", async () => {
  const sigmas = sigmaSchedule(3); // [1, 6/7, 3/5, 0]
  const ds = [[0.4, -0.1], [0.2, 0.3], [-0.5, 0.6]];
  const seen: Float64Array[] = [];
  const out = await sampleResMultistep([1, 2], sigmas, (x, _s, i) => (seen.push(Float64Array.from(x)), ds[i]));
  const euler = (x: ArrayLike<number>, d: number[], s: number, n: number) =>
    Array.from(x, (xi, j) => xi + ((n - s) * (xi - d[j])) / s);
  ok(maxRel(seen[1], euler([1, 2], ds[0], sigmas[0], sigmas[1])) < 1e-15, "step 0 is Euler");
  const multistep = resMultistepStep(seen[1], ds[1], { denoised: ds[0], sigma: sigmas[0] }, sigmas[1], sigmas[2]);
  ok(maxRel(seen[2], multistep) < 1e-15, "step 1 uses D_0");
  ok(maxRel(seen[2], euler(seen[1], ds[1], sigmas[1], sigmas[2])) > 1e-3, "and is not Euler");
  ok(maxRel(out, ds[2]) < 1e-15, "the step to 0 returns D");
});

Deno.test("anima samplers: on Gaussian data (exact D), Euler's error halves as steps double, res_multistep's quarters", async () => {
  const { denoiser, exact } = gaussianData(0.3, 0.5);
  const z = [-2, -1, -0.3, 0.5, 1.7];
  // Steps uniform in t = −log σ from 1 to 0.02, then 0; the error is taken at σ = 0.02, before the
  // last step (whose Euler jump to 0 has an error of its own, fixed by 0.02, not by the step count).
  const errors = async (sample: typeof sampleEuler, n: number) => {
    const sigmas = [...Array.from({ length: n + 1 }, (_, i) => 0.02 ** (i / n)), 0];
    let at: Float64Array | undefined;
    await sample(z, sigmas, (x, s, i) => (i === n && (at = Float64Array.from(x)), denoiser(x, s)));
    return maxRel(at!, exact(z, sigmas[n]));
  };
  const euler = [16, 32, 64].map((n) => errors(sampleEuler, n));
  const multistep = [16, 32, 64].map((n) => errors(sampleResMultistep, n));
  const [e, m] = [await Promise.all(euler), await Promise.all(multistep)];
  const ratios = (r: number[]) => [r[0] / r[1], r[1] / r[2]];
  console.log(`Euler ${e.map((v) => v.toExponential(2))}, res_multistep ${m.map((v) => v.toExponential(2))}`);
  for (const r of ratios(e)) ok(r > 1.8 && r < 2.2, `Euler: first order (${ratios(e)})`);
  for (const r of ratios(m)) ok(r > 3.5 && r < 4.5, `res_multistep: second order (${ratios(m)})`);
});

Deno.test("anima er_sde: the first sigma of 1 is offset to the shift-3 schedule's at 1e-4 of the way; the model sees it", async () => {
  const expected = Math.fround((3 * 0.9999) / (1 + 2 * 0.9999));
  deepStrictEqual(erSdeSigmas(sigmaSchedule(3), 3)[0], expected);
  deepStrictEqual([...erSdeSigmas(sigmaSchedule(3), 3).subarray(1)], [...sigmaSchedule(3).subarray(1)]);
  deepStrictEqual(erSdeSigmas(sigmaSchedule(3), 5)[0], Math.fround((5 * 0.9999) / (1 + 4 * 0.9999)));
  deepStrictEqual([...erSdeSigmas([0.9, 0.5, 0], 3)], [0.9, 0.5, 0]); // below 1: kept
  const seen: number[] = [];
  await sampleErSde([0], sigmaSchedule(3), (_x, s) => (seen.push(s), [0]), { shift: 3, noise: () => [0] });
  deepStrictEqual(seen, [expected, sigmaSchedule(3)[1], sigmaSchedule(3)[2]]);
  deepStrictEqual(samplerSteps("er_sde", sigmaSchedule(3), { shift: 3 })[0].sigma, expected);
});

/** er_sde's quantities written out (ComfyUI's sample_er_sde for a flow model), for the hand-computed tests. */
const ns = (l: number) => l * (Math.exp(Math.pow(l, 0.3)) + 10);
const lam = (s: number) => s / (1 - s);
/** Left Riemann sums with 200 points from λt toward λs of 1/ns and of (λ − λs)/ns. */
function riemann(lt: number, ls: number): [number, number] {
  const step = (ls - lt) / 200;
  let s = 0, su = 0;
  for (let k = 0; k < 200; k++) s += step / ns(lt + k * step), su += (step * (lt + k * step - ls)) / ns(lt + k * step);
  return [s, su];
}

Deno.test("anima er_sde: stages 1, 2 and 3 and the noise by hand (sNoise 0 and 1), 200-point sums", async () => {
  const sigmas = [0.8, 0.6, 0.4, 0.2, 0]; // below 1: no offset
  const ds = [[1, 2], [0.5, -1], [0.25, 0.3], [0.1, 0.1]];
  const x0 = [1, -3];
  const xi = [[0.7, -1.2], [0.3, 0.9], [-0.4, 0.2]];
  for (const sNoise of [0, 1]) {
    const seen: Float64Array[] = [];
    const out = await sampleErSde(x0, sigmas, (x, _s, i) => (seen.push(Float64Array.from(x)), ds[i]), {
      shift: 3,
      noise: (i) => xi[i],
      sNoise,
    });
    const l = sigmas.map(lam);
    let x = [...x0];
    let dOld: number[] = [], ddOld: number[] = [];
    for (let i = 0; i < 3; i++) {
      const r = ns(l[i + 1]) / ns(l[i]), alphaS = 1 - sigmas[i], alphaT = 1 - sigmas[i + 1];
      x = x.map((v, j) => (alphaT / alphaS) * r * v + alphaT * (1 - r) * ds[i][j]);
      const dt = l[i + 1] - l[i];
      const [s, su] = riemann(l[i + 1], l[i]);
      if (i >= 1) {
        const dd = ds[i].map((d, j) => (d - dOld[j]) / (l[i] - l[i - 1]));
        x = x.map((v, j) => v + alphaT * (dt + s * ns(l[i + 1])) * dd[j]);
        if (i >= 2) {
          const du = dd.map((d, j) => (d - ddOld[j]) / ((l[i] - l[i - 2]) / 2));
          x = x.map((v, j) => v + alphaT * ((dt * dt) / 2 + su * ns(l[i + 1])) * du[j]);
        }
        ddOld = dd;
      }
      x = x.map((v, j) => v + sNoise * alphaT * Math.sqrt(l[i + 1] ** 2 - l[i] ** 2 * r * r) * xi[i][j]);
      dOld = ds[i];
      ok(maxRel(seen[i + 1], x) < 1e-12, `sNoise ${sNoise}, after step ${i}: ${seen[i + 1]} vs ${x}`);
    }
    deepStrictEqual([...out], ds[3], "the step to 0 returns D");
  }
  // The point count shows: 201 points move the sum by 1e-5 of itself, the exact integral by 2e-3 (the
  // steps above hold to 1e-12).
  const [s200] = riemann(lam(0.4), lam(0.6));
  const sum = (points: number) => {
    const step = (lam(0.6) - lam(0.4)) / points;
    let total = 0;
    for (let k = 0; k < points; k++) total += step / ns(lam(0.4) + k * step);
    return total;
  };
  ok(Math.abs(sum(201) - s200) / s200 > 1e-6 && Math.abs(sum(1e6) - s200) / s200 > 1e-3);
});

Deno.test("anima er_sde: on Gaussian data (exact D) its samples have the data's mean and spread; without noise, or doubled, they do not", async () => {
  const mu = 0.3, sd = 0.5, n = 20000;
  const { denoiser } = gaussianData(mu, sd);
  const stats = async (sNoise: number) => {
    const out = await sampleErSde(gaussianNoise(1, n), sigmaSchedule(50), denoiser, {
      shift: 3,
      noise: (i) => gaussianNoise(1, n, (i + 1) * n),
      sNoise,
    });
    const mean = out.reduce((a, b) => a + b, 0) / n;
    return [mean, Math.sqrt(out.reduce((a, b) => a + (b - mean) ** 2, 0) / n)];
  };
  const [mean, spread] = await stats(1);
  console.log(`er_sde, 50 steps, ${n} chains: mean ${mean.toFixed(4)} (${mu}), sd ${spread.toFixed(4)} (${sd})`);
  // Sampling error: sd / sqrt(n) = 0.0035 for the mean, 0.0025 for the sd.
  ok(Math.abs(mean - mu) < 0.015 && Math.abs(spread - sd) < 0.015);
  for (const sNoise of [0, 2]) ok(Math.abs((await stats(sNoise))[1] - sd) > 0.2, `sNoise ${sNoise}`);
});

Deno.test("anima samplers: samplerSteps' linear combinations reproduce the reference loops (CFG-guided velocities)", async () => {
  // A denoiser from two "velocities" affine in x, guided with cfg 4 as the pipeline does: D = x − σ v.
  const len = 5, cfg = 4;
  const velocity = (x: ArrayLike<number>, s: number, k: number) =>
    Array.from(x, (xi, j) => (0.3 + 0.1 * k) * xi + Math.sin(3 * j + k) * (1 + s));
  const guided = (x: ArrayLike<number>, s: number) => {
    const vc = velocity(x, s, 0), vu = velocity(x, s, 1);
    return vc.map((c, j) => vu[j] + cfg * (c - vu[j]));
  };
  const x0 = Array.from({ length: len }, (_, j) => Math.cos(j));
  const noise = (i: number) => Array.from({ length: len }, (_, j) => Math.sin(7 * i + j));
  for (const sampler of ANIMA_SAMPLERS) {
    const sigmas = sigmaSchedule(6);
    const d = (x: Float64Array, s: number) => denoisedLatent(x, guided(x, s), s);
    const reference = sampler === "euler"
      ? await sampleEuler(x0, sigmas, d)
      : sampler === "res_multistep"
      ? await sampleResMultistep(x0, sigmas, d)
      : await sampleErSde(x0, sigmas, d, { shift: 3, noise });
    // The GPU path's arithmetic, on the host: D_i from x_i and v_i, then the combination.
    let x = Float64Array.from(x0);
    const history: Float64Array[] = [new Float64Array(len), new Float64Array(len)];
    samplerSteps(sampler, sigmas, { shift: 3 }).forEach((step, i) => {
      const v = guided(x, step.sigma);
      const di = denoisedLatent(x, v, step.sigma);
      const [c0, c1, c2] = step.denoised, xi = noise(i);
      x = x.map((_, j) =>
        step.velocity * v[j] + c0 * di[j] + c1 * history[0][j] + c2 * history[1][j] + step.noise * xi[j]
      );
      history.unshift(di), history.pop();
    });
    ok(maxRel(x, reference) < 1e-12, `${sampler}: ${maxRel(x, reference)}`);
  }
  await assertThrowsMessage(
    // deno-lint-ignore no-explicit-any
    () => samplerSteps("heun" as any, sigmaSchedule(3)),
    "anima sampler: sampler must be one of euler, res_multistep, er_sde, got heun",
  );
});
