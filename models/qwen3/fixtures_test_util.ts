/**
 * Test helpers: the fixtures of `fixtures/` (README.md there says where each came from). Deno only;
 * used by tests alone.
 *
 * @module
 */

import { SafetensorsFile, type TensorStore } from "../../llm/safetensors.ts";
import { bytesSource } from "../../llm/safetensors_sources.ts";
import { parseQwen3Config, type Qwen3Config } from "./config.ts";

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
