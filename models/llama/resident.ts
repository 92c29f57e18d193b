/**
 * A Llama checkpoint's weights on the GPU, as the engine keeps them: each matrix in its stored form
 * (f32, or q8 / q4g128 packed words with their scales), Q/K/V fused into one `[q|k|v]` matrix (rows
 * concatenated: both formats quantise per row or per row group, so fusing is concatenation) and
 * gate/up into one matrix whose rows alternate, gate row j then up row j (so the product's outputs
 * 2j and 2j + 1 are one FFN channel's pair, which the decode product's SwiGLU step combines), and
 * every matrix cut into row blocks that each fit one binding (maxStorageBufferBindingSize and
 * maxBufferSize), so a weight too large for one binding is several; gate/up's blocks hold whole
 * pairs.
 *
 * @module
 */

import type { GpuTensor } from "../../harness/device.ts";
import type { LlamaConfig } from "./config.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";
import type { LoadedWeight } from "../../llm/weights/load.ts";

/** Bytes of weights written to the queue between two waits for it (bounds the host's staging copies). */
const FLUSH_BYTES = 64 << 20;

/**
 * Rows `[row0, row0 + rows)` of a matrix, in a buffer (and its scales in another) of their own: f32
 * `[rows, K]`, or packed u32 words with their f32 scales (`rowBytes` per row each).
 */
export interface Block {
  row0: number;
  rows: number;
  weight: GpuTensor;
  scales?: GpuTensor;
}

/** A weight matrix `[N, K]` on the GPU, as row blocks within the binding limit. */
export interface Matrix {
  /** Its name (a fused matrix: `...self_attn.qkv`, `...mlp.gate_up`, the latter's rows interleaved). */
  name: string;
  N: number;
  K: number;
  blocks: Block[];
}

/** One layer's weights. */
export interface LayerWeights {
  inputNorm: GpuTensor;
  postNorm: GpuTensor;
  qkv: Matrix;
  o: Matrix;
  gateUp: Matrix;
  down: Matrix;
}

/** Bytes of one stored row of `K` columns: the weight's and its scales'. */
export function rowBytes(format: WeightFormat, K: number): { weight: number; scales: number } {
  if (format === "f32") return { weight: 4 * K, scales: 0 };
  if (format === "q8") return { weight: 4 * Math.ceil(K / 4), scales: 4 };
  return { weight: 4 * Math.ceil(K / 8), scales: 4 * Math.ceil(K / 128) };
}

/**
 * Rows of a block of a matrix with `K` columns: as many as one binding holds (a multiple of `unit`
 * rows), at most `N`.
 *
 * @throws Error when `unit` rows are over the limit
 */
export function blockRows(format: WeightFormat, K: number, N: number, limit: number, unit = 1): number {
  const bytes = rowBytes(format, K);
  const rows = Math.floor(limit / bytes.weight / unit) * unit;
  if (rows < 1) {
    throw new Error(
      `LlamaEngine: ${unit === 1 ? "one" : unit} ${format} row${unit === 1 ? "" : "s"} of ${K} columns (${
        unit * bytes.weight
      } bytes) over the binding limit ${limit}`,
    );
  }
  return Math.min(N, rows);
}

/** Rows of `a` and `b` (each `rows` rows of `bytes` bytes) alternating: a's row 0, b's row 0, a's row 1, ... */
function interleaveRows(a: Uint8Array, b: Uint8Array, rows: number, bytes: number): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  for (let r = 0; r < rows; r++) {
    out.set(a.subarray(r * bytes, (r + 1) * bytes), 2 * r * bytes);
    out.set(b.subarray(r * bytes, (r + 1) * bytes), (2 * r + 1) * bytes);
  }
  return out;
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** The weights of a model on the GPU. */
export interface ResidentWeights {
  embedding: Matrix;
  /** The head: the embedding itself when tied. */
  head: Matrix;
  finalNorm: GpuTensor;
  layers: LayerWeights[];
}

/**
 * Quantizes f32 rows on the GPU into a quantized block's buffers: `values` `[rows, K]` (Q/K already
 * permuted) into `weight` (packed words) and `scales`, as ops/quantize's `packed` (q8) and
 * `packed_q4` (q4g128) entry points write them.
 */
export type GpuQuantizer = (
  values: Float32Array,
  rows: number,
  K: number,
  weight: GPUBuffer,
  scales: GPUBuffer,
) => Promise<void>;

/**
 * Uploads weights tensor by tensor (holding only a layer's Q/K/V or gate/up until they are fused).
 * A q8 or q4g128 matrix that arrives as f32 (`LoadedWeight.format`, quantization deferred by the
 * loader) is quantized block by block on the GPU by `quantize`.
 *
 * @param device the device
 * @param config the model
 * @param format the stored format of the weights
 * @param limit bytes one binding may hold
 * @param buffer makes a storage buffer the caller owns
 * @param weights every tensor of `llamaWeightSpecs(config)`, in loadWeights' order
 * @param quantize the GPU quantizer, for quantized matrices that arrive as f32
 * @returns the resident weights
 * @throws Error naming a tensor that is missing, or a matrix in a form this format cannot take
 */
export async function uploadWeights(
  device: GPUDevice,
  config: LlamaConfig,
  format: WeightFormat,
  limit: number,
  buffer: (bytes: number, label: string) => GPUBuffer,
  weights: AsyncIterable<LoadedWeight> | Iterable<LoadedWeight>,
  quantize?: GpuQuantizer,
): Promise<ResidentWeights> {
  // writeBuffer copies into a staging buffer the implementation keeps until a submission that
  // follows it is done: without one, every byte of the checkpoint would stay in host memory until
  // the first command after the load. So the queue is flushed every FLUSH_BYTES.
  let unflushed = 0;
  const upload = (data: Uint8Array, label: string, dtype: "f32" | "u32" = "f32"): GpuTensor => {
    const b = buffer(data.byteLength, label);
    const padded = data.byteLength % 4 === 0 ? data : concatBytes([data, new Uint8Array(4 - (data.byteLength % 4))]);
    device.queue.writeBuffer(b, 0, padded as Uint8Array<ArrayBuffer>);
    unflushed += padded.byteLength;
    return { buffer: b, dtype, length: padded.byteLength / 4 };
  };
  const words = format === "f32" ? "f32" : "u32";
  const flush = async (always = false) => {
    if (!always && unflushed < FLUSH_BYTES) return;
    unflushed = 0;
    device.queue.submit([]);
    await device.queue.onSubmittedWorkDone();
  };
  /** A matrix from its parts' bytes: `source` is the form they are in (f32 where quantization is deferred). */
  const matrix = async (
    name: string,
    N: number,
    K: number,
    source: WeightFormat,
    weight: Uint8Array,
    scales?: Uint8Array,
    unit = 1,
  ): Promise<Matrix> => {
    const deferred = source !== format;
    if (deferred && !(source === "f32" && format !== "f32" && quantize)) {
      throw new Error(`LlamaEngine: ${name} arrived as ${source}, which a ${format} engine cannot take`);
    }
    const bytes = rowBytes(format, K);
    const per = blockRows(format, K, N, limit, unit);
    const blocks: Block[] = [];
    for (let row0 = 0; row0 < N; row0 += per) {
      const rows = Math.min(per, N - row0);
      if (deferred) {
        const values = new Float32Array(weight.buffer, weight.byteOffset + row0 * K * 4, rows * K);
        const block = {
          row0,
          rows,
          weight: { buffer: buffer(rows * bytes.weight, name), dtype: "u32", length: rows * bytes.weight / 4 } as const,
          scales: {
            buffer: buffer(rows * bytes.scales, `${name}.scales`),
            dtype: "f32",
            length: rows * bytes.scales / 4,
          } as const,
        };
        await quantize!(values, rows, K, block.weight.buffer, block.scales.buffer);
        blocks.push(block);
        continue;
      }
      blocks.push({
        row0,
        rows,
        weight: upload(weight.subarray(row0 * bytes.weight, (row0 + rows) * bytes.weight), name, words),
        scales: scales
          ? upload(scales.subarray(row0 * bytes.scales, (row0 + rows) * bytes.scales), `${name}.scales`)
          : undefined,
      });
    }
    return { name, N, K, blocks };
  };
  const pending = new Map<string, LoadedWeight>();
  /** Q/K/V rows concatenated, or (`pairs`) gate and up rows interleaved. */
  const fuse = async (names: string[], fusedName: string, pairs = false): Promise<Matrix | undefined> => {
    const parts = names.map((n) => pending.get(n));
    if (parts.some((p) => !p)) return undefined;
    const ws = parts as LoadedWeight[];
    const N = ws.reduce((s, w) => s + w.spec.shape[0], 0);
    const K = ws[0].spec.shape[1];
    const source = ws[0].format;
    const bytes = rowBytes(source, K);
    const join = (part: number, rowBytes: number) =>
      pairs
        ? interleaveRows(ws[0].parts[part].data, ws[1].parts[part].data, ws[0].spec.shape[0], rowBytes)
        : concatBytes(ws.map((w) => w.parts[part].data));
    const m = await matrix(
      fusedName,
      N,
      K,
      source,
      join(0, bytes.weight),
      ws[0].parts[1] ? join(1, bytes.scales) : undefined,
      pairs ? 2 : 1,
    );
    names.forEach((n) => pending.delete(n));
    return m;
  };
  const layers: Partial<LayerWeights>[] = Array.from({ length: config.numHiddenLayers }, () => ({}));
  let embedding: Matrix | undefined;
  let head: Matrix | undefined;
  let finalNorm: GpuTensor | undefined;
  for await (const w of weights) {
    const { name, role, shape } = w.spec;
    const layerMatch = /^model\.layers\.(\d+)\./.exec(name);
    const layer = layerMatch ? layers[Number(layerMatch[1])] : undefined;
    const p = layerMatch ? `model.layers.${layerMatch[1]}` : "";
    const single = () => matrix(name, shape[0], shape[1], w.format, w.parts[0].data, w.parts[1]?.data);
    if (role === "embedding") embedding = await single();
    else if (role === "head") head = await single();
    else if (role === "norm") {
      const buf = upload(w.parts[0].data, name);
      if (!layer) finalNorm = buf;
      else if (name.endsWith("input_layernorm.weight")) layer.inputNorm = buf;
      else layer.postNorm = buf;
    } else if (role === "o") layer!.o = await single();
    else if (role === "down") layer!.down = await single();
    else {
      pending.set(name, w);
      if (role === "q" || role === "k" || role === "v") {
        const names = ["q_proj", "k_proj", "v_proj"].map((s) => `${p}.self_attn.${s}.weight`);
        layer!.qkv ??= await fuse(names, `${p}.self_attn.qkv`);
      } else {
        const names = ["gate_proj", "up_proj"].map((s) => `${p}.mlp.${s}.weight`);
        layer!.gateUp ??= await fuse(names, `${p}.mlp.gate_up`, true);
      }
    }
    await flush();
  }
  await flush(true);
  if (config.tieWordEmbeddings) head = embedding;
  for (const [i, l] of layers.entries()) {
    for (const key of ["inputNorm", "postNorm", "qkv", "o", "gateUp", "down"] as const) {
      if (!l[key]) throw new Error(`LlamaEngine: layer ${i} is missing its ${key} weight`);
    }
  }
  if (!embedding || !head || !finalNorm) {
    throw new Error("LlamaEngine: the embedding, the head or the final norm is missing");
  }
  return { embedding, head, finalNorm, layers: layers as LayerWeights[] };
}

/**
 * Bytes of resident weights, each buffer once (a tied head is the embedding).
 *
 * @param w the weights
 * @returns bytes
 */
export function weightBytes(w: ResidentWeights): number {
  const buffers = new Set<GPUBuffer>([w.finalNorm.buffer]);
  for (const m of [w.embedding, w.head, ...w.layers.flatMap((l) => [l.qkv, l.o, l.gateUp, l.down])]) {
    for (const b of m.blocks) [b.weight, b.scales].forEach((x) => x && buffers.add(x.buffer));
  }
  for (const l of w.layers) [l.inputNorm, l.postNorm].forEach((x) => buffers.add(x.buffer));
  return [...buffers].reduce((s, b) => s + b.size, 0);
}
