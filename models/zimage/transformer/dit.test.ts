import { ok } from "node:assert/strict";
import { gpuTest } from "../../../harness/testing.ts";
import { parseDitConfig } from "../config.ts";
import { goldenStore, goldenTensor, loadTinyIndex, maxRelative, recipeStore } from "../fixtures/recipe.ts";
import { type DitCaptures, ZImageDit } from "./dit.ts";

const TOL = 1e-4; // the oracle's tolerance; f32 sums in another order than torch's

gpuTest(
  "ZImageDit: cases a (8x8, caption 7) and b (16x12, caption 32) at both timesteps, every intermediate",
  async (gpu) => {
    const index = await loadTinyIndex();
    const config = parseDitConfig(index.config.dit as Record<string, unknown>);
    const dit = await ZImageDit.load(gpu, await recipeStore(index, "dit"), config);
    const golden = await goldenStore("dit");
    const timesteps = await goldenTensor(golden, "timesteps");
    const report: string[] = [];
    const check = (name: string, got: ArrayLike<number>, want: ArrayLike<number>) => {
      const rel = maxRelative(got, want);
      report.push(`${name} ${rel.toExponential(2)}`);
      ok(rel <= TOL, `${name}: max rel ${rel}`);
    };
    for (const [c, [H, W], capLen, debug] of [["a", [8, 8], 7, 1], ["b", [16, 12], 32, 0]] as const) {
      const captures: DitCaptures = new Map();
      const run = dit.prepare({ latentH: H, latentW: W, capLen }, captures);
      gpu.device.queue.writeBuffer(
        run.capFeats.buffer,
        0,
        (await goldenTensor(golden, `${c}.cap_feats`)) as Float32Array<ArrayBuffer>,
      );
      await run.encodeCaption();
      for (const ti of [0, 1]) {
        gpu.device.queue.writeBuffer(
          run.latent.buffer,
          0,
          (await goldenTensor(golden, `${c}.latent`)) as Float32Array<ArrayBuffer>,
        );
        await run.step(timesteps[ti]);
        check(`${c}.t${ti}.output`, await gpu.read(run.output), await goldenTensor(golden, `${c}.t${ti}.output`));
        if (ti !== debug) continue;
        for (const name of ["t_emb", "x_embedded", "noise_refiner.0", "cap_embedded", "context_refiner.0", "unified"]) {
          check(
            `${c}.t${ti}.${name}`,
            await gpu.read(captures.get(name)!),
            await goldenTensor(golden, `${c}.t${ti}.${name}`),
          );
        }
        for (const name of ["attn0", "layer.0", "layer.1", "final"]) {
          check(
            `${c}.t${ti}.${name}`,
            await gpu.read(captures.get(name)!),
            await goldenTensor(golden, `${c}.t${ti}.${name}`),
          );
        }
        // adaln0 is captured with the scale chunks plus one (folded into the bias): take it off.
        const adaln = (await gpu.read(captures.get("adaln0")!)) as Float32Array, d = config.dim;
        for (let i = 0; i < d; i++) {
          adaln[i] -= 1;
          adaln[2 * d + i] -= 1;
        }
        check(`${c}.t${ti}.adaln0`, adaln, await goldenTensor(golden, `${c}.t${ti}.adaln0`));
      }
      run.destroy();
    }
    dit.destroy();
    console.log(report.join("\n"));
  },
);
