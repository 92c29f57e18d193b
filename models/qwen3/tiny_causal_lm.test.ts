/**
 * `Qwen3ForCausalLM` against transformers' own greedy continuations of a random tiny Qwen3 written by
 * `fixtures/gen_tiny.py` (run on the GPU machine: `python3 models/qwen3/fixtures/gen_tiny.py
 * models/qwen3/fixtures/tiny-causal-lm`). Until that directory exists this test fails under `CI=true`
 * (naming the command) and is ignored elsewhere, with the reason in its name.
 */
import { deepStrictEqual } from "node:assert/strict";
import { assertClose, gpuTest } from "../../harness/testing.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import { Qwen3ForCausalLM } from "./causal_lm.ts";
import { parseQwen3Config } from "./config.ts";

const DIR = new URL("./fixtures/tiny-causal-lm/", import.meta.url).pathname;
const COMMAND = "python3 models/qwen3/fixtures/gen_tiny.py models/qwen3/fixtures/tiny-causal-lm";

/** What gen_tiny.py writes to greedy.json. */
interface Greedy {
  transformers: string;
  steps: number;
  logit_steps: number[];
  prompts: { ids: number[]; greedy: number[]; logits: Record<string, number[]>; min_margin: number }[];
}

let present = true;
try {
  await Deno.stat(`${DIR}greedy.json`);
} catch (e) {
  if (!(e instanceof Deno.errors.NotFound)) throw e;
  present = false;
}
const NAME = "qwen3 causal LM f32: transformers' greedy ids and logits of the tiny random Qwen3ForCausalLM";

if (!present && Deno.env.get("CI") === "true") {
  Deno.test(NAME, () => {
    throw new Error(`the fixture ${DIR} is missing: write it on the GPU machine with \`${COMMAND}\``);
  });
} else if (!present) {
  Deno.test({ name: `${NAME} (ignored: fixture missing, run ${COMMAND})`, ignore: true, fn: () => {} });
} else {
  // The GPU's f32 forward against transformers' f32 CPU forward (eager attention) over 4 layers of
  // hidden 64, on weights exactly representable in bf16: differences are f32 summation order, a few
  // 1e-6 on logits of order 1 in the reference tests of this model's shape.
  gpuTest(NAME, async (gpu) => {
    const golden = JSON.parse(await Deno.readTextFile(`${DIR}greedy.json`)) as Greedy;
    const config = parseQwen3Config(await Deno.readTextFile(`${DIR}config.json`));
    const { store, close } = await openCheckpointDir(DIR);
    const lm = await Qwen3ForCausalLM.load(gpu, store, config);
    close();
    try {
      for (const [p, prompt] of golden.prompts.entries()) {
        // The loop on the GPU, ids read back in groups of 4 with two readbacks in flight.
        const resident: number[] = [];
        for await (
          const id of lm.generate(prompt.ids, { maxTokens: golden.steps, stopIds: [], readEvery: 4, inFlight: 2 })
        ) {
          resident.push(id);
        }
        deepStrictEqual(resident, prompt.greedy, `prompt ${p} (${prompt.ids.length} tokens): greedy ids`);
        // With each step's logits read back.
        const ids: number[] = [], logits: Float32Array[] = [];
        const options = { maxTokens: golden.steps, stopIds: [], onLogits: (l: Float32Array) => logits.push(l) };
        for await (const id of lm.generate(prompt.ids, options)) ids.push(id);
        deepStrictEqual(ids, prompt.greedy, `prompt ${p}: greedy ids with onLogits`);
        for (const step of golden.logit_steps) {
          assertClose(
            logits[step],
            prompt.logits[String(step)],
            { atol: 1e-4, rtol: 1e-4 },
            `prompt ${p} step ${step}`,
          );
        }
      }
    } finally {
      lm.destroy();
    }
  });
}
