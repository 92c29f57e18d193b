import { deepStrictEqual } from "node:assert/strict";
import type { GpuTensor } from "../../harness/device.ts";
import { gpuTest } from "../../harness/testing.ts";
import { Graph } from "./graph.ts";
import { AnimaVae, clampImage } from "./vae.ts";
import { assertRel, fixture, GOLDEN_SETS, spatial } from "./fixtures_test_util.ts";

for (const set of GOLDEN_SETS) {
  const io = await fixture("io", set);
  const store = await fixture("weights_vae", set);
  const [h, w] = spatial(io, "vae/z");

  gpuTest(
    `anima VAE (${set}): a ${h} x ${w} latent through conv2, conv1, middle, the three upsamplers and the head, then the clamp`,
    async (gpu) => {
      const vae = await AnimaVae.load(gpu, store);
      const z = gpu.upload(await io.readFloat32("vae/z"));
      const g = new Graph(gpu, "anima VAE test");
      try {
        const taps = new Map<string, GpuTensor>();
        const out = vae.build(g, z, h, w, (name, t) => {
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
        console.log(`${set}: ${results.join(", ")}`);
        deepStrictEqual(image.length, 3 * 8 * h * 8 * w);
      } finally {
        g.destroy();
        z.buffer.destroy();
        vae.destroy();
      }
    },
  );

  gpuTest(`anima VAE (${set}): run() decodes the 3-step run's latent to its image`, async (gpu) => {
    const vae = await AnimaVae.load(gpu, store);
    try {
      const [rh, rw] = spatial(io, "run/vae/z");
      const image = await vae.run(await io.readFloat32("run/vae/z"), rh, rw);
      const rel = assertRel(image, await io.readFloat32("run/vae/image"), "run image");
      console.log(`${set} run image (${rh} x ${rw} latent): ${rel.toExponential(2)}`);
    } finally {
      vae.destroy();
    }
  });
}

gpuTest(
  "anima VAE: at full resolution a residual block holds three maps (its input, a norm's output, a convolution's)",
  async (gpu) => {
    // The tiny2 decoder (dim 8) on a 16 x 16 latent: the last stage's maps are dim channels at 128 x 128. Each residual
    // block there needs its input, one norm output and one convolution output at a time (each returned to the pool once
    // read, the shortcut added in place); keeping every intermediate to the block's end took six.
    const vae = await AnimaVae.load(gpu, await fixture("weights_vae", "tiny2"));
    const z = gpu.alloc("f32", vae.config.zDim * 16 * 16);
    const g = new Graph(gpu, "anima VAE memory test");
    try {
      const mark = gpu.memory.made;
      vae.build(g, z, 16, 16);
      const full = `anima VAE memory test scratch (${4 * vae.config.dim * 128 * 128})`;
      deepStrictEqual(gpu.liveBuffers(mark).filter((b) => b === full).length, 3);
    } finally {
      g.destroy();
      z.buffer.destroy();
      vae.destroy();
    }
  },
);
