import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage } from "../../harness/testing.ts";
import { GOLDEN_SETS, goldenCases, goldenStore, goldenTensor, loadTinyIndex } from "./fixtures/recipe.ts";
import { eulerAlpha, turboSchedule } from "./scheduler.ts";

for (const set of GOLDEN_SETS) {
  const { steps } = goldenCases(await loadTinyIndex(set)).pipeline;
  Deno.test(`turboSchedule: sigmas, timesteps and the DiT's t bit for bit as upstream (${set}: 8 and ${steps} steps)`, async () => {
    const scheduler = await goldenStore("scheduler", set);
    for (const [tag, n] of [["turbo8", 8], ["pipeline", steps]] as const) {
      const got = turboSchedule(n);
      deepStrictEqual(got.sigmas, await goldenTensor(scheduler, `${tag}.sigmas`), `${tag}.sigmas`);
      deepStrictEqual(got.timesteps, await goldenTensor(scheduler, `${tag}.timesteps`), `${tag}.timesteps`);
      deepStrictEqual(got.modelT, await goldenTensor(scheduler, `${tag}.model_t`), `${tag}.model_t`);
    }
    if (set === "tiny") {
      deepStrictEqual(turboSchedule(8).modelT, await goldenTensor(await goldenStore("real"), "turbo8.model_t"));
    }
  });

  Deno.test(`eulerAlpha: minus the float32 sigma difference (the velocity is minus the output; ${set}'s ${steps} steps)`, async () => {
    const { sigmas } = turboSchedule(steps);
    const sig = await goldenTensor(await goldenStore("pipeline", set), "sigmas");
    for (let k = 0; k < steps; k++) strictEqual(eulerAlpha(sigmas, k), -Math.fround(sig[k + 1] - sig[k]));
    ok(eulerAlpha(sigmas, 0) > 0);
  });
}

Deno.test("turboSchedule: t is 1 - sigma as float32 computes it, not sigma and not exactly 1 - sigma", () => {
  const { sigmas, modelT } = turboSchedule(8);
  deepStrictEqual([...sigmas].map((s) => Math.round(s * 1e6) / 1e6), [
    1,
    0.954545,
    0.9,
    0.833333,
    0.75,
    0.642857,
    0.5,
    0.3,
    0,
  ]);
  strictEqual(modelT[0], 0);
  // sigma_1 = 21/22: 1000 - f32(sigma_1 * 1000) rounds differently from f32(1 - sigma_1).
  ok([...modelT].some((t, k) => t !== Math.fround(1 - sigmas[k])));
  ok([...modelT].every((t, k) => Math.abs(t - (1 - sigmas[k])) < 1e-6));
});

Deno.test("eulerAlpha and turboSchedule: bad arguments refused by name", async () => {
  const { sigmas } = turboSchedule(3);
  await assertThrowsMessage(() => eulerAlpha(sigmas, 3), "k must be an integer in [0, 2], got 3");
  await assertThrowsMessage(() => turboSchedule(0), "steps must be an integer in [1, 1000], got 0");
  await assertThrowsMessage(() => turboSchedule(8, -1), "shift must be a finite number > 0, got -1");
});
