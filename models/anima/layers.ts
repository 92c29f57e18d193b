/**
 * The layers Anima is made of, each a few ops/ plans appended to a {@link Graph}: linear (with
 * bias), norms, activations, residual adds, the adaLN modulation, permutes, and attention on
 * token-major tensors. Where an op gains a fused form (a Linear-layout matmul with epilogues, a
 * modulated layernorm, token-major attention), the change is local to the function here.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { activationPlan } from "../../ops/activation/mod.ts";
import type { ActivationKind } from "../../ops/activation/reference.ts";
import { axpyInplacePlan } from "../../ops/axpy/mod.ts";
import { elementwisePlan, elementwiseRowsPlan } from "../../ops/elementwise/mod.ts";
import { flashAttentionPlan } from "../../ops/flash_attention/mod.ts";
import { gatherPlan } from "../../ops/gather/mod.ts";
import { layernormPlan } from "../../ops/layernorm/mod.ts";
import { permutePlan } from "../../ops/permute/mod.ts";
import { rmsnormPlan } from "../../ops/rmsnorm/mod.ts";
import { ropeAxesPlan, type RopeAxesShape, validateRopeAxesShape } from "../../ops/rope/mod.ts";
import { type Linear, linearDispatch, type LinearEpilogue, type LinearFormat, uploadLinear } from "../linear.ts";
import type { Graph } from "./graph.ts";

/** Which part of a stored `[N, K]` weight a layer takes. */
export interface LinearSlice {
  /** Output rows [start, end) (e.g. one of the chunks of a fused modulation). */
  rows?: [number, number];
  /** Input columns [start, end) (e.g. all but the padding-mask channel's). */
  cols?: [number, number];
}

/**
 * Reads a Linear weight (and its bias, if `bias` is given) from a store and uploads it
 * (models/linear.ts; a quantized format is made on the GPU while loading).
 *
 * @param gpu the device
 * @param store the checkpoint view
 * @param name the weight's name
 * @param format the weight's format on the GPU
 * @param slice the part of the weight to take
 * @param bias the bias's name, if the layer has one
 * @returns the layer
 */
export async function loadLinear(
  gpu: ResidentDevice,
  store: TensorStore,
  name: string,
  format: LinearFormat,
  slice: LinearSlice = {},
  bias?: string,
): Promise<Linear> {
  const [rows, cols] = store.info(name).shape;
  const full = await store.readFloat32(name);
  const [r0, r1] = slice.rows ?? [0, rows];
  const [c0, c1] = slice.cols ?? [0, cols];
  const N = r1 - r0, K = c1 - c0;
  const w = r0 === 0 && r1 === rows && c0 === 0 && c1 === cols ? full : new Float32Array(N * K);
  if (w !== full) {
    for (let n = 0; n < N; n++) {
      w.set(full.subarray((r0 + n) * cols + c0, (r0 + n) * cols + c1), n * K);
    }
  }
  const b = bias === undefined ? undefined : (await store.readFloat32(bias)).slice(r0, r1);
  return await uploadLinear(gpu, w, N, K, { bias: b, label: name, format });
}

/**
 * Uploads a 1-D parameter (a norm's weight).
 *
 * @param gpu the device
 * @param store the checkpoint view
 * @param name the tensor's name
 * @returns the tensor
 */
export async function loadVector(gpu: ResidentDevice, store: TensorStore, name: string): Promise<GpuTensor> {
  return gpu.upload(await store.readFloat32(name), name);
}

/** What a {@link linear} does after its product, fused into it. */
export interface GraphLinearEpilogue extends Omit<LinearEpilogue, "accumulate"> {
  /** Adds the result into this `[rows, N]` tensor (a residual stream) instead of a new one. */
  into?: GpuTensor;
}

/**
 * `x W^T + b`, then the epilogue's steps, for `rows` rows of `x` `[rows, K]` (models/linear.ts's
 * dispatch: a GEMV for one row with nothing fused, a GEMM with its epilogue otherwise).
 *
 * @param g the graph
 * @param layer the layer
 * @param x the input
 * @param rows rows of `x`
 * @param epilogue bias (replacing the layer's), activation, gate, accumulation
 * @returns `[rows, N]`: a new tensor, or `epilogue.into`
 */
export function linear(
  g: Graph,
  layer: Linear,
  x: GpuTensor,
  rows: number,
  epilogue: GraphLinearEpilogue = {},
): GpuTensor {
  const { into, ...rest } = epilogue;
  const out = into ?? g.tensor(rows * layer.N);
  const { plan, tensors } = linearDispatch(g.gpu, layer, rows, x, out, { ...rest, accumulate: into !== undefined });
  g.add(plan, tensors);
  return out;
}

/**
 * RMSNorm over the last axis, `x / sqrt(mean(x²) + eps) · weight`.
 *
 * @param g the graph
 * @param x `[rows, cols]`
 * @param rows rows
 * @param cols the normalised axis
 * @param weight `[cols]`, or none
 * @param eps added to the mean square
 * @returns `[rows, cols]`
 */
export function rmsnorm(
  g: Graph,
  x: GpuTensor,
  rows: number,
  cols: number,
  weight: GpuTensor | undefined,
  eps: number,
): GpuTensor {
  const out = g.tensor(rows * cols);
  const plan = rmsnormPlan(g.gpu, { rows, cols, eps, groups: weight ? 1 : 0 });
  g.add(plan, { x, weight: weight ?? g.unused(), out });
  return out;
}

/**
 * The adaLN input of a DiT sub-layer: `LayerNorm(x) · (1 + scale) + shift`, the LayerNorm without
 * affine, one scale and shift for every row (both CFG passes share σ, so their modulation): one
 * dispatch of ops/layernorm's modulated entry point.
 *
 * @param g the graph
 * @param x `[rows, cols]`
 * @param rows rows
 * @param cols width
 * @param scale `[cols]`
 * @param shift `[cols]`
 * @param eps LayerNorm's epsilon
 * @returns `[rows, cols]`
 */
export function modulatedLayernorm(
  g: Graph,
  x: GpuTensor,
  rows: number,
  cols: number,
  scale: GpuTensor,
  shift: GpuTensor,
  eps: number,
): GpuTensor {
  const out = g.tensor(rows * cols);
  const plan = layernormPlan(g.gpu, { rows, cols, eps, modulation: { rowsPerItem: rows, shift: true } });
  g.add(plan, { x, weight: g.unused(), bias: g.unused(), scale, shift, out });
  return out;
}

/**
 * `a · b` with `b` `[cols]` broadcast over the rows of `a`.
 *
 * @returns `[rows, cols]`
 */
export function mulRows(g: Graph, a: GpuTensor, b: GpuTensor, rows: number, cols: number): GpuTensor {
  const out = g.tensor(rows * cols);
  g.add(elementwiseRowsPlan(g.gpu, { op: "multiply", rows, cols }), { a, b, out });
  return out;
}

/**
 * `a + b` with `b` `[cols]` broadcast over the rows of `a`.
 *
 * @returns `[rows, cols]`
 */
export function addRows(g: Graph, a: GpuTensor, b: GpuTensor, rows: number, cols: number): GpuTensor {
  const out = g.tensor(rows * cols);
  g.add(elementwiseRowsPlan(g.gpu, { op: "add", rows, cols }), { a, b, out });
  return out;
}

/**
 * `a + b`, elementwise.
 *
 * @returns `[n]`
 */
export function add(g: Graph, a: GpuTensor, b: GpuTensor, n: number): GpuTensor {
  const out = g.tensor(n);
  g.add(elementwisePlan(g.gpu, { op: "add", n }), { a, b, out });
  return out;
}

/**
 * `y += x` in place (a residual add).
 *
 * @param g the graph
 * @param y the accumulator, `[n]`
 * @param x what is added, `[n]`
 * @param n elements
 */
export function addInPlace(g: Graph, y: GpuTensor, x: GpuTensor, n: number): void {
  g.add(axpyInplacePlan(g.gpu, { alpha: 1, n }), { x, y });
}

/**
 * An activation, elementwise.
 *
 * @returns `[n]`
 */
export function activation(g: Graph, kind: ActivationKind, x: GpuTensor, n: number): GpuTensor {
  const out = g.tensor(n);
  g.add(activationPlan(g.gpu, { kind, n }), { x, out });
  return out;
}

/**
 * `x.permute(dims)` of a row-major `x` of `shape`.
 *
 * @returns the permuted tensor
 */
export function permute(g: Graph, x: GpuTensor, shape: readonly number[], dims: readonly number[]): GpuTensor {
  const out = g.tensor(shape.reduce((p, d) => p * d, 1));
  g.add(permutePlan(g.gpu, { shape, dims }), { x, out });
  return out;
}

/**
 * Rows `index` of `table` `[rows, cols]`; an index outside the table gives zeros.
 *
 * @returns `[index.length, cols]`
 */
export function gather(g: Graph, table: GpuTensor, index: GpuTensor, rows: number, cols: number): GpuTensor {
  const out = g.tensor(index.length * cols);
  g.add(gatherPlan(g.gpu, { rows, cols, indexLength: index.length }), { table, index, out });
  return out;
}

/** The constant tables of a ropeAxes shape (each pair's axis and inverse frequency), uploaded. */
export interface RopeTables {
  /** The shape, `tokens` excepted. */
  shape: Omit<RopeAxesShape, "tokens">;
  /** `[headDim / 2]` u32. */
  pairAxis: GpuTensor;
  /** `[headDim / 2]` f32. */
  invFreq: GpuTensor;
}

/**
 * Uploads the per-pair tables of a rotary embedding (once per model).
 *
 * @param gpu the device
 * @param shape heads, head size, axis split, bases and pairing
 * @returns the tables
 */
export function ropeTables(gpu: ResidentDevice, shape: Omit<RopeAxesShape, "tokens">): RopeTables {
  const pairs = validateRopeAxesShape({ ...shape, tokens: 1 });
  return { shape, pairAxis: gpu.upload(pairs.axis, "rope axis"), invFreq: gpu.upload(pairs.invFreq, "rope invFreq") };
}

/**
 * Rotates `x` `[tokens, heads, headDim]` by its tokens' positions.
 *
 * @param g the graph
 * @param x the input
 * @param tokens tokens
 * @param positions `[tokens, axes]` i32
 * @param tables from {@link ropeTables}
 * @returns `[tokens, heads, headDim]`
 */
export function rope(g: Graph, x: GpuTensor, tokens: number, positions: GpuTensor, tables: RopeTables): GpuTensor {
  const out = g.tensor(x.length);
  g.add(ropeAxesPlan(g.gpu, { ...tables.shape, tokens }), {
    x,
    positions,
    pairAxis: tables.pairAxis,
    invFreq: tables.invFreq,
    out,
  });
  return out;
}

/** Sizes of {@link attention}. */
export interface AttentionSizes {
  /** Batch. */
  B: number;
  /** Heads. */
  H: number;
  /** Query rows per batch item. */
  L: number;
  /** Keys per batch item. */
  S: number;
  /** Channels per head. */
  D: number;
}

/**
 * Non-causal SDPA (scale 1/√D) on token-major tensors, flash_attention's `BLHD` layout (no
 * permutes): q `[B, L, H, D]`, k and v `[B, S, H, D]`, output `[B, L, H, D]`, with an optional
 * additive key mask `[B, 1, 1, S]` (`-Infinity` hides a key; a row with every key hidden gives
 * zeros, as torch 2.11).
 *
 * @param g the graph
 * @param q queries
 * @param k keys
 * @param v values
 * @param s the sizes
 * @param mask the key mask, if any
 * @returns the output, token-major
 */
export function attention(
  g: Graph,
  q: GpuTensor,
  k: GpuTensor,
  v: GpuTensor,
  s: AttentionSizes,
  mask?: GpuTensor,
): GpuTensor {
  const { B, H, L, S, D } = s;
  const out = g.tensor(B * L * H * D);
  const plan = flashAttentionPlan(g.gpu, {
    B,
    H,
    L,
    S,
    D,
    layout: "BLHD",
    ...(mask ? { maskShape: [B, 1, 1, S] as const } : {}),
  });
  g.add(plan, { q, k, v, mask: mask ?? g.unused(1), out });
  return out;
}
