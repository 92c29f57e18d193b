/**
 * WGSL of the roofline probes, built from small validated configurations.
 *
 * The probes are not ops: they have no reference and no variants, and their one tunable axis (how
 * many vec4s per thread, how many independent chains, how far unrolled) is what a sweep varies on
 * the device itself. So each kernel is generated from a config whose every field is checked to be
 * an integer in a stated range before it reaches the source; nothing else is substituted.
 *
 * Every kernel keeps the compiler from deleting its work without giving it anything to do: the
 * result is stored only when a condition that depends on every loaded or computed value holds,
 * and that condition's threshold comes from a uniform. The probe sets the threshold so the store
 * never happens; the known-answer check sets it so every thread stores, and compares.
 *
 * @module
 */

import type { ParamField } from "./params.ts";

/** What a bandwidth kernel does with memory. */
export type BandwidthKind = "copy" | "read" | "write";

/** A bandwidth kernel: which streaming pattern, vec4s per thread, threads per workgroup. */
export interface BandwidthConfig {
  /** copy (read + write), read (loads reduced into a conditional store), write (stores only). */
  kind: BandwidthKind;
  /** vec4 elements each thread moves, 1..16 (unrolled, coalesced: stride of the workgroup size). */
  perThread: number;
  /** `@workgroup_size`, 32..1024, a multiple of 32. */
  workgroupSize: number;
}

/** An FMA-chain kernel: element type, independent vec4 chains, unroll of the loop body. */
export interface FmaConfig {
  /** f32, or f16 (only on a device whose f16 passed the known-answer check). */
  dtype: "f32" | "f16";
  /** Independent vec4 accumulators per thread, 1..64. */
  chains: number;
  /** Copies of the chain step per loop iteration, 1..64. */
  unroll: number;
  /** `@workgroup_size`, 32..1024, a multiple of 32. */
  workgroupSize: number;
}

/** A DP4a kernel: independent i32 accumulators fed by `dot4I8Packed`, unroll of the loop body. */
export interface Dp4aConfig {
  /** Independent i32 accumulators per thread, 1..128. */
  chains: number;
  /** Copies of the chain step per loop iteration, 1..64. */
  unroll: number;
  /** `@workgroup_size`, 32..1024, a multiple of 32. */
  workgroupSize: number;
}

/** Uniform layout of the bandwidth kernels. */
export const BANDWIDTH_PARAMS: readonly ParamField[] = [
  { name: "n", type: "u32" }, // vec4 elements
  { name: "threshold", type: "f32" }, // read: store when the sum exceeds it
  { name: "scale", type: "f32" }, // write: value = f32(i) * scale + offset
  { name: "offset", type: "f32" },
];

/** Uniform layout of the FMA kernels (f32 and f16 read the same f32 fields). */
export const FMA_PARAMS: readonly ParamField[] = [
  { name: "iters", type: "u32" },
  { name: "threshold", type: "f32" },
  { name: "a", type: "f32" }, // x <- fma(x, a, b)
  { name: "b", type: "f32" },
  { name: "tscale", type: "f32" }, // chain start: f32(thread & 7) * tscale + lane index * step
  { name: "step", type: "f32" },
];

/** Uniform layout of the DP4a kernel. */
export const DP4A_PARAMS: readonly ParamField[] = [
  { name: "iters", type: "u32" },
  { name: "b", type: "u32" }, // acc <- dot4I8Packed(bitcast<u32>(acc), b) + acc
  { name: "tscale", type: "i32" }, // chain start: i32(thread & 7) * tscale + (chain + 1) * step
  { name: "step", type: "i32" },
  { name: "mask", type: "u32" }, // store when (bitcast<u32>(sum) & mask) == want
  { name: "want", type: "u32" },
];

function checkInt(where: string, name: string, value: number, lo: number, hi: number): void {
  if (!Number.isInteger(value) || value < lo || value > hi) {
    throw new Error(`${where}: ${name} must be an integer in [${lo}, ${hi}], got ${value}`);
  }
}

function checkWorkgroupSize(where: string, size: number): void {
  checkInt(where, "workgroupSize", size, 32, 1024);
  if (size % 32 !== 0) throw new Error(`${where}: workgroupSize must be a multiple of 32, got ${size}`);
}

/**
 * A short stable name for a bandwidth config, used as the pipeline-cache variant.
 *
 * @param c the config
 * @returns e.g. `bandwidth.copy.v4.wg256`
 */
export function bandwidthName(c: BandwidthConfig): string {
  return `bandwidth.${c.kind}.v${c.perThread}.wg${c.workgroupSize}`;
}

/**
 * A short stable name for an FMA config.
 *
 * @param c the config
 * @returns e.g. `fma.f32.c8.u16.wg256`
 */
export function fmaName(c: FmaConfig): string {
  return `fma.${c.dtype}.c${c.chains}.u${c.unroll}.wg${c.workgroupSize}`;
}

/**
 * A short stable name for a DP4a config.
 *
 * @param c the config
 * @returns e.g. `dp4a.c16.u8.wg256`
 */
export function dp4aName(c: Dp4aConfig): string {
  return `dp4a.c${c.chains}.u${c.unroll}.wg${c.workgroupSize}`;
}

const FOLD = (w: number) =>
  `let block = (wid.x + wid.y * groups.x);
  let t = block * ${w}u + lid;`;

/**
 * WGSL of a bandwidth kernel. Bindings: copy `src`, `dst`; read `src`, `out`; write `dst`; then
 * the params uniform. All arrays are `array<vec4f>`; the grid may be folded into y.
 *
 * @param c the config (validated)
 * @returns the source
 * @throws Error naming the field when the config is out of range
 */
export function bandwidthSource(c: BandwidthConfig): string {
  const where = bandwidthName(c);
  if (!["copy", "read", "write"].includes(c.kind)) throw new Error(`${where}: unknown kind "${c.kind}"`);
  checkInt(where, "perThread", c.perThread, 1, 16);
  checkWorkgroupSize(where, c.workgroupSize);
  const w = c.workgroupSize, span = w * c.perThread;
  const index = (k: number) => `block * ${span}u + lid + ${k * w}u`;
  const body: string[] = [];
  for (let k = 0; k < c.perThread; k++) {
    if (c.kind === "copy") body.push(`  { let i = ${index(k)}; if (i < params.n) { dst[i] = src[i]; } }`);
    if (c.kind === "read") body.push(`  { let i = ${index(k)}; if (i < params.n) { acc += src[i]; } }`);
    if (c.kind === "write") {
      body.push(
        `  { let i = ${index(k)}; if (i < params.n) { let v = f32(i) * params.scale + params.offset; ` +
          `dst[i] = vec4f(v, v + 0.25, v + 0.5, v + 0.75); } }`,
      );
    }
  }
  const bindings = c.kind === "copy"
    ? ["var<storage, read> src: array<vec4f>", "var<storage, read_write> dst: array<vec4f>"]
    : c.kind === "read"
    ? ["var<storage, read> src: array<vec4f>", "var<storage, read_write> out: array<vec4f>"]
    : ["var<storage, read_write> dst: array<vec4f>"];
  return `// roofline/${where}: streams ${c.perThread} vec4 per thread (${c.kind}).
struct Params { n: u32, threshold: f32, scale: f32, offset: f32 }
${bindings.map((b, i) => `@group(0) @binding(${i}) ${b};`).join("\n")}
@group(0) @binding(${bindings.length}) var<uniform> params: Params;

@compute @workgroup_size(${w})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  ${FOLD(w)}
${c.kind === "read" ? "  var acc = vec4f(0.0);\n" : ""}${body.join("\n")}
${
    c.kind === "read"
      ? "  if (dot(acc, vec4f(1.0)) > params.threshold) { out[t % arrayLength(&out)] = acc; }\n"
      : "  _ = t;\n"
  }}
`;
}

/**
 * WGSL of an FMA-chain kernel: `chains` independent vec4 accumulators, each stepped
 * `x = fma(x, a, b)` `unroll` times per loop iteration for `params.iters` iterations. Operands come
 * from the uniform and chain starts from the thread id, so nothing is a compile-time constant.
 * Bindings: `out` (`array<vec4f>`), then the params uniform.
 *
 * @param c the config (validated)
 * @returns the source
 * @throws Error naming the field when the config is out of range
 */
export function fmaSource(c: FmaConfig): string {
  const where = fmaName(c);
  if (c.dtype !== "f32" && c.dtype !== "f16") throw new Error(`${where}: dtype must be "f32" or "f16"`);
  checkInt(where, "chains", c.chains, 1, 64);
  checkInt(where, "unroll", c.unroll, 1, 64);
  checkWorkgroupSize(where, c.workgroupSize);
  const T = c.dtype, V = `vec4<${T}>`;
  const init: string[] = [], step: string[] = [], sum: string[] = [];
  for (let k = 0; k < c.chains; k++) {
    const l = 4 * k;
    init.push(`  var c${k} = s + ${V}(${l}.0, ${l + 1}.0, ${l + 2}.0, ${l + 3}.0) * st;`);
    step.push(`c${k} = fma(c${k}, a, b);`);
    sum.push(`vec4f(c${k})`);
  }
  const stepLines: string[] = [];
  for (let u = 0; u < c.unroll; u++) stepLines.push(`    ${step.join(" ")}`);
  return `${
    T === "f16" ? "enable f16;\n" : ""
  }// roofline/${where}: ${c.chains} independent vec4 FMA chains, ${c.unroll}x unrolled.
struct Params { iters: u32, threshold: f32, a: f32, b: f32, tscale: f32, step: f32 }
@group(0) @binding(0) var<storage, read_write> out: array<vec4f>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(${c.workgroupSize})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  ${FOLD(c.workgroupSize)}
  let a = ${V}(${T}(params.a));
  let b = ${V}(${T}(params.b));
  let s = ${V}(${T}(f32(t & 7u) * params.tscale));
  let st = ${T}(params.step);
${init.join("\n")}
  for (var i = 0u; i < params.iters; i++) {
${stepLines.join("\n")}
  }
  let acc = ${sum.join(" + ")};
  if (dot(acc, vec4f(1.0)) > params.threshold) { out[t % arrayLength(&out)] = acc; }
}
`;
}

/**
 * WGSL of a DP4a kernel: `chains` independent i32 accumulators, each stepped
 * `acc = dot4I8Packed(bitcast<u32>(acc), b) + acc` (the accumulator is its own next operand, so no
 * call is loop-invariant) `unroll` times per iteration. Bindings: `out` (`array<i32>`), then the
 * params uniform.
 *
 * @param c the config (validated)
 * @returns the source
 * @throws Error naming the field when the config is out of range
 */
export function dp4aSource(c: Dp4aConfig): string {
  const where = dp4aName(c);
  checkInt(where, "chains", c.chains, 1, 128);
  checkInt(where, "unroll", c.unroll, 1, 64);
  checkWorkgroupSize(where, c.workgroupSize);
  const init: string[] = [], step: string[] = [], sum: string[] = [];
  for (let k = 0; k < c.chains; k++) {
    init.push(`  var c${k} = s + ${k + 1} * params.step;`);
    step.push(`c${k} = dot4I8Packed(bitcast<u32>(c${k}), b) + c${k};`);
    sum.push(`c${k}`);
  }
  const stepLines: string[] = [];
  for (let u = 0; u < c.unroll; u++) stepLines.push(`    ${step.join(" ")}`);
  return `// roofline/${where}: ${c.chains} independent dot4I8Packed accumulators, ${c.unroll}x unrolled.
struct Params { iters: u32, b: u32, tscale: i32, step: i32, mask: u32, want: u32 }
@group(0) @binding(0) var<storage, read_write> out: array<i32>;
@group(0) @binding(1) var<uniform> params: Params;

@compute @workgroup_size(${c.workgroupSize})
fn main(@builtin(workgroup_id) wid: vec3u, @builtin(num_workgroups) groups: vec3u,
        @builtin(local_invocation_index) lid: u32) {
  ${FOLD(c.workgroupSize)}
  let b = params.b;
  let s = i32(t & 7u) * params.tscale;
${init.join("\n")}
  for (var i = 0u; i < params.iters; i++) {
${stepLines.join("\n")}
  }
  let sum = ${sum.join(" + ")};
  if ((bitcast<u32>(sum) & params.mask) == params.want) { out[t % arrayLength(&out)] = sum; }
}
`;
}

/**
 * Host emulation of WGSL `dot4I8Packed(x, y) + acc` with i32 wrap-around, for known answers.
 *
 * @param x four signed bytes packed little-endian (as a u32 bit pattern)
 * @param y four signed bytes packed little-endian
 * @param acc the i32 accumulator
 * @returns the wrapped i32 result
 */
export function dot4I8PackedAdd(x: number, y: number, acc: number): number {
  let dot = 0;
  for (let k = 0; k < 4; k++) dot += ((x << (24 - 8 * k)) >> 24) * ((y << (24 - 8 * k)) >> 24);
  return (dot + acc) | 0;
}
