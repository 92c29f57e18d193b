/**
 * Anima's LLM adapter (sd-scripts' `LLMAdapter`; diffusers' `AnimaTextConditioner` is the same
 * maths): it turns Qwen3-0.6B's hidden states into the T5-like context rows the DiT was trained on,
 * by running T5 token embeddings through 6 blocks that cross-attend to the Qwen3 states.
 *
 * - Input: `embed(T5 ids)` (32,128 rows), through `in_proj` only where model and target widths
 *   differ (not in the real model).
 * - Block: `x += self_attn(RMSNorm(x))`, `x += cross_attn(RMSNorm(x), qwen)`,
 *   `x += mlp(RMSNorm(x))`; MLP `Linear(+bias) → GELU (erf) → Linear(+bias)`.
 * - Attention: q, k, v projections without bias; per-head RMSNorm of q and k (eps 1e-6) before
 *   RoPE (θ 10000, rotate_half over the whole head); SDPA scale 1/√headDim; `o_proj`.
 * - Positions: self-attention q and k at target positions 0 .. Lt − 1; cross-attention q at the
 *   target positions and k at the *source* positions 0 .. Ls − 1 (two different position sets).
 * - Output: `RMSNorm(out_proj(x))` (out_proj has a bias).
 * - Masks (the padded form): the target mask hides padded T5 keys in self-attention and the source
 *   mask padded Qwen keys in cross-attention; a row with every key hidden gives zeros (torch 2.11's
 *   SDPA). The output rows of padded T5 tokens are zeroed afterwards, as sd-scripts does before
 *   the DiT. Unpadded inputs need no mask and give the same valid rows.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { copyToHost, type HostCopy } from "../../harness/host_copy.ts";
import { keyPaddingBias } from "../../ops/attention/reference.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { freeOnFailure } from "../loading.ts";
import { ADAPTER_ROPE_THETA, type AdapterConfig, adapterConfigFromStore, NORM_EPS } from "./config.ts";
import { Graph } from "./graph.ts";
import {
  attention,
  gather,
  linear,
  loadLinear,
  loadVector,
  rmsnorm,
  rope,
  type RopeTables,
  ropeTables,
} from "./layers.ts";
import { destroyLinear, layerBytes, type Linear } from "../linear.ts";
import { sequencePositions } from "./rope.ts";
import { checkAdapterLayout } from "./weights.ts";

interface AttentionWeights {
  norm: GpuTensor;
  q: Linear;
  k: Linear;
  v: Linear;
  o: Linear;
  qNorm: GpuTensor;
  kNorm: GpuTensor;
}

interface BlockWeights {
  self: AttentionWeights;
  cross: AttentionWeights;
  mlpNorm: GpuTensor;
  mlpIn: Linear;
  mlpOut: Linear;
}

/** The adapter's inputs on the device, for {@link LlmAdapter.build}. */
export interface AdapterInputs {
  /** T5 ids `[Lt]` (i32). */
  ids: GpuTensor;
  /** Qwen3 states `[Ls, sourceDim]`. */
  source: GpuTensor;
  /** Target positions 0 .. Lt − 1 `[Lt]` (i32). */
  targetPositions: GpuTensor;
  /** Source positions 0 .. Ls − 1 `[Ls]` (i32). */
  sourcePositions: GpuTensor;
  /** Additive key mask over the T5 tokens `[Lt]` (0 or −∞), for the padded form. */
  targetMask?: GpuTensor;
  /** Additive key mask over the Qwen rows `[Ls]`, for the padded form. */
  sourceMask?: GpuTensor;
}

/** Masks of the padded form: 1 for a real token, 0 for padding. */
export interface AdapterMasks {
  /** Over the T5 ids. */
  target?: ArrayLike<number>;
  /** Over the Qwen rows. */
  source?: ArrayLike<number>;
}

/**
 * The LLM adapter, its weights resident on the device.
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { ditStores, LlmAdapter } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const gpu = await acquireDevice();
 * const adapter = await LlmAdapter.load(gpu, ditStores(await open("weights_dit")).adapter);
 * const rows = await adapter.run(new Float32Array(3 * 40), new Int32Array([7, 8, 1])); // 3 Qwen rows, 3 T5 ids
 * console.log(rows.length); // 3 * 32
 * adapter.destroy();
 * gpu.destroy();
 * ```
 */
export class LlmAdapter {
  /** Its sizes. */
  readonly config: AdapterConfig;
  readonly #gpu: ResidentDevice;
  readonly #embed: GpuTensor;
  readonly #inProj?: Linear;
  readonly #blocks: BlockWeights[];
  readonly #outProj: Linear;
  readonly #norm: GpuTensor;
  readonly #rope: RopeTables;

  private constructor(
    gpu: ResidentDevice,
    config: AdapterConfig,
    parts: { embed: GpuTensor; inProj?: Linear; blocks: BlockWeights[]; outProj: Linear; norm: GpuTensor },
  ) {
    this.#gpu = gpu;
    this.config = config;
    this.#embed = parts.embed;
    this.#inProj = parts.inProj;
    this.#blocks = parts.blocks;
    this.#outProj = parts.outProj;
    this.#norm = parts.norm;
    this.#rope = ropeTables(gpu, {
      heads: config.heads,
      headDim: config.headDim,
      axesDims: [config.headDim],
      theta: ADAPTER_ROPE_THETA,
      pairing: "half",
    });
  }

  /**
   * Checks the adapter's tensors against its layout and uploads them.
   *
   * @param gpu the device
   * @param store the adapter's tensors (names without `net.llm_adapter.`; see `ditStores`)
   * @returns the adapter
   * @throws Error naming every missing or mis-shaped tensor, before reading any
   */
  static async load(gpu: ResidentDevice, store: TensorStore): Promise<LlmAdapter> {
    const config = adapterConfigFromStore(store);
    checkAdapterLayout(store, config);
    // A load that fails halfway (a read, a device error) frees what it uploaded.
    return await freeOnFailure(async (keep) => {
      const lin = async (name: string, bias = false) =>
        keep(await loadLinear(gpu, store, `${name}.weight`, "f32", {}, bias ? `${name}.bias` : undefined));
      const vec = async (name: string) => keep(await loadVector(gpu, store, name));
      const attn = async (b: string, kind: "self_attn" | "cross_attn"): Promise<AttentionWeights> => ({
        norm: await vec(`${b}norm_${kind}.weight`),
        q: await lin(`${b}${kind}.q_proj`),
        k: await lin(`${b}${kind}.k_proj`),
        v: await lin(`${b}${kind}.v_proj`),
        o: await lin(`${b}${kind}.o_proj`),
        qNorm: await vec(`${b}${kind}.q_norm.weight`),
        kNorm: await vec(`${b}${kind}.k_norm.weight`),
      });
      const blocks: BlockWeights[] = [];
      for (let i = 0; i < config.layers; i++) {
        const b = `blocks.${i}.`;
        blocks.push({
          self: await attn(b, "self_attn"),
          cross: await attn(b, "cross_attn"),
          mlpNorm: await vec(`${b}norm_mlp.weight`),
          mlpIn: await lin(`${b}mlp.0`, true),
          mlpOut: await lin(`${b}mlp.2`, true),
        });
      }
      return new LlmAdapter(gpu, config, {
        embed: await vec("embed.weight"),
        inProj: config.inProj ? await lin("in_proj", true) : undefined,
        blocks,
        outProj: await lin("out_proj", true),
        norm: await vec("norm.weight"),
      });
    });
  }

  /** Bytes of the adapter's weights on the device. */
  get residentBytes(): number {
    const att = (a: AttentionWeights) =>
      layerBytes(a.q) + layerBytes(a.k) + layerBytes(a.v) + layerBytes(a.o) +
      4 * (a.norm.length + a.qNorm.length + a.kNorm.length);
    let bytes = 4 * (this.#embed.length + this.#norm.length) + layerBytes(this.#outProj) +
      (this.#inProj ? layerBytes(this.#inProj) : 0);
    for (const b of this.#blocks) {
      bytes += att(b.self) + att(b.cross) + 4 * b.mlpNorm.length + layerBytes(b.mlpIn) + layerBytes(b.mlpOut);
    }
    return bytes;
  }

  /**
   * Appends the adapter's forward to a graph.
   *
   * @param g the graph
   * @param inputs ids, Qwen states, positions and (padded form) masks, on the device
   * @returns the output rows `[Lt, targetDim]` (padded rows not yet zeroed)
   */
  build(g: Graph, inputs: AdapterInputs): GpuTensor {
    const c = this.config;
    const Lt = inputs.ids.length, Ls = inputs.sourcePositions.length;
    const M = c.modelDim, H = c.heads, hd = c.headDim;
    const attend = (
      w: AttentionWeights,
      x: GpuTensor,
      kv: GpuTensor,
      kvRows: number,
      kvPositions: GpuTensor,
      mask?: GpuTensor,
    ) =>
      g.scope(() => {
        const n = rmsnorm(g, x, Lt, M, w.norm, NORM_EPS);
        const q = rope(
          g,
          rmsnorm(g, linear(g, w.q, n, Lt), Lt * H, hd, w.qNorm, NORM_EPS),
          Lt,
          inputs.targetPositions,
          this.#rope,
        );
        const source = kv === x ? n : kv;
        const k = rope(
          g,
          rmsnorm(g, linear(g, w.k, source, kvRows), kvRows * H, hd, w.kNorm, NORM_EPS),
          kvRows,
          kvPositions,
          this.#rope,
        );
        const v = linear(g, w.v, source, kvRows);
        const o = attention(g, q, k, v, { B: 1, H, L: Lt, S: kvRows, D: hd }, mask);
        return linear(g, w.o, o, Lt, { into: x }); // x += o_proj(o)
      });
    let x = gather(g, this.#embed, inputs.ids, c.vocab, c.targetDim);
    if (this.#inProj) {
      const embedded = x;
      x = linear(g, this.#inProj, embedded, Lt);
      g.release(embedded);
    }
    for (const b of this.#blocks) {
      attend(b.self, x, x, Lt, inputs.targetPositions, inputs.targetMask);
      attend(b.cross, x, inputs.source, Ls, inputs.sourcePositions, inputs.sourceMask);
      g.scope(() => {
        const n = rmsnorm(g, x, Lt, M, b.mlpNorm, NORM_EPS);
        const h = linear(g, b.mlpIn, n, Lt, { activation: "gelu" });
        return linear(g, b.mlpOut, h, Lt, { into: x }); // x += mlp(n)
      });
    }
    return g.scope(() => rmsnorm(g, linear(g, this.#outProj, x, Lt), Lt, c.targetDim, this.#norm, NORM_EPS));
  }

  /**
   * Runs the adapter on host arrays.
   *
   * @param qwenStates Qwen3's last hidden states `[Ls, sourceDim]`
   * @param t5Ids T5 token ids `[Lt]`
   * @param masks the padded form's masks (1 = token, 0 = padding); padded T5 rows come back zeroed
   * @returns the context rows `[Lt, targetDim]`
   * @throws Error naming an input of the wrong length or an id outside the vocabulary
   */
  async run(qwenStates: Float32Array, t5Ids: Int32Array, masks: AdapterMasks = {}): Promise<Float32Array> {
    const c = this.config;
    const Lt = t5Ids.length, Ls = qwenStates.length / c.sourceDim;
    if (Lt < 1) throw new Error("anima adapter: t5Ids must hold at least one id");
    if (!Number.isInteger(Ls) || Ls < 1) {
      throw new Error(`anima adapter: qwenStates must be [Ls >= 1, ${c.sourceDim}], got ${qwenStates.length} values`);
    }
    const bad = t5Ids.findIndex((id) => id < 0 || id >= c.vocab);
    if (bad >= 0) {
      throw new Error(`anima adapter: t5Ids[${bad}] = ${t5Ids[bad]} is outside the vocabulary [0, ${c.vocab})`);
    }
    for (const [name, mask, n] of [["target", masks.target, Lt], ["source", masks.source, Ls]] as const) {
      if (mask && mask.length !== n) {
        throw new Error(`anima adapter: the ${name} mask has ${mask.length} entries, expected ${n}`);
      }
    }
    const gpu = this.#gpu;
    const owned = [
      gpu.upload(t5Ids, "t5 ids"),
      gpu.upload(qwenStates, "qwen states"),
      gpu.upload(sequencePositions(Lt), "target positions"),
      gpu.upload(sequencePositions(Ls), "source positions"),
    ];
    const [ids, source, targetPositions, sourcePositions] = owned;
    const inputs: AdapterInputs = { ids, source, targetPositions, sourcePositions };
    if (masks.target) owned.push(inputs.targetMask = gpu.upload(keyPaddingBias(masks.target), "target mask"));
    if (masks.source) owned.push(inputs.sourceMask = gpu.upload(keyPaddingBias(masks.source), "source mask"));
    const g = new Graph(gpu, "anima adapter");
    try {
      const out = this.build(g, inputs);
      const program = g.program();
      try {
        await program.run();
      } finally {
        program.destroy();
      }
      const rows = await gpu.read(out) as Float32Array;
      if (masks.target) {
        for (let i = 0; i < Lt; i++) if (!masks.target[i]) rows.fill(0, i * c.targetDim, (i + 1) * c.targetDim);
      }
      return rows;
    } finally {
      g.destroy();
      for (const t of owned) t.buffer.destroy();
    }
  }

  /**
   * Host copies of the weights (read back once), whose `restore` makes this adapter again by uploads
   * alone, with no checkpoint read.
   *
   * @returns the copy; `restore(gpu)` gives a new adapter of the same weights
   */
  hostCopy(): Promise<HostCopy<LlmAdapter>> {
    const config = this.config;
    const parts = {
      embed: this.#embed,
      inProj: this.#inProj,
      blocks: this.#blocks,
      outProj: this.#outProj,
      norm: this.#norm,
    };
    return copyToHost(this.#gpu, parts, (p, gpu) => new LlmAdapter(gpu, config, p));
  }

  /** Frees the adapter's weights. */
  destroy(): void {
    const att = (a: AttentionWeights) => {
      for (const l of [a.q, a.k, a.v, a.o]) destroyLinear(l);
      for (const t of [a.norm, a.qNorm, a.kNorm]) t.buffer.destroy();
    };
    for (const b of this.#blocks) {
      att(b.self);
      att(b.cross);
      b.mlpNorm.buffer.destroy();
      destroyLinear(b.mlpIn);
      destroyLinear(b.mlpOut);
    }
    if (this.#inProj) destroyLinear(this.#inProj);
    destroyLinear(this.#outProj);
    for (const t of [this.#embed, this.#norm, this.#rope.pairAxis, this.#rope.invFreq]) t.buffer.destroy();
  }
}
