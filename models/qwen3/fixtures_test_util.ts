/**
 * Test helpers: the fixtures of `fixtures/` (README.md there says where each came from). Deno only;
 * used by tests alone.
 *
 * @module
 */

import { randomF32 } from "../../harness/testing.ts";
import { SafetensorsFile, type TensorStore } from "../../llm/safetensors.ts";
import { bytesSource } from "../../llm/safetensors_sources.ts";
import { encodeSafetensors } from "../../llm/safetensors_write.ts";
import { parseQwen3Config, type Qwen3Config } from "./config.ts";
import { qwen3Tensors } from "./weights.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url).pathname;

/** The tiny Qwen3 of Anima's oracle pack: its config and weights (`model.` names, tied head). */
export async function animaTiny(): Promise<{ config: Qwen3Config; store: TensorStore }> {
  const config = parseQwen3Config(await Deno.readTextFile(`${FIXTURES}anima-tiny-config.json`));
  const store = await SafetensorsFile.open(bytesSource(await Deno.readFile(`${FIXTURES}anima-tiny-qwen3.safetensors`)));
  return { config, store };
}

/** One encoder case transformers ran on the Anima tiny Qwen3. */
export interface AnimaEncoderCase {
  /** `cond` or `uncond`. */
  name: string;
  /** Token ids. */
  ids: Int32Array;
  /** `last_hidden_state` (after the final norm), `[L, hidden]`. */
  lastHiddenState: Float32Array;
  /** `cond` only: the embeddings (`hidden_states[0]`) and layer 0's output (`hidden_states[1]`). */
  embed?: Float32Array;
  layer0?: Float32Array;
}

/** The encoder cases of the Anima oracle (`anima-tiny-encoder.safetensors`). */
export async function animaEncoderCases(): Promise<AnimaEncoderCase[]> {
  const file = await SafetensorsFile.open(
    bytesSource(await Deno.readFile(`${FIXTURES}anima-tiny-encoder.safetensors`)),
  );
  const cases: AnimaEncoderCase[] = [];
  for (const name of ["cond", "uncond"]) {
    const ids = new Int32Array((await file.read(`encoder/${name}/input_ids`)).slice().buffer);
    const has = (n: string) => file.tensors.some((t) => t.name === n);
    const opt = async (n: string) => has(n) ? await file.readFloat32(n) : undefined;
    cases.push({
      name,
      ids,
      lastHiddenState: await file.readFloat32(`encoder/${name}/last_hidden_state`),
      embed: await opt(`encoder/${name}/dbg/embed`),
      layer0: await opt(`encoder/${name}/dbg/layer0_out`),
    });
  }
  return cases;
}

/**
 * A random Qwen3 checkpoint in memory (seeded): matrices uniform in ±sqrt(3 / fan_in), the embedding
 * in ±0.1 (small beside what the layers add, so a tied head does not just repeat the last token),
 * norm weights in [0.5, 1.5]; `Qwen3ForCausalLM` names, `lm_head.weight` when untied.
 *
 * @param config the model
 * @param seed the seed
 * @returns the checkpoint
 */
export async function randomQwen3(config: Qwen3Config, seed: number): Promise<TensorStore> {
  const tensors = qwen3Tensors(config).map(({ name, shape }) => ({ name: `model.${name}`, shape }));
  if (!config.tieWordEmbeddings) tensors.push({ name: "lm_head.weight", shape: [config.vocabSize, config.hiddenSize] });
  const data = tensors.map(({ name, shape }, i) => {
    const n = shape.reduce((p, d) => p * d, 1);
    const values = shape.length === 1
      ? randomF32(n, seed * 1000 + i, 0.5, 1.5)
      : randomF32(n, seed * 1000 + i, -1, 1).map((v) =>
        v * (name.includes("embed_tokens") ? 0.1 : Math.sqrt(3 / shape[1]))
      );
    return { name, dtype: "F32" as const, shape: [...shape], data: new Uint8Array(values.buffer) };
  });
  return await SafetensorsFile.open(bytesSource(encodeSafetensors(data)));
}
