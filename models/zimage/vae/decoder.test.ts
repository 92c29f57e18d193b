import { deepStrictEqual, ok } from "node:assert/strict";
import { gpuTest } from "../../../harness/testing.ts";
import { scopedStore } from "../../../llm/weights/checkpoint.ts";
import { decodedToRgba } from "../../image.ts";
import { parseVaeConfig } from "../config.ts";
import {
  GOLDEN_SETS,
  goldenCases,
  goldenStore,
  goldenTensor,
  loadTinyIndex,
  maxRelative,
  recipeStore,
} from "../fixtures/recipe.ts";
import { type DecoderCaptures, VaeDecoder } from "./decoder.ts";

const TOL = 1e-4;

for (const set of GOLDEN_SETS) {
  const index = await loadTinyIndex(set);
  const config = parseVaeConfig(index.config.vae as Record<string, unknown>);
  const cases = goldenCases(index).vae;
  const shapes = cases.map((c) => `${c.name} ${c.latentH}x${c.latentW}`).join(", ");
  gpuTest(
    `VaeDecoder (${set}, ${config.blockOutChannels.length} up blocks): ${shapes}; every intermediate the goldens hold, the image and its bytes`,
    async (gpu) => {
      const vae = await VaeDecoder.load(gpu, scopedStore(await recipeStore(index, "vae"), "decoder."), config);
      const golden = await goldenStore("vae", set);
      const report: string[] = [];
      const check = (name: string, got: ArrayLike<number>, want: ArrayLike<number>) => {
        const rel = maxRelative(got, want);
        report.push(`${name} ${rel.toExponential(2)}`);
        ok(rel <= TOL, `${set} ${name}: max rel ${rel}`);
      };
      let intermediates = 0;
      for (const { name: c, latentH: h, latentW: w } of cases) {
        const captures: DecoderCaptures = new Map();
        const run = vae.prepare(h, w, captures);
        const scale = 2 ** (config.blockOutChannels.length - 1);
        deepStrictEqual([run.height, run.width], [scale * h, scale * w]);
        gpu.device.queue.writeBuffer(
          run.latent.buffer,
          0,
          await goldenTensor(golden, `${c}.latent`) as Float32Array<ArrayBuffer>,
        );
        await run.run();
        const decoded = (await gpu.read(run.decoded)) as Float32Array;
        check(`${c}.z`, await gpu.read(captures.get("z")!), await goldenTensor(golden, `${c}.z`));
        check(`${c}.decoded`, decoded, await goldenTensor(golden, `${c}.decoded`));
        // The image bytes against the golden float image: the same rounding of each value.
        const image = (await goldenTensor(golden, `${c}.image`)) as Float32Array;
        const rgba = decodedToRgba(decoded, run.width, run.height), n = run.width * run.height;
        let worst = 0;
        for (let ch = 0; ch < 3; ch++) {
          for (let i = 0; i < n; i++) worst = Math.max(worst, Math.abs(rgba[4 * i + ch] - image[ch * n + i] * 255));
        }
        ok(worst <= 0.5 + 1e-3, `${set} ${c}: bytes ${worst} levels from 255 x image`);
        const prefix = `${c}.debug.`;
        for (const { name } of golden.tensors.filter((t) => t.name.startsWith(prefix))) {
          const captured = captures.get(name.slice(prefix.length));
          ok(captured, `${set}: no capture named ${name.slice(prefix.length)}`);
          check(`${c}.${name.slice(prefix.length)}`, await gpu.read(captured), await goldenTensor(golden, name));
          intermediates++;
        }
        run.destroy();
      }
      vae.destroy();
      ok(intermediates >= 4, `${set}: only ${intermediates} intermediates checked`);
      console.log(report.join("\n"));
    },
  );
}

gpuTest(
  "VaeDecoder: three buffers of the largest feature map's size (the upsampling passes through a free one)",
  async (gpu) => {
    const index = await loadTinyIndex("tiny2");
    const config = parseVaeConfig(index.config.vae as Record<string, unknown>);
    const vae = await VaeDecoder.load(gpu, scopedStore(await recipeStore(index, "vae"), "decoder."), config);
    const mark = gpu.memory.made;
    const run = vae.prepare(8, 6);
    try {
      const live = gpu.liveBuffers(mark);
      const x = live.find((b) => b.startsWith("vae x ("));
      ok(x, live.join(", "));
      const size = x.slice("vae x ".length);
      // x, and the two work buffers a and b; a fourth for the upsampled map would make the 1024² decode 1 GiB larger.
      deepStrictEqual(live.filter((b) => b.endsWith(` ${size}`)).length, 3, live.join(", "));
    } finally {
      run.destroy();
      vae.destroy();
    }
  },
);
