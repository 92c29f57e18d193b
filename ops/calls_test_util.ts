/**
 * A valid call of every op's reference, `*Gpu` entry point and plan, with a few bad values of each, in one
 * table: `ops/validate.test.ts` holds the three to one validation with it, and `ops/battery.test.ts`
 * bends every field of it. A test helper (not published).
 *
 * @module
 */
import type { ResidentDevice } from "../harness/device.ts";
import { ok } from "node:assert/strict";
import * as ops from "../mod.ts";
import { OPS } from "./registry.ts";

const f32 = (n: number) => new Float32Array(n);
const i32 = (n: number) => new Int32Array(n);
const u32 = (n: number) => new Uint32Array(n);

/** Loosely typed, so that the table can hand each entry point what a careless caller would. */
export type AnyArgs = Record<string, unknown>;
// deno-lint-ignore no-explicit-any
export type Loose = (...args: any[]) => unknown;

/** One valid call of an op's three entry points. */
export interface OpCase {
  /** The name every message of the op starts with. */
  op: string;
  reference: Loose;
  gpu: Loose;
  /** The plan, or a function returning the first of the plans it makes; absent for an op without one. */
  plan?: Loose;
  /** Valid arguments of the reference and the `*Gpu` call. */
  args: AnyArgs;
  /** The keys its options take beside `override`, in the order its message lists them. */
  optionKeys?: string[];
  /** Fields of `args` that may be left out. */
  optional?: string[];
  /** The valid shape of the plan for the same call. */
  shape: AnyArgs;
  /** A field of both, a bad value for it, and the argument the message must name. */
  bad: [field: string, value: unknown, named: string][];
}

/** Every op's entry points with a valid call each (melSpectrogram has no plan). */
export const CASES: readonly OpCase[] = [
  {
    op: "softmax",
    reference: ops.softmax,
    gpu: ops.softmaxGpu,
    plan: ops.softmaxPlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", 2.5, "cols"], ["rows", 2 ** 32, "rows"]],
  },
  {
    op: "rmsnorm",
    reference: ops.rmsnorm,
    gpu: ops.rmsnormGpu,
    plan: ops.rmsnormPlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [
      ["rows", 0, "rows"],
      ["cols", -1, "cols"],
      ["eps", 1e39, "eps"],
      ["eps", -1, "eps"],
      ["modulation", { rowsPerItem: 0 }, "modulation.rowsPerItem"],
      ["modulation", { rowsPerItem: 4 }, "modulation.rowsPerItem"],
    ],
  },
  {
    op: "layernorm",
    reference: ops.layernorm,
    gpu: ops.layernormGpu,
    plan: ops.layernormPlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [
      ["rows", 0, "rows"],
      ["cols", NaN, "cols"],
      ["eps", 1e39, "eps"],
      ["eps", Infinity, "eps"],
      ["modulation", { rowsPerItem: 1.5 }, "modulation.rowsPerItem"],
      ["modulation", null, "modulation"],
    ],
  },
  {
    op: "quantize",
    reference: ops.quantize,
    gpu: ops.quantizeGpu,
    plan: ops.quantizePlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", 0, "cols"]],
  },
  {
    op: "quantize",
    reference: ops.quantizePacked,
    gpu: ops.quantizePackedGpu,
    plan: ops.quantizePackedPlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", 0, "cols"]],
  },
  {
    op: "quantize",
    reference: ops.quantizePackedQ4,
    gpu: ops.quantizePackedQ4Gpu,
    plan: ops.quantizePackedQ4Plan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", 0, "cols"], ["rows", 2.5, "rows"]],
  },
  {
    op: "elementwise",
    reference: ops.elementwise,
    gpu: ops.elementwiseGpu,
    plan: ops.elementwisePlan,
    args: { op: "add", a: f32(4), b: f32(4) },
    shape: { op: "add", n: 4 },
    bad: [["op", "subtract", "op"]],
  },
  {
    op: "elementwiseRows",
    reference: ops.elementwiseRows,
    gpu: ops.elementwiseRowsGpu,
    plan: ops.elementwiseRowsPlan,
    args: { op: "add", a: f32(6), b: f32(3), rows: 2, cols: 3 },
    shape: { op: "add", rows: 2, cols: 3 },
    bad: [["rows", 0, "rows"], ["cols", 0, "cols"], ["op", "divide", "op"]],
  },
  {
    op: "gather",
    reference: ops.gather,
    gpu: ops.gatherGpu,
    plan: ops.gatherPlan,
    args: { table: f32(6), index: i32(2), rows: 3, cols: 2 },
    shape: { rows: 3, cols: 2, indexLength: 2 },
    bad: [["rows", 0, "rows"], ["rows", 2 ** 31, "rows"], ["cols", 0, "cols"]],
  },
  {
    op: "scatter",
    reference: ops.scatter,
    gpu: ops.scatterGpu,
    plan: ops.scatterPlan,
    args: { src: f32(4), index: i32(4), rows: 2, indexCols: 2, cols: 3 },
    shape: { rows: 2, indexCols: 2, cols: 3 },
    bad: [["rows", -1, "rows"], ["indexCols", 1.5, "indexCols"], ["cols", 0, "cols"]],
  },
  {
    op: "indexCopy",
    reference: ops.indexCopy,
    gpu: ops.indexCopyGpu,
    plan: ops.indexCopyPlan,
    args: { out: f32(6), src: f32(4), index: new Int32Array([2, 0]), outer: 1, rows: 3, cols: 2 },
    shape: { outer: 1, rows: 3, cols: 2, indexLength: 2 },
    bad: [["outer", 0, "outer"], ["rows", 2 ** 31, "rows"], ["cols", 1.5, "cols"]],
  },
  {
    op: "reduce",
    reference: ops.reduce,
    gpu: ops.reduceGpu,
    plan: ops.reducePlan,
    args: { op: "sum", x: f32(6), shape: [2, 3], dim: 1 },
    shape: { op: "sum", shape: [2, 3], dim: 1 },
    bad: [["dim", 2, "dim"], ["shape", [2, -3], "shape[1]"], ["op", "prod", "op"]],
  },
  {
    op: "transpose",
    reference: ops.transpose,
    gpu: ops.transposeGpu,
    plan: ops.transposePlan,
    args: { x: f32(6), rows: 2, cols: 3 },
    shape: { rows: 2, cols: 3 },
    bad: [["rows", -1, "rows"], ["cols", 0.5, "cols"]],
  },
  {
    op: "permute",
    reference: ops.permute,
    gpu: ops.permuteGpu,
    plan: ops.permutePlan,
    args: { x: f32(6), shape: [2, 3], dims: [1, 0] },
    shape: { shape: [2, 3], dims: [1, 0] },
    bad: [["dims", [0, 0], "dims"], ["dims", [0, 2], "dims[1]"], ["shape", [2, 3, 1, 1, 1, 1, 1], "shape"]],
  },
  {
    op: "axpy",
    reference: ops.axpy,
    gpu: ops.axpyGpu,
    plan: ops.axpyPlan,
    args: { alpha: 2, x: f32(3), y: f32(3) },
    shape: { alpha: 2, n: 3 },
    bad: [["alpha", 1e39, "alpha"], ["alpha", NaN, "alpha"]],
  },
  {
    op: "axpy",
    reference: ops.axpy,
    gpu: ops.axpyInplaceGpu,
    plan: ops.axpyInplacePlan,
    args: { alpha: 2, x: f32(3), y: f32(3) },
    shape: { alpha: 2, n: 3 },
    bad: [["alpha", -1e39, "alpha"]],
  },
  {
    op: "activation",
    reference: ops.activation,
    gpu: ops.activationGpu,
    plan: ops.activationPlan,
    args: { kind: "elu", x: f32(3), alpha: 1 },
    optional: ["alpha"],
    shape: { kind: "elu", n: 3, alpha: 1 },
    bad: [["kind", "swish", "kind"], ["alpha", 1e39, "alpha"]],
  },
  {
    op: "gatedActivation",
    reference: ops.gatedActivation,
    gpu: ops.gatedActivationGpu,
    plan: ops.gatedActivationPlan,
    args: { kind: "swiglu", gate: f32(3), up: f32(3) },
    shape: { kind: "swiglu", n: 3 },
    bad: [["kind", "reglu", "kind"]],
  },
  {
    op: "dequantize",
    reference: ops.dequantize,
    gpu: ops.dequantizeGpu,
    plan: ops.dequantizePlan,
    args: { acc: i32(6), aScales: f32(2), wScales: f32(3), M: 2, N: 3 },
    shape: { M: 2, N: 3 },
    bad: [["M", 0, "M"], ["N", 2 ** 32, "N"]],
  },
  {
    op: "dequantTranspose",
    reference: ops.dequantTranspose,
    gpu: ops.dequantTransposeGpu,
    plan: ops.dequantTransposePlan,
    args: { weight: u32(2), scales: f32(2), N: 2, K: 4 },
    shape: { N: 2, K: 4 },
    bad: [["N", 0, "N"], ["K", -4, "K"]],
  },
  {
    op: "matvec",
    reference: ops.matvec,
    gpu: ops.matvecGpu,
    plan: ops.matvecPlan,
    args: { weight: f32(6), x: f32(3), N: 2, K: 3 },
    shape: { N: 2, K: 3 },
    bad: [["N", 0, "N"], ["K", 0, "K"]],
  },
  {
    op: "matvecQ8",
    reference: ops.matvecQ8,
    gpu: ops.matvecQ8Gpu,
    plan: ops.matvecQ8Plan,
    args: { weight: u32(2), scales: f32(2), x: f32(3), N: 2, K: 3 },
    shape: { N: 2, K: 3 },
    bad: [["N", 0, "N"], ["K", 1.5, "K"]],
  },
  {
    op: "matvecQ4G128",
    reference: ops.matvecQ4G128,
    gpu: ops.matvecQ4G128Gpu,
    plan: ops.matvecQ4G128Plan,
    args: { weight: u32(2), scales: f32(2), x: f32(3), N: 2, K: 3 },
    shape: { N: 2, K: 3 },
    bad: [["N", -2, "N"], ["K", 0, "K"]],
  },
  {
    op: "matmul",
    reference: ops.matmul,
    gpu: ops.matmulGpu,
    plan: ops.matmulPlan,
    args: { a: f32(6), b: f32(6), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [
      ["M", 0, "M"],
      ["N", 0, "N"],
      ["K", 0, "K"],
      ["activation", "relu", "activation"],
      ["gateRows", 3, "gateRows"],
      ["accumulate", 1, "accumulate"],
    ],
  },
  {
    op: "matmulLinear",
    reference: ops.matmulLinear,
    gpu: ops.matmulLinearGpu,
    plan: ops.matmulLinearPlan,
    args: { a: f32(6), weight: f32(6), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["M", 0, "M"], ["K", 1.5, "K"], ["activation", "gelu_erf", "activation"], ["gateRows", 0, "gateRows"]],
  },
  {
    op: "matmulQ8",
    reference: ops.matmulQ8,
    gpu: ops.matmulQ8Gpu,
    plan: ops.matmulQ8Plan,
    args: { a: f32(6), weight: u32(2), scales: f32(2), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["M", 0, "M"], ["K", 2 ** 32, "K"], ["gateRows", 4, "gateRows"]],
  },
  {
    op: "matmulQ4G128",
    reference: ops.matmulQ4G128,
    gpu: ops.matmulQ4G128Gpu,
    plan: ops.matmulQ4G128Plan,
    args: { a: f32(6), weight: u32(2), scales: f32(2), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["N", 0, "N"], ["activation", "tanh", "activation"]],
  },
  {
    op: "matmulQ8Dp4a",
    reference: ops.matmulQ8Dp4a,
    gpu: ops.matmulQ8Dp4aGpu,
    plan: ops.matmulQ8Dp4aPlan,
    args: { a: u32(2), aScales: f32(2), weight: u32(2), scales: f32(2), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["M", 0, "M"], ["K", 2 ** 17, "K"], ["gateRows", 4, "gateRows"]],
  },
  {
    op: "matmulQ4G128Dp4a",
    reference: ops.matmulQ4G128Dp4a,
    gpu: ops.matmulQ4G128Dp4aGpu,
    plan: ops.matmulQ4G128Dp4aPlan,
    args: { a: u32(2), aScales: f32(2), weight: u32(2), scales: f32(2), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["N", 0, "N"], ["activation", "relu", "activation"]],
  },
  {
    op: "matmulF16",
    reference: ops.matmulF16,
    gpu: ops.matmulF16Gpu,
    plan: ops.matmulF16Plan,
    args: { a: u32(3), b: u32(3), M: 2, N: 2, K: 3 },
    shape: { M: 2, N: 2, K: 3 },
    bad: [["M", 0, "M"], ["K", NaN, "K"], ["activation", "gelu", "activation"]],
  },
  {
    op: "attention",
    reference: ops.attention,
    gpu: ops.attentionGpu,
    plan: (gpu: ResidentDevice, shape: ops.AttentionShape) => ops.attentionPlan(gpu, shape).scores,
    args: { q: f32(8), k: f32(12), v: f32(12), B: 1, H: 1, L: 2, S: 3, D: 4 },
    shape: { B: 1, H: 1, L: 2, S: 3, D: 4 },
    bad: [["B", 0, "B"], ["D", 2 ** 32, "D"], ["scale", 1e39, "scale"], ["queryOffset", 2 ** 31, "queryOffset"]],
  },
  {
    op: "flashAttention",
    reference: ops.flashAttention,
    gpu: ops.flashAttentionGpu,
    plan: ops.flashAttentionPlan,
    args: { q: f32(8), k: f32(12), v: f32(12), B: 1, H: 1, L: 2, S: 3, D: 4 },
    shape: { B: 1, H: 1, L: 2, S: 3, D: 4 },
    bad: [["D", 6, "D"], ["H", 0, "H"], ["scale", 1e39, "scale"], ["causal", 1, "causal"]],
  },
  {
    op: "gqa",
    reference: ops.gqa,
    gpu: ops.gqaGpu,
    plan: (gpu: ResidentDevice, shape: ops.GqaShape, options?: ops.GqaOptions) =>
      ops.gqaPlan(gpu, shape, options).steps[0],
    optionKeys: ["path"],
    args: { q: f32(16), k: f32(12), v: f32(12), B: 1, H: 2, kvHeads: 1, L: 2, S: 3, D: 4 },
    shape: { B: 1, H: 2, kvHeads: 1, L: 2, S: 3, D: 4 },
    bad: [["kvHeads", 3, "kvHeads"], ["kvHeads", 0, "kvHeads"], ["scale", -1e39, "scale"], ["Dv", 2, "Dv"]],
  },
  {
    op: "rope",
    reference: ops.rope,
    gpu: ops.ropeGpu,
    plan: ops.ropePlan,
    args: { x: f32(16), tokens: 2, heads: 2, headDim: 4 },
    shape: { tokens: 2, heads: 2, headDim: 4 },
    bad: [
      ["headDim", 3, "headDim"],
      ["offset", 1e39, "offset"],
      ["theta", 1e39, "theta"],
      ["tokens", 2 ** 32, "tokens"],
      ["headCount", 3, "headCount"],
    ],
  },
  {
    op: "ropeAxes",
    reference: ops.ropeAxes,
    gpu: ops.ropeAxesGpu,
    plan: ops.ropeAxesPlan,
    args: { x: f32(8), positions: i32(4), tokens: 2, heads: 1, headDim: 4, axesDims: [2, 2], theta: 10000 },
    shape: { tokens: 2, heads: 1, headDim: 4, axesDims: [2, 2], theta: 10000 },
    bad: [
      ["axesDims", [2, 4], "axesDims"],
      ["theta", 1e39, "theta[0]"],
      ["pairing", "rotate", "pairing"],
      ["heads", 2 ** 32, "heads"],
    ],
  },
  {
    op: "alibi",
    reference: ops.alibi,
    gpu: ops.alibiGpu,
    plan: ops.alibiPlan,
    args: { H: 2, L: 2, S: 3 },
    shape: { H: 2, L: 2, S: 3 },
    bad: [["H", 0, "H"], ["H", 2 ** 32, "H"], ["L", 2 ** 25, "L"], [
      "queryOffset",
      2 ** 31,
      "queryOffset",
    ]],
  },
  {
    op: "pope",
    reference: ops.pope,
    gpu: ops.popeGpu,
    plan: ops.popePlan,
    args: { S: 2, D: 4, posOffset: 1 },
    shape: { S: 2, D: 4, posOffset: 1 },
    bad: [["S", 0, "S"], ["D", 2 ** 32, "D"], ["posOffset", -1, "posOffset"]],
  },
  {
    op: "moeRouter",
    reference: ops.moeRouter,
    gpu: ops.moeRouterGpu,
    plan: ops.moeRouterPlan,
    args: { logits: f32(8), T: 2, E: 4, k: 2, normTopkProb: true },
    shape: { T: 2, E: 4, k: 2, normTopkProb: true },
    bad: [["k", 5, "k"], ["T", 2 ** 32, "T"], ["normTopkProb", 1, "normTopkProb"]],
  },
  {
    op: "moeDispatch",
    reference: ops.moeDispatch,
    gpu: ops.moeDispatchGpu,
    plan: ops.moeDispatchPlan,
    args: { experts: i32(4), T: 2, E: 4, k: 2, capacity: 1 },
    shape: { T: 2, E: 4, k: 2, capacity: 1 },
    bad: [["capacity", 0, "capacity"], ["E", 2 ** 31, "E"], ["k", 1.5, "k"]],
  },
  {
    op: "moeGather",
    reference: ops.moeGather,
    gpu: ops.moeGatherGpu,
    plan: ops.moeGatherPlan,
    args: { y: f32(6), tokenSlot: i32(4), gates: f32(4), T: 2, k: 2, slots: 3, D: 2 },
    shape: { T: 2, k: 2, slots: 3, D: 2 },
    bad: [["slots", 0, "slots"], ["D", 2 ** 32, "D"]],
  },
  {
    op: "ctcDecode",
    reference: ops.ctcDecode,
    gpu: ops.ctcDecodeGpu,
    plan: ops.ctcDecodePlan,
    args: { logits: f32(24), B: 2, T: 3, C: 4 },
    shape: { B: 2, T: 3, C: 4 },
    bad: [["blank", 4, "blank"], ["C", 0, "C"], ["B", 2 ** 32, "B"], ["T", 2 ** 31, "T"]],
  },
  {
    op: "stft",
    reference: ops.stft,
    gpu: ops.stftGpu,
    plan: ops.stftPlan,
    args: { x: f32(32), batch: 2, length: 16, nFft: 8, hopLength: 4 },
    shape: { batch: 2, length: 16, nFft: 8, hopLength: 4 },
    bad: [["nFft", 1, "nFft"], ["hopLength", 0, "hopLength"], ["length", 4, "length"], ["batch", 2 ** 32, "batch"]],
  },
  {
    op: "stft",
    reference: ops.stft,
    gpu: ops.stftGpu,
    plan: ops.stftFftPlan,
    args: { x: f32(32), batch: 2, length: 16, nFft: 8, hopLength: 4 },
    shape: { batch: 2, length: 16, nFft: 8, hopLength: 4 },
    bad: [["nFft", 1, "nFft"], ["hopLength", 0, "hopLength"], ["length", 4, "length"], ["batch", 2 ** 32, "batch"]],
  },
  {
    op: "istft",
    reference: ops.istft,
    gpu: ops.istftGpu,
    plan: ops.istftPlan,
    args: { x: f32(30), batch: 1, frames: 3, nFft: 8, hopLength: 4 },
    shape: { batch: 1, frames: 3, nFft: 8, hopLength: 4 },
    bad: [["padding", "valid", "padding"], ["length", 1000, "length"], ["frames", 0, "frames"]],
  },
  {
    op: "powerSpectrum",
    reference: ops.powerSpectrum,
    gpu: ops.powerSpectrumGpu,
    plan: ops.powerSpectrumPlan,
    args: { x: f32(12), rows: 2, bins: 3 },
    shape: { rows: 2, bins: 3 },
    bad: [["rows", 0, "rows"], ["bins", 2 ** 32, "bins"]],
  },
  {
    op: "mel",
    reference: ops.mel,
    gpu: ops.melGpu,
    plan: ops.melPlan,
    args: { x: f32(6), filterbank: f32(6), rows: 2, nFreqs: 3, nMels: 2 },
    shape: { rows: 2, nFreqs: 3, nMels: 2 },
    bad: [["nMels", 0, "nMels"], ["db", 1, "db"], ["rows", 2 ** 32, "rows"]],
  },
  {
    op: "melSpectrogram",
    reference: ops.melSpectrogram,
    gpu: ops.melSpectrogramGpu,
    args: { x: f32(32), batch: 1, length: 32, nFft: 8, hopLength: 4, nMels: 2, sampleRate: 16000 },
    shape: {},
    bad: [["nFft", 1, "nFft"], ["sampleRate", 1e39, "sampleRate"], ["nMels", 0, "nMels"], [
      "hopLength",
      2 ** 25,
      "hopLength",
    ]],
  },
  {
    op: "pad",
    reference: ops.pad,
    gpu: ops.padGpu,
    plan: ops.padPlan,
    args: { x: f32(6), outer: 2, size: 3, inner: 1, before: 1, after: 1 },
    shape: { outer: 2, size: 3, inner: 1, before: 1, after: 1 },
    bad: [["mode", "circular", "mode"], ["value", 1e39, "value"], ["before", 2 ** 32, "before"]],
  },
  {
    op: "nearestUpsample2d",
    reference: ops.nearestUpsample2d,
    gpu: ops.nearestUpsample2dGpu,
    plan: ops.nearestUpsample2dPlan,
    args: { x: f32(4), N: 1, C: 1, H: 2, W: 2, outH: 4, outW: 4 },
    shape: { N: 1, C: 1, H: 2, W: 2, outH: 4, outW: 4 },
    bad: [["outH", 1, "outH"], ["N", 0, "N"], ["C", 2 ** 32, "C"]],
  },
  {
    op: "conv1d",
    reference: ops.conv1d,
    gpu: ops.conv1dGpu,
    plan: ops.conv1dPlan,
    args: { x: f32(10), weight: f32(18), N: 1, Cin: 2, Cout: 3, L: 5, kernelSize: 3 },
    shape: { N: 1, Cin: 2, Cout: 3, L: 5, kernelSize: 3 },
    bad: [["groups", 2, "groups"], ["stride", 0, "stride"], ["kernelSize", 7, "kernelSize"], ["N", 2 ** 32, "N"]],
  },
  {
    op: "conv2d",
    reference: ops.conv2d,
    gpu: ops.conv2dGpu,
    plan: ops.conv2dPlan,
    args: { x: f32(9), weight: f32(8), N: 1, Cin: 1, Cout: 2, H: 3, W: 3, kernelSize: 2 },
    shape: { N: 1, Cin: 1, Cout: 2, H: 3, W: 3, kernelSize: 2 },
    bad: [["padding", [1], "padding"], ["dilation", [1, 0], "dilation[1]"], ["W", 0, "W"]],
  },
  {
    op: "conv3d",
    reference: ops.conv3d,
    gpu: ops.conv3dGpu,
    plan: ops.conv3dPlan,
    args: { x: f32(8), weight: f32(1), N: 1, Cin: 1, Cout: 1, D: 2, H: 2, W: 2, kernelSize: 1 },
    shape: { N: 1, Cin: 1, Cout: 1, D: 2, H: 2, W: 2, kernelSize: 1 },
    bad: [["D", 0, "D"], ["padding", "same", "padding"], ["stride", 2 ** 31, "stride"]],
  },
  {
    op: "convTranspose1d",
    reference: ops.convTranspose1d,
    gpu: ops.convTranspose1dGpu,
    plan: ops.convTranspose1dPlan,
    args: { x: f32(6), weight: f32(12), N: 1, Cin: 2, Cout: 3, L: 3, kernelSize: 2 },
    shape: { N: 1, Cin: 2, Cout: 3, L: 3, kernelSize: 2 },
    bad: [["outputPadding", 1, "outputPadding"], ["kernelSize", 0, "kernelSize"], ["Cout", 2 ** 32, "Cout"]],
  },
  {
    op: "groupNorm",
    reference: ops.groupNorm,
    gpu: ops.groupNormGpu,
    plan: (gpu: ResidentDevice, shape: ops.GroupNormShape, options?: ops.GroupNormOptions) =>
      ops.groupNormPlan(gpu, shape, options).steps[0],
    optionKeys: ["path", "polls"],
    args: { x: f32(12), N: 1, C: 4, L: 3, groups: 2 },
    shape: { N: 1, C: 4, L: 3, groups: 2 },
    bad: [["groups", 3, "groups"], ["eps", 1e39, "eps"], ["eps", -1, "eps"], ["L", 2 ** 32, "L"]],
  },
  {
    op: "channelNorm",
    reference: ops.channelNorm,
    gpu: ops.channelNormGpu,
    plan: ops.channelNormPlan,
    args: { x: f32(12), N: 1, C: 4, L: 3 },
    shape: { N: 1, C: 4, L: 3 },
    bad: [["C", 0, "C"], ["eps", 1e39, "eps"], ["eps", -1, "eps"], ["activation", "relu", "activation"]],
  },
  {
    op: "snake",
    reference: ops.snake,
    gpu: ops.snakeGpu,
    plan: ops.snakePlan,
    args: { x: f32(6), alpha: f32(2), N: 1, C: 2, L: 3 },
    shape: { N: 1, C: 2, L: 3 },
    bad: [["N", 0, "N"], ["C", 2 ** 32, "C"]],
  },
  {
    op: "snake",
    reference: ops.snakeBeta,
    gpu: ops.snakeBetaGpu,
    plan: ops.snakeBetaPlan,
    args: { x: f32(6), alpha: f32(2), beta: f32(2), N: 1, C: 2, L: 3 },
    shape: { N: 1, C: 2, L: 3 },
    bad: [["L", 0, "L"], ["L", 1.5, "L"]],
  },
  {
    op: "placeColumns",
    reference: ops.placeColumns,
    gpu: ops.placeColumnsGpu,
    plan: ops.placeColumnsPlan,
    args: { x: f32(2), out: f32(6), rows: 2, cols: 1, outCols: 3, col0: 1 },
    shape: { rows: 2, cols: 1, outCols: 3, col0: 1 },
    bad: [["rows", 0, "rows"], ["col0", 3, "outCols"], ["transposed", 1, "transposed"]],
  },
  {
    op: "swigluPairs",
    reference: ops.swigluPairs,
    gpu: ops.swigluPairsGpu,
    plan: ops.swigluPairsPlan,
    args: { x: f32(4), out: f32(3), rows: 1, pairs: 2, outCols: 3, col0: 1 },
    shape: { rows: 1, pairs: 2, outCols: 3, col0: 1 },
    bad: [["pairs", 0, "pairs"], ["col0", 2, "outCols"]],
  },
  {
    op: "rmsnormResidual",
    reference: ops.rmsnormResidual,
    gpu: ops.rmsnormResidualGpu,
    plan: ops.rmsnormResidualPlan,
    args: { x: f32(4), delta: f32(4), weight: f32(2), rows: 2, cols: 2, add: true },
    shape: { rows: 2, cols: 2, add: true },
    bad: [["cols", 8193, "cols"], ["eps", -1, "eps"], ["add", 1, "add"], ["row0", -1, "row0"]],
  },
  {
    op: "gatherQuantized",
    reference: ops.gatherQuantized,
    gpu: ops.gatherQuantizedGpu,
    plan: (gpu: ResidentDevice, shape: AnyArgs, options?: AnyArgs) =>
      // deno-lint-ignore no-explicit-any
      ops.gatherQuantizedBlocksPlan(gpu, shape as any, options).sequence.steps[0].plan,
    args: { format: "q8", table: u32(2), scales: f32(2), index: i32(1), rows: 2, cols: 3 },
    shape: { format: "q8", rows: 2, cols: 3, indexLength: 1 },
    bad: [["rows", 0, "rows"], ["cols", 1.5, "cols"], ["format", "q4", "format"]],
  },
  {
    op: "gqaCache",
    reference: ops.gqaCache,
    gpu: ops.gqaCacheGpu,
    plan: (gpu: ResidentDevice, shape: AnyArgs, options?: AnyArgs) =>
      // deno-lint-ignore no-explicit-any
      ops.gqaCachePrefillPlan(gpu, shape as any, options).write,
    args: {
      H: 2,
      kvHeads: 1,
      D: 4,
      maxSeq: 3,
      L: 2,
      pos0: 0,
      qkv: f32(32),
      table: f32(12),
      keys: f32(12),
      values: f32(12),
    },
    shape: { H: 2, kvHeads: 1, D: 4, maxSeq: 3, L: 2 },
    bad: [["kvHeads", 3, "kvHeads"], ["D", 6, "D"], ["chunk", 0, "chunk"], ["L", 4, "L"]],
  },
  {
    op: "fusedGemv",
    reference: ops.fusedGemv,
    gpu: ops.fusedGemvGpu,
    plan: ops.fusedGemvPlan,
    args: { format: "f32", weight: f32(8), x: f32(4), out: f32(2), N: 2, K: 4, input: "plain", output: "store" },
    shape: { format: "f32", N: 2, K: 4, input: "plain", output: "store" },
    bad: [["N", 0, "N"], ["K", 6, "K"], ["eps", -1, "eps"], ["output", "gelu", "output"], [
      "layoutRows",
      0,
      "layoutRows",
    ]],
  },
  {
    op: "argmaxToken",
    reference: ops.argmaxToken,
    gpu: ops.argmaxTokenGpu,
    plan: ops.argmaxTokenPlan,
    args: { logits: f32(3) },
    shape: { vocab: 3, steps: 1 },
    bad: [],
  },
  {
    op: "sampleToken",
    reference: ops.sampleToken,
    gpu: ops.sampleTokenGpu,
    plan: ops.sampleTokenPlan,
    args: { logits: f32(3), temperature: 1, seed: 0, step: 0 },
    shape: { vocab: 3, steps: 1 },
    bad: [],
  },
  {
    op: "maskLogits",
    reference: ops.maskLogits,
    gpu: ops.maskLogitsGpu,
    plan: ops.maskLogitsPlan,
    args: { logits: f32(3), mask: u32(1) },
    shape: { vocab: 3 },
    bad: [],
  },
];

/** Every exported function of every registered op whose first parameter is the device. */
export async function deviceEntryPoints(): Promise<{ op: string; name: string; fn: Loose }[]> {
  const found: { op: string; name: string; fn: Loose }[] = [];
  for (const { name: op } of OPS) {
    const url = new URL(`./${op}/mod.ts`, import.meta.url);
    const main = await Deno.readTextFile(url);
    const parts = [...main.matchAll(/^export \* from "\.\/(\w+\.ts)";$/gm)].map(([, file]) => new URL(file, url));
    const source = [main, ...await Promise.all(parts.map((part) => Deno.readTextFile(part)))].join("\n");
    const module = await import(url.href) as Record<string, unknown>;
    const pattern = /^export (?:async )?function (\w+)(?:<[^>]*>)?\(\s*gpu: ResidentDevice\b/gm;
    for (const [, name] of source.matchAll(pattern)) {
      const fn = module[name];
      ok(typeof fn === "function", `${op}/mod.ts exports ${name}`);
      found.push({ op, name, fn: fn as Loose });
    }
  }
  return found;
}
