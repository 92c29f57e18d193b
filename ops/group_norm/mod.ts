/**
 * group_norm: `torch.nn.functional.group_norm(x, groups, weight, bias, eps)` over `x` `[N, C, L]`
 * (L the product of the spatial dimensions), optionally followed by `F.silu` (`activation: "silu"`,
 * the GroupNorm -> SiLU of the VAE decoders' residual blocks and heads, in the same pass); entry
 * points `kernel` (the rows path), `stats` and `apply` (the split path) and `fused` (the fused path;
 * see below).
 *
 * Conventions, each pinned by a test against torch goldens that the alternative fails:
 * - statistics over each (sample, group) of C / groups consecutive channels together, (C / groups)
 *   x L values: not per channel (instance norm, which groups = C gives) and not over the whole
 *   sample (which groups = 1 gives);
 * - the biased variance (divided by the count, not the count less one);
 * - eps inside the square root, default 1e-5 as torch;
 * - weight and bias per channel `[C]`, not per group; each optional;
 * - `activation: "silu"` after the weight and bias, `F.silu(F.group_norm(...))`;
 * - NaN and ±Infinity (nonfinite.test.ts): NaN or ±inf in a (sample, group) row makes that row NaN,
 *   and a non-finite weight or bias acts on its channel, as torch. One difference, on purpose: an
 *   infinite weight gives ±inf, the sign of (x - mean) * weight, as torch's elementwise form does,
 *   where F.group_norm's kernel computes x * (rstd * weight) + (bias - mean * rstd * weight) and so
 *   gives NaN (inf - inf) wherever x and the mean have the same sign.
 *
 * Refused, with an error naming the argument, before any GPU work: sizes that are not integers
 * >= 1, C not divisible by groups (as torch), arrays of the wrong type or length, an eps that is
 * negative or not a finite f32, an activation other than `"silu"`, and a path or `polls` that is not
 * one of the allowed. A tensor past the device's `maxStorageBufferBindingSize` (a browser's 128 MiB
 * is 1 x 128 channels x 512 x 512; a 1024 x 1024 VAE activation at 128 channels is 512 MiB) is
 * refused, not split, on every path: the limits guard throws a `LimitError` naming the binding
 * (`x` or `out`) and its bytes before anything is uploaded (`groupNormGpu`) or encoded (plans on
 * resident tensors). Rows are independent, so a caller holding a larger activation as several
 * buffers of whole samples runs one call per buffer.
 *
 * Numerics: a (sample, group) is a contiguous row of (C / groups) x L elements, and its statistics
 * come from per-chunk means and squared deviations merged pairwise (Chan et al.), which stays exact
 * to a few f32 ULPs for rows like 100 ± 1 where a one-pass E[x²] − E[x]² in f32 loses most of the
 * variance's digits (a test shows the one-pass formula failing the same tolerance); then the row is
 * read again, normalised and written.
 *
 * Three paths; {@link groupNormPlan} chooses between the first two (`fused` only when asked for, with
 * `path` or a variant of `fused`):
 * - `rows` (entry point `kernel`): one 256-invocation workgroup per (sample, group), which reads its
 *   row twice (the second time last block first, so part of it comes from L2) and writes it once.
 * - `split` (more than one block of 1,024 quads or elements per row, and at most
 *   {@link GROUP_NORM_SPLIT_ROWS} rows, where one workgroup per row leaves the GPU idle or long rows
 *   fall out of L2 between the two reads): entry point `stats` cuts each row into pieces of whole
 *   blocks, about 512 workgroups in all (at most 256 pieces a row), each writing its piece's
 *   (count, mean, M2); entry point `apply` takes one workgroup per block, merges its row's summaries
 *   (the same tree of Chan merges in every workgroup of the row, so every block of a row sees the
 *   same statistics) while its block's loads are in flight, and writes the block normalised.
 * - `fused` (entry point `fused`): the split path's pieces and blocks as tasks of one dispatch,
 *   row by row (row r's pieces, then its blocks), each workgroup taking the next task from a ticket
 *   counter. A block polls its row's published piece summaries at most `polls` times (default
 *   {@link GROUP_NORM_POLLS}), computes any still missing itself, so no workgroup ever waits on
 *   another without end, and normalises as `apply` does. The point is time: a row's blocks read it
 *   while or just after its pieces do, so the second read can come from L2, and no dispatch
 *   boundary sits between the steps. Its state (a ticket and two words per piece) is a `zeroed`
 *   binding, cleared by the device before each run (which starts a new compute pass).
 * All three count two reads and one write of `x` (12 bytes per element, as declared); SiLU adds 4
 * FLOPs per element.
 *
 * The fused path has not been timed on a GPU. What decides it, on the H200 (the bench's
 * `group_norm/fused` and `group_norm/stats+apply` rows, one run): at `1x512x16384:g32` (batch 1, 32
 * MiB) `stats+apply` took 0.0354 ms (62.9% by the 12-byte count) and a plain copy of the same 32 +
 * 32 MiB 0.0222 ms, so `fused` under 0.0279 ms meets the 80% target; at `8x512x16384:g32` and
 * `1x256x262144:g32` it should not lose to `stats+apply` (0.206 ms each); and `:silu` rows show what
 * the fused SiLU costs. If it wins, {@link groupNormPlan}'s default should take it where it wins;
 * `polls` may be tuned (each poll is an atomic load through L2).
 *
 * On the H200 (Deno 2.9.6 over Vulkan, GPU timestamps, median of 10, each dispatch timed alone,
 * with weight and bias; fractions of the same run's read probe, counted as 12 bytes per element;
 * harness/baselines/nvidia-h200-log/27-bandops-bench.json, 2026-12-02, probe 4,593 GB/s), the bench
 * shapes at what the plan takes: at batch 1 split in 0.0150 + 0.0248 = 0.0399 ms, 55.0% (`kernel`:
 * 0.157 ms, 14.0%); at batch 8 split in 0.0667 + 0.1379 = 0.2046 ms, 85.7% (`kernel`: 0.264 ms,
 * 66.3%); 16 x 256 channels x 4,096 in 256 groups by `kernel` 0.0453 ms, 96.7%. At batch 1 (the
 * spec's VAE block, 512 channels in 32 groups at 128 x 128: 32 rows) the 85% target is out of reach
 * for any two-dispatch path: a plain vec4 read of the 32 MiB took 0.0134 ms and a plain copy of 32
 * MiB each way 0.0222 ms (harness/baselines/nvidia-h200-log/27-bandops-explore.json, probe 4,522
 * GB/s), together 62.5% of the probe by this op's count. In that run `stats` cut into about 2,048
 * workgroups (64 pieces a row) took 0.0171 ms, 1,024 0.0157, 512 (16 pieces) 0.0155 and 256 0.0160,
 * so the plan aims at 512; at batch 8 (256 rows) 2,048 and 512 gave 0.0680 and 0.0681 ms, and 256
 * (one piece a row) 0.0722. `apply` took 0.0246 ms at batch 1, 90% of the copy's rate. Earlier,
 * with `stats` at about 2,048 workgroups (23-opsperf-run2.json, probe 4,586 GB/s): `kernel` at
 * batch 1 0.156 ms (14.1%, 32 busy workgroups), at batch 8 0.264 ms (66.4%); 16 x 256 channels x
 * 4,096 in 256 groups (4,096 rows of 16,384) by `kernel` 0.0448 ms, 97.9% (split: 0.0665 ms); where
 * the paths cross: 1,024 rows of 65,536 elements split 0.205 ms against `kernel` 0.224; 2,048 rows
 * of 32,768 split 0.205 against 0.202, and of 16,384 split 0.112 against 0.100 (the crossing has
 * not been measured again with `stats` at 512 workgroups, which leaves one piece a row from 512
 * rows on).
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import {
  type GpuTensor,
  type KernelPlan,
  type KernelSequence,
  kernelSequence,
  requireDevice,
  type ResidentDevice,
} from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { overrideEntry } from "../../harness/resolve.ts";
import { checkOptions, requireInt, requireOneOf, U32_MAX } from "../validate.ts";
import { type GroupNormVariant, KERNELS } from "./kernels.gen.ts";
import { type GroupNormArgs, type GroupNormShape, validateGroupNorm, validateGroupNormShape } from "./reference.ts";

export * from "./reference.ts";
export { type GroupNormVariant, KERNELS };

/** The kernels' uniform (include/params.wgsl), in WGSL declaration order. */
const PARAMS: readonly ParamField[] = [
  { name: "rows", type: "u32", of: "N * groups" },
  { name: "d", type: "u32", of: "C / groups * L" },
  { name: "l", type: "u32" },
  { name: "per_group", type: "u32" },
  { name: "groups", type: "u32" },
  { name: "eps", type: "f32" },
  { name: "has_weight", type: "u32" },
  { name: "has_bias", type: "u32" },
  { name: "chunks", type: "u32" },
  { name: "span", type: "u32" },
  { name: "blocks", type: "u32" },
  { name: "activation", type: "u32" },
  { name: "polls", type: "u32" },
];

/** Quads (aligned rows) or elements (ragged rows) one workgroup reads per block: 256 x `PER` (4). */
const BLOCK = 256 * 4;
/** Most summaries per row on the split path: one per invocation of `apply`'s merge. */
const MAX_CHUNKS = 256;
/** Workgroups `stats` aims at: rows times pieces, each piece a whole number of blocks. */
const STATS_WORKGROUPS = 512;
/** The most rows for which {@link groupNormPlan} takes the split path (when a row has more than one block). */
export const GROUP_NORM_SPLIT_ROWS = 1024;
/**
 * On the fused path, how many times a normalising workgroup polls a piece's published statistics
 * before it computes the piece itself (the default of {@link GroupNormOptions.polls}).
 */
export const GROUP_NORM_POLLS = 4096;

/** The keys of {@link GroupNormOptions} beside `override`. */
const OPTION_KEYS: readonly string[] = ["path", "polls"];

/** The paths {@link groupNormPlan} can take. */
export const GROUP_NORM_PATHS = ["rows", "split", "fused"] as const;

/** Options of {@link groupNormPlan}: a kernel override, and which path to take. */
export interface GroupNormOptions extends KernelOptions<GroupNormVariant> {
  /**
   * `rows` (entry point `kernel`, one workgroup per row), `split` (`stats` then `apply`, each row
   * cut into pieces) or `fused` (entry point `fused`: the split path's pieces and blocks in one
   * dispatch); default by shape (`rows` or `split`: `fused` is taken only when asked for), and a
   * variant of `stats` or `apply` forces `split`, one of `fused` forces `fused`.
   */
  path?: typeof GROUP_NORM_PATHS[number];
  /**
   * fused path: how many times a normalising workgroup polls a piece's published statistics before
   * computing the piece itself; an integer >= 0, default {@link GROUP_NORM_POLLS}. 0 makes every
   * block compute its row's statistics alone (each reads the whole row: correct, and slow).
   */
  polls?: number;
}

/** The dispatches of one group_norm call, in order. */
export interface GroupNormPlans {
  /** Which path the plans take. */
  path: typeof GROUP_NORM_PATHS[number];
  /**
   * rows: one plan [x, weight, bias, out]; split: `stats` [x, partials] then `apply`
   * [x, partials, weight, bias, out]; fused: one plan [x, weight, bias, state, out], state a `zeroed`
   * u32 binding the device clears before each run. weight and bias are empty bindings when absent.
   */
  steps: readonly KernelPlan[];
  /**
   * split and fused: the step(s) as one operation, run in one pass: bindings [x, weight, bias, out],
   * intermediate [partials] or [state], its cost the rows path's (x read twice, out written once).
   * What {@link groupNormGpu} submits, and what the bench times as `stats+apply` and `fused`.
   */
  sequence?: KernelSequence;
}

/** How the split path cuts the rows of a shape. */
export interface GroupNormSplit {
  /** Rows: N * groups. */
  rows: number;
  /** Whether rows are read as quads (d % 4 == 0 and L % 4 == 0) or element by element. */
  aligned: boolean;
  /** `stats` pieces per row, one summary each (at most 256). */
  chunks: number;
  /** Quads (aligned) or elements (ragged) per piece of `stats`, a multiple of 1,024 (the last piece shorter). */
  span: number;
  /** `apply` workgroups per row: blocks of 1,024 quads or elements. */
  blocks: number;
}

/**
 * How the split path cuts the rows of a shape: `stats` takes pieces of whole blocks, as many as
 * bring its grid near 512 workgroups (at most one per block and 256 per row); `apply` takes one
 * workgroup per block.
 *
 * @param shape `N`, `C`, `L`, `groups`
 * @returns the rows, whether they are aligned, and the pieces of each dispatch
 *
 * @example
 * ```ts
 * import { groupNormSplit } from "@xpu/ops/ops/group_norm";
 * // 32 rows of 16 x 16,384 elements (65,536 quads: 64 blocks).
 * groupNormSplit({ N: 1, C: 512, L: 128 * 128, groups: 32 }); // { rows: 32, aligned: true, chunks: 16, span: 4096, blocks: 64 }
 * ```
 */
export function groupNormSplit(shape: GroupNormShape): GroupNormSplit {
  validateGroupNormShape(shape);
  const { N, C, L, groups } = shape;
  const rows = N * groups;
  const d = (C / groups) * L;
  const aligned = d % 4 === 0 && L % 4 === 0;
  const length = aligned ? d / 4 : d;
  const blocks = Math.ceil(length / BLOCK);
  const wanted = Math.min(MAX_CHUNKS, blocks, Math.ceil(STATS_WORKGROUPS / rows));
  const span = BLOCK * Math.ceil(blocks / wanted);
  return { rows, aligned, chunks: Math.ceil(length / span), span, blocks };
}

/**
 * Plans `group_norm` on the GPU.
 *
 * @param gpu the device
 * @param shape `N`, `C`, `L`, `groups`, `eps`, `activation`, and whether a weight and a bias are given
 * @param options kernel override, path, and the fused path's `polls`
 * @returns the path and its plans, to be submitted in order, or its `sequence` (see
 *   {@link GroupNormPlans} for the bindings)
 * @throws Error naming a bad argument, or an override that names no group_norm entry point
 *
 * @example Resident tensors: the fused path with SiLU, submitted as its sequence
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { groupNormPlan } from "@xpu/ops/ops/group_norm";
 * const gpu = await acquireDevice();
 * const shape = { N: 1, C: 4, L: 2048, groups: 2, weight: true, activation: "silu" as const };
 * const { sequence } = groupNormPlan(gpu, shape, { path: "fused" });
 * const x = gpu.upload(new Float32Array(4 * 2048).map((_, i) => i % 7));
 * const weight = gpu.upload(new Float32Array([1, 1, 2, 2]));
 * const none = gpu.alloc("f32", 0);
 * const out = gpu.alloc("f32", 4 * 2048);
 * const state = gpu.alloc("u32", sequence!.intermediates[0].length); // cleared before each run
 * await gpu.submitSequence(sequence!, [x, weight, none, out, state]); // bindings, then intermediates
 * const y = await gpu.read(out);
 * gpu.destroy();
 * ```
 */
export function groupNormPlan(
  gpu: ResidentDevice,
  shape: GroupNormShape & { weight?: boolean; bias?: boolean },
  options?: GroupNormOptions,
): GroupNormPlans {
  requireDevice("groupNorm", gpu);
  checkOptions("groupNorm", options, OPTION_KEYS);
  const eps = validateGroupNormShape(shape);
  const { override, path: asked, polls: pollsGiven } = options ?? {};
  if (asked !== undefined) requireOneOf("groupNorm", "path", asked, GROUP_NORM_PATHS);
  const polls = requireInt("groupNorm", "polls", pollsGiven ?? GROUP_NORM_POLLS, 0, U32_MAX);
  const named = overrideEntry(override);
  if (named !== undefined && !["kernel", "stats", "apply", "fused"].includes(named)) {
    throw new Error(
      `groupNorm: override "${override}" is not a variant of entry point kernel, stats, apply or fused`,
    );
  }
  const { N, C, L, groups } = shape;
  const n = N * C * L;
  const d = (C / groups) * L;
  const { rows, aligned, chunks, span, blocks } = groupNormSplit(shape);
  const path = asked ??
    (named === "stats" || named === "apply"
      ? "split"
      : named === "fused"
      ? "fused"
      : named === "kernel"
      ? "rows"
      : rows <= GROUP_NORM_SPLIT_ROWS && blocks > 1
      ? "split"
      : "rows");
  const hasWeight = shape.weight ?? false, hasBias = shape.bias ?? false;
  const affine = 4 * C * (Number(hasWeight) + Number(hasBias));
  // SiLU's sigmoid (exp, add, divide) and product: 4 FLOPs per element more.
  const silu = shape.activation === "silu" ? 4 * n : 0;
  const values = {
    rows,
    d,
    l: L,
    per_group: C / groups,
    groups,
    eps,
    has_weight: Number(hasWeight),
    has_bias: Number(hasBias),
    activation: shape.activation === "silu" ? 1 : 0,
    polls,
  };
  const weight = { name: "weight", dtype: "f32", length: hasWeight ? C : 0, role: "input" } as const;
  const bias = { name: "bias", dtype: "f32", length: hasBias ? C : 0, role: "input" } as const;
  const kernelFor = (entry: string) => gpu.resolve(KERNELS, entry, named === entry ? { override } : {});
  const maxPerDimension = gpu.limits.maxComputeWorkgroupsPerDimension;
  if (path === "rows") {
    return {
      path,
      steps: [{
        op: "group_norm",
        kernel: kernelFor("kernel"),
        bindings: [{ name: "x", dtype: "f32", length: n, role: "input" }, weight, bias, {
          name: "out",
          dtype: "f32",
          length: n,
          role: "output",
        }],
        params: packParams(PARAMS, { ...values, chunks: 1, span: aligned ? d / 4 : d, blocks }, "group_norm"),
        workgroups: foldWorkgroups(rows, maxPerDimension),
        // x read twice (statistics, then normalisation) and written once, weight and bias once; per
        // element about 4 FLOPs for the statistics and 4 for the normalisation.
        cost: { bytes: 12 * n + affine, flops: 8 * n + silu },
      }],
    };
  }
  const params = packParams(PARAMS, { ...values, chunks, span, blocks }, "group_norm");
  const x = { name: "x", dtype: "f32", length: n, role: "input" } as const;
  const out = { name: "out", dtype: "f32", length: n, role: "output" } as const;
  if (path === "fused") {
    const state = { name: "state", dtype: "u32", length: 1 + 2 * rows * chunks, role: "output", zeroed: true } as const;
    const fused: KernelPlan = {
      op: "group_norm",
      kernel: kernelFor("fused"),
      bindings: [x, weight, bias, state, out],
      params,
      workgroups: foldWorkgroups(rows * (chunks + blocks), maxPerDimension),
      // Counted as the operation (x read twice, out written once), as the other paths are, so the
      // three compare at one count; the second read of x may come from L2.
      cost: { bytes: 12 * n + affine, flops: 8 * n + silu },
    };
    const sequence = kernelSequence("group_norm", [x, weight, bias, out], [state], [
      { plan: fused, tensors: [0, 1, 2, 4, 3] },
    ], fused.cost);
    return { path, steps: [fused], sequence };
  }
  const partials = 4 * rows * chunks;
  const stats: KernelPlan = {
    op: "group_norm",
    kernel: kernelFor("stats"),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "partials", dtype: "f32", length: partials, role: "output" },
    ],
    params,
    workgroups: foldWorkgroups(rows * chunks, maxPerDimension),
    // x read once, a summary of 4 floats written per piece; about 4 FLOPs per element.
    cost: { bytes: 4 * n + 4 * partials, flops: 4 * n },
  };
  const apply: KernelPlan = {
    op: "group_norm",
    kernel: kernelFor("apply"),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "partials", dtype: "f32", length: partials, role: "input" },
      weight,
      bias,
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params,
    workgroups: foldWorkgroups(rows * blocks, maxPerDimension),
    // x read and out written once, the summaries and weight and bias read (the summaries once
    // per block of their row, from L2, counted once); about 4 FLOPs per element.
    cost: { bytes: 8 * n + 4 * partials + affine, flops: 4 * n + silu },
  };
  const sequence = kernelSequence("group_norm", [stats.bindings[0], weight, bias, apply.bindings[4]], [
    stats.bindings[1],
  ], [
    { plan: stats, tensors: [0, 4] },
    { plan: apply, tensors: [0, 4, 1, 2, 3] },
  ], { bytes: 12 * n + affine, flops: 8 * n + silu });
  return { path, steps: [stats, apply], sequence };
}

/**
 * Group normalisation on the GPU.
 *
 * @param gpu the device
 * @param args as {@link groupNorm}
 * @param options kernel override and path
 * @returns the result, `[N, C, L]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { groupNormGpu } from "@xpu/ops/ops/group_norm";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 3, 5, 7, 2, 4, 6, 8]);
 * const out = await groupNormGpu(gpu, { x, N: 1, C: 4, L: 2, groups: 2, weight: new Float32Array([1, 2, 1, 2]) });
 * const activated = await groupNormGpu(gpu, { x, N: 1, C: 4, L: 2, groups: 2, activation: "silu" }); // silu(group_norm(x))
 * gpu.destroy();
 * ```
 */
export async function groupNormGpu(
  gpu: ResidentDevice,
  args: GroupNormArgs,
  options?: GroupNormOptions,
): Promise<Float32Array> {
  requireDevice("groupNorm", gpu);
  checkOptions("groupNorm", options, OPTION_KEYS);
  validateGroupNorm(args);
  const { path, steps, sequence } = groupNormPlan(
    gpu,
    { ...args, weight: args.weight !== undefined, bias: args.bias !== undefined },
    options,
  );
  const empty = new Float32Array(0);
  const weight = args.weight ?? empty, bias = args.bias ?? empty;
  if (path === "rows") {
    const [out] = await gpu.run(steps[0], [args.x, weight, bias]);
    return out as Float32Array;
  }
  const made: GpuTensor[] = [];
  try {
    const tensors = [...sequence!.bindings, ...sequence!.intermediates].map((spec, i) => {
      const t = i < 3
        ? gpu.upload([args.x, weight, bias][i], spec.name)
        : gpu.alloc(spec.dtype, spec.length, spec.name);
      made.push(t);
      return t;
    });
    await gpu.submitSequence(sequence!, tensors);
    return await gpu.read(tensors[3]) as Float32Array;
  } finally {
    for (const t of made) t.buffer.destroy();
  }
}
