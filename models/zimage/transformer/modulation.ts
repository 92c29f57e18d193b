/**
 * adaLN of a modulated block (noise refiner and main layers), computed once per step from t_emb:
 *
 * ```
 * [s_msa | g_msa | s_mlp | g_mlp] = Linear(adaln → 4d)(t_emb)      no SiLU before it, this order
 * attn1 = w_attn1 ⊙ (1 + s_msa)     attn2 = w_attn2 ⊙ tanh(g_msa)
 * ffn1  = w_ffn1  ⊙ (1 + s_mlp)     ffn2  = w_ffn2  ⊙ tanh(g_mlp)
 * ```
 *
 * The `1 +` is folded into the bias at load (the scale chunks' bias plus one), and the four products
 * come out of one `[4d]` vector: `mod ⊙ WS + tanh(mod) ⊙ WG`, where WS holds the two pre-norm weights
 * on the scale chunks (zeros on the gate chunks) and WG the two post-norm weights on the gate chunks.
 * Four copies then place its quarters where the block's norms read them.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../../harness/device.ts";
import type { TensorStore } from "../../../llm/safetensors.ts";
import { activationPlan } from "../../../ops/activation/mod.ts";
import { elementwisePlan } from "../../../ops/elementwise/mod.ts";
import { type DitConfig, ditSizes } from "../config.ts";
import { type Linear, linearDispatch, type LinearFormat, linearTensors, uploadLinear } from "../../linear.ts";
import type { Steps } from "../program.ts";
import type { BlockNorms } from "./block.ts";

/** A block's modulation on the GPU. */
export interface Modulation {
  /** `[4d, adaln]` with the scale chunks' bias plus one. */
  linear: Linear;
  /** The pre-norm weights on the scale chunks, zeros elsewhere, `[4d]`. */
  scaleWeights: GpuTensor;
  /** The post-norm weights on the gate chunks, zeros elsewhere, `[4d]`. */
  gateWeights: GpuTensor;
  /** This step's `[attn1 | attn2 | ffn1 | ffn2]`, `[4d]`. */
  products: GpuTensor;
  /** The block's norm weights, `[d]` each, copied from `products`. */
  norms: BlockNorms;
}

/** Work tensors the modulations share, `[4d]` each. */
export interface ModulationScratch {
  /** The adaLN output (scale chunks plus one). */
  mod: GpuTensor;
  /** See mod. */
  gates: GpuTensor;
  /** See mod. */
  scaled: GpuTensor;
  /** See mod. */
  gated: GpuTensor;
}

/**
 * The plain norm weights of an unmodulated block (context refiner), uploaded.
 *
 * @param gpu the device
 * @param store the block's tensors
 * @param label for messages
 * @returns the four weights
 */
export async function loadPlainNorms(gpu: ResidentDevice, store: TensorStore, label: string): Promise<BlockNorms> {
  // Read all four, then upload: a read that fails leaves nothing uploaded.
  const names = ["attention_norm1", "attention_norm2", "ffn_norm1", "ffn_norm2"] as const;
  const values: Float32Array[] = [];
  for (const name of names) values.push(await store.readFloat32(`${name}.weight`));
  const up = (i: number) => gpu.upload(values[i], `${label}.${names[i]}`);
  return { attn1: up(0), attn2: up(1), ffn1: up(2), ffn2: up(3) };
}

/**
 * Uploads a modulated block's adaLN and norm weights.
 *
 * @param gpu the device
 * @param store the block's tensors
 * @param config the DiT config
 * @param label for messages
 * @param format the adaLN weight's format
 * @returns the modulation
 */
export async function loadModulation(
  gpu: ResidentDevice,
  store: TensorStore,
  config: DitConfig,
  label: string,
  format: LinearFormat = "f32",
): Promise<Modulation> {
  const d = config.dim, { adaln } = ditSizes(config);
  const bias = (await store.readFloat32("adaLN_modulation.0.bias")).slice();
  for (let i = 0; i < d; i++) {
    bias[i] += 1; // s_msa
    bias[2 * d + i] += 1; // s_mlp
  }
  const weight = await store.readFloat32("adaLN_modulation.0.weight");
  const scaleWeights = new Float32Array(4 * d), gateWeights = new Float32Array(4 * d);
  scaleWeights.set(await store.readFloat32("attention_norm1.weight"), 0);
  gateWeights.set(await store.readFloat32("attention_norm2.weight"), d);
  scaleWeights.set(await store.readFloat32("ffn_norm1.weight"), 2 * d);
  gateWeights.set(await store.readFloat32("ffn_norm2.weight"), 3 * d);
  const norm = (name: string) => gpu.alloc("f32", d, `${label}.${name} (modulated)`);
  return {
    linear: await uploadLinear(gpu, weight, 4 * d, adaln, { bias, label: `${label}.adaLN_modulation.0`, format }),
    scaleWeights: gpu.upload(scaleWeights, `${label} scale weights`),
    gateWeights: gpu.upload(gateWeights, `${label} gate weights`),
    products: gpu.alloc("f32", 4 * d, `${label} modulation`),
    norms: { attn1: norm("attn1"), attn2: norm("attn2"), ffn1: norm("ffn1"), ffn2: norm("ffn2") },
  };
}

/**
 * Frees a modulation's tensors.
 *
 * @param m the modulation
 */
export function destroyModulation(m: Modulation): void {
  for (const t of [...linearTensors(m.linear), m.scaleWeights, m.gateWeights, m.products]) t.buffer.destroy();
  for (const t of Object.values(m.norms)) t.buffer.destroy();
}

/**
 * Allocates the modulations' shared work tensors.
 *
 * @param gpu the device
 * @param config the DiT config
 * @returns the tensors
 */
export function allocModulationScratch(gpu: ResidentDevice, config: DitConfig): ModulationScratch {
  const n = 4 * config.dim;
  const a = (label: string) => gpu.alloc("f32", n, `modulation ${label}`);
  return { mod: a("mod"), gates: a("gates"), scaled: a("scaled"), gated: a("gated") };
}

/**
 * Appends the computation of `m.products` from t_emb.
 *
 * @param steps where the dispatches go
 * @param gpu the device
 * @param m the block's modulation
 * @param tEmb the timestep embedding, `[adaln]`
 * @param s the shared work tensors
 * @param capture where a test wants the adaLN output (scale chunks plus one), if anywhere
 */
export function modulationSteps(
  steps: Steps,
  gpu: ResidentDevice,
  m: Modulation,
  tEmb: GpuTensor,
  s: ModulationScratch,
  capture?: (mod: GpuTensor) => void,
): void {
  const n = m.linear.N;
  steps.dispatch(linearDispatch(gpu, m.linear, 1, tEmb, s.mod));
  capture?.(s.mod);
  steps.run(activationPlan(gpu, { kind: "tanh", n }), [s.mod, s.gates]);
  steps.run(elementwisePlan(gpu, { op: "multiply", n }), [s.mod, m.scaleWeights, s.scaled]);
  steps.run(elementwisePlan(gpu, { op: "multiply", n }), [s.gates, m.gateWeights, s.gated]);
  steps.run(elementwisePlan(gpu, { op: "add", n }), [s.scaled, s.gated, m.products]);
}

/**
 * Appends the four copies that place `m.products` in the norm weights.
 *
 * @param steps where the copies go
 * @param m the block's modulation
 */
export function modulationCopies(steps: Steps, m: Modulation): void {
  const d = m.linear.N / 4;
  [m.norms.attn1, m.norms.attn2, m.norms.ffn1, m.norms.ffn2].forEach((t, i) => steps.copy(m.products, i * d, t, 0, d));
}
