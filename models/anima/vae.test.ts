import { deepStrictEqual } from "node:assert/strict";
import type { GpuTensor } from "../../harness/device.ts";
import { gpuTest } from "../../harness/testing.ts";
import { Graph } from "./graph.ts";
import { AnimaVae, clampImage } from "./vae.ts";
import { assertRel, fixture } from "./fixtures_test_util.ts";

const io = await fixture("io");
const store = await fixture("weights_vae");

gpuTest(
  "anima VAE: a 4 x 6 latent through conv2, conv1, middle, the three upsamplers and the head, then the clamp",
  async (gpu) => {
    const vae = await AnimaVae.load(gpu, store);
    const z = gpu.upload(await io.readFloat32("vae/z"));
    const g = new Graph(gpu, "anima VAE test");
    try {
      const taps = new Map<string, GpuTensor>();
      const out = vae.build(g, z, 4, 6, (name, t) => {
        g.pin(t);
        taps.set(name, t);
      });
      const program = g.program();
      await program.run();
      program.destroy();
      const results: string[] = [];
      for (
        const [tap, golden] of [
          ["conv2", "dbg/after_conv2"],
          ["decoder.conv1", "dbg/after_conv1"],
          ["decoder.middle.2", "dbg/after_middle"],
          ["decoder.upsamples.3", "dbg/after_upsample3"],
          ["decoder.upsamples.7", "dbg/after_upsample7"],
          ["decoder.upsamples.11", "dbg/after_upsample11"],
          ["decoder.head", "dbg/head_preclamp"],
        ]
      ) {
        const rel = assertRel(
          await gpu.read(taps.get(tap)!) as Float32Array,
          await io.readFloat32(`vae/${golden}`),
          tap,
        );
        results.push(`${tap} ${rel.toExponential(2)}`);
      }
      const image = clampImage(await gpu.read(out) as Float32Array);
      results.push(`image ${assertRel(image, await io.readFloat32("vae/image"), "image").toExponential(2)}`);
      console.log(results.join(", "));
      deepStrictEqual(image.length, 3 * 32 * 48);
    } finally {
      g.destroy();
      z.buffer.destroy();
      vae.destroy();
    }
  },
);

gpuTest("anima VAE: run() decodes the 3-step run's latent to its image", async (gpu) => {
  const vae = await AnimaVae.load(gpu, store);
  try {
    const image = await vae.run(await io.readFloat32("run/vae/z"), 8, 12);
    console.log(`run image ${assertRel(image, await io.readFloat32("run/vae/image"), "run image").toExponential(2)}`);
  } finally {
    vae.destroy();
  }
});
