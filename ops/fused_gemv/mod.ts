/**
 * fused_gemv: a decode step's weight product with its neighbours folded in, `out (op)= act(W · in(x))`
 * for one row of activations, in each weight format (f32, q8, q4g128 as stored): what the Llama
 * engine's decode runs, so that a layer is five dispatches (QKV with the input norm, attention, O
 * with the residual add, gate/up with the post-attention norm and SwiGLU, down with the residual
 * add). `reference.ts` defines it ({@link fusedGemv}: `F.linear(in(x), W)` with `in` the identity or
 * `F.rms_norm(x, (K,), g, eps)`, then stored, added, or `F.silu(y[0::2]) * y[1::2]`).
 *
 * The input and output steps are pipeline constants of each kernel (`NORM`, `OUTPUT`): one source
 * per layout, compiled per use with its steps as constants, so the driver sees each combination's
 * own code (the branches fold away):
 * - `NORM`: the norm's scalar factor commutes with the product, so each workgroup multiplies `x` by
 *   the norm weight `g` as it reads it, sums `x^2` over the whole row itself (`K` floats, from cache:
 *   the activation row is small beside any weight), and scales its dot products at the end:
 *   `out = inverseSqrt(mean(x^2) + eps) * (W · (x * g))`. No normalised copy of `x` is written; the
 *   result differs from normalising first only by f32 rounding. Without it, `g` is bound (any f32
 *   tensor of K elements: `x` again) and not read.
 * - `OUTPUT` 0 stores `out[out0 + n] = y[n]`; 1 adds, `out[out0 + n] += y[n]`, the residual connection
 *   (`out` is the hidden state, which the product does not read: its input is another buffer); 2 takes
 *   the rows in pairs, gate and up of one FFN channel (rows 2j and 2j + 1: the engine interleaves
 *   `[gate | up]`), `out[out0 + j] = silu(y[2j]) * y[2j + 1]`. A pair is always in one invocation's
 *   four rows, so the FFN's activation costs nothing.
 * `out0` places a row block's outputs in the whole output (a weight split across bindings writes each
 * block's rows where they belong, with no copy; for SwiGLU it counts pairs).
 *
 * Layouts, after ops/matvec's NVIDIA quantised kernels (whose module doc says why each is shaped so),
 * one entry point each: every invocation sums four rows over the same columns, so an activation it
 * reads serves four rows of weight, and a row group's partial sums are reduced in workgroup memory.
 * Which layout a weight takes depends on its rows ({@link FUSED_GEMV_LAYOUTS}):
 * - `f32_lanes32`, `q8_lanes32`, `q8_lanes64`, `q8_lanes128` (q8 at every size, f32 from 6,144 rows):
 *   32-128 invocations across K per row group, 1-4 vec4s of each row loaded before any is multiplied
 *   (past the row: its last vec4 again, with x taken as 0), x read from global memory (and, with
 *   `NORM`, its squares summed from the same loads: each row group covers K once, so it needs no
 *   other group's share), the partial sums reduced in one or two stages of 8-32 additions by one
 *   invocation each rather than a tree of halvings. q8 decodes as ops/matvec's q8row.nvidia (bits
 *   masked into a float's mantissa, no integer-to-float conversion) and scales the finished dot
 *   product. q8 takes 32 lanes x 2 groups, two vec4<u32> in flight, from 6,144 rows (gate/up), 64 x 2
 *   with two from 3,072 (QKV), and 128 x 2 with one (a reduction of 16 then 8) below (O, down); f32
 *   32 x 4 with four vec4s in flight.
 * - `f32_wide` (f32 below 6,144 rows): 128 invocations across K, two row groups (8 rows), two vec4s
 *   of each row in flight, a tree of halvings with a barrier each.
 * - `q4_tiled` (q4g128): 64 invocations across K, four row groups (16 rows), two vec4<u32> of each
 *   row in flight, `in(x)` staged through workgroup memory in tiles of 4,096 columns (swizzled
 *   against bank conflicts) that the row groups share, as q4g128.nvidia does; each vec4<u32>'s dot
 *   product is scaled by its group's scale; a tree of halvings.
 *
 * Measured on the H200 (2026-12-02, Deno 2.9.6, GPU timestamps; `nvidia-h200-log/33-gemv-ab.txt`, a
 * scratch A/B: each variant 24 times back to back in one pass over 24 copies of the weight, per
 * dispatch, median of 9 passes, variants interleaved; the bench figures are in `33-gemv-bench.txt`),
 * when these kernels were the engine's own (generated per layout, input and output; since moved here
 * with the steps as pipeline constants, their code otherwise unchanged). Against the layout before
 * (q8 128 x 2, one vec4<u32> in flight, a tree of seven halvings, the squares summed in a loop of
 * their own): q8 QKV 8.28 -> 7.86 us, gate/up 17.12 -> 13.24, down 9.92 -> 9.64; O measured 14.67
 * before and 15.17 with 128 x 2 and the two-stage reduction, but in a stretch of that run where even
 * the plain read ran at half speed, so it decides nothing (in the other three shapes that layout, with
 * its reduction and squares, gained 0.1-2.4 us on the one before). f32 gate/up 28.65 -> 26.31 us
 * (32 x 4, four vec4s in flight). Fewer lanes with more loads each lost everywhere: q8 QKV took
 * 11.3-11.9 us with 32 lanes, 10.4-13.9 with 16 (4-8 vec4<u32> of each row in flight, 2-16 groups, a
 * reduction flat or by halvings) and 19.6-23.5 with 8; down 15.4-18.9, 20.4-25.4 and 45.7-54.3. At
 * these sizes the whole product is about one wave of workgroups, and the decode's arithmetic after
 * the loads is shortest when spread over the most invocations. K compiled in as a constant (the
 * loops' trip counts known to the compiler) moved figures by under 0.6 us either way. For q4g128
 * every lanes layout (4-32 lanes, x read from global memory: an invocation's 32 codes need 8 vec4s
 * of it, 128 bytes apart across a warp) took 1.6-4x the staged layout's time (one layer's four
 * products 110-280 us against 68), so q4g128 keeps it. For f32 below 6,144 rows `f32_wide` beat
 * every lanes layout (QKV 10.27 us against 11.4-16.2). In bench:llm at the Sarashina2.2-1B shape
 * (`33-gemv-bench.txt`, `33-gemv-bench-f32.txt`, against `30-engine-bench.txt`): the q8 decode step
 * 1.411 -> 1.317 ms of GPU in its one pass, 779 -> 801 tok/s wall; f32 2.022 ms, 558 tok/s; q4g128
 * 1.29 ms, 847 tok/s. The bench rows `fused_gemv/<layout>` at that model's four products time each
 * layout apart, as the engine runs it.
 *
 * When a row does not start on a 16-byte boundary (q8: K % 16 != 0; q4g128: K % 32 != 0) the
 * quantised kernels read a word at a time, and q4g128's last word, half padding when K % 8 == 4, is
 * read with the padding's activations replaced by 0. Rows past N are read as row N - 1 (no load needs
 * a guard) and never written. Workgroups past 65,535 fold into a second grid dimension.
 *
 * @module
 */

import { foldWorkgroups, workgroupSizeOf } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type BindingSpec, type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { overrideEntry } from "../../harness/resolve.ts";
import { checkOptions, requireInt, requireOneOf, U32_MAX } from "../validate.ts";
import { type FusedGemvVariant, KERNELS } from "./kernels.gen.ts";
import {
  FUSED_GEMV_FORMATS,
  type FusedGemvArgs,
  type FusedGemvFormat,
  fusedGemvRowWords,
  type FusedGemvShape,
  validateFusedGemv,
  validateFusedGemvShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type FusedGemvVariant, KERNELS };

/**
 * Each format's layouts (entry points), by the weight's rows: a weight takes the first whose
 * `minRows` it reaches (the choice and its measurements are in the module doc).
 */
export const FUSED_GEMV_LAYOUTS: Readonly<Record<FusedGemvFormat, readonly { minRows: number; entry: string }[]>> = {
  f32: [{ minRows: 6144, entry: "f32_lanes32" }, { minRows: 0, entry: "f32_wide" }],
  q8: [
    { minRows: 6144, entry: "q8_lanes32" },
    { minRows: 3072, entry: "q8_lanes64" },
    { minRows: 0, entry: "q8_lanes128" },
  ],
  q4g128: [{ minRows: 0, entry: "q4_tiled" }],
};

/**
 * The layout (entry point) of a fused product over a weight of `rows` rows.
 *
 * @param format the weight's format
 * @param rows the weight's rows (the whole weight's, for a weight held as row blocks: every block
 *   takes the same)
 * @returns the first of {@link FUSED_GEMV_LAYOUTS}' entries for `format` whose `minRows` `rows` reaches
 *
 * @example
 * ```ts
 * import { fusedGemvLayout } from "@xpu/ops/ops/fused_gemv";
 * fusedGemvLayout("q8", 16384); // "q8_lanes32": Sarashina2.2-1B's gate/up
 * fusedGemvLayout("q8", 2048); // "q8_lanes128": its O and down
 * ```
 */
export function fusedGemvLayout(format: FusedGemvFormat, rows: number): string {
  requireOneOf("fusedGemvLayout", "format", format, FUSED_GEMV_FORMATS);
  requireInt("fusedGemvLayout", "rows", rows, 0, U32_MAX);
  return FUSED_GEMV_LAYOUTS[format].find((e) => rows >= e.minRows)!.entry;
}

const PARAMS: readonly ParamField[] = [
  { name: "n", type: "u32" },
  { name: "k", type: "u32" },
  { name: "out0", type: "u32" },
  { name: "eps", type: "f32" },
];

const OUTPUT_CODES = { store: 0, add: 1, swiglu: 2 } as const;

/**
 * Plans the fused decode product on the GPU.
 *
 * @param gpu the device
 * @param shape format, N, K, input, output, out0, outLength, eps, layoutRows (the rows that choose the layout)
 * @param options a variant of one of the format's layouts (`override`)
 * @returns the plan; bindings `weight` (f32 `[N, K]`, or u32 words), `scales` (q8 and q4g128 only),
 *   `x` `[K]`, `g` `[K]` (RMSNorm's weight; with input `plain` not read: bind `x` again) and `out`
 *   `[outLength]` (read and written); pipeline constants `NORM` and `OUTPUT`
 * @throws Error naming the argument, as {@link validateFusedGemvShape}, or an override that is not a
 *   layout of the format
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { fusedGemvPlan } from "@xpu/ops/ops/fused_gemv";
 * const gpu = await acquireDevice();
 * const weight = gpu.upload(new Float32Array([1, 0, 0, 0, 0, 2, 0, 0])); // [2, 4]
 * const x = gpu.upload(new Float32Array([3, 4, 0, 0]));
 * const out = gpu.upload(new Float32Array([10, 20])); // the residual stream
 * const plan = fusedGemvPlan(gpu, { format: "f32", N: 2, K: 4, input: "plain", output: "add" });
 * await gpu.submit([plan, [weight, x, x, out]]); // g: x again, not read
 * console.log(await gpu.read(out)); // Float32Array [13, 28]
 * gpu.destroy();
 * ```
 */
export function fusedGemvPlan(
  gpu: ResidentDevice,
  shape: FusedGemvShape,
  options?: KernelOptions<FusedGemvVariant>,
): KernelPlan {
  requireDevice("fusedGemv", gpu);
  checkOptions("fusedGemv", options);
  const { out0, outLength, eps } = validateFusedGemvShape(shape);
  const { format, N, K, input, output } = shape;
  const entries = FUSED_GEMV_LAYOUTS[format].map((e) => e.entry);
  let entry = fusedGemvLayout(format, shape.layoutRows ?? N);
  if (options?.override !== undefined) {
    entry = overrideEntry(options.override)!;
    if (!entries.includes(entry)) {
      throw new Error(
        `fusedGemv: override "${options.override}" is not a layout of format ${format} (${entries.join(", ")})`,
      );
    }
  }
  const kernel = gpu.resolve(KERNELS, entry, options);
  const rows = 4 * workgroupSizeOf(kernel.source, `fused_gemv/${kernel.variant}`)[1];
  const per = fusedGemvRowWords(format, K);
  const bindings: BindingSpec[] = [
    { name: "weight", dtype: format === "f32" ? "f32" : "u32", length: N * per.words, role: "input" },
  ];
  if (format !== "f32") bindings.push({ name: "scales", dtype: "f32", length: N * per.scales, role: "input" });
  bindings.push(
    { name: "x", dtype: "f32", length: K, role: "input" },
    { name: "g", dtype: "f32", length: K, role: "input" },
    { name: "out", dtype: "f32", length: outLength, role: "inout" },
  );
  const norm = input === "norm";
  const written = output === "swiglu" ? N / 2 : N;
  return {
    op: "fused_gemv",
    kernel,
    bindings,
    params: packParams(PARAMS, { n: N, k: K, out0, eps }, "fusedGemv"),
    constants: { NORM: Number(norm), OUTPUT: OUTPUT_CODES[output] },
    workgroups: foldWorkgroups(Math.ceil(N / rows), gpu.limits.maxComputeWorkgroupsPerDimension),
    // The weight (and scales) read once, x (and g) once, out written (and read, to add); a multiply
    // and an add per weight element, the norm's 3 per element of x, SwiGLU's ~5 per pair.
    cost: {
      bytes: 4 * (N * (per.words + per.scales) + K * (norm ? 2 : 1) + written * (output === "add" ? 2 : 1)),
      flops: 2 * N * K + (norm ? 3 * K : 0) + (output === "swiglu" ? 5 * written : 0),
    },
  };
}

/**
 * The fused decode product on the GPU ({@link fusedGemv}).
 *
 * @param gpu the device
 * @param args as {@link fusedGemv}
 * @param options a layout's variant (`override`)
 * @returns `out` after the call
 * @throws Error naming the argument, as {@link validateFusedGemv}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { fusedGemvGpu } from "@xpu/ops/ops/fused_gemv";
 * const gpu = await acquireDevice();
 * const weight = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]); // identity [4, 4]
 * const x = new Float32Array([2, -2, 2, -2]), normWeight = new Float32Array([1, 1, 1, 1]);
 * await fusedGemvGpu(gpu, { format: "f32", weight, x, normWeight, out: new Float32Array(4), N: 4, K: 4, input: "norm", output: "store", eps: 0 });
 * // [1, -1, 1, -1]: the RMSNorm of x
 * gpu.destroy();
 * ```
 */
export async function fusedGemvGpu(
  gpu: ResidentDevice,
  args: FusedGemvArgs,
  options?: KernelOptions<FusedGemvVariant>,
): Promise<Float32Array> {
  requireDevice("fusedGemv", gpu);
  checkOptions("fusedGemv", options);
  validateFusedGemv(args);
  const plan = fusedGemvPlan(gpu, { ...args, outLength: args.out.length }, options);
  const inputs = [args.weight, ...(args.scales && args.format !== "f32" ? [args.scales] : []), args.x];
  inputs.push(args.input === "norm" ? args.normWeight! : args.x, args.out);
  const [out] = await gpu.run(plan, inputs);
  return out as Float32Array;
}
