/**
 * Test helpers: the tiny random Llama checkpoints (config, store) and their transformers reference
 * outputs (fixtures/README.md says what each holds). Deno-only; used by tests alone.
 *
 * @module
 */

import { type LlamaConfig, parseLlamaConfig } from "./config.ts";
import { SafetensorsFile, type TensorStore } from "../../llm/safetensors.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import { bytesSource } from "../../llm/safetensors_sources.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url).pathname;
const LLM_FIXTURES = new URL("../../llm/fixtures/", import.meta.url).pathname;

/**
 * Where a fixture file or directory is, given its path under the fixtures (`tiny-gqa/bf16`,
 * `tiny-gqa/expected-q8.safetensors`): tiny-tied's checkpoint directories (`tiny-tied/bf16`,
 * `tiny-tied/bf16-sharded`) are llm/'s, whose safetensors tests read them too; the rest is in fixtures/.
 */
export function fixturePath(path: string): string {
  return /^tiny-tied\/bf16(-sharded)?(\/|$)/.test(path) ? `${LLM_FIXTURES}${path}` : `${FIXTURES}${path}`;
}

/** Every fixture variant and the directory its checkpoint is read from (`fixturePath` resolves it). */
export const VARIANTS = {
  "tiny-gqa": "tiny-gqa/f32",
  "tiny-headdim": "tiny-headdim/bf16",
  "tiny-tied": "tiny-tied/bf16",
  "tiny-llama3": "tiny-llama3/bf16",
} as const;

/** A fixture variant's name. */
export type Variant = keyof typeof VARIANTS;

/** What transformers computed for one format of a variant. */
export interface FixtureReference {
  prompt: number[];
  /** `[promptLen, vocab]`. */
  prefillLogits: Float32Array;
  /** `[8, vocab]`: logits after feeding greedy[i]. */
  decodeLogits: Float32Array;
  /** 32 greedy tokens. */
  greedy: number[];
  /** Smallest top-1 minus top-2 gap among the greedy choices. */
  minMargin: number;
}

/** Opens a variant's checkpoint. */
export async function openFixture(
  variant: Variant,
): Promise<{ config: LlamaConfig; store: TensorStore; close(): void }> {
  const dir = fixturePath(VARIANTS[variant]);
  const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
  const { store, close } = await openCheckpointDir(dir);
  return { config, store, close };
}

/** Reads a variant's transformers outputs for a format. */
export async function fixtureReference(variant: Variant, format: WeightFormat): Promise<FixtureReference> {
  const bytes = await Deno.readFile(`${FIXTURES}${variant}/reference.safetensors`);
  const file = await SafetensorsFile.open(bytesSource(bytes));
  const ints = async (name: string) => [...new Int32Array((await file.read(name)).slice().buffer)];
  return {
    prompt: await ints("prompt"),
    prefillLogits: await file.readFloat32(`${format}.prefill_logits`),
    decodeLogits: await file.readFloat32(`${format}.decode_logits`),
    greedy: await ints(`${format}.greedy`),
    minMargin: Number(file.metadata[`${format}.min_margin`]),
  };
}

/** The largest absolute difference between two arrays of the same length. */
export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`maxAbsDiff: lengths ${a.length} and ${b.length}`);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
  return Number.isNaN(worst) ? Infinity : worst;
}
