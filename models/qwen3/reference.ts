/**
 * Qwen3's forward in plain TypeScript: the definition the GPU programs are held to, itself held to
 * the hidden states transformers 5.17 wrote (`fixtures/`). Slow and obviously right: every sum in
 * f64, each op's output rounded to f32 once, as transformers' f32 modules round theirs.
 *
 * What it computes (transformers' `Qwen3Model` / `Qwen3ForCausalLM`, eager, one sequence):
 *
 * ```
 * h = embed_tokens[ids]
 * for each layer:
 *   x = rms_norm(h) * input_layernorm
 *   q, k, v = x Wq^T, x Wk^T, x Wv^T                      [L, heads, D], [L, kvHeads, D]
 *   q, k = rms_norm over D (q_norm, k_norm), then rotate_half RoPE, base rope_theta, positions 0..L-1
 *   a = softmax(q k^T / sqrt(D), causal) v                  query head j reads KV head j / (heads / kvHeads)
 *   h = h + a Wo^T
 *   x = rms_norm(h) * post_attention_layernorm
 *   h = h + (silu(x Wgate^T) * (x Wup^T)) Wdown^T
 * last_hidden_state = rms_norm(h) * norm;  logits = last_hidden_state E^T (E the embedding when tied)
 * ```
 *
 * `rms_norm(x) = x / sqrt(mean(x²) + eps)`, the weight multiplied after. RoPE pairs channel i with
 * i + D/2 (`rotate_half`), angle `position · invFreq[i]`, `invFreq[i] = f32(θ^(-2i/D))`.
 *
 * @module
 */

import type { TensorStore } from "../../llm/safetensors.ts";
import type { Qwen3Config } from "./config.ts";
import { layerTensorNames, openQwen3Checkpoint, qwen3Tensors } from "./weights.ts";

/** A Qwen3's weights on the host, under their `Qwen3Model` names (and `lm_head.weight` when untied). */
export type Qwen3HostWeights = Map<string, Float32Array>;

/**
 * Reads every tensor of a checkpoint as f32, under its `Qwen3Model` name.
 *
 * @param store the checkpoint (either layout of `weights.ts`)
 * @param config the model
 * @returns the weights
 *
 * @example
 * ```ts
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * import { parseQwen3Config, Qwen3Reference, readQwen3Weights } from "@xpu/ops/models/qwen3";
 * const dir = "models/qwen3/fixtures"; // Anima's tiny Qwen3
 * const store = await SafetensorsFile.open(bytesSource(await Deno.readFile(`${dir}/anima-tiny-qwen3.safetensors`)));
 * const config = parseQwen3Config(await Deno.readTextFile(`${dir}/anima-tiny-config.json`));
 * const reference = new Qwen3Reference(config, await readQwen3Weights(store, config));
 * const states = reference.hiddenStates([12, 7, 99]); // 3 arrays: embeddings, layer 0, last_hidden_state
 * ```
 */
export async function readQwen3Weights(store: TensorStore, config: Qwen3Config): Promise<Qwen3HostWeights> {
  const checkpoint = openQwen3Checkpoint(store, config);
  const weights: Qwen3HostWeights = new Map();
  for (const { name } of checkpoint.model.tensors) {
    if (/rotary_emb\.inv_freq$/.test(name)) continue;
    weights.set(name, await checkpoint.model.readFloat32(name));
  }
  if (checkpoint.lmHead) weights.set("lm_head.weight", await store.readFloat32(checkpoint.lmHead));
  return weights;
}

/** `y[m, n] = Σ_k x[m, k] w[n, k]` (F.linear without bias), f64 sums rounded to f32. */
function linear(x: Float32Array, w: Float32Array, M: number, N: number, K: number): Float32Array {
  const y = new Float32Array(M * N);
  for (let m = 0; m < M; m++) {
    for (let n = 0; n < N; n++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += x[m * K + k] * w[n * K + k];
      y[m * N + n] = s;
    }
  }
  return y;
}

/** RMSNorm of each row of `x` `[rows, cols]` times `weight` `[cols]`. */
function rmsNorm(x: Float32Array, weight: Float32Array, rows: number, cols: number, eps: number): Float32Array {
  const y = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    let s = 0;
    for (let c = 0; c < cols; c++) s += x[r * cols + c] ** 2;
    const inv = 1 / Math.sqrt(s / cols + eps);
    for (let c = 0; c < cols; c++) y[r * cols + c] = x[r * cols + c] * inv * weight[c];
  }
  return y;
}

/** rotate_half RoPE of `x` `[L, heads, D]` in place, position of row t = t. */
function ropeHalf(x: Float32Array, L: number, heads: number, D: number, theta: number): void {
  const half = D / 2;
  const invFreq = Float32Array.from({ length: half }, (_, i) => 1 / theta ** ((2 * i) / D));
  for (let t = 0; t < L; t++) {
    for (let h = 0; h < heads; h++) {
      const base = (t * heads + h) * D;
      for (let i = 0; i < half; i++) {
        const angle = t * invFreq[i];
        const a = x[base + i], b = x[base + i + half];
        x[base + i] = a * Math.cos(angle) - b * Math.sin(angle);
        x[base + i + half] = b * Math.cos(angle) + a * Math.sin(angle);
      }
    }
  }
}

/** Causal GQA attention: q `[L, H, D]`, k and v `[L, kvH, D]`, out `[L, H, D]`. */
function causalAttention(
  q: Float32Array,
  k: Float32Array,
  v: Float32Array,
  L: number,
  H: number,
  kvH: number,
  D: number,
) {
  const out = new Float32Array(L * H * D);
  const group = H / kvH, scale = 1 / Math.sqrt(D);
  const scores = new Float64Array(L);
  for (let h = 0; h < H; h++) {
    const g = Math.floor(h / group);
    for (let i = 0; i < L; i++) {
      let max = -Infinity;
      for (let j = 0; j <= i; j++) {
        let s = 0;
        for (let d = 0; d < D; d++) s += q[(i * H + h) * D + d] * k[(j * kvH + g) * D + d];
        scores[j] = s * scale;
        max = Math.max(max, scores[j]);
      }
      let sum = 0;
      for (let j = 0; j <= i; j++) sum += scores[j] = Math.exp(scores[j] - max);
      for (let d = 0; d < D; d++) {
        let s = 0;
        for (let j = 0; j <= i; j++) s += scores[j] * v[(j * kvH + g) * D + d];
        out[(i * H + h) * D + d] = s / sum;
      }
    }
  }
  return out;
}

/** The forward of a Qwen3 on the host (see the module doc). */
export class Qwen3Reference {
  /** The model. */
  readonly config: Qwen3Config;
  readonly #w: Qwen3HostWeights;

  /**
   * A reference over host weights.
   *
   * @param config the model
   * @param weights its weights ({@link readQwen3Weights})
   * @throws Error naming a tensor the config needs that is missing or has the wrong element count
   */
  constructor(config: Qwen3Config, weights: Qwen3HostWeights) {
    const expected = qwen3Tensors(config);
    if (!config.tieWordEmbeddings) {
      expected.push({ name: "lm_head.weight", shape: [config.vocabSize, config.hiddenSize] });
    }
    for (const { name, shape } of expected) {
      const n = shape.reduce((p, d) => p * d, 1);
      if (weights.get(name)?.length !== n) {
        throw new Error(
          `qwen3 reference: weight ${name} must hold ${n} values, got ${weights.get(name)?.length ?? "none"}`,
        );
      }
    }
    this.config = config;
    this.#w = weights;
  }

  #get(name: string): Float32Array {
    const w = this.#w.get(name);
    if (!w) throw new Error(`qwen3 reference: no weight ${name}`);
    return w;
  }

  #checkIds(ids: ArrayLike<number>): void {
    if (ids.length < 1) throw new Error("qwen3 reference: ids must hold at least one token");
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!Number.isInteger(id) || id < 0 || id >= this.config.vocabSize) {
        throw new Error(`qwen3 reference: ids[${i}] = ${id} is not a token id in [0, ${this.config.vocabSize})`);
      }
    }
  }

  /**
   * transformers' `hidden_states` for one sequence: `[embeddings, output of layer 0, ..., output of
   * layer n - 2, last_hidden_state]` (the last entry after the final norm, as transformers 5.17
   * builds it), each `[L, hidden]`.
   *
   * @param ids token ids
   * @returns numHiddenLayers + 1 arrays
   */
  hiddenStates(ids: ArrayLike<number>): Float32Array[] {
    this.#checkIds(ids);
    const c = this.config, L = ids.length, Hd = c.hiddenSize, D = c.headDim;
    const H = c.numAttentionHeads, kvH = c.numKeyValueHeads, F = c.intermediateSize, eps = c.rmsNormEps;
    const table = this.#get("embed_tokens.weight");
    let h: Float32Array = new Float32Array(L * Hd);
    for (let t = 0; t < L; t++) h.set(table.subarray(ids[t] * Hd, (ids[t] + 1) * Hd), t * Hd);
    const states: Float32Array[] = [h];
    for (let i = 0; i < c.numHiddenLayers; i++) {
      const n = layerTensorNames(i);
      const x = rmsNorm(h, this.#get(n.inputNorm), L, Hd, eps);
      const q = rmsNorm(linear(x, this.#get(n.q), L, H * D, Hd), this.#get(n.qNorm), L * H, D, eps);
      const k = rmsNorm(linear(x, this.#get(n.k), L, kvH * D, Hd), this.#get(n.kNorm), L * kvH, D, eps);
      const v = linear(x, this.#get(n.v), L, kvH * D, Hd);
      ropeHalf(q, L, H, D, c.ropeTheta);
      ropeHalf(k, L, kvH, D, c.ropeTheta);
      const attn = linear(causalAttention(q, k, v, L, H, kvH, D), this.#get(n.o), L, Hd, H * D);
      const h1 = h.map((e, j) => e + attn[j]);
      const x2 = rmsNorm(h1, this.#get(n.postNorm), L, Hd, eps);
      const gate = linear(x2, this.#get(n.gate), L, F, Hd), up = linear(x2, this.#get(n.up), L, F, Hd);
      const act = gate.map((g, j) => (g / (1 + Math.exp(-g))) * up[j]);
      const down = linear(act, this.#get(n.down), L, Hd, F);
      h = h1.map((e, j) => e + down[j]);
      states.push(h);
    }
    states[states.length - 1] = rmsNorm(h, this.#get("norm.weight"), L, Hd, eps);
    return states;
  }

  /**
   * Logits of every position, `[L, vocab]`: the last hidden state times the head (the embedding when tied).
   *
   * @param ids token ids
   * @returns the logits
   */
  logits(ids: ArrayLike<number>): Float32Array {
    const states = this.hiddenStates(ids);
    const head = this.#get(this.config.tieWordEmbeddings ? "embed_tokens.weight" : "lm_head.weight");
    return linear(states[states.length - 1], head, ids.length, this.config.vocabSize, this.config.hiddenSize);
  }

  /**
   * Greedy continuation: the argmax of the last position's logits (lowest id on a tie), appended and
   * fed back, until a stop id (included) or `maxTokens` new tokens.
   *
   * @param ids the prompt
   * @param maxTokens most tokens generated
   * @param stopIds ids that end generation
   * @returns the generated ids
   */
  greedy(ids: ArrayLike<number>, maxTokens: number, stopIds: readonly number[] = []): number[] {
    const seq = Array.from(ids), out: number[] = [], V = this.config.vocabSize;
    while (out.length < maxTokens) {
      const logits = this.logits(seq).subarray((seq.length - 1) * V);
      let best = 0;
      for (let j = 1; j < V; j++) if (logits[j] > logits[best]) best = j;
      out.push(best);
      seq.push(best);
      if (stopIds.includes(best)) break;
    }
    return out;
  }
}
