import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { decodedToRgba } from "../image.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { gaussianNoise } from "../noise.ts";
import { parseQwen3Config } from "../qwen3/config.ts";
import { Qwen3Encoder } from "../qwen3/encoder.ts";
import { AnimaDit } from "./dit.ts";
import { Anima, type AnimaGenerateOptions, type AnimaSource, QWEN_ENDOFTEXT } from "./pipeline.ts";
import { type AnimaSampler, denoisedLatent, guide, sampleErSde, sampleResMultistep, sigmaSchedule } from "./sampler.ts";
import { ditStores } from "./weights.ts";
import { onDemandTextEncoder, qwen3TextEncoder } from "./text.ts";
import {
  assertRel,
  fixture,
  GOLDEN_SETS,
  goldenIndex,
  type GoldenSet,
  readInt32,
  relativeDiff,
  spatial,
} from "./fixtures_test_util.ts";

const io = await fixture("io");

/**
 * A golden set's text side as the pipeline's encoder and tokenizer: "cond" and "uncond" map to
 * the Qwen ids, the Qwen3 states and the T5 ids the oracle stored (its encoder is transformers'
 * Qwen3Model on weights_qwen3; the test below runs models/qwen3's instead).
 */
async function goldenText(
  set: GoldenSet = "tiny",
  seen: Int32Array[] = [],
): Promise<Pick<AnimaSource, "textEncoder" | "t5Tokenizer">> {
  const io = await fixture("io", set);
  const ids = {
    cond: await readInt32(io, "encoder/cond/input_ids"),
    uncond: await readInt32(io, "encoder/uncond/input_ids"),
  };
  const states = new Map([
    [ids.cond.join(), await io.readFloat32("encoder/cond/last_hidden_state")],
    [ids.uncond.join(), await io.readFloat32("encoder/uncond/last_hidden_state")],
  ]);
  const hidden = io.info("encoder/cond/last_hidden_state").shape.at(-1)!;
  const t5 = { cond: await readInt32(io, "adapter/cond/t5_ids"), uncond: await readInt32(io, "adapter/uncond/t5_ids") };
  return {
    textEncoder: {
      tokenize: (text) => text === "" ? [] : ids[text as "cond" | "uncond"],
      encode: (q) => {
        seen.push(q);
        const s = states.get(q.join());
        return Promise.resolve(s ?? new Float32Array(q.length * hidden));
      },
    },
    t5Tokenizer: { encode: (text) => text === "" ? [] : t5[text as "cond" | "uncond"] },
  };
}

async function source(set: GoldenSet = "tiny"): Promise<AnimaSource> {
  return {
    dit: await fixture("weights_dit", set),
    vae: await fixture("weights_vae", set),
    ...await goldenText(set),
  };
}

for (const set of GOLDEN_SETS) {
  const io = await fixture("io", set);
  const [lh, lw] = spatial(io, "run/noise");
  const run = { prompt: "cond", negativePrompt: "uncond", width: 8 * lw, height: 8 * lh, steps: 3, cfg: 4 };

  gpuTest(
    `anima pipeline (${set}): the 3-step CFG-4 run at ${8 * lw} x ${
      8 * lh
    } (both passes one batched DiT run) down to the image`,
    async (gpu) => {
      const anima = await Anima.load(await source(set), { device: gpu });
      try {
        const steps: number[] = [];
        const image = await anima.generate({
          ...run,
          noise: await io.readFloat32("run/noise"),
          onStep: (done) => steps.push(done),
        });
        deepStrictEqual(steps, [1, 2, 3]);
        const latent = assertRel(image.latent, await io.readFloat32("run/vae/z"), "final latent");
        const rgb = assertRel(image.rgb, await io.readFloat32("run/vae/image"), "image");
        console.log(`${set}: latent ${latent.toExponential(2)}, image ${rgb.toExponential(2)}`);
        deepStrictEqual([image.width, image.height, image.rgb.length], [8 * lw, 8 * lh, 3 * 64 * lh * lw]);
      } finally {
        anima.destroy();
      }
    },
  );

  gpuTest(
    `anima pipeline (${set}): from the Qwen3 ids through models/qwen3's encoder down to the image`,
    async (gpu) => {
      const { configs } = await goldenIndex(set);
      const config = parseQwen3Config({ ...configs.qwen3, model_type: "qwen3" });
      const encoder = await Qwen3Encoder.load(gpu, await fixture("weights_qwen3", set), config);
      const ids: Record<string, Int32Array> = {
        cond: await readInt32(io, "encoder/cond/input_ids"),
        uncond: await readInt32(io, "encoder/uncond/input_ids"),
      };
      const t5: Record<string, Int32Array> = {
        cond: await readInt32(io, "adapter/cond/t5_ids"),
        uncond: await readInt32(io, "adapter/uncond/t5_ids"),
      };
      const anima = await Anima.load({
        dit: await fixture("weights_dit", set),
        vae: await fixture("weights_vae", set),
        // The tiny models' vocabularies are not the real tokenizers': the golden ids.
        textEncoder: qwen3TextEncoder(encoder, { encode: (text) => [...ids[text]] }),
        t5Tokenizer: { encode: (text) => t5[text] },
      }, { device: gpu });
      try {
        const states = await anima.encodePrompt("cond");
        const encoded = assertRel(
          states.states,
          await io.readFloat32("encoder/cond/last_hidden_state"),
          "Qwen3 states",
        );
        const uncond = await anima.encodePrompt("uncond");
        assertRel(uncond.states, await io.readFloat32("encoder/uncond/last_hidden_state"), "Qwen3 uncond states");
        const image = await anima.generate({ ...run, noise: await io.readFloat32("run/noise") });
        const latent = assertRel(image.latent, await io.readFloat32("run/vae/z"), "final latent");
        const rgb = assertRel(image.rgb, await io.readFloat32("run/vae/image"), "image");
        console.log(
          `${set}: Qwen3 states ${encoded.toExponential(2)}, latent ${latent.toExponential(2)}, ` +
            `image ${rgb.toExponential(2)}`,
        );
      } finally {
        anima.destroy();
        encoder.destroy();
      }
    },
  );

  gpuTest(
    `anima pipeline (${set}): one step with CFG (batch 2) and with cfg = 1 (batch 1, no uncond pass)`,
    async (gpu) => {
      const anima = await Anima.load(await source(set), { device: gpu });
      try {
        const noise = await io.readFloat32("run/noise");
        const cond = await anima.encodePrompt("cond"), uncond = await anima.encodePrompt("uncond");
        // sigmas [1, 0]: x1 = x0 - v at sigma 1, the run's step 0 velocities.
        const guided = await anima.denoise(noise, await anima.context([cond, uncond]), lh, lw, { steps: 1, cfg: 4 });
        const v = await io.readFloat32("run/step0/v");
        const r1 = assertRel(guided, noise.map((x, i) => x - v[i]), "cfg 4, one step");
        const plain = await anima.denoise(noise, await anima.context([cond]), lh, lw, { steps: 1, cfg: 1 });
        const vc = await io.readFloat32("run/step0/v_cond");
        const r2 = assertRel(plain, noise.map((x, i) => x - vc[i]), "cfg 1, one step");
        console.log(`${set}: cfg 4: ${r1.toExponential(2)}, cfg 1: ${r2.toExponential(2)}`);
        // The batch must match the guidance: a cfg-4 call with one context is refused.
        const width = anima.config.contextDim;
        await assertThrowsMessage(
          () => anima.denoise(noise, new Float32Array(512 * width), lh, lw, { steps: 1, cfg: 4 }),
          `context must be [2, 512, ${width}]`,
        );
      } finally {
        anima.destroy();
      }
    },
  );
}

gpuTest(
  "anima pipeline: res_multistep and er_sde on the device are the host references run with the DiT's velocities (6 steps, cfg 4 and 1)",
  async (gpu) => {
    const anima = await Anima.load(await source(), { device: gpu });
    const dit = await AnimaDit.load(gpu, ditStores(await fixture("weights_dit")).dit);
    try {
      const noise = await io.readFloat32("run/noise"), n = noise.length, seed = 7;
      const [lh, lw] = spatial(io, "run/noise");
      const context = await anima.context([await anima.encodePrompt("cond"), await anima.encodePrompt("uncond")]);
      const rows = anima.config.contextRows * anima.config.contextDim;
      const [cond, uncond] = [context.subarray(0, rows), context.subarray(rows)];
      // The reference: one DiT forward per pass and step (batch 1), guided and turned into D on the host.
      const denoiser = (cfg: number) => async (x: Float64Array, sigma: number) => {
        const latent = Float32Array.from(x);
        const vc = await dit.run(latent, sigma, cond, lh, lw);
        const v = cfg === 1 ? vc : guide(vc, await dit.run(latent, sigma, uncond, lh, lw), cfg);
        return denoisedLatent(latent, v, sigma);
      };
      // Six steps: er_sde's stage 3 weighs D_{i−2} by 1e-2 only from the fifth (before, by 1e-9 and 2e-3).
      const sigmas = sigmaSchedule(6);
      for (const cfg of [4, 1]) {
        const ctx = cfg === 1 ? cond : context;
        const run = (sampler: AnimaSampler) => anima.denoise(noise, ctx, lh, lw, { steps: 6, cfg, sampler, seed });
        const [euler, multistep, sde] = [await run("euler"), await run("res_multistep"), await run("er_sde")];
        // Within 1e-5: the host's f64 sampling arithmetic against the device's f32 (about 1e-6 here).
        const r1 = assertRel(
          multistep,
          await sampleResMultistep(noise, sigmas, denoiser(cfg)),
          `res_multistep, cfg ${cfg}`,
          1e-5,
        );
        const stepNoise = (i: number) => gaussianNoise(seed, n, (i + 1) * n);
        const reference = await sampleErSde(noise, sigmas, denoiser(cfg), { shift: 3, noise: stepNoise });
        const r2 = assertRel(sde, reference, `er_sde, cfg ${cfg}`, 1e-5);
        // The option is not ignored: each sampler's latent is its own.
        const apart = [relativeDiff(multistep, euler), relativeDiff(sde, euler), relativeDiff(sde, multistep)];
        console.log(
          `cfg ${cfg}: res_multistep ${r1.toExponential(2)}, er_sde ${r2.toExponential(2)}; apart ${
            apart.map((d) => d.toExponential(2))
          }`,
        );
        ok(apart.every((d) => d > 1e-2), `${apart}`);
      }
      await assertThrowsMessage(
        () => anima.denoise(noise, context, lh, lw, { steps: 2, cfg: 4, sampler: "er_sde" }),
        'anima: seed must be an integer in [0, 2^32) for sampler "er_sde" (its step noise), got undefined',
      );
    } finally {
      dit.destroy();
      anima.destroy();
    }
  },
);

gpuTest(
  "anima pipeline: er_sde's step noise comes from the seed, with or without a given initial latent",
  async (gpu) => {
    const anima = await Anima.load(await source(), { device: gpu });
    try {
      const options = {
        prompt: "cond",
        negativePrompt: "uncond",
        width: 96,
        height: 64,
        steps: 3,
        cfg: 4,
        sampler: "er_sde" as const,
      };
      const seeded = await anima.generate({ ...options, seed: 5 });
      const given = await anima.generate({ ...options, seed: 5, noise: gaussianNoise(5, 16 * 8 * 12) });
      deepStrictEqual([seeded.seed, given.seed], [5, 5]);
      deepStrictEqual([...given.latent], [...seeded.latent]);
      // Another seed's step noise, the same initial latent: another image.
      const other = await anima.generate({ ...options, seed: 6, noise: gaussianNoise(5, 16 * 8 * 12) });
      ok(relativeDiff(other.latent, seeded.latent) > 1e-2);
      const random = await anima.generate({ ...options, noise: gaussianNoise(5, 16 * 8 * 12) });
      ok(Number.isInteger(random.seed) && random.seed! >= 0 && random.seed! < 2 ** 32);
    } finally {
      anima.destroy();
    }
  },
);

gpuTest(
  "anima pipeline: under a budget that holds each stage but not all three, stages load and release in turn",
  async (gpu) => {
    const loaded: string[] = [];
    const text = await goldenText();
    text.textEncoder.release = () => loaded.push("text encoder released");
    const anima = await Anima.load({ ...await source(), ...text }, {
      device: gpu,
      maxResidentBytes: 450_000,
      onProgress: ({ stage, done, total }) => done === total && loaded.push(stage),
    });
    try {
      deepStrictEqual(anima.residency, { maxResidentBytes: 450_000, keepsAllStages: false, streamsDitBlocks: false });
      deepStrictEqual(loaded, []); // nothing loaded up front
      const image = await anima.generate({
        prompt: "cond",
        negativePrompt: "uncond",
        width: 96,
        height: 64,
        steps: 3,
        cfg: 4,
        noise: await io.readFloat32("run/noise"),
      });
      assertRel(image.rgb, await io.readFloat32("run/vae/image"), "image (staged)");
      deepStrictEqual(loaded, ["text encoder released", "adapter", "dit", "vae"]);
    } finally {
      anima.destroy();
    }
  },
);

gpuTest(
  "anima pipeline: a seed is models/noise.ts's Gaussian latent; the image comes back as RGBA too",
  async (gpu) => {
    const anima = await Anima.load(await source(), { device: gpu });
    try {
      const options = { prompt: "cond", negativePrompt: "uncond", width: 96, height: 64, steps: 1, cfg: 4 };
      const seeded = await anima.generate({ ...options, seed: 5 });
      const given = await anima.generate({ ...options, noise: gaussianNoise(5, 16 * 8 * 12) });
      deepStrictEqual([seeded.seed, given.seed], [5, undefined]);
      deepStrictEqual([...seeded.latent], [...given.latent]);
      deepStrictEqual(seeded.rgba, decodedToRgba(seeded.rgb, 96, 64));
      const random = await anima.generate({ ...options, steps: 1 });
      deepStrictEqual(Number.isInteger(random.seed) && random.seed! >= 0 && random.seed! < 2 ** 32, true);
    } finally {
      anima.destroy();
    }
  },
);

gpuTest("anima pipeline: the empty prompt is one <|endoftext|> for Qwen3 and </s> for T5 (ComfyUI)", async (gpu) => {
  const seen: Int32Array[] = [];
  const anima = await Anima.load({
    dit: await fixture("weights_dit"),
    vae: await fixture("weights_vae"),
    ...await goldenText("tiny", seen),
  }, {
    device: gpu,
  });
  try {
    const empty = await anima.encodePrompt("");
    deepStrictEqual([...seen[0]], [QWEN_ENDOFTEXT]);
    deepStrictEqual([...empty.t5Ids], [1]);
  } finally {
    anima.destroy();
  }
});

gpuTest("anima pipeline: bad options and budgets are refused before any GPU work", async (gpu) => {
  await assertThrowsMessage(
    async () => await Anima.load(await source(), { device: gpu, maxResidentBytes: 300_000 }),
    "the dit needs 428736 bytes resident with its blocks streamed, over maxResidentBytes 300000",
  );
  await assertThrowsMessage(
    // deno-lint-ignore no-explicit-any
    async () => await Anima.load(await source(), { device: gpu, format: "q4g128" as any }),
    'format must be "f32" or "q8", got q4g128',
  );
  const anima = await Anima.load(await source(), { device: gpu });
  try {
    const base = { prompt: "cond", width: 96, height: 64, noise: new Float32Array(16 * 8 * 12) };
    await assertThrowsMessage(() => anima.generate({ ...base, width: 100 }), "width must be a multiple of 16, got 100");
    await assertThrowsMessage(() => anima.generate({ ...base, steps: 0 }), "steps must be an integer >= 1, got 0");
    await assertThrowsMessage(
      () => anima.generate({ ...base, noise: undefined, seed: -1 }),
      "seed must be an integer in [0, 2^32)",
    );
    const controller = new AbortController();
    controller.abort();
    await assertThrowsMessage(() => anima.generate({ ...base, signal: controller.signal }), "abort");
  } finally {
    anima.destroy();
  }
});

gpuTest("anima pipeline: every option is refused before a prompt is encoded or a stage loads", async (gpu) => {
  const seen: Int32Array[] = [], loads: string[] = [];
  // Under this budget the stages do not stay loaded together: each would load (with progress) when it runs.
  const anima = await Anima.load({
    dit: await fixture("weights_dit"),
    vae: await fixture("weights_vae"),
    ...await goldenText("tiny", seen),
  }, {
    device: gpu,
    maxResidentBytes: 600_000,
    onProgress: ({ stage }) => loads.push(stage),
  });
  try {
    strictEqual(anima.residency.keepsAllStages, false);
    const base = { prompt: "cond", negativePrompt: "uncond", width: 96, height: 64, steps: 2, seed: 3 };
    const refused: [Record<string, unknown>, string][] = [
      [{ width: 0 }, "anima: width must be a multiple of 16, got 0"],
      [{ height: 72 }, "anima: height must be a multiple of 16, got 72"],
      [{ steps: 2.5 }, "anima: steps must be an integer >= 1, got 2.5"],
      [{ cfg: Infinity }, "anima: cfg must be finite, got Infinity"],
      [{ shift: 0 }, "anima: shift must be a finite number > 0, got 0"],
      [{ shift: NaN }, "anima: shift must be a finite number > 0, got NaN"],
      [{ prompt: undefined }, "anima: prompt must be a string, got undefined"],
      [{ negativePrompt: 5 }, "anima: negativePrompt must be a string, got number"],
      [{ sampler: "heun" }, "anima: sampler must be one of euler, res_multistep, er_sde, got heun"],
      [{ sampler: "er_sde", seed: 1.5 }, 'anima: seed must be an integer in [0, 2^32) for sampler "er_sde"'],
      [{ sampler: "er_sde", steps: 2 ** 22 }, "anima: steps must be at most 2796201 for er_sde at this size"],
      [
        { noise: new Float32Array(16 * 8 * 12 - 1) },
        "anima: noise must be a Float32Array of [16, 8, 12] (1536 values), got 1535 values",
      ],
      [{ seed: 2 ** 32 }, "seed must be an integer in [0, 2^32)"],
    ];
    for (const [bad, message] of refused) {
      await assertThrowsMessage(() => anima.generate({ ...base, ...bad } as AnimaGenerateOptions), message);
    }
    // A T5 tokenizer that gives more ids than the DiT has context rows (the library's truncates to 512).
    const long = await Anima.load({
      dit: await fixture("weights_dit"),
      vae: await fixture("weights_vae"),
      ...await goldenText("tiny", seen),
      t5Tokenizer: { encode: (text) => text === "" ? [1] : new Array(513).fill(5) },
    }, { device: gpu, maxResidentBytes: 600_000, onProgress: ({ stage }) => loads.push(stage) });
    try {
      await assertThrowsMessage(
        () => long.generate({ ...base, negativePrompt: "" }),
        "anima: the prompt has 513 T5 tokens, over the DiT's 512 context rows",
      );
      await assertThrowsMessage(
        () => long.generate({ ...base, prompt: "", negativePrompt: "uncond" }),
        "anima: the negative prompt has 513 T5 tokens",
      );
    } finally {
      long.destroy();
    }
    deepStrictEqual([seen.length, loads], [0, []]);
    // The same options, good, do encode and load (so the empty lists above are not for want of a chance).
    await anima.generate({ ...base, steps: 1 });
    ok(seen.length === 2 && loads.includes("adapter") && loads.includes("dit") && loads.includes("vae"), `${loads}`);
  } finally {
    anima.destroy();
  }
});

gpuTest(
  "anima pipeline: an on-demand text encoder loads on the first prompt, is freed before the DiT, and loads again",
  async (gpu) => {
    const { configs } = await goldenIndex("tiny");
    const config = parseQwen3Config({ ...configs.qwen3, model_type: "qwen3" });
    const store = await fixture("weights_qwen3", "tiny");
    const events: string[] = [];
    let live = 0;
    const text = onDemandTextEncoder({ encode: (s) => [...s].map((c) => c.charCodeAt(0) % 128) }, async () => {
      events.push("load");
      const encoder = await Qwen3Encoder.load(gpu, store, config);
      live = encoder.weightBytes;
      return { encoder, close: () => events.push("close") };
    });
    const reference = await Qwen3Encoder.load(gpu, store, config);
    try {
      const ids = Int32Array.from(text.tokenize("a cat"));
      const before = gpu.memory.bytes;
      deepStrictEqual(await text.encode(ids), await reference.encode(ids));
      await text.encode(ids);
      deepStrictEqual(events, ["load"]);
      ok(live > 0 && gpu.memory.bytes - before >= live, "the encoder's weights are on the device");
      text.release!();
      deepStrictEqual(events, ["load", "close"]);
      ok(gpu.memory.bytes - before < live, `its weights are freed: ${gpu.memory.bytes - before} bytes left`);
      // Through the pipeline: released after the prompts, before the DiT loads.
      const anima = await Anima.load({
        dit: await fixture("weights_dit", "tiny"),
        vae: await fixture("weights_vae", "tiny"),
        textEncoder: text,
        t5Tokenizer: { encode: () => [5, 6, 1] },
      }, { device: gpu, maxResidentBytes: 2 ** 20 });
      try {
        await anima.generate({ prompt: "a cat", width: 32, height: 32, steps: 1, cfg: 1, seed: 1 });
        // The second prompt's encoder came back from the host copy of the first load: no load, nothing to close.
        strictEqual(events.join(), "load,close");
        deepStrictEqual(await text.encode(ids), await reference.encode(ids), "restored from the host copy");
        text.release!();
      } finally {
        anima.destroy();
      }
      // Without the copy, each prompt after a release loads the encoder again.
      events.length = 0;
      const again = onDemandTextEncoder({ encode: (s) => [...s].map((c) => c.charCodeAt(0) % 128) }, async () => {
        events.push("load");
        return { encoder: await Qwen3Encoder.load(gpu, store, config), close: () => events.push("close") };
      }, { keepHostCopy: false });
      for (let i = 0; i < 2; i++) {
        deepStrictEqual(await again.encode(ids), await reference.encode(ids));
        again.release!();
      }
      strictEqual(events.join(), "load,close,load,close");
    } finally {
      reference.destroy();
    }
  },
);

gpuTest(
  "anima pipeline: stages loaded in turn come back from host copies: the second image reads no weight and is the same image",
  async (gpu) => {
    const base = await source();
    const noise = await io.readFloat32("run/noise");
    const run = { prompt: "cond", negativePrompt: "uncond", width: 96, height: 64, steps: 3, cfg: 4, noise };
    // (The tiny DiT has two blocks, so it never streams: dit.test.ts restores a streamed one.)
    for (const keepHostCopies of [undefined, false]) {
      const reads: string[] = [];
      const onRead = () => reads.push("read");
      const before = gpu.memory.bytes;
      const anima = await Anima.load(
        { ...base, dit: watchedStore(base.dit, onRead), vae: watchedStore(base.vae, onRead) },
        { device: gpu, maxResidentBytes: 450_000, keepHostCopies },
      );
      try {
        strictEqual(anima.residency.keepsAllStages, false);
        const first = await anima.generate(run);
        ok(reads.length > 0);
        reads.length = 0;
        const second = await anima.generate(run);
        if (keepHostCopies === false) {
          ok(reads.length > 0, "read again");
          strictEqual(anima.hostBytes, 0);
        } else {
          deepStrictEqual(reads, [], "no weight read for the second image");
          ok(anima.hostBytes > 0);
        }
        deepStrictEqual(second.rgba, first.rgba);
        assertRel(second.rgb, await io.readFloat32("run/vae/image"), "image (from host copies)");
        strictEqual(gpu.memory.bytes, before, "every stage released after the image");
      } finally {
        anima.destroy();
      }
    }
  },
);

/** A view of a store whose reads call `onRead` first (which may throw: a read error). */
function watchedStore(store: TensorStore, onRead: () => void): TensorStore {
  return new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key, target);
      if (typeof value !== "function") return value;
      if (key === "read" || key === "readRows" || key === "readFloat32") {
        return (...args: unknown[]) => {
          onRead();
          return value.apply(target, args);
        };
      }
      return value.bind(target);
    },
  });
}

gpuTest(
  "anima pipeline: a load that fails halfway (a read error in the adapter, the DiT or the VAE) leaves no buffer behind",
  async (gpu) => {
    const base = await source();
    let reads = 0;
    const counted = await Anima.load(
      { ...base, dit: watchedStore(base.dit, () => reads++), vae: watchedStore(base.vae, () => reads++) },
      { device: gpu },
    );
    counted.destroy();
    const before = gpu.memory;
    // Failures spread over the whole load (the adapter's tensors come first, then the DiT's, then the
    // VAE's), the last read included, in both formats (q8's quantized weights are allocated first).
    const points = [
      ...new Set([0, 1, 2, 3, ...Array.from({ length: 12 }, (_, i) => Math.floor((i * reads) / 12)), reads - 1]),
    ];
    for (const at of points) {
      for (const format of ["f32", "q8"] as const) {
        let n = 0;
        const fail = () => {
          if (n++ === at) throw new Error(`read ${at} failed`);
        };
        await assertThrowsMessage(
          () =>
            Anima.load({ ...base, dit: watchedStore(base.dit, fail), vae: watchedStore(base.vae, fail) }, {
              device: gpu,
              format,
            }),
          `read ${at} failed`,
        );
        deepStrictEqual(
          [gpu.memory.bytes, gpu.memory.buffers],
          [before.bytes, before.buffers],
          `${format}, failing at read ${at} of ${reads}`,
        );
      }
    }
  },
);
