import { deepStrictEqual, ok } from "node:assert/strict";
import { gpuTest } from "../../../harness/testing.ts";
import { scopedStore } from "../../../llm/weights/checkpoint.ts";
import { decodedToRgba } from "../../image.ts";
import { parseVaeConfig } from "../config.ts";
import { goldenStore, goldenTensor, loadTinyIndex, maxRelative, recipeStore } from "../fixtures/recipe.ts";
import { type DecoderCaptures, VaeDecoder } from "./decoder.ts";

const TOL = 1e-4;

gpuTest("VaeDecoder: cases a (8x8) and b (6x10), every intermediate of a, the image and its bytes", async (gpu) => {
  const index = await loadTinyIndex();
  const config = parseVaeConfig(index.config.vae as Record<string, unknown>);
  const store = scopedStore(await recipeStore(index, "vae"), "decoder.");
  const vae = await VaeDecoder.load(gpu, store, config);
  const golden = await goldenStore("vae");
  const report: string[] = [];
  const check = (name: string, got: ArrayLike<number>, want: ArrayLike<number>) => {
    const rel = maxRelative(got, want);
    report.push(`${name} ${rel.toExponential(2)}`);
    ok(rel <= TOL, `${name}: max rel ${rel}`);
  };
  for (const [c, [h, w]] of [["a", [8, 8]], ["b", [6, 10]]] as const) {
    const captures: DecoderCaptures = new Map();
    const run = vae.prepare(h, w, captures);
    deepStrictEqual([run.height, run.width], [2 * h, 2 * w]);
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
    ok(worst <= 0.5 + 1e-3, `${c}: bytes ${worst} levels from 255 x image`);
    if (c === "a") {
      for (const name of ["conv_in", "mid.resnet0", "mid.attn", "mid", "up.0", "up.1", "pre_conv_out"]) {
        check(`${c}.${name}`, await gpu.read(captures.get(name)!), await goldenTensor(golden, `${c}.debug.${name}`));
      }
    }
    run.destroy();
  }
  vae.destroy();
  console.log(report.join("\n"));
});
