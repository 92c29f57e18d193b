// sample: the references' conventions (torch goldens, the markers), and every kernel against them on
// the GPU: the greedy choice across slices, the seeded draw's filters and walk, the mask; a loop of
// several dispatches in one pass advancing the state as generation does.
import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { assertThrowsMessage, eachVariant, gpuTest, loadGolden, randomF32 } from "../../harness/testing.ts";
import { boundaryMargin } from "./margin_test_util.ts";
import {
  argmaxToken,
  argmaxTokenGpu,
  argmaxTokenPlan,
  drawUniform,
  KERNELS,
  maskLogits,
  maskLogitsGpu,
  NO_POSSIBLE_TOKEN,
  NONFINITE_LOGITS,
  packSampleOptions,
  type SampleOptions,
  sampleToken,
  sampleTokenGpu,
  sampleTokenPlan,
  type SampleVariant,
  samplingCandidates,
} from "./mod.ts";

/** The slice of logits one argmax workgroup scans (`SLICE` in argmax.wgsl). */
const SLICE = 4096;

/**
 * Cases stay this far (relative, `boundaryMargin`) from any boundary where f32 and f64 may choose
 * differently: well above f32 rounding of exp (a few ulp) and of sums of a few hundred terms.
 */
const MARGIN = 1e-4;

interface GoldenCase {
  label: string;
  logits: (number | string)[];
  argmax: number;
  temperature: number | null;
  probs: (number | string)[] | null;
}
const f32 = (values: (number | string)[]) => Float32Array.from(values, Number);

Deno.test("argmaxToken and the draw's probabilities match torch (goldens/gen.py)", async () => {
  const { cases } = await loadGolden<{ cases: GoldenCase[] }>(new URL("./goldens/sample.json", import.meta.url));
  for (const c of cases) {
    const logits = f32(c.logits);
    assertEquals(argmaxToken({ logits }), c.argmax, c.label);
    if (c.temperature === null) continue;
    // No filters: every finite logit is a candidate, with torch.softmax(logits / T)'s probability.
    const { ids, probs } = samplingCandidates(logits, { temperature: c.temperature, seed: 0 });
    const want = f32(c.probs!);
    for (const [k, id] of ids.entries()) {
      assert(
        Math.abs(probs[k] - want[id]) <= 1e-6 * want[id] + 1e-12,
        `${c.label}: p[${id}] ${probs[k]} vs ${want[id]}`,
      );
    }
    assertEquals(ids.length, want.filter((p) => p > 0).length, c.label);
  }
});

Deno.test("argmaxToken and sampleToken: NaN rows are flagged, not taken as largest (torch.argmax would)", () => {
  assertEquals(argmaxToken({ logits: new Float32Array([1, NaN, 3]) }), NONFINITE_LOGITS);
  assertEquals(argmaxToken({ logits: new Float32Array([-Infinity, -Infinity]) }), NO_POSSIBLE_TOKEN);
  assertEquals(argmaxToken({ logits: new Float32Array([-Infinity, -3e38, -Infinity]) }), 1); // -FLT_MAX is a token
  const options = { temperature: 1, seed: 3 };
  assertEquals(sampleToken({ logits: new Float32Array([1, NaN, 3]), ...options, step: 0 }), NONFINITE_LOGITS);
  assertEquals(sampleToken({ logits: new Float32Array([1, Infinity, 3]), ...options, step: 0 }), NONFINITE_LOGITS);
  assertEquals(
    sampleToken({ logits: new Float32Array([-Infinity, -Infinity]), ...options, step: 0 }),
    NO_POSSIBLE_TOKEN,
  );
  // Bit 0 of word 0 and bit 1 of word 1: ids 0 and 33 allowed.
  assertEquals(
    [...maskLogits({ logits: new Float32Array(34).fill(1), mask: new Uint32Array([1, 2]) })].map((x) =>
      x === 1 ? 1 : 0
    ),
    [
      1,
      ...new Array(32).fill(0),
      1,
    ],
  );
});

Deno.test("sample: bad sizes and settings are refused by name, before any GPU work", async () => {
  await assertThrowsMessage(
    () => sampleToken({ logits: new Float32Array(0), temperature: 1, seed: 0, step: 0 }),
    "vocab",
  );
  await assertThrowsMessage(
    () => packSampleOptions({ temperature: 1e-50, seed: 1 }),
    "temperature must be finite and > 0 in f32, got 1e-50",
  );
  await assertThrowsMessage(
    () => packSampleOptions({ temperature: 1, topK: 2 ** 32, seed: 1 }),
    "topK must be an integer in [1, 2^32)",
  );
  await assertThrowsMessage(
    () => packSampleOptions({ temperature: 1, topP: 0, seed: 1 }),
    "topP must be in (0, 1], got 0",
  );
  await assertThrowsMessage(
    () => packSampleOptions({ temperature: 1, minP: 1, seed: 1 }),
    "minP must be in [0, 1), got 1",
  );
  await assertThrowsMessage(
    () => packSampleOptions({ temperature: 1, seed: -1 }),
    "seed must be an unsigned 32-bit integer",
  );
  await assertThrowsMessage(
    () => maskLogits({ logits: new Float32Array(33), mask: new Uint32Array(1) }),
    "mask must have length ceil(vocab / 32) = 2",
  );
});

/** Tensors for a choosing plan: zeros, the state `[pos0, step]`, and the logits (and settings) uploaded. */
function tensorsFor(
  gpu: ResidentDevice,
  plan: ReturnType<typeof argmaxTokenPlan>,
  logits: Float32Array,
  state: number[],
  settings?: Uint32Array,
) {
  return plan.bindings.map((b): GpuTensor => {
    if (b.name === "logits") return gpu.upload(logits, "logits");
    if (b.name === "state") return gpu.upload(new Uint32Array([...state, 0, 0]), "state");
    if (b.name === "options") return gpu.upload(settings!, "options");
    return gpu.alloc(b.dtype, b.length, b.name);
  });
}

/** Runs `plans` in one program (one pass) and reads ids, tokens and state back. */
async function runLoop(
  gpu: ResidentDevice,
  steps: [ReturnType<typeof argmaxTokenPlan>, GpuTensor[]][],
  tensors: GpuTensor[],
  names: string[],
) {
  const program = gpu.program("sample test", steps);
  try {
    await program.run();
  } finally {
    program.destroy();
  }
  const at = (name: string) => tensors[names.indexOf(name)];
  return {
    ids: [...await gpu.read(at("ids"))],
    tokens: [...await gpu.read(at("tokens"))],
    state: [...await gpu.read(at("state"))],
  };
}

eachVariant(KERNELS, "argmax", (variant) => {
  gpuTest(
    `sample/${variant}: the first largest logit across slices, +Infinity chosen, NaN and all -Infinity flagged; state advanced`,
    async (gpu) => {
      const vocab = 3 * SLICE + 123;
      const cases: [string, Float32Array][] = [];
      cases.push(["random", randomF32(vocab, 1)]);
      const tie = randomF32(vocab, 2);
      tie[SLICE + 7] = tie[3 * SLICE + 5] = 5; // tie across slices: the lower index
      cases.push(["tie across slices", tie]);
      const tieInSlice = randomF32(vocab, 3);
      tieInSlice[2 * SLICE + 300] = tieInSlice[2 * SLICE + 44] = 5; // tie within a slice
      cases.push(["tie within a slice", tieInSlice]);
      const nan = randomF32(vocab, 4);
      nan[10] = NaN;
      nan[SLICE + 1] = 3;
      cases.push(["NaN present", nan]);
      const inf = randomF32(vocab, 5);
      inf[2 * SLICE + 9] = Infinity;
      cases.push(["+Infinity present", inf]);
      cases.push(["every logit -Infinity", new Float32Array(vocab).fill(-Infinity)]);
      cases.push(["random after the flags (the counters were reset)", randomF32(vocab, 6)]);
      const want = cases.map(([, x]) => argmaxToken({ logits: x }));
      assertEquals(want.slice(1, 6), [SLICE + 7, 2 * SLICE + 44, NONFINITE_LOGITS, 2 * SLICE + 9, NO_POSSIBLE_TOKEN]);
      // One dispatch per case in one pass, each over its own logits, sharing ids, tokens, state and the scratch.
      const plan = argmaxTokenPlan(gpu, { vocab, steps: cases.length, advance: 3 }, { override: variant });
      const shared = tensorsFor(gpu, plan, cases[0][1], [10, 0]);
      const logits = cases.map(([, x]) => gpu.upload(x, "logits"));
      try {
        const names = plan.bindings.map((b) => b.name);
        const got = await runLoop(gpu, logits.map((l) => [plan, [l, ...shared.slice(1)]]), shared, names);
        assertEquals(got.tokens, want);
        assertEquals(got.ids, [want.at(-1)]);
        assertEquals(got.state.slice(0, 2), [10 + 3 * cases.length, cases.length]);
        assertEquals([...await gpu.read(shared[5])], [0, 0], "counters reset");
        assertEquals(await argmaxTokenGpu(gpu, { logits: cases[0][1] }, { override: variant }), want[0]);
      } finally {
        for (const t of [...shared, ...logits]) t.buffer.destroy();
      }
    },
  );
});

/**
 * Runs the draw `steps` times over the same logits in one pass (the state's step advancing on the
 * GPU from `firstStep`) and returns the chosen ids; checks `ids[0]` and the state.
 */
async function sampleOnGpu(
  gpu: ResidentDevice,
  variant: SampleVariant,
  logits: Float32Array,
  options: SampleOptions,
  steps: number,
  firstStep = 0,
) {
  const plan = sampleTokenPlan(gpu, { vocab: logits.length, steps: firstStep + steps }, { override: variant });
  const tensors = tensorsFor(gpu, plan, logits, [7, firstStep], packSampleOptions(options));
  try {
    const names = plan.bindings.map((b) => b.name);
    const got = await runLoop(gpu, Array.from({ length: steps }, () => [plan, tensors]), tensors, names);
    const ids = got.tokens.slice(firstStep);
    assertEquals(got.ids, [ids[steps - 1]], "ids[0] holds the last choice");
    assertEquals(got.state.slice(0, 2), [7 + steps, firstStep + steps], "position and step advanced");
    return ids;
  } finally {
    for (const t of tensors) t.buffer.destroy();
  }
}

/** The reference's ids for steps [firstStep, firstStep + steps), each case checked clear of boundaries. */
function reference(logits: Float32Array, options: SampleOptions, steps: number, firstStep = 0): number[] {
  return Array.from({ length: steps }, (_, s) => {
    const step = firstStep + s;
    const margin = boundaryMargin(logits, options, step);
    assert(margin > MARGIN, `step ${step}: within ${margin.toExponential(2)} of a boundary; choose another case`);
    return sampleToken({ logits, ...options, step });
  });
}

const logitsOf = (probs: number[]) => Float32Array.from(probs, Math.log);

eachVariant(KERNELS, "sample", (variant) => {
  gpuTest(`sample/${variant}: top-k keeps the k most probable, ties to the lower id`, async (gpu) => {
    const logits = new Float32Array([1, 3, 2, 3, 3, 0, 3]);
    for (const topK of [2, 3, 4, 5]) {
      const options: SampleOptions = { temperature: 1, topK, seed: 11 };
      const got = await sampleOnGpu(gpu, variant, logits, options, 32);
      assertEquals(got, reference(logits, options, 32), `topK ${topK}`);
      // By hand: the four 3s in id order, then the 2 (id 2).
      const allowed = [1, 3, 4, 6, 2].slice(0, topK);
      assert(got.every((id) => allowed.includes(id)), `topK ${topK}: ${got}`);
      assertEquals(new Set(got).size, topK, `topK ${topK}: every kept token drawn in 32 steps (${got})`);
    }
  });

  gpuTest(
    `sample/${variant}: top-p keeps the most probable until their mass reaches p, either side of a boundary`,
    async (gpu) => {
      // Sorted: id 1 (0.5), id 2 (0.3), id 0 (0.2). Mass 0.8 after two tokens.
      const logits = logitsOf([0.2, 0.5, 0.3]);
      for (const [topP, allowed] of [[0.49, [1]], [0.79, [1, 2]], [0.81, [0, 1, 2]]] as const) {
        const options: SampleOptions = { temperature: 1, topP, seed: 3 };
        const got = await sampleOnGpu(gpu, variant, logits, options, 32);
        assertEquals(got, reference(logits, options, 32), `topP ${topP}`);
        assertEquals([...new Set(got)].sort(), [...allowed].sort(), `topP ${topP}: the kept set, all drawn`);
      }
    },
  );

  gpuTest(`sample/${variant}: min-p keeps tokens at least minP times the most probable; after top-p`, async (gpu) => {
    // p = [0.05, 0.2, 1, 0.5, 0.01] / 1.76. top-p 0.86 keeps 2, 3, 1 (mass 0.852 after two); min-p 0.15
    // then keeps all three. Min-p first would leave 2, 3, 1 of mass 1.7, and top-p 0.86 of that only 2, 3.
    const logits = logitsOf([0.05, 0.2, 1, 0.5, 0.01]);
    for (const [minP, topP, allowed] of [[0.3, 1, [2, 3]], [0.15, 1, [1, 2, 3]], [0.15, 0.86, [1, 2, 3]]] as const) {
      const options: SampleOptions = { temperature: 1, topP, minP, seed: 5 };
      const got = await sampleOnGpu(gpu, variant, logits, options, 48);
      assertEquals(got, reference(logits, options, 48), `minP ${minP} topP ${topP}`);
      assertEquals([...new Set(got)].sort(), [...allowed].sort(), `minP ${minP} topP ${topP}`);
    }
  });

  gpuTest(`sample/${variant}: temperature divides the logits before the softmax`, async (gpu) => {
    const logits = new Float32Array([0, 1]);
    const runs: number[][] = [];
    for (const temperature of [0.25, 1, 4]) {
      const options: SampleOptions = { temperature, seed: 9 };
      const got = await sampleOnGpu(gpu, variant, logits, options, 64);
      assertEquals(got, reference(logits, options, 64), `temperature ${temperature}`);
      runs.push(got);
    }
    // p(id 0) = 1 / (1 + e^(1/T)): 0.018, 0.269, 0.438; fewer 0s the colder.
    const zeros = runs.map((r) => r.filter((id) => id === 0).length);
    assert(zeros[0] < zeros[1] && zeros[1] < zeros[2], `id 0 drawn ${zeros} times at T 0.25, 1, 4`);
  });

  gpuTest(
    `sample/${variant}: the draw is drawUniform(seed, step), walked in ascending id order, not sorted`,
    async (gpu) => {
      // Eight equal tokens: the id is floor(8u), three bits of each step's uniform.
      const flat = new Float32Array(8);
      const options: SampleOptions = { temperature: 1, seed: 0xdeadbeef };
      const got = await sampleOnGpu(gpu, variant, flat, options, 64, 100);
      reference(flat, options, 64, 100);
      assertEquals(got, Array.from({ length: 64 }, (_, s) => Math.floor(8 * drawUniform(0xdeadbeef, 100 + s))));
      // Unequal: a walk in descending probability order would choose differently at some steps.
      const logits = logitsOf([0.1, 0.4, 0.2, 0.3]);
      const walked = { temperature: 1, seed: 2 }; // seed 1 comes within 6e-5 of a boundary
      const byId = await sampleOnGpu(gpu, variant, logits, walked, 64);
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
      assertEquals(
        await sampleTokenGpu(gpu, { logits, ...walked, step: 5 }, { override: variant }),
        sampleToken({ logits, ...walked, step: 5 }),
      );
    },
  );

  gpuTest(
    `sample/${variant}: a 102,400-token vocabulary, top-k, top-p and min-p together, and top-p alone`,
    async (gpu) => {
      // Like a language model's head: most logits low, a few hundred plausible tokens well above them
      // (so the cut-offs fall between tokens that f32 tells apart; the margins are checked).
      const logits = new Float32Array(randomF32(102_400, 21, -4, 4));
      const plausible = randomF32(300, 22, 0, 1);
      for (const [j, r] of plausible.entries()) logits[(j * 7919 + 13) % logits.length] = 4 + 6 * r;
      const cases: SampleOptions[] = [
        { temperature: 0.5, topK: 40, topP: 0.9, minP: 0.05, seed: 2024 },
        { temperature: 0.6, topP: 0.95, seed: 77 },
      ];
      for (const options of cases) {
        const got = await sampleOnGpu(gpu, variant, logits, options, 3);
        assertEquals(got, reference(logits, options, 3), JSON.stringify(options));
      }
    },
  );

  gpuTest(
    `sample/${variant}: NaN or +Infinity logits and all -Infinity are flagged; the flags are per dispatch`,
    async (gpu) => {
      const options: SampleOptions = { temperature: 1, seed: 3 };
      const cases: [string, Float32Array][] = [
        ["NaN", Float32Array.from([0.1, NaN, 0.3, 0.2])],
        ["+Infinity", Float32Array.from([0.1, 0.2, Infinity, 0.2])],
        ["all -Infinity", new Float32Array(5).fill(-Infinity)],
      ];
      for (const [what, logits] of cases) {
        const flag = sampleToken({ logits, ...options, step: 0 });
        assert(flag === NONFINITE_LOGITS || flag === NO_POSSIBLE_TOKEN, what);
        assertEquals(await sampleOnGpu(gpu, variant, logits, options, 2), [flag, flag], what);
      }
      const finite = logitsOf([0.5, 0.25, 0.25]);
      assertEquals(await sampleOnGpu(gpu, variant, finite, options, 3), reference(finite, options, 3));
    },
  );
});

eachVariant(KERNELS, "mask", (variant) => {
  gpuTest(
    `sample/${variant}: clear bits get -Infinity, set bits keep their logit, across words and a partial last word`,
    async (gpu) => {
      const vocab = 1000;
      const logits = randomF32(vocab, 8, -5, 5);
      logits[3] = Infinity;
      logits[4] = NaN;
      const mask = new Uint32Array(Math.ceil(vocab / 32));
      for (let i = 0; i < vocab; i++) {
        if ((i * 2654435761) % 7 < 3 || i === 3 || i === 4) mask[i >>> 5] |= 1 << (i & 31);
      }
      const got = await maskLogitsGpu(gpu, { logits, mask }, { override: variant });
      const want = maskLogits({ logits, mask });
      assertEquals([...got].map((x) => Number.isNaN(x) ? "NaN" : x), [...want].map((x) => Number.isNaN(x) ? "NaN" : x));
      assert(want.filter((x) => x === -Infinity).length > 300, "the case masks a good share");
    },
  );
});
