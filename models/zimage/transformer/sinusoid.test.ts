import { ok } from "node:assert/strict";
import { GOLDEN_SETS, goldenStore, goldenTensor, maxRelative } from "../fixtures/recipe.ts";
import { turboSchedule } from "../scheduler.ts";
import { timestepSinusoid } from "./sinusoid.ts";

Deno.test("timestepSinusoid: the real Turbo steps' 256-d sinusoids (real.safetensors) and both sets' DiT goldens", async () => {
  const real = await goldenStore("real");
  const want = await goldenTensor(real, "turbo8.t_freq");
  const { modelT } = turboSchedule(8);
  const got = new Float32Array(8 * 256);
  modelT.forEach((t, k) => got.set(timestepSinusoid(t), 256 * k));
  // The goldens are torch's float32 cos/sin on a CPU, whose libm is 3e-5 off at ~300 rad (cos(295.18756):
  // golden -0.121875, f64 -0.121845; torch 2.13 here gives the f64 value); ours is f64 of the same float32
  // argument. The oracle's own tolerance is 1e-4 (its CPU and CUDA goldens differ by 1.2e-4 here).
  const rel = maxRelative(got, want);
  ok(rel < 5e-5, `turbo8.t_freq: max rel ${rel}`);
  for (const set of GOLDEN_SETS) {
    const dit = await goldenStore("dit", set);
    const ts = await goldenTensor(dit, "timesteps");
    for (const [name, t] of [["a.t1.t_freq", ts[1]], ["b.t0.t_freq", ts[0]]] as const) {
      const r = maxRelative(timestepSinusoid(t), await goldenTensor(dit, name));
      ok(r < 5e-5, `${set} ${name}: max rel ${r}`);
    }
  }
});

Deno.test("timestepSinusoid: cos half first, argument 1000 t f_k with f_k = 10000^(-k/128)", () => {
  const t = 0.3;
  const emb = timestepSinusoid(t);
  for (const k of [0, 1, 64, 127]) {
    const a = 1000 * t * Math.pow(10000, -k / 128); // f64: differs from the f32 argument by < 1e-4 rad
    ok(Math.abs(emb[k] - Math.cos(a)) < 2e-4, `cos ${k}`);
    ok(Math.abs(emb[128 + k] - Math.sin(a)) < 2e-4, `sin ${k}`);
  }
  // The alternative orders (sin first, or divisor 127) are far off.
  ok(Math.abs(emb[1] - Math.cos(1000 * t * Math.pow(10000, -1 / 127))) > 1e-3);
});
