/**
 * One block of the DiT (Cosmos-Predict2's `Block` as Anima uses it), and the adaLN modulation that
 * the blocks and the final layer share.
 *
 * - Modulation (adaLN-LoRA): each of a block's three sub-layers has
 *   `Linear(r → 3D)(Linear(D → r)(SiLU(emb)))`, plus the step's `adaln_lora` (the same in every
 *   block), chunked **shift, scale, gate**. `emb` is `t_embedding_norm(sinusoid)`, not the
 *   timestep MLP's output. The fused `r → 3D` weight is loaded as three `[D, r]` layers, so each
 *   chunk is its own tensor, and the step's lora chunk is the product's fused bias.
 * - Sub-layer: `x += gate · f(LayerNorm(x) · (1 + scale) + shift)`, LayerNorm without affine,
 *   eps 1e-6, no tanh; in turn self-attention, cross-attention, MLP.
 * - Attention: q, k, v, output projections without bias; per-head RMSNorm of q and k (eps 1e-6)
 *   before RoPE; scale 1/√headDim. Self-attention rotates q and k by the tokens' (t, h, w)
 *   positions; cross-attention takes no RoPE and attends over every one of the context's 512 rows
 *   per item, zero rows included (k = RMSNorm(0) = 0 and v = 0 still take softmax weight).
 * - MLP: `layer2(GELU(layer1(x)))`, exact erf GELU, no biases.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { freeOnFailure } from "../loading.ts";
import { type DitConfig, NORM_EPS } from "./config.ts";
import type { Graph } from "./graph.ts";
import {
  add,
  addInPlace,
  attention,
  type GraphLinearEpilogue,
  linear,
  loadLinear,
  loadVector,
  modulatedLayernorm,
  mulRows,
  rmsnorm,
  rope,
  type RopeTables,
} from "./layers.ts";
import { destroyLinear, layerBytes, type Linear, linearTensors } from "../linear.ts";

/** The DiT's weight formats: f32, or int8 codes with a scale per row for the blocks' projections and MLPs. */
export type DitFormat = "f32" | "q8";

/** A named intermediate a caller wants to read after the run (the graph pins it). */
export type Tap = (name: string, tensor: GpuTensor) => void;

/** One adaLN modulation: the down projection and the up projection's chunks. */
export interface Modulation {
  /** `Linear(D → r)`, applied to SiLU(emb). */
  down: Linear;
  /** The up projection's chunks `[D, r]`: shift, scale, gate (the final layer's has no gate). */
  chunks: Linear[];
}

/** The step's shared inputs to every modulation. */
export interface StepEmbedding {
  /** SiLU(t_embedding_norm(sinusoid)) `[D]`. */
  siluEmb: GpuTensor;
  /** adaln_lora's chunks `[D]` each: shift, scale, gate. */
  lora: [GpuTensor, GpuTensor, GpuTensor];
}

/** Self- or cross-attention weights. */
export interface AttentionWeights {
  q: Linear;
  k: Linear;
  v: Linear;
  out: Linear;
  qNorm: GpuTensor;
  kNorm: GpuTensor;
}

/** One block's weights. */
export interface BlockWeights {
  selfAttn: AttentionWeights;
  crossAttn: AttentionWeights;
  mlp1: Linear;
  mlp2: Linear;
  modSelfAttn: Modulation;
  modCrossAttn: Modulation;
  modMlp: Modulation;
}

/** The DiT forward's per-run inputs a block reads. */
export interface BlockInputs {
  /** Batch items (2 for the two CFG passes). */
  batch: number;
  /** Tokens per item. */
  tokens: number;
  /** Context rows `[batch, contextRows, contextDim]`. */
  context: GpuTensor;
  /** Token positions `[batch · tokens, 3]` (i32). */
  positions: GpuTensor;
  /** The DiT's RoPE tables. */
  rope: RopeTables;
  /** The step's embedding. */
  step: StepEmbedding;
}

/**
 * Loads a modulation `<prefix>.1` (down) and `<prefix>.2` (up, split into `chunks` rows of D).
 *
 * @param gpu the device
 * @param store the DiT's tensors
 * @param prefix e.g. `blocks.3.adaln_modulation_mlp`
 * @param D the model width
 * @param chunks 3 (a block's) or 2 (the final layer's)
 * @returns the modulation
 */
export async function loadModulation(
  gpu: ResidentDevice,
  store: TensorStore,
  prefix: string,
  D: number,
  chunks: number,
): Promise<Modulation> {
  return await freeOnFailure(async (keep) => {
    const down = keep(await loadLinear(gpu, store, `${prefix}.1.weight`, "f32"));
    const up: Linear[] = [];
    for (let c = 0; c < chunks; c++) {
      up.push(keep(await loadLinear(gpu, store, `${prefix}.2.weight`, "f32", { rows: [c * D, (c + 1) * D] })));
    }
    return { down, chunks: up };
  });
}

/**
 * Loads block `i`'s weights.
 *
 * @param gpu the device
 * @param store the DiT's tensors (names without `net.`)
 * @param c the configuration
 * @param i the block
 * @param format the projections' and MLP's format (the modulations stay f32)
 * @returns the weights
 */
export async function loadBlock(
  gpu: ResidentDevice,
  store: TensorStore,
  c: DitConfig,
  i: number,
  format: DitFormat = "f32",
): Promise<BlockWeights> {
  const b = `blocks.${i}.`;
  return await freeOnFailure(async (keep) => {
    const lin = async (name: string) => keep(await loadLinear(gpu, store, `${b}${name}.weight`, format));
    const vec = async (name: string) => keep(await loadVector(gpu, store, `${b}${name}`));
    const mod = async (name: string) => keep(await loadModulation(gpu, store, `${b}${name}`, c.dim, 3));
    const attn = async (kind: string): Promise<AttentionWeights> => ({
      q: await lin(`${kind}.q_proj`),
      k: await lin(`${kind}.k_proj`),
      v: await lin(`${kind}.v_proj`),
      out: await lin(`${kind}.output_proj`),
      qNorm: await vec(`${kind}.q_norm.weight`),
      kNorm: await vec(`${kind}.k_norm.weight`),
    });
    return {
      selfAttn: await attn("self_attn"),
      crossAttn: await attn("cross_attn"),
      mlp1: await lin("mlp.layer1"),
      mlp2: await lin("mlp.layer2"),
      modSelfAttn: await mod("adaln_modulation_self_attn"),
      modCrossAttn: await mod("adaln_modulation_cross_attn"),
      modMlp: await mod("adaln_modulation_mlp"),
    };
  });
}

/** Bytes of a modulation's weights. */
export function modulationBytes(m: Modulation): number {
  return layerBytes(m.down) + m.chunks.reduce((s, l) => s + layerBytes(l), 0);
}

/** Every tensor of a block's weights, in one fixed order (what a streamed block is written into). */
export function blockTensors(w: BlockWeights): GpuTensor[] {
  const att = (a: AttentionWeights) => [...[a.q, a.k, a.v, a.out].flatMap(linearTensors), a.qNorm, a.kNorm];
  const mod = (m: Modulation) => [m.down, ...m.chunks].flatMap(linearTensors);
  return [
    ...att(w.selfAttn),
    ...att(w.crossAttn),
    ...linearTensors(w.mlp1),
    ...linearTensors(w.mlp2),
    ...mod(w.modSelfAttn),
    ...mod(w.modCrossAttn),
    ...mod(w.modMlp),
  ];
}

/** Bytes of a block's weights. */
export function blockBytes(w: BlockWeights): number {
  return blockTensors(w).reduce((s, t) => s + 4 * t.length, 0);
}

/** Frees a modulation's weights. */
export function destroyModulation(m: Modulation): void {
  destroyLinear(m.down);
  m.chunks.forEach(destroyLinear);
}

/** Frees a block's weights. */
export function destroyBlock(w: BlockWeights): void {
  for (const t of blockTensors(w)) t.buffer.destroy();
}

/**
 * A modulation's chunks for this step: `up_c(down(SiLU(emb))) + lora_c`.
 *
 * @param g the graph
 * @param m the modulation
 * @param step the step's embedding
 * @param tap receives the raw chunks (before the lora) as `raw0`, `raw1`, ...
 * @returns one `[D]` tensor per chunk
 */
export function modulate(g: Graph, m: Modulation, step: StepEmbedding, tap?: Tap): GpuTensor[] {
  const D = m.chunks[0].N;
  return g.scope(() => {
    const h = linear(g, m.down, step.siluEmb, 1);
    return m.chunks.map((chunk, c) => {
      if (!tap) return linear(g, chunk, h, 1, { bias: step.lora[c] });
      const raw = linear(g, chunk, h, 1);
      tap(`raw${c}`, raw);
      return add(g, raw, step.lora[c], D);
    });
  });
}

function attend(
  g: Graph,
  w: AttentionWeights,
  x: GpuTensor,
  c: DitConfig,
  inputs: BlockInputs,
  kind: "self" | "cross",
  last: GraphLinearEpilogue,
): GpuTensor {
  const { batch: B, tokens: T } = inputs;
  const H = c.heads, hd = c.headDim;
  return g.scope(() => {
    const qkNorm = (t: GpuTensor, rows: number, weight: GpuTensor) => rmsnorm(g, t, rows * H, hd, weight, NORM_EPS);
    let q = qkNorm(linear(g, w.q, x, B * T), B * T, w.qNorm);
    let k: GpuTensor, v: GpuTensor, S: number;
    if (kind === "self") {
      S = T;
      k = qkNorm(linear(g, w.k, x, B * T), B * T, w.kNorm);
      v = linear(g, w.v, x, B * T);
      q = rope(g, q, B * T, inputs.positions, inputs.rope);
      k = rope(g, k, B * T, inputs.positions, inputs.rope);
    } else {
      S = c.contextRows;
      k = qkNorm(linear(g, w.k, inputs.context, B * S), B * S, w.kNorm);
      v = linear(g, w.v, inputs.context, B * S);
    }
    const o = attention(g, q, k, v, { B, H, L: T, S, D: hd });
    return linear(g, w.out, o, B * T, last);
  });
}

/**
 * Appends one block to the graph: `x` (`[batch · tokens, D]`) is updated in place.
 *
 * @param g the graph
 * @param w the block's weights
 * @param x the residual stream
 * @param c the configuration
 * @param inputs the run's shared inputs
 * @param tap receives `self_attn`, `cross_attn`, `mlp` (each before its gate) and
 *   `adaln_self_attn_raw{0,1,2}`
 */
export function block(g: Graph, w: BlockWeights, x: GpuTensor, c: DitConfig, inputs: BlockInputs, tap?: Tap): void {
  const rows = inputs.batch * inputs.tokens, D = c.dim;
  // f(n, last) appends a sub-layer whose last Linear takes `last` as its epilogue.
  const sublayer = (m: Modulation, name: string, f: (n: GpuTensor, last: GraphLinearEpilogue) => GpuTensor) => {
    g.scope((): GpuTensor[] => {
      const [shift, scale, gate] = modulate(
        g,
        m,
        inputs.step,
        tap && name === "self_attn" ? (k, t) => tap(`adaln_self_attn_${k}`, t) : undefined,
      );
      const n = modulatedLayernorm(g, x, rows, D, scale, shift, NORM_EPS);
      if (!tap) {
        f(n, { gate, gateRows: rows, into: x }); // x += gate · f(n), fused into the last product
        return [];
      }
      // Tapped: the output before its gate is a tensor of its own.
      const out = f(n, {});
      tap(name, out);
      addInPlace(g, x, mulRows(g, out, gate, rows, D), rows * D);
      return [];
    });
  };
  sublayer(w.modSelfAttn, "self_attn", (n, last) => attend(g, w.selfAttn, n, c, inputs, "self", last));
  sublayer(w.modCrossAttn, "cross_attn", (n, last) => attend(g, w.crossAttn, n, c, inputs, "cross", last));
  sublayer(
    w.modMlp,
    "mlp",
    (n, last) => linear(g, w.mlp2, linear(g, w.mlp1, n, rows, { activation: "gelu" }), rows, last),
  );
}
