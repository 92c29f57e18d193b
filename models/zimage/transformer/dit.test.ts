import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../../harness/testing.ts";
import { parseDitConfig } from "../config.ts";
import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import { SafetensorsFile } from "../../../llm/safetensors.ts";
import { bytesSource } from "../../../llm/safetensors_sources.ts";
import { encodeSafetensors } from "../../../llm/safetensors_write.ts";
import { unpackQ4, unpackQ8 } from "../../../ops/matvec/mod.ts";
import { quantizePacked, quantizePackedQ4 } from "../../../ops/quantize/mod.ts";
import {
  GOLDEN_SETS,
  goldenCases,
  goldenStore,
  goldenTensor,
  loadTinyIndex,
  maxRelative,
  recipeStore,
  type TinyIndex,
} from "../fixtures/recipe.ts";
import { type DitCaptures, ditWeightBytes, ZImageDit } from "./dit.ts";

const TOL = 1e-4; // the oracle's tolerance; f32 sums in another order than torch's
/** int8 activations against f32 ones, both with the same quantized weights: measured 1.3e-2 to 1.8e-2 (the log). */
const INT8_TOL = 5e-2;

for (const set of GOLDEN_SETS) {
  const index = await loadTinyIndex(set);
  const cases = goldenCases(index).dit;
  const shapes = cases.map((c) => `${c.name} ${c.latentH}x${c.latentW}, caption ${c.capLen}`).join("; ");
  gpuTest(`ZImageDit (${set}): ${shapes}; both timesteps; every intermediate the goldens hold`, async (gpu) => {
    const config = parseDitConfig(index.config.dit as Record<string, unknown>);
    const dit = await ZImageDit.load(gpu, await recipeStore(index, "dit"), config);
    const golden = await goldenStore("dit", set);
    const timesteps = await goldenTensor(golden, "timesteps");
    const report: string[] = [];
    const check = (name: string, got: ArrayLike<number>, want: ArrayLike<number>) => {
      const rel = maxRelative(got, want);
      report.push(`${name} ${rel.toExponential(2)}`);
      ok(rel <= TOL, `${set} ${name}: max rel ${rel}`);
    };
    let intermediates = 0;
    for (const { name: c, latentH, latentW, capLen } of cases) {
      const captures: DitCaptures = new Map();
      const run = dit.prepare({ latentH, latentW, capLen }, captures);
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
        // The debug intermediates this step has goldens for (t_freq is the host's: sinusoid.test.ts).
        const prefix = `${c}.t${ti}.`;
        const names = golden.tensors.map((t) => t.name).filter((n) => n.startsWith(prefix))
          .map((n) => n.slice(prefix.length)).filter((n) => n !== "output" && n !== "t_freq");
        for (const name of names) {
          const captured = captures.get(name);
          ok(captured, `${set}: no capture named ${name}`);
          const got = (await gpu.read(captured)) as Float32Array;
          if (name === "adaln0") {
            // Captured with the scale chunks plus one (folded into the bias): take it off.
            for (let i = 0, d = config.dim; i < d; i++) {
              got[i] -= 1;
              got[2 * d + i] -= 1;
            }
          }
          check(prefix + name, got, await goldenTensor(golden, prefix + name));
          intermediates++;
        }
      }
      run.destroy();
    }
    dit.destroy();
    ok(intermediates >= 6, `${set}: only ${intermediates} intermediates checked`);
    console.log(report.join("\n"));
  });
}

/** The tiny DiT with each block's Linear weights replaced by their q8 or q4g128 round trip (CPU reference). */
async function dequantizedStore(index: TinyIndex, format: "q8" | "q4g128") {
  const store = await recipeStore(index, "dit");
  const tensors = await Promise.all(store.tensors.map(async (t) => {
    let values = await store.readFloat32(t.name);
    if (/^(noise_refiner|context_refiner|layers)\.\d+\.(attention\.to_|feed_forward|adaLN).*weight$/.test(t.name)) {
      const [rows, cols] = t.shape;
      const out = new Float32Array(rows * cols);
      if (format === "q8") {
        const { packed, scales } = quantizePacked({ x: values, rows, cols });
        const codes = unpackQ8(packed, rows, cols);
        for (let i = 0; i < out.length; i++) out[i] = codes[i] * scales[Math.floor(i / cols)];
      } else {
        const { packed, scales } = quantizePackedQ4({ x: values, rows, cols });
        const codes = unpackQ4(packed, rows, cols), groups = Math.ceil(cols / 128);
        for (let i = 0; i < out.length; i++) {
          out[i] = codes[i] * scales[Math.floor(i / cols) * groups + Math.floor((i % cols) / 128)];
        }
      }
      values = out;
    }
    return { name: t.name, dtype: "F32" as const, shape: t.shape, data: new Uint8Array(values.buffer) };
  }));
  return await SafetensorsFile.open(bytesSource(encodeSafetensors(tensors)));
}

/** The DiT's outputs on golden case b at both golden timesteps (the DiT is destroyed after). */
async function caseBOutputs(
  gpu: ResidentDevice,
  index: TinyIndex,
  golden: Awaited<ReturnType<typeof goldenStore>>,
  dit: ZImageDit,
): Promise<Float32Array[]> {
  const { latentH, latentW, capLen } = goldenCases(index).dit.find((c) => c.name === "b")!;
  const run = dit.prepare({ latentH, latentW, capLen });
  const write = async (t: GpuTensor, name: string) =>
    gpu.device.queue.writeBuffer(t.buffer, 0, (await goldenTensor(golden, name)) as Float32Array<ArrayBuffer>);
  await write(run.capFeats, "b.cap_feats");
  await run.encodeCaption();
  const out: Float32Array[] = [];
  for (const t of await goldenTensor(golden, "timesteps")) {
    await write(run.latent, "b.latent");
    await run.step(t);
    out.push((await gpu.read(run.output)) as Float32Array);
  }
  run.destroy();
  dit.destroy();
  return out;
}

for (const set of GOLDEN_SETS) {
  gpuTest(
    `ZImageDit (${set}): q8 and q4g128 blocks compute the f32 DiT of their dequantized weights (case b)`,
    async (gpu) => {
      const index = await loadTinyIndex(set);
      const config = parseDitConfig(index.config.dit as Record<string, unknown>);
      const golden = await goldenStore("dit", set);
      const outputs = (dit: ZImageDit) => caseBOutputs(gpu, index, golden, dit);
      const report: string[] = [];
      for (const format of ["q8", "q4g128"] as const) {
        const quantized = await outputs(await ZImageDit.load(gpu, await recipeStore(index, "dit"), config, { format }));
        const roundTrip = await outputs(await ZImageDit.load(gpu, await dequantizedStore(index, format), config));
        for (const ti of [0, 1]) {
          const rel = maxRelative(quantized[ti], roundTrip[ti]);
          const fromF32 = maxRelative(quantized[ti], await goldenTensor(golden, `b.t${ti}.output`));
          report.push(
            `${format} t${ti}: vs its dequantized f32 ${rel.toExponential(2)}, vs the f32 golden ${
              fromF32.toExponential(2)
            }`,
          );
          ok(rel < TOL, `${set} ${format} b.t${ti}: max rel ${rel} from the f32 DiT of its dequantized weights`);
          ok(fromF32 > 100 * rel, `${set} ${format} b.t${ti}: quantization moved the output by only ${fromF32}`);
        }
      }
      console.log(report.join("\n"));
    },
  );
}

for (const set of GOLDEN_SETS) {
  gpuTest(
    `ZImageDit (${set}): int8 activations move q8 and q4g128 outputs by their rounding only (case b); refused with f32 weights`,
    async (gpu) => {
      const index = await loadTinyIndex(set);
      const config = parseDitConfig(index.config.dit as Record<string, unknown>);
      const golden = await goldenStore("dit", set);
      const outputs = (dit: ZImageDit) => caseBOutputs(gpu, index, golden, dit);
      const report: string[] = [];
      for (const format of ["q8", "q4g128"] as const) {
        const load = (activations: "f32" | "int8") =>
          recipeStore(index, "dit").then((store) => ZImageDit.load(gpu, store, config, { format, activations }));
        const int8 = await load("int8");
        strictEqual(int8.activations, "int8");
        const [withInt8, withF32] = [await outputs(int8), await outputs(await load("f32"))];
        for (const ti of [0, 1]) {
          // Rounding every projection's input to 255 levels a row moves the output by a few parts in a
          // thousand; a product fed the wrong codes (another input's, or a stale width) moves it by its size.
          const rel = maxRelative(withInt8[ti], withF32[ti]);
          report.push(`${format} t${ti}: int8 activations vs f32 ones ${rel.toExponential(2)}`);
          ok(rel < INT8_TOL, `${set} ${format} b.t${ti}: int8 activations moved the output by ${rel}`);
          ok(rel > 1e-6, `${set} ${format} b.t${ti}: int8 activations changed nothing (${rel})`);
        }
      }
      console.log(report.join("\n"));
      await assertThrowsMessage(
        async () => ZImageDit.load(gpu, await recipeStore(index, "dit"), config, { activations: "int8" }),
        'ZImageDit.load: activations "int8" needs quantised weights (format q8 or q4g128), got format f32',
      );
      await assertThrowsMessage(
        async () =>
          ZImageDit.load(gpu, await recipeStore(index, "dit"), config, {
            format: "q8",
            activations: "int4" as "int8",
          }),
        'ZImageDit.load: activations must be "f32" or "int8", got "int4"',
      );
    },
  );
}

gpuTest(
  "ZImageDit: a weight over the device's binding limit is refused at load, an activation when a run is prepared",
  async (gpu) => {
    const index = await loadTinyIndex();
    const config = parseDitConfig(index.config.dit as Record<string, unknown>);
    // 32 KiB per binding: the timestep MLP's first weight (1024 x 256 x 4 bytes) is over it.
    await assertThrowsMessage(
      async () =>
        ZImageDit.load(gpu.withLimits({ maxStorageBufferBindingSize: 32768 }), await recipeStore(index, "dit"), config),
      "t_embedder.mlp.0: the weight [1024, 256] is 1048576 bytes in f32, over this device's binding limit of 32768",
    );
    // 1 MiB holds every weight but not a 96 x 96 latent's activations: the first product that binds
    // one is refused, naming the layer, the binding and the limit, before any work is submitted.
    const small = gpu.withLimits({ maxStorageBufferBindingSize: 1 << 20 });
    const dit = await ZImageDit.load(small, await recipeStore(index, "dit"), config);
    let message = "";
    try {
      dit.prepare({ latentH: 96, latentW: 96, capLen: 7 });
    } catch (e) {
      message = (e as Error).message;
    }
    ok(
      /^z-image [^:]+: [^:]+: .*needs maxStorageBufferBindingSize >= \d+, but this device allows 1048576/.test(message),
      message,
    );
    dit.destroy();
  },
);

for (const set of GOLDEN_SETS) {
  gpuTest(
    `ZImageDit (${set}): streamed blocks (two resident slots, uploads between) give the resident DiT's output exactly`,
    async (gpu) => {
      const index = await loadTinyIndex(set);
      const config = parseDitConfig(index.config.dit as Record<string, unknown>);
      const golden = await goldenStore("dit", set);
      const { latentH, latentW, capLen } = goldenCases(index).dit.find((c) => c.name === "a")!;
      const timesteps = await goldenTensor(golden, "timesteps");
      const outputs = async (dit: ZImageDit) => {
        const run = dit.prepare({ latentH, latentW, capLen });
        const write = async (t: GpuTensor, name: string) =>
          gpu.device.queue.writeBuffer(t.buffer, 0, (await goldenTensor(golden, name)) as Float32Array<ArrayBuffer>);
        await write(run.capFeats, "a.cap_feats");
        await run.encodeCaption();
        const out: Float32Array[] = [];
        for (const t of [...timesteps, ...timesteps]) { // twice over: the slots' turns carry across steps
          await write(run.latent, "a.latent");
          await run.step(t);
          out.push((await gpu.read(run.output)) as Float32Array);
        }
        const streamed = run.streamed;
        run.destroy();
        dit.destroy();
        return { out, streamed };
      };
      const variants = [
        { format: "f32" },
        { format: "q8" },
        { format: "q8", activations: "int8" }, // the int8 scratch shared by the slots' turns
      ] as const;
      for (const { format, ...rest } of variants) {
        const load = (stream: boolean) =>
          recipeStore(index, "dit").then((s) => ZImageDit.load(gpu, s, config, { format, ...rest, stream }));
        const resident = await outputs(await load(false));
        const dit = await load(true);
        ok(dit.streamed);
        const streamed = await outputs(dit);
        deepStrictEqual([resident.streamed, streamed.streamed], [false, true]);
        deepStrictEqual(
          streamed.out,
          resident.out,
          `${set} ${format} ${JSON.stringify(rest)}: streamed and resident differ`,
        );
        if (format === "f32") ok(maxRelative(streamed.out[1], await goldenTensor(golden, "a.t1.output")) < TOL);
      }
      const bytes = (stream: boolean) => ditWeightBytes(config, "f32", stream);
      ok(bytes(true) < bytes(false), `streaming holds ${bytes(true)} of ${bytes(false)} bytes`);
    },
  );
}

gpuTest(
  "ZImageDit: a DiT restored from its host copy writes each block's weights just before the block's first run, and gives the loaded DiT's output exactly",
  async (gpu) => {
    const index = await loadTinyIndex("tiny");
    const config = parseDitConfig(index.config.dit as Record<string, unknown>);
    const golden = await goldenStore("dit", "tiny");
    const { latentH, latentW, capLen } = goldenCases(index).dit.find((c) => c.name === "a")!;
    const timesteps = await goldenTensor(golden, "timesteps");
    const write = async (t: GpuTensor, name: string) =>
      gpu.device.queue.writeBuffer(t.buffer, 0, (await goldenTensor(golden, name)) as Float32Array<ArrayBuffer>);
    for (const format of ["f32", "q4g128"] as const) {
      const loaded = await ZImageDit.load(gpu, await recipeStore(index, "dit"), config, { format });
      strictEqual(loaded.pendingBytes, 0);
      const outputs = async (
        dit: ZImageDit,
        check?: (stage: string, run: ReturnType<ZImageDit["prepare"]>) => void,
      ) => {
        const run = dit.prepare({ latentH, latentW, capLen });
        await write(run.capFeats, "a.cap_feats");
        check?.("prepared", run);
        await run.encodeCaption();
        check?.("caption", run);
        const out: Float32Array[] = [];
        for (const t of timesteps) {
          await write(run.latent, "a.latent");
          await run.step(t);
          check?.("step", run);
          out.push((await gpu.read(run.output)) as Float32Array);
        }
        run.destroy();
        return out;
      };
      const want = await outputs(loaded);
      const copy = await loaded.hostCopy();
      loaded.destroy();
      const restored = copy.restore(gpu);
      // A block's projections: what streaming saves, over the blocks it does not keep as slots.
      const nBlocks = 2 * config.nRefinerLayers + config.nLayers;
      const block = (ditWeightBytes(config, format) - ditWeightBytes(config, format, true)) / (nBlocks - 2);
      const blocks = nBlocks * block;
      // Every block's projections pending (each buffer rounded up to 16 bytes), nothing else.
      ok(
        restored.pendingBytes >= blocks && restored.pendingBytes < blocks * 1.01,
        `${restored.pendingBytes} of ${blocks}`,
      );
      const seen: Record<string, number> = {};
      const got = await outputs(restored, (stage, run) => {
        seen[stage] = restored.pendingBytes;
        if (stage === "prepared") ok(run.submissionsPerStep > 1, `${format}: one submission per block`);
      });
      // The caption's refiner blocks are written by the caption's run, the rest by the first step.
      ok(seen.caption < seen.prepared && seen.caption > 0 && seen.step === 0, `${format}: ${JSON.stringify(seen)}`);
      deepStrictEqual(got, want, `${format}: the restored DiT's outputs`);
      // Bound once nothing is pending: one submission a step.
      const run = restored.prepare({ latentH, latentW, capLen });
      strictEqual(run.submissionsPerStep, 1);
      run.destroy();
      restored.destroy();
    }
  },
);
