import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { ResidentDevice } from "../../harness/device.ts";
import { assertThrowsMessage, gpuTest, randomF32 } from "../../harness/testing.ts";
import { drawUniform, sampleNext, type SamplerOptions } from "../sampler.ts";
import { packSamplerOptions, SAMPLE, validateSamplerOptions } from "./sampling.ts";
import { NO_POSSIBLE_TOKEN, NONFINITE_LOGITS } from "./kernels.ts";
import { boundaryMargin } from "./sampling_test_util.ts";

type Sample = Extract<SamplerOptions, { mode: "sample" }>;

/**
 * Cases stay this far (relative, `boundaryMargin`) from any boundary where f32 and f64 may choose
 * differently: well above f32 rounding of exp (a few ulp) and of sums of a few hundred terms.
 */
const MARGIN = 1e-4;

/**
 * Runs the kernel `steps` times over the same logits in one pass (the state's step advancing
 * on the GPU from `firstStep`) and returns the chosen ids; checks `ids[0]` and the state.
 */
async function sampleOnGpu(
  gpu: ResidentDevice,
  logits: Float32Array<ArrayBuffer>,
  options: Sample,
  steps: number,
  firstStep = 0,
) {
  const device = gpu.device;
  const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC;
  const made: GPUBuffer[] = [];
  const buffer = (bytes: number, u = usage) => {
    const b = device.createBuffer({ size: Math.ceil(bytes / 16) * 16, usage: u });
    made.push(b);
    return b;
  };
  const V = logits.length;
  const logitsBuf = buffer(4 * V);
  const probs = buffer(4 * V);
  const ids = buffer(16);
  const tokens = buffer(4 * (firstStep + steps));
  const state = buffer(16);
  const opt = buffer(32);
  const params = buffer(16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
  const read = buffer(4 * (firstStep + steps) + 32, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST);
  try {
    device.queue.writeBuffer(logitsBuf, 0, logits);
    device.queue.writeBuffer(state, 0, new Uint32Array([7, firstStep, 0, 0]));
    device.queue.writeBuffer(opt, 0, packSamplerOptions(options));
    device.queue.writeBuffer(params, 0, new Uint32Array([V, 1, 0, 0]));
    const module = device.createShaderModule({ code: SAMPLE });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const entries = [logitsBuf, probs, ids, tokens, state, opt, params].map((b, binding) => ({
      binding,
      resource: { buffer: b },
    }));
    const bindGroup = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    for (let s = 0; s < steps; s++) pass.dispatchWorkgroups(1);
    pass.end();
    const tokenBytes = 4 * (firstStep + steps);
    encoder.copyBufferToBuffer(tokens, 0, read, 0, tokenBytes);
    encoder.copyBufferToBuffer(ids, 0, read, Math.ceil(tokenBytes / 16) * 16, 16);
    encoder.copyBufferToBuffer(state, 0, read, Math.ceil(tokenBytes / 16) * 16 + 16, 16);
    device.queue.submit([encoder.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const words = new Uint32Array(read.getMappedRange().slice(0));
    read.unmap();
    const got = [...words.subarray(firstStep, firstStep + steps)];
    const tail = Math.ceil(tokenBytes / 16) * 4;
    assertEquals(words[tail], got[steps - 1], "ids[0] holds the last choice");
    assertEquals([...words.subarray(tail + 4, tail + 6)], [7 + steps, firstStep + steps], "position and step advanced");
    return got;
  } finally {
    for (const b of made) b.destroy();
  }
}

/** The reference's ids for steps [firstStep, firstStep + steps), each case checked clear of boundaries. */
function reference(logits: Float32Array, options: Sample, steps: number, firstStep = 0): number[] {
  return Array.from({ length: steps }, (_, s) => {
    const step = firstStep + s;
    const margin = boundaryMargin(logits, options, step);
    assert(margin > MARGIN, `step ${step}: within ${margin.toExponential(2)} of a boundary; choose another case`);
    return sampleNext(logits, new Array(step).fill(0), options);
  });
}

const logitsOf = (probs: number[]) => Float32Array.from(probs, Math.log);

gpuTest("sampler kernel: top-k keeps the k most probable, ties to the lower id", async (gpu) => {
  const logits = new Float32Array([1, 3, 2, 3, 3, 0, 3]);
  for (const topK of [2, 3, 4, 5]) {
    const options: Sample = { mode: "sample", temperature: 1, topK, seed: 11 };
    const got = await sampleOnGpu(gpu, logits, options, 32);
    assertEquals(got, reference(logits, options, 32), `topK ${topK}`);
    // By hand: the four 3s in id order, then the 2 (id 2).
    const allowed = [1, 3, 4, 6, 2].slice(0, topK);
    assert(got.every((id) => allowed.includes(id)), `topK ${topK}: ${got}`);
    assertEquals(new Set(got).size, topK, `topK ${topK}: every kept token drawn in 32 steps (${got})`);
  }
});

gpuTest(
  "sampler kernel: top-p keeps the most probable until their mass reaches p, either side of a boundary",
  async (gpu) => {
    // Sorted: id 1 (0.5), id 2 (0.3), id 0 (0.2). Mass 0.8 after two tokens.
    const logits = logitsOf([0.2, 0.5, 0.3]);
    for (const [topP, allowed] of [[0.49, [1]], [0.79, [1, 2]], [0.81, [0, 1, 2]]] as const) {
      const options: Sample = { mode: "sample", temperature: 1, topP, seed: 3 };
      const got = await sampleOnGpu(gpu, logits, options, 32);
      assertEquals(got, reference(logits, options, 32), `topP ${topP}`);
      assertEquals([...new Set(got)].sort(), [...allowed].sort(), `topP ${topP}: the kept set, all drawn`);
    }
  },
);

gpuTest("sampler kernel: min-p keeps tokens at least minP times the most probable; after top-p", async (gpu) => {
  // p = [0.05, 0.2, 1, 0.5, 0.01] / 1.76. top-p 0.86 keeps 2, 3, 1 (mass 0.852 after two); min-p 0.15
  // then keeps all three. Min-p first would leave 2, 3, 1 of mass 1.7, and top-p 0.86 of that only 2, 3.
  const logits = logitsOf([0.05, 0.2, 1, 0.5, 0.01]);
  for (const [minP, topP, allowed] of [[0.3, 1, [2, 3]], [0.15, 1, [1, 2, 3]], [0.15, 0.86, [1, 2, 3]]] as const) {
    const options: Sample = { mode: "sample", temperature: 1, topP, minP, seed: 5 };
    const got = await sampleOnGpu(gpu, logits, options, 48);
    assertEquals(got, reference(logits, options, 48), `minP ${minP} topP ${topP}`);
    assertEquals([...new Set(got)].sort(), [...allowed].sort(), `minP ${minP} topP ${topP}`);
  }
});

gpuTest("sampler kernel: temperature divides the logits before the softmax", async (gpu) => {
  const logits = new Float32Array([0, 1]);
  const runs: number[][] = [];
  for (const temperature of [0.25, 1, 4]) {
    const options: Sample = { mode: "sample", temperature, seed: 9 };
    const got = await sampleOnGpu(gpu, logits, options, 64);
    assertEquals(got, reference(logits, options, 64), `temperature ${temperature}`);
    runs.push(got);
  }
  // p(id 0) = 1 / (1 + e^(1/T)): 0.018, 0.269, 0.438; fewer 0s the colder.
  const zeros = runs.map((r) => r.filter((id) => id === 0).length);
  assert(zeros[0] < zeros[1] && zeros[1] < zeros[2], `id 0 drawn ${zeros} times at T 0.25, 1, 4`);
});

gpuTest(
  "sampler kernel: the draw is drawUniform(seed, step), walked in ascending id order, not sorted",
  async (gpu) => {
    // Eight equal tokens: the id is floor(8u), three bits of each step's uniform.
    const flat = new Float32Array(8);
    const options: Sample = { mode: "sample", temperature: 1, seed: 0xdeadbeef };
    const got = await sampleOnGpu(gpu, flat, options, 64, 100);
    reference(flat, options, 64, 100);
    assertEquals(got, Array.from({ length: 64 }, (_, s) => Math.floor(8 * drawUniform(0xdeadbeef, 100 + s))));
    // Unequal: a walk in descending probability order would choose differently at some steps.
    const logits = logitsOf([0.1, 0.4, 0.2, 0.3]);
    const walked = { mode: "sample", temperature: 1, seed: 2 } as const; // seed 1 comes within 6e-5 of a boundary
    const byId = await sampleOnGpu(gpu, logits, walked, 64);
    assertEquals(byId, reference(logits, walked, 64));
    const sortedWalk = (u: number) => {
      const order = [1, 3, 2, 0];
      const p = [0.1, 0.4, 0.2, 0.3];
      let c = 0;
      for (const i of order) if ((c += p[i]) > u) return i;
      return order[3];
    };
    const sorted = byId.map((_, s) => sortedWalk(drawUniform(walked.seed, s)));
    assert(sorted.some((id, s) => id !== byId[s]), "the case tells the two walks apart");
  },
);

gpuTest("sampler kernel: a 102,400-token vocabulary, top-k, top-p and min-p together, and top-p alone", async (gpu) => {
  // Like a language model's head: most logits low, a few hundred plausible tokens well above them
  // (so the cut-offs fall between tokens that f32 tells apart; the margins are checked).
  const logits = new Float32Array(randomF32(102_400, 21, -4, 4));
  const plausible = randomF32(300, 22, 0, 1);
  for (const [j, r] of plausible.entries()) logits[(j * 7919 + 13) % logits.length] = 4 + 6 * r;
  const cases: Sample[] = [
    { mode: "sample", temperature: 0.5, topK: 40, topP: 0.9, minP: 0.05, seed: 2024 },
    { mode: "sample", temperature: 0.6, topP: 0.95, seed: 77 },
  ];
  for (const options of cases) {
    const got = await sampleOnGpu(gpu, logits, options, 3);
    assertEquals(got, reference(logits, options, 3), JSON.stringify(options));
  }
});

Deno.test("sampler options: refused by field name, before any GPU work", async () => {
  const where = "LlamaEngine.generate";
  const bad: [unknown, RegExp][] = [
    [{ mode: "topk" }, /sampler mode must be "greedy" or "sample", got "topk"/],
    [{ mode: "sample", temperature: 0, seed: 1 }, /temperature must be finite and > 0 in f32, got 0/],
    [{ mode: "sample", temperature: 1e-50, seed: 1 }, /temperature must be finite and > 0 in f32, got 1e-50/],
    [{ mode: "sample", temperature: 1, topK: 0, seed: 1 }, /topK must be an integer in \[1, 2\^32\), got 0/],
    [{ mode: "sample", temperature: 1, topP: 0, seed: 1 }, /topP must be in \(0, 1\], got 0/],
    [{ mode: "sample", temperature: 1, minP: 1, seed: 1 }, /minP must be in \[0, 1\), got 1/],
    [{ mode: "sample", temperature: 1, seed: -1 }, /seed must be an unsigned 32-bit integer, got -1/],
  ];
  for (const [options, pattern] of bad) {
    await assertThrowsMessage(() => validateSamplerOptions(where, options as SamplerOptions), pattern);
  }
});

gpuTest(
  "sampler kernel: NaN or +Infinity logits and all -Infinity are flagged (sampleNext refuses them too)",
  async (gpu) => {
    const options: Sample = { mode: "sample", temperature: 1, seed: 3 };
    const cases: [string, Float32Array<ArrayBuffer>, number, RegExp][] = [
      ["NaN", Float32Array.from([0.1, NaN, 0.3, 0.2]), NONFINITE_LOGITS, /logit 1 is NaN/],
      ["+Infinity", Float32Array.from([0.1, 0.2, Infinity, 0.2]), NONFINITE_LOGITS, /logit 2 is \+Infinity/],
      ["all -Infinity", new Float32Array(5).fill(-Infinity), NO_POSSIBLE_TOKEN, /no allowed token has a finite logit/],
    ];
    for (const [what, logits, flag, refusal] of cases) {
      assertEquals(await sampleOnGpu(gpu, logits, options, 2), [flag, flag], what);
      await assertThrowsMessage(() => sampleNext(logits, [], options), refusal);
    }
    // The flags are per dispatch: finite logits after them sample as usual.
    const finite = logitsOf([0.5, 0.25, 0.25]);
    assertEquals(await sampleOnGpu(gpu, finite, options, 3), reference(finite, options, 3));
  },
);
