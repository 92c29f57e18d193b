/**
 * The ops the TF.js peer can time: for each, how its arguments read, which TF.js calls compute it,
 * and what its output must be, element by element, computed on the CPU from the same inputs.
 *
 * Each op is the TF.js spelling of the function one of our ops computes:
 *
 * | op | TF.js | our op |
 * | --- | --- | --- |
 * | `add`, `mul` | `tf.add` / `tf.mul`, equal shapes | elementwise |
 * | `addRows`, `mulRows` | `tf.add` / `tf.mul`, `[S, D]` with `[D]` | elementwiseRows |
 * | `axpy` | `tf.add(y, tf.mul(alpha, x))`: two kernels | axpy |
 * | `relu`, `elu`, `tanh`, `sigmoid` | `tf.relu` … (`tf.elu` has alpha 1) | activation (elu, tanh) |
 * | `relu2` | `tf.square(tf.relu(x))`: two kernels | activation relu2 |
 * | `silu` | `tf.mul(x, tf.sigmoid(x))`: two kernels | activation silu |
 * | `softmax` | `tf.softmax`, last axis | softmax |
 * | `sum`, `max`, `min`, `mean` | `tf.sum(x, axis)` … | reduce |
 * | `transpose` | `tf.transpose`, 2D | transpose |
 * | `permute` | `tf.transpose(x, perm)` | permute |
 * | `gather` | `tf.gather(table, indices, 0)` | gather (torch.index_select) |
 * | `scatter` | `tf.scatterND`, which sums colliding updates | scatter (zeros.scatter_add_(1, …)) |
 * | `matMul` | `tf.matMul`, `[M, K] × [K, N]` | matmul |
 * | `matvec` | `tf.matMul`, `[N, K] × [K, 1]` | matvec (torch.mv) |
 *
 * TF.js has no GELU op (4.22), so `gelu` / `gelu_tanh` are absent rather than composed here.
 *
 * `scatter` matches our convention because `tf.scatterND` writes into a fresh zero tensor and
 * accumulates updates whose indices collide (TensorFlow's documented rule, an atomic add in the
 * WebGPU kernel). Our `[N, K]` column indices become `[N·K, 2]` (row, column) pairs, so TF.js reads
 * twice the index bytes; indices are drawn in range, since the two differ on out-of-range ones.
 *
 * Inputs come from the bench's generator ({@link randomInput}); the CPU side of a case is cheap at
 * any size: building it costs one pass over each input, and {@link PeerCase.expect} computes one
 * output element directly from the inputs (a dot product, a row, a reduced line), so checking a
 * sample of a 4096³ matMul or an 8192² softmax takes milliseconds.
 *
 * @module
 */

import { randomInput } from "../bench_case.ts";

/** The TF.js calls the cases use: a structural subset of `@tensorflow/tfjs-core`. */
export interface TfOps {
  tensor(values: Float32Array | Int32Array, shape: number[], dtype: "float32" | "int32"): TfTensor;
  add(a: TfTensor, b: TfTensor): TfTensor;
  mul(a: TfTensor, b: TfTensor): TfTensor;
  relu(x: TfTensor): TfTensor;
  square(x: TfTensor): TfTensor;
  elu(x: TfTensor): TfTensor;
  tanh(x: TfTensor): TfTensor;
  sigmoid(x: TfTensor): TfTensor;
  softmax(x: TfTensor): TfTensor;
  sum(x: TfTensor, axis: number): TfTensor;
  max(x: TfTensor, axis: number): TfTensor;
  min(x: TfTensor, axis: number): TfTensor;
  mean(x: TfTensor, axis: number): TfTensor;
  transpose(x: TfTensor, perm: number[]): TfTensor;
  gather(x: TfTensor, indices: TfTensor, axis: number): TfTensor;
  scatterND(indices: TfTensor, updates: TfTensor, shape: number[]): TfTensor;
  matMul(a: TfTensor, b: TfTensor): TfTensor;
}

/** A TF.js tensor, as far as the peer uses one. */
export interface TfTensor {
  readonly shape: number[];
  data(): Promise<Float32Array | Int32Array | Uint8Array>;
  dispose(): void;
}

/**
 * An op's arguments: an array of dimensions (read per op, see {@link PEER_OPS}) or a record of
 * named sizes, e.g. `{ m: 64, k: 64, n: 64 }` for `matMul`, `{ shape: [4, 8], axis: 0 }` for `sum`.
 */
export type PeerShape = readonly number[] | { readonly [name: string]: number | readonly number[] };

/** One op at one shape: its inputs, the TF.js calls, and the CPU's value of each output element. */
export interface PeerCase {
  /** Host inputs and their shapes, uploaded as TF.js tensors in this order. */
  inputs: { data: Float32Array | Int32Array; shape: number[] }[];
  /** The output's shape. */
  outShape: number[];
  /** The TF.js calls (run inside `tf.tidy`), given the input tensors. */
  run(tf: TfOps, x: TfTensor[]): TfTensor;
  /** Output element `i` computed on the CPU (f64), and the magnitude its error is measured against. */
  expect(i: number): [value: number, magnitude: number];
  /** Allowed error: |got − value| <= atol + rtol · magnitude, with the reason. */
  tol: { atol: number; rtol: number; why: string };
}

const ROUNDED = { atol: 1e-7, rtol: 1e-6, why: "one or two f32 roundings of exact inputs" };
const TRANSCENDENTAL = { atol: 1e-5, rtol: 1e-4, why: "exp / tanh in f32, in TF.js's own formulas" };
const SUMMED = { atol: 1e-6, rtol: 1e-4, why: "f32 accumulation order; magnitude is the sum of |terms|" };
const EXACT = { atol: 0, rtol: 0, why: "max / min select an input" };

/** The ops the peer has, each with how its array form of {@link PeerShape} reads. */
export const PEER_OPS = {
  add: "[...dims]", // or { n }
  mul: "[...dims]",
  addRows: "[S, D]", // or { rows, cols }
  mulRows: "[S, D]",
  axpy: "[...dims]",
  relu: "[...dims]",
  relu2: "[...dims]",
  elu: "[...dims]",
  tanh: "[...dims]",
  sigmoid: "[...dims]",
  silu: "[...dims]",
  softmax: "[...dims] (last axis)", // or { rows, cols }
  sum: "[...dims] (last axis)", // or { shape, axis }
  max: "[...dims] (last axis)",
  min: "[...dims] (last axis)",
  mean: "[...dims] (last axis)",
  transpose: "[R, C]", // or { rows, cols }
  permute: "[...dims] (reversed)", // or { shape, perm }
  gather: "[V, D, N]", // or { rows, cols, indices }: N rows of a [V, D] table
  scatter: "[N, D, K]", // or { rows, cols, k }: K updates into each of N rows of D
  matMul: "[M, K, N]", // or { m, k, n }
  matvec: "[N, K]", // or { n, k }
} as const;

/** An op the peer has. */
export type PeerOp = keyof typeof PEER_OPS;

/**
 * Whether `op` is one the peer has.
 *
 * @param op an op name
 * @returns true for the keys of {@link PEER_OPS}
 */
export function isPeerOp(op: string): op is PeerOp {
  return Object.hasOwn(PEER_OPS, op);
}

/**
 * Builds the case for `op` at `args`, with deterministic inputs.
 *
 * @param op the op
 * @param args its arguments
 * @returns the case
 * @throws Error naming the argument when a size is not a positive integer or the record lacks it
 */
export function peerCase(op: PeerOp, args: PeerShape): PeerCase {
  const where = `tfjs peer ${op}`;
  switch (op) {
    case "add":
    case "mul": {
      const shape = anyDims(args, ["n"], where);
      const [a, b] = [values(size(shape), 1), values(size(shape), 2)];
      const add = op === "add";
      return {
        inputs: [{ data: a, shape }, { data: b, shape }],
        outShape: shape,
        run: (tf, [x, y]) => add ? tf.add(x, y) : tf.mul(x, y),
        expect: (i) => add ? [a[i] + b[i], Math.abs(a[i]) + Math.abs(b[i])] : [a[i] * b[i], Math.abs(a[i] * b[i])],
        tol: ROUNDED,
      };
    }
    case "addRows":
    case "mulRows": {
      const [S, D] = dims(args, ["rows", "cols"], where);
      const [a, b] = [values(S * D, 1), values(D, 2)];
      const add = op === "addRows";
      return {
        inputs: [{ data: a, shape: [S, D] }, { data: b, shape: [D] }],
        outShape: [S, D],
        run: (tf, [x, y]) => add ? tf.add(x, y) : tf.mul(x, y),
        expect: (i) => {
          const [p, q] = [a[i], b[i % D]];
          return add ? [p + q, Math.abs(p) + Math.abs(q)] : [p * q, Math.abs(p * q)];
        },
        tol: ROUNDED,
      };
    }
    case "axpy": {
      const shape = anyDims(args, ["n"], where);
      const [x, y, alpha] = [values(size(shape), 1), values(size(shape), 2), new Float32Array([0.375])];
      return {
        inputs: [{ data: y, shape }, { data: x, shape }, { data: alpha, shape: [] }],
        outShape: shape,
        run: (tf, [ty, tx, ta]) => tf.add(ty, tf.mul(ta, tx)),
        expect: (i) => [y[i] + alpha[0] * x[i], Math.abs(y[i]) + Math.abs(alpha[0] * x[i])],
        tol: ROUNDED,
      };
    }
    case "relu":
    case "relu2":
    case "elu":
    case "tanh":
    case "sigmoid":
    case "silu": {
      const shape = anyDims(args, ["n"], where);
      const x = values(size(shape), 1, 4);
      const f = UNARY[op];
      return {
        inputs: [{ data: x, shape }],
        outShape: shape,
        run: (tf, [t]) => op === "silu" ? tf.mul(t, tf.sigmoid(t)) : op === "relu2" ? tf.square(tf.relu(t)) : tf[op](t),
        expect: (i) => {
          const v = f(x[i]);
          return [v, Math.abs(v)];
        },
        tol: op === "relu" ? EXACT : op === "relu2" ? ROUNDED : TRANSCENDENTAL,
      };
    }
    case "softmax": {
      const shape = anyDims(args, ["rows", "cols"], where);
      const D = shape[shape.length - 1];
      const x = values(size(shape), 1, 8);
      return {
        inputs: [{ data: x, shape }],
        outShape: shape,
        run: (tf, [t]) => tf.softmax(t),
        expect: (i) => {
          const row = i - (i % D);
          let max = -Infinity, sum = 0;
          for (let j = row; j < row + D; j++) max = Math.max(max, x[j]);
          for (let j = row; j < row + D; j++) sum += Math.exp(x[j] - max);
          const v = Math.exp(x[i] - max) / sum;
          return [v, v];
        },
        tol: TRANSCENDENTAL,
      };
    }
    case "sum":
    case "max":
    case "min":
    case "mean": {
      const { shape, axis } = reduction(args, where);
      const x = values(size(shape), 1);
      const R = shape[axis], inner = size(shape.slice(axis + 1));
      return {
        inputs: [{ data: x, shape }],
        outShape: shape.filter((_, j) => j !== axis),
        run: (tf, [t]) => tf[op](t, axis),
        expect: (o) => {
          const base = (o - (o % inner)) * R + (o % inner);
          let acc = op === "max" ? -Infinity : op === "min" ? Infinity : 0, mag = 0;
          for (let r = 0; r < R; r++) {
            const v = x[base + r * inner];
            acc = op === "max" ? Math.max(acc, v) : op === "min" ? Math.min(acc, v) : acc + v;
            mag += Math.abs(v);
          }
          return op === "mean" ? [acc / R, mag / R] : op === "sum" ? [acc, mag] : [acc, Math.abs(acc)];
        },
        tol: op === "max" || op === "min" ? EXACT : SUMMED,
      };
    }
    case "transpose":
    case "permute": {
      const { shape, perm } = op === "transpose"
        ? { shape: dims(args, ["rows", "cols"], where), perm: [1, 0] }
        : permutation(args, where);
      const x = values(size(shape), 1);
      const outShape = perm.map((p) => shape[p]);
      const inStrides = strides(shape);
      return {
        inputs: [{ data: x, shape }],
        outShape,
        run: (tf, [t]) => tf.transpose(t, perm),
        expect: (o) => {
          let src = 0;
          for (let j = outShape.length - 1; j >= 0; j--) {
            src += (o % outShape[j]) * inStrides[perm[j]];
            o = Math.floor(o / outShape[j]);
          }
          return [x[src], Math.abs(x[src])];
        },
        tol: EXACT,
      };
    }
    case "gather": {
      const [V, D, N] = dims(args, ["rows", "cols", "indices"], where);
      const [table, idx] = [values(V * D, 1), indices(N, V, 2)];
      return {
        inputs: [{ data: table, shape: [V, D] }, { data: idx, shape: [N] }],
        outShape: [N, D],
        run: (tf, [t, i]) => tf.gather(t, i, 0),
        expect: (o) => {
          const v = table[idx[Math.floor(o / D)] * D + (o % D)];
          return [v, Math.abs(v)];
        },
        tol: EXACT,
      };
    }
    case "scatter": {
      const [N, D, K] = dims(args, ["rows", "cols", "k"], where);
      const [src, col] = [values(N * K, 1), indices(N * K, D, 2)];
      const pairs = new Int32Array(2 * N * K);
      for (let row = 0, e = 0; row < N; row++) {
        for (let k = 0; k < K; k++, e++) {
          pairs[2 * e] = row;
          pairs[2 * e + 1] = col[e];
        }
      }
      return {
        inputs: [{ data: pairs, shape: [N * K, 2] }, { data: src, shape: [N * K] }],
        outShape: [N, D],
        run: (tf, [i, u]) => tf.scatterND(i, u, [N, D]),
        expect: (o) => {
          const [row, c] = [Math.floor(o / D), o % D];
          let acc = 0, mag = 0;
          for (let e = row * K; e < (row + 1) * K; e++) {
            if (col[e] === c) [acc, mag] = [acc + src[e], mag + Math.abs(src[e])];
          }
          return [acc, mag];
        },
        tol: { ...SUMMED, why: "colliding updates are added atomically, in any order" },
      };
    }
    case "matMul":
    case "matvec": {
      const [M, K, N] = op === "matMul" ? dims(args, ["m", "k", "n"], where) : [...dims(args, ["n", "k"], where), 1];
      const [a, b] = [values(M * K, 1), values(K * N, 2)];
      return {
        inputs: [{ data: a, shape: [M, K] }, { data: b, shape: [K, N] }],
        outShape: [M, N],
        run: (tf, [x, y]) => tf.matMul(x, y),
        expect: (o) => {
          const [i, j] = [Math.floor(o / N), o % N];
          let acc = 0, mag = 0;
          for (let k = 0; k < K; k++) {
            const t = a[i * K + k] * b[k * N + j];
            [acc, mag] = [acc + t, mag + Math.abs(t)];
          }
          return [acc, mag];
        },
        tol: SUMMED,
      };
    }
  }
}

const UNARY: Record<"relu" | "relu2" | "elu" | "tanh" | "sigmoid" | "silu", (x: number) => number> = {
  relu: (x) => Math.max(x, 0),
  relu2: (x) => Math.max(x, 0) ** 2,
  elu: (x) => x > 0 ? x : Math.expm1(x),
  tanh: Math.tanh,
  sigmoid: (x) => 1 / (1 + Math.exp(-x)),
  silu: (x) => x / (1 + Math.exp(-x)),
};

/** Inputs generated so far, by seed and scale, each the longest asked for; see {@link values}. */
const generated = new Map<string, Float32Array>();
/** Most bytes {@link generated} keeps; the least recently used go first. */
const GENERATED_BYTES = 2 ** 30;

/**
 * Deterministic values in (-scale, scale), never all zero: the bench's own generator
 * ({@link randomInput}, xorshift32). Element `i` depends only on the seed, so a shorter input is a
 * prefix of a longer one with the same seed and scale: the longest generated is kept (up to
 * {@link GENERATED_BYTES} in all) and a case gets a view of it. A pass over many large shapes then
 * generates a handful of arrays rather than one or two per case, which on a slow host cost about
 * a second per 64 Mi elements. Nothing writes to the inputs (TF.js copies them when it uploads).
 */
function values(n: number, seed: number, scale = 1): Float32Array {
  const key = `${seed}:${scale}`;
  let all = generated.get(key);
  generated.delete(key); // re-inserted last: the most recently used
  if (!all || all.length < n) all = randomInput(n, seed, 0, scale);
  generated.set(key, all);
  let bytes = 0;
  for (const a of generated.values()) bytes += a.byteLength;
  for (const [k, a] of generated) {
    if (bytes <= GENERATED_BYTES || k === key) break;
    generated.delete(k);
    bytes -= a.byteLength;
  }
  return all.length === n ? all : all.subarray(0, n);
}

/** Deterministic indices in [0, bound), from the same generator; a plain loop, no per-element closure. */
function indices(n: number, bound: number, seed: number): Int32Array {
  const u = randomInput(n, seed, 0, 1);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.min(bound - 1, Math.floor(Math.abs(u[i]) * bound));
  return out;
}

function size(shape: readonly number[]): number {
  return shape.reduce((p, d) => p * d, 1);
}

function strides(shape: readonly number[]): number[] {
  const out = shape.map(() => 1);
  for (let j = shape.length - 2; j >= 0; j--) out[j] = out[j + 1] * shape[j + 1];
  return out;
}

function positive(v: unknown, name: string, where: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new Error(`${where}: ${name} must be a positive integer, got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Exactly `names.length` sizes, from an array in that order or a record with those names. */
function dims(args: PeerShape, names: readonly string[], where: string): number[] {
  if (isArray(args)) {
    if (args.length !== names.length) {
      throw new Error(`${where}: expected [${names.join(", ")}], got [${args.join(", ")}]`);
    }
    return args.map((v, j) => positive(v, names[j], where));
  }
  return names.map((name) => positive(args[name], name, where));
}

/** Any number of dimensions from an array, or the named ones from a record. */
function anyDims(args: PeerShape, names: readonly string[], where: string): number[] {
  if (!isArray(args)) return dims(args, names, where);
  if (args.length === 0) throw new Error(`${where}: expected at least one dimension, got []`);
  return args.map((v, j) => positive(v, `dimension ${j}`, where));
}

function shapeOf(args: PeerShape, where: string): number[] {
  const shape = isArray(args) ? args : args.shape;
  if (!isArray(shape)) throw new Error(`${where}: expected an array of dimensions or { shape: [...] }`);
  return anyDims(shape, [], where);
}

function reduction(args: PeerShape, where: string): { shape: number[]; axis: number } {
  const shape = shapeOf(args, where);
  const given = isArray(args) ? -1 : args.axis ?? -1;
  const axis = typeof given === "number" && given < 0 ? shape.length + given : given;
  if (typeof axis !== "number" || !Number.isInteger(axis) || axis < 0 || axis >= shape.length) {
    throw new Error(`${where}: axis must be an integer in [-${shape.length}, ${shape.length}), got ${given}`);
  }
  return { shape, axis };
}

function permutation(args: PeerShape, where: string): { shape: number[]; perm: number[] } {
  const shape = shapeOf(args, where);
  const given = isArray(args) ? shape.map((_, j) => shape.length - 1 - j) : args.perm;
  const perm = isArray(given) ? [...given] : [];
  if (perm.length !== shape.length || [...perm].sort((p, q) => p - q).some((p, j) => p !== j)) {
    throw new Error(`${where}: perm must be a permutation of 0..${shape.length - 1}, got ${JSON.stringify(given)}`);
  }
  return { shape, perm };
}

function isArray(v: unknown): v is readonly number[] {
  return Array.isArray(v);
}
