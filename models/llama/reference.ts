/**
 * The reference Llama forward: what the GPU engine is held to, in plain TypeScript with f64
 * accumulation. It matches `transformers.LlamaForCausalLM` (eager attention) on the same weights:
 *
 * - `x = embed[ids]`; per layer `h = x + o_proj(attn(rope(q_proj(n1)), rope(k_proj(n1)), v_proj(n1)))`
 *   with `n1 = rmsnorm(x) * input_layernorm`, then `x = h + down(silu(gate(n2)) * up(n2))` with
 *   `n2 = rmsnorm(h) * post_attention_layernorm`; logits `= head(rmsnorm(x) * norm)`, the head being
 *   the embedding table when tied.
 * - RMSNorm as HF's LlamaRMSNorm: `x / sqrt(mean(x^2) + eps)`, then times the weight.
 * - Attention: causal, scaled by `1 / sqrt(headDim)`, query head h reads KV head
 *   `floor(h / (heads / kvHeads))` (HF's `repeat_kv`), softmax over the cache plus the new positions.
 * - RoPE in the adjacent-pair convention (channels 2i and 2i + 1 rotate together), because the
 *   loaded Q and K rows are relabelled by `permuteRopeChannels` (llm/weights); with the relabelling it
 *   computes HF's rotate_half exactly. Frequencies and attention scaling from `rope.ts`.
 * - Quantised formats are the dequantised weights (`code * scale`, f64), which is what the fixtures'
 *   quantisation-aware logits were computed from.
 *
 * A KV cache makes each `forward` continue the sequence; `reset` starts a new one.
 *
 * @module
 */

import { unpackQ4, unpackQ8 } from "../../ops/matvec/reference.ts";
import type { LlamaConfig } from "./config.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";
import type { LoadedWeight } from "../../llm/weights/load.ts";
import { loadWeights } from "./weights.ts";
import { ropeCosSin, ropeFrequencies } from "./rope.ts";

const Q4_GROUP = 128;

function f32View(bytes: Uint8Array): Float32Array {
  return new Float32Array(bytes.slice().buffer);
}

function u32View(bytes: Uint8Array): Uint32Array {
  return new Uint32Array(bytes.slice().buffer);
}

/**
 * One loaded tensor as f64 values in its HF shape (Q/K rows relabelled for adjacent-pair RoPE):
 * f32 as stored, q8 as `code * scale[row]`, q4g128 as `code * scales[row, col / 128]`.
 *
 * @param weight a tensor from `loadWeights`, in the format its `format` names
 * @returns the values, row-major
 *
 * @example
 * ```ts
 * import { transformTensor } from "@xpu/ops/llm";
 * import { dequantizeWeight, llamaWeightSpecs, TINY_CONFIG } from "@xpu/ops/models/llama";
 * const spec = llamaWeightSpecs(TINY_CONFIG)[0]; // the embedding, [128, 48]
 * const parts = transformTensor(spec, new Float32Array(128 * 48).fill(0.5), TINY_CONFIG, "q8");
 * dequantizeWeight({ spec, format: "q8", parts })[0]; // 0.49999999813735485: code 127 times the f32 scale of 0.5 / 127
 * ```
 */
export function dequantizeWeight(weight: LoadedWeight): Float64Array {
  const [main, scales] = weight.parts;
  if (!scales) return Float64Array.from(f32View(main.data));
  const [N, K] = weight.spec.shape;
  const s = f32View(scales.data);
  const out = new Float64Array(N * K);
  if (weight.format === "q8") {
    const codes = unpackQ8(u32View(main.data), N, K);
    for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) out[n * K + k] = codes[n * K + k] * s[n];
  } else {
    const codes = unpackQ4(u32View(main.data), N, K);
    const groups = Math.ceil(K / Q4_GROUP);
    for (let n = 0; n < N; n++) {
      for (let k = 0; k < K; k++) out[n * K + k] = codes[n * K + k] * s[n * groups + Math.floor(k / Q4_GROUP)];
    }
  }
  return out;
}

/** `W x` for `W` `[N, K]`. */
function linear(w: Float64Array, x: Float64Array, N: number, K: number): Float64Array {
  const y = new Float64Array(N);
  for (let n = 0; n < N; n++) {
    let acc = 0;
    for (let k = 0; k < K; k++) acc += w[n * K + k] * x[k];
    y[n] = acc;
  }
  return y;
}

function rmsnorm(x: Float64Array, weight: Float64Array, eps: number): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const inv = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v, i) => v * inv * weight[i]);
}

/** Options of {@link LlamaReference}. */
export interface LlamaReferenceOptions {
  /**
   * Applied to the input of every product `W x` before it is taken, given the weight's HF name (the
   * head's is `lm_head.weight`, or `model.embed_tokens.weight` when tied): what a product on
   * quantised activations reads instead of `x` (models/fortune/dp4a_accuracy.ts quantises it per row
   * to int8, as ops/matmul's dp4a kernels do). Absent: `x` itself.
   */
  linearInput?: (weight: string, x: Float64Array) => Float64Array;
}

/**
 * The reference model: dequantised weights and a KV cache.
 *
 * @example
 * ```ts
 * import { LlamaReference, parseLlamaConfig } from "@xpu/ops/models/llama";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const dir = "models/llama/fixtures/tiny-gqa/f32";
 * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
 * const { store, close } = await openCheckpointDir(dir);
 * const model = await LlamaReference.load(store, config);
 * close();
 * const tokens = model.greedy([5, 6, 7], 4); // four ids, each the argmax of the last logits
 * ```
 */
export class LlamaReference {
  /** The model's shape. */
  readonly config: LlamaConfig;
  readonly #w: Map<string, Float64Array>;
  readonly #linearInput: LlamaReferenceOptions["linearInput"];
  /** Per layer: keys and values of every position so far, `[position][kvHeads * headDim]`. */
  #keys: Float64Array[][] = [];
  #values: Float64Array[][] = [];

  /**
   * Builds the model from dequantised weights, its cache empty.
   *
   * @param config the model
   * @param weights every tensor of `llamaWeightSpecs(config)` by HF name, as {@link dequantizeWeight} gives
   * @param options what the products read ({@link LlamaReferenceOptions})
   */
  constructor(config: LlamaConfig, weights: Map<string, Float64Array>, options?: LlamaReferenceOptions) {
    this.config = config;
    this.#w = weights;
    this.#linearInput = options?.linearInput;
    this.reset();
  }

  /**
   * Loads a checkpoint through `loadWeights` (the engine's path) and dequantises it.
   *
   * @param store the checkpoint (HF or converted)
   * @param config the model
   * @param format the weight format (the quantised ones are computed from their dequantised values)
   * @returns the reference model
   *
   * @example
   * ```ts
   * import { LlamaReference, parseLlamaConfig } from "@xpu/ops/models/llama";
   * import { openCheckpointDir } from "@xpu/ops/llm/file";
   * const dir = "models/llama/fixtures/tiny-gqa/f32";
   * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
   * const { store } = await openCheckpointDir(dir);
   * const model = await LlamaReference.load(store, config, "q8");
   * model.forward([5, 6, 7]).length; // 3 * 128 logits
   * ```
   */
  static async load(store: TensorStore, config: LlamaConfig, format?: WeightFormat): Promise<LlamaReference> {
    format ??= "f32";
    const weights = new Map<string, Float64Array>();
    for await (const w of loadWeights(store, config, { format })) weights.set(w.spec.name, dequantizeWeight(w));
    return new LlamaReference(config, weights);
  }

  /** Tokens in the cache. */
  get length(): number {
    return this.#keys[0].length;
  }

  /** Empties the KV cache. */
  reset(): void {
    this.#keys = Array.from({ length: this.config.numHiddenLayers }, () => []);
    this.#values = Array.from({ length: this.config.numHiddenLayers }, () => []);
  }

  #get(name: string): Float64Array {
    const w = this.#w.get(name);
    if (!w) throw new Error(`LlamaReference: weight ${name} is missing`);
    return w;
  }

  /** `W x` for the weight named `name`, `[N, K]`, with `x` through the `linearInput` option. */
  #linear(name: string, x: Float64Array, N: number, K: number): Float64Array {
    return linear(this.#get(name), this.#linearInput ? this.#linearInput(name, x) : x, N, K);
  }

  /**
   * Runs the tokens after those already in the cache and appends them to it.
   *
   * @param ids token ids
   * @returns logits `[ids.length, vocab]` in f32
   * @throws Error naming a token id outside the vocabulary
   */
  forward(ids: readonly number[]): Float32Array {
    const c = this.config;
    const { hiddenSize: H, headDim: D, numAttentionHeads: heads, numKeyValueHeads: kvHeads, vocabSize: V } = c;
    for (const [i, id] of ids.entries()) {
      if (!Number.isInteger(id) || id < 0 || id >= V) {
        throw new Error(`LlamaReference: ids[${i}] = ${id} is not a token id in [0, ${V})`);
      }
    }
    const start = this.length;
    const rope = ropeFrequencies(c, start + ids.length);
    const embed = this.#get("model.embed_tokens.weight");
    const xs = ids.map((id) => embed.slice(id * H, (id + 1) * H));
    const group = heads / kvHeads;
    for (let l = 0; l < c.numHiddenLayers; l++) {
      const p = `model.layers.${l}`;
      const newQueries: Float64Array[] = [];
      for (const [i, x] of xs.entries()) {
        const n1 = rmsnorm(x, this.#get(`${p}.input_layernorm.weight`), c.rmsNormEps);
        const q = this.#linear(`${p}.self_attn.q_proj.weight`, n1, heads * D, H);
        const k = this.#linear(`${p}.self_attn.k_proj.weight`, n1, kvHeads * D, H);
        const v = this.#linear(`${p}.self_attn.v_proj.weight`, n1, kvHeads * D, H);
        const cs = ropeCosSin(rope, start + i);
        for (const [t, count] of [[q, heads], [k, kvHeads]] as const) {
          for (let h = 0; h < count; h++) {
            for (let j = 0; j < D / 2; j++) {
              const a = t[h * D + 2 * j], b = t[h * D + 2 * j + 1];
              t[h * D + 2 * j] = a * cs[2 * j] - b * cs[2 * j + 1];
              t[h * D + 2 * j + 1] = b * cs[2 * j] + a * cs[2 * j + 1];
            }
          }
        }
        newQueries.push(q);
        this.#keys[l].push(k);
        this.#values[l].push(v);
      }
      for (const [i, x] of xs.entries()) {
        const q = newQueries[i];
        const seen = start + i + 1; // causal: positions 0 ..= start + i
        const attn = new Float64Array(heads * D);
        for (let h = 0; h < heads; h++) {
          const kv = Math.floor(h / group);
          const scores = new Float64Array(seen);
          let max = -Infinity;
          for (let t = 0; t < seen; t++) {
            let dot = 0;
            for (let d = 0; d < D; d++) dot += q[h * D + d] * this.#keys[l][t][kv * D + d];
            scores[t] = dot / Math.sqrt(D);
            max = Math.max(max, scores[t]);
          }
          let sum = 0;
          for (let t = 0; t < seen; t++) sum += scores[t] = Math.exp(scores[t] - max);
          for (let t = 0; t < seen; t++) {
            for (let d = 0; d < D; d++) attn[h * D + d] += (scores[t] / sum) * this.#values[l][t][kv * D + d];
          }
        }
        const o = this.#linear(`${p}.self_attn.o_proj.weight`, attn, H, heads * D);
        for (let j = 0; j < H; j++) x[j] += o[j];
        const n2 = rmsnorm(x, this.#get(`${p}.post_attention_layernorm.weight`), c.rmsNormEps);
        const F = c.intermediateSize;
        const g = this.#linear(`${p}.mlp.gate_proj.weight`, n2, F, H);
        const u = this.#linear(`${p}.mlp.up_proj.weight`, n2, F, H);
        const act = g.map((gv, j) => (gv / (1 + Math.exp(-gv))) * u[j]);
        const down = this.#linear(`${p}.mlp.down_proj.weight`, act, H, F);
        for (let j = 0; j < H; j++) x[j] += down[j];
      }
    }
    const head = c.tieWordEmbeddings ? "model.embed_tokens.weight" : "lm_head.weight";
    const logits = new Float32Array(ids.length * V);
    for (const [i, x] of xs.entries()) {
      logits.set(this.#linear(head, rmsnorm(x, this.#get("model.norm.weight"), c.rmsNormEps), V, H), i * V);
    }
    return logits;
  }

  /**
   * Greedy decoding: the prompt, then `steps` tokens, each the first argmax of the last logits.
   *
   * @param prompt token ids (the cache is reset first)
   * @param steps tokens to choose
   * @returns the chosen tokens
   */
  greedy(prompt: readonly number[], steps: number): number[] {
    this.reset();
    let logits = this.forward(prompt);
    const V = this.config.vocabSize;
    const out: number[] = [];
    for (let s = 0; s < steps; s++) {
      const last = logits.subarray(logits.length - V);
      let best = 0;
      for (let v = 1; v < V; v++) if (last[v] > last[best]) best = v;
      out.push(best);
      if (s + 1 < steps) logits = this.forward([best]);
    }
    return out;
  }
}
