/**
 * Which TF.js peer op computes what a bench case computes, shape by shape: the table
 * `deno task bench` reads to put TF.js's time beside ours (a dev tool, like the rest of
 * harness/peer).
 *
 * The table is keyed by `${op}/${entry}` of a bench case (ops/registry.ts lists every op's) and reads the
 * case's own shape object (`BenchShape.value`, as the op's `ops/<op>/bench.ts` wrote it). An entry
 * returns the peer call ({@link PeerCall}: a {@link PeerOp} of `cases.ts` and its arguments) or,
 * when TF.js has no counterpart for that shape, the reason in words. {@link peerFor} never throws:
 * a key that is not in the table, a shape that lacks a field or has one of the wrong type, is "no
 * peer", with the reason, and the bench reports it.
 *
 * | bench case | shape fields read | peer op |
 * | --- | --- | --- |
 * | `elementwise/kernel` | `n`, `op` (add when absent) | `add` / `mul` |
 * | `elementwise/rows` | `rows`, `cols`, `op` (add when absent) | `addRows` / `mulRows` |
 * | `axpy/kernel`, `axpy/inplace` | `n` | `axpy` (TF.js writes a new tensor either way) |
 * | `activation/kernel` | `kind`, `n`, `alpha` | `relu2` (relu, square), `silu`, `elu` (alpha 1 only), `tanh`; no GELU |
 * | `softmax/kernel` | `rows`, `cols` | `softmax` |
 * | `reduce/kernel` | `op`, `shape`, `dim` | `sum` / `max` / `min` / `mean` |
 * | `transpose/kernel` | `rows`, `cols` | `transpose` |
 * | `permute/kernel` | `shape`, `dims` | `permute` (`tf.transpose(x, perm)`) |
 * | `gather/kernel` | `rows`, `cols`, `indexLength` | `gather` |
 * | `scatter/kernel` | `rows`, `indexCols`, `cols` | `scatter` (`tf.scatterND` into zeros, colliding updates summed) |
 * | `matmul/kernel`, `matmul/tile64` | `M`, `N`, `K` | `matMul` |
 * | `matvec/kernel` | `N`, `K` | `matvec` (`tf.matMul`, `[N, K] × [K, 1]`) |
 *
 * What the mapping may not change is checked by `bench_map.test.ts`: for every case in
 * `BENCH_CASES` (as the ops define them, whatever they are when the test runs) the lookup returns
 * a call or a reason, and a mapped call's output has as many elements as the plan's output
 * binding, and each f32 input binding of the plan has a peer input of the same length.
 *
 * @module
 */

import { isPeerOp, PEER_OPS, type PeerOp, type PeerShape } from "./cases.ts";

export { PEER_OPS, type PeerOp, type PeerShape };

/** A peer op and its arguments, as `TfjsPeer.time(op, args)` takes them. */
export interface PeerCall {
  /** The peer op (a key of `PEER_OPS`). */
  op: PeerOp;
  /** Its arguments. */
  args: PeerShape;
}

/** What {@link peerFor} found: a call, or why there is none. */
export type PeerLookup = { call: PeerCall; reason: null } | { call: null; reason: string };

/** A table entry: the shape object in, the call (or the reason there is none) out. It may throw. */
export type PeerMapping = (shape: Readonly<Record<string, unknown>>) => PeerCall | string;

/** Thrown by the field readers; {@link peerFor} turns it into a reason. */
class ShapeError extends Error {}

function int(shape: Readonly<Record<string, unknown>>, name: string): number {
  const v = shape[name];
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1) {
    throw new ShapeError(`shape field "${name}" is not a positive integer (${JSON.stringify(v) ?? "absent"})`);
  }
  return v;
}

function ints(shape: Readonly<Record<string, unknown>>, name: string, min: number): number[] {
  const v = shape[name];
  if (
    !Array.isArray(v) || v.length === 0 || !v.every((d) => typeof d === "number" && Number.isInteger(d) && d >= min)
  ) {
    throw new ShapeError(
      `shape field "${name}" is not a list of integers >= ${min} (${JSON.stringify(v) ?? "absent"})`,
    );
  }
  return [...v];
}

/** `op` of an elementwise shape: add when absent (the bench case adds). */
function elementwiseOp(shape: Readonly<Record<string, unknown>>): "add" | "mul" | string {
  const op = shape.op ?? "add";
  if (op === "add") return "add";
  if (op === "multiply" || op === "mul") return "mul";
  return `elementwise op ${JSON.stringify(op)} has no peer mapping`;
}

const gemm: PeerMapping = (s) => ({ op: "matMul", args: { m: int(s, "M"), k: int(s, "K"), n: int(s, "N") } });
const axpy: PeerMapping = (s) => ({ op: "axpy", args: [int(s, "n")] });

/** The mapping from bench cases to peer ops, by `${op}/${entry}`. */
export const BENCH_PEER_MAP: Readonly<Record<string, PeerMapping>> = {
  "elementwise/kernel": (s) => {
    const op = elementwiseOp(s);
    return op === "add" || op === "mul" ? { op, args: [int(s, "n")] } : op;
  },
  "elementwise/rows": (s) => {
    const op = elementwiseOp(s);
    if (op !== "add" && op !== "mul") return op;
    return { op: op === "add" ? "addRows" : "mulRows", args: { rows: int(s, "rows"), cols: int(s, "cols") } };
  },
  "axpy/kernel": axpy,
  "axpy/inplace": axpy,
  "activation/kernel": (s) => {
    const n = int(s, "n");
    switch (s.kind) {
      case "relu2":
      case "silu":
      case "tanh":
        return { op: s.kind, args: [n] };
      case "elu":
        return s.alpha === undefined || s.alpha === 1
          ? { op: "elu", args: [n] }
          : `tf.elu has alpha 1 only (alpha ${JSON.stringify(s.alpha)})`;
      case "gelu":
      case "gelu_tanh":
        return "TF.js 4.22 has no GELU op";
      default:
        return `activation kind ${JSON.stringify(s.kind)} has no peer mapping`;
    }
  },
  "softmax/kernel": (s) => ({ op: "softmax", args: { rows: int(s, "rows"), cols: int(s, "cols") } }),
  "reduce/kernel": (s) => {
    const op = s.op;
    if (op !== "sum" && op !== "max" && op !== "min" && op !== "mean") {
      return `reduce op ${JSON.stringify(op)} has no peer mapping`;
    }
    const shape = ints(s, "shape", 1);
    const axis = s.dim;
    if (typeof axis !== "number" || !Number.isInteger(axis) || axis < -shape.length || axis >= shape.length) {
      throw new ShapeError(`shape field "dim" is not an axis of [${shape}] (${JSON.stringify(axis) ?? "absent"})`);
    }
    return { op, args: { shape, axis } };
  },
  "transpose/kernel": (s) => ({ op: "transpose", args: { rows: int(s, "rows"), cols: int(s, "cols") } }),
  "permute/kernel": (s) => {
    const shape = ints(s, "shape", 1);
    const dims = s.dims;
    if (!Array.isArray(dims) || !dims.every((d) => typeof d === "number" && Number.isInteger(d))) {
      throw new ShapeError(`shape field "dims" is not a list of integers (${JSON.stringify(dims) ?? "absent"})`);
    }
    // Our dims may count from the end; tf.transpose's perm may not.
    return { op: "permute", args: { shape, perm: dims.map((d: number) => d < 0 ? d + shape.length : d) } };
  },
  "gather/kernel": (s) => ({
    op: "gather",
    args: { rows: int(s, "rows"), cols: int(s, "cols"), indices: int(s, "indexLength") },
  }),
  "scatter/kernel": (s) => ({
    op: "scatter",
    args: { rows: int(s, "rows"), cols: int(s, "cols"), k: int(s, "indexCols") },
  }),
  "matmul/kernel": gemm,
  "matmul/tile64": gemm,
  "matvec/kernel": (s) => ({ op: "matvec", args: { n: int(s, "N"), k: int(s, "K") } }),
};

/** Why an op or entry with no table entry has no peer, where the reason is known. */
export const NO_PEER: Readonly<Record<string, string>> = {
  "layernorm": "TF.js 4.22 has no layer-norm op (tf.moments and arithmetic would be several ops)",
  "rmsnorm": "TF.js 4.22 has no RMSNorm op",
  "quantize": "TF.js 4.22 has no int8 / int4 quantization op",
  "dequantize": "TF.js 4.22 has no int8 / int4 dequantization op",
  "dequant_transpose": "TF.js 4.22 has no int8 / int4 dequantization op",
  "matmul/q8row": "TF.js 4.22 has no int8-weight matMul",
  "matmul/q4g128": "TF.js 4.22 has no int4-weight matMul",
  "matvec/q8row": "TF.js 4.22 has no int8-weight matMul",
  "matvec/q4g128": "TF.js 4.22 has no int4-weight matMul",
};

/**
 * The peer call for a bench case at one of its shapes, or why there is none. Never throws.
 *
 * @param op the bench case's op, e.g. `matmul`
 * @param entry its entry point, e.g. `kernel`
 * @param shape the shape object the case was defined with (`BenchShape.value`)
 * @returns `{ call, reason: null }` or `{ call: null, reason }`
 *
 * @example
 * ```ts
 * import { peerFor } from "./bench_map.ts";
 * peerFor("matmul", "kernel", { M: 64, N: 32, K: 16 }).call; // { op: "matMul", args: { m: 64, k: 16, n: 32 } }
 * peerFor("rmsnorm", "kernel", { rows: 4, cols: 8 }).reason; // "TF.js 4.22 has no RMSNorm op"
 * ```
 */
export function peerFor(op: string, entry: string, shape: unknown): PeerLookup {
  const key = `${op}/${entry}`;
  const mapping = Object.hasOwn(BENCH_PEER_MAP, key) ? BENCH_PEER_MAP[key] : undefined;
  if (!mapping) {
    const known = Object.hasOwn(NO_PEER, key) ? NO_PEER[key] : Object.hasOwn(NO_PEER, op) ? NO_PEER[op] : undefined;
    return { call: null, reason: known ?? `no peer mapping for ${key} (harness/peer/bench_map.ts)` };
  }
  if (typeof shape !== "object" || shape === null || Array.isArray(shape)) {
    return { call: null, reason: `${key}: the case's shape is not an object (${JSON.stringify(shape) ?? "absent"})` };
  }
  try {
    const out = mapping(shape as Readonly<Record<string, unknown>>);
    if (typeof out === "string") return { call: null, reason: `${key}: ${out}` };
    if (!isPeerOp(out.op)) return { call: null, reason: `${key}: maps to unknown peer op ${out.op}` };
    return { call: out, reason: null };
  } catch (e) {
    return { call: null, reason: `${key}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/**
 * A call in words, for logs: `matMul {"m":4096,"k":4096,"n":4096}`.
 *
 * @param call the call
 * @returns the op and its arguments as JSON
 */
export function describeCall(call: PeerCall): string {
  return `${call.op} ${JSON.stringify(call.args)}`;
}
