/**
 * matmul: dense and weight-quantized GEMM, the prefill-shaped half of inference (decode-shaped
 * products, one vector against a matrix, are ops/matvec: they reuse nothing and want no tiling).
 *
 * - `matmul` is `torch.mm(a, b)`: `a` `[M, K]` times `b` `[K, N]`, f32 row-major. Entry points
 *   `kernel` (128 x 128 tiles, 8 x 8 outputs per invocation) and `tile64` (64 x 64 tiles, 8 x 4 per
 *   invocation); {@link matmulPlan} picks one by size.
 * - `matmulLinear` (entry points `linear`, 128 x 128, and `linear_tile64`) is `F.linear(a, weight)`,
 *   `a @ weight^T`, with the f32 weight in a Linear layer's orientation, `[N, K]`, as checkpoints
 *   store it and as the quantized products below take theirs: a model binds its checkpoint's tensor
 *   as it is, never a transposed copy. The kernels are `kernel`'s and `tile64`'s with one change: the
 *   weight's block is staged as `q8row` stages its decoded weight (each invocation loads four
 *   consecutive k of two weight rows, as it loads a's, and writes them transposed into workgroup
 *   memory, into the layout in which `kernel` stages b), so the k-steps, the accumulators, the
 *   stores, the interior path and the 16 KiB of workgroup memory are `kernel`'s, include for include.
 *   (Not yet timed on the H200; the bench times `linear` beside `kernel` at the same shapes.)
 * - `matmulQ8` (entry points `q8row`, 128 x 128, and `q8row_tile64`) is
 *   `F.linear(a, dequant(weight))`: the weight is the operand in a Linear layer's orientation,
 *   `[N, K]`, one row per output feature, and the product is `a @ dequant(weight)^T`. It is held as
 *   int8 codes four to a u32 (least-significant byte first, two's complement), `[N, ceil(K/4)]`,
 *   with one f32 scale per row: ops/matvec's format, so a weight packed once with `packQ8` serves
 *   both decode (matvecQ8) and prefill (here).
 * - `matmulQ4G128` (entry points `q4g128` and `q4g128_tile64`) is the same with ops/matvec's q4
 *   format: eight two's-complement nibbles per u32, least significant first, `[N, ceil(K/8)]`, and
 *   one scale per group of 128 columns of a row, `[N, ceil(K/128)]` (`quantizeQ4G128` + `packQ4`).
 * - `matmulF16` (entry point `f16storage`, 128 x 128 only) is `matmul` with both operands stored as
 *   IEEE binary16: `a` `[M, K]` and `b` `[K, N]` row-major, two halves per u32 word, the
 *   lower-indexed element in the low 16 bits (what WGSL's `unpack2x16float` reads), element `e` of
 *   a matrix in word `e >> 1`, so a row straddles two words when its length is odd; that is
 *   `ceil(M * K / 2)` and `ceil(K * N / 2)` words. `packF16` rounds f32 values to halves to nearest,
 *   ties to even, as torch's `.half()`, and `unpackF16` reads them back. It matches
 *   `torch.mm(a.half().float(), b.half().float())` within the f32 GEMM's tolerance: the kernel reads
 *   half the bytes of `matmul`'s operands, but its arithmetic is f32 (f32 FMAs into f32
 *   accumulators), so it needs no `shader-f16`: storage only. An f16-arithmetic variant would not
 *   pay: the H200's non-tensor f16 rate is twice f32's, but through this WebGPU its f16 FMAs run at
 *   the f32 rate (harness/baselines/nvidia-h200-log/09-floor-and-f16.txt: 64.5 TFLOP/s at vector
 *   widths 1, 2 and 4, f32 58.5-64.4), and reading the halves as `vec4<f16>` under `shader-f16`
 *   instead of through `unpack2x16float` was no faster (31.6 TFLOP/s either way at 4096^3, before the
 *   interior path below). The entry point is not called `f16` because a bare `f16` is the dtype
 *   suffix of a variant name (`<entry>.f16.wgsl`, a variant computing in f16, used only once
 *   `shader-f16` is granted and the known-answer check has passed), which harness/variants.ts
 *   refuses as an entry point. There is no 64 x 64 tile: the plan always takes the 128 x 128 one.
 * - `matmulQ8Dp4a` (entry points `q8row_dp4a`, `q8row_dp4a_tile64`) and `matmulQ4G128Dp4a`
 *   (`q4g128_dp4a`, `q4g128_dp4a_tile64`; the tile by the rule below, with a `_pipelined` form of
 *   each 128 x 128 kernel taken on NVIDIA as below; with an epilogue, below, each with a `_fused`
 *   form) take the activations as int8 codes with one scale per row too
 *   (ops/quantize's `quantizePackedPlan` writes them) and sum code products exactly in i32 with WGSL's
 *   `dot4I8Packed`, for prefill and a DiT's Linear layers: dp4a.ts (plans; refused where the adapter's
 *   WGSL lacks the feature) and reference_dp4a.ts (what they compute, and what it costs against the
 *   f32 activations above).
 *
 * The quantized kernels decode the weight while staging it into workgroup memory, so there is no
 * separate dequantize pass and the f32 weight never exists in memory (ops/dequant_transpose makes
 * that f32 operand when a caller wants it). q8 sums `a` times the codes, which are exact in f32,
 * and applies each row's scale once per output; q4 stages code times its group's scale, because
 * the scale changes along the summed axis.
 *
 * NaN and ±Infinity give torch's results (nonfinite.test.ts, against torch 2.13's goldens): NaN in
 * a row of `a` or a column of the weight makes those outputs NaN, inf * 0 and inf - inf are NaN, and
 * a quantized element is `code * scale`, so an infinite scale times a zero code is NaN. The q8
 * kernels scale each sum of `a` times the codes once, which for an infinite scale would give ±inf
 * where torch's term-by-term sum is NaN; a column whose scale is infinite (tested from its bits after
 * the walk over K, outside the k-steps) is summed again term by term (`q8_infinite_scale.wgsl`).
 * `packF16` turns a finite value past 65504 into inf, as `.half()` does.
 *
 * Fused epilogues. Every product but `matmulF16` (`matmul`, `matmulLinear`, `matmulQ8`,
 * `matmulQ4G128`, `matmulQ8Dp4a`, `matmulQ4G128Dp4a`) takes an epilogue in the plan's shape ({@link MatmulEpilogue}: `bias`, `activation` of `"gelu"` (erf, torch's default),
 * `"gelu_tanh"` or `"silu"`, `gateRows`, `accumulate`), applied to each output of the product in the
 * order `+ bias[n]`, the activation, `x gate[floor(m / gateRows), n]`, and then `c = ...` or, with
 * `accumulate`, `c += ...` (reference.ts defines each step), so a transformer block's Linear layers
 * need no elementwise pass after them: a residual stream is updated in place (WebGPU forbids binding
 * one buffer twice where one is writable, so `c` itself is bound read and written, role `inout`).
 * A plan with any step takes the product's fused kernel (`kernel_fused`, `tile64_fused`,
 * `linear_fused`, `linear_tile64_fused`, `q8row_fused`, `q8row_tile64_fused`, `q4g128_fused`,
 * `q4g128_tile64_fused`, `q8row_dp4a_fused`, `q8row_dp4a_tile64_fused`, `q4g128_dp4a_fused`,
 * `q4g128_dp4a_tile64_fused`; the tile by the same rule), whose bindings are, in order:
 *
 *     matmul            a, b,                        bias, gate, c
 *     matmulLinear      a, weight,                   bias, gate, c
 *     matmulQ8          a, weight, scales,           bias, gate, c
 *     matmulQ4G128      a, weight, scales,           bias, gate, c
 *     matmulQ8Dp4a      a, aScales, weight, scales,  bias, gate, c
 *     matmulQ4G128Dp4a  a, aScales, weight, scales,  bias, gate, c
 *
 * `bias` is `[N]` and `gate` `[M / gateRows, N]`, each of length 0 when its step is off (bind any
 * f32 tensor there; the kernel never reads it). A plan without an epilogue keeps the plain kernel and
 * its bindings (`a`, [`aScales`], `b` or `weight`, [`scales`], `c`). The dp4a kernels apply the
 * epilogue to the finished f32 output, after the weight's and the activations' scales. Why this shape: WebGPU's `layout: "auto"`
 * makes every binding a shader uses part of its layout, so binding lists that vary with the steps
 * would take a kernel per list, four per product, each a 128 x 128 kernel of about 35 KB of WGSL;
 * with fixed bindings, one fused kernel per product reads the steps from uniform flags (the same for
 * every invocation, so each branch is taken or skipped by whole workgroups) and the plain kernels,
 * their measured code and their callers' bindings stay as they were. A fused kernel's product is the
 * plain kernel's, include for include; the epilogue runs once per output, on the accumulators in
 * registers after the walk over K, before the stores. `matmulF16` has no epilogue and refuses one.
 *
 * How the 128 x 128 kernels (`kernel`, `linear`, `q8row`, `q4g128`, `f16storage` and the fused ones)
 * are built, and why (the WGSL has no subgroups here, so everything goes through registers and
 * workgroup memory):
 * - 8 x 8 outputs per invocation in sixteen named vec4 accumulators, function-local variables of the
 *   entry point: per k, four vec4 reads of workgroup memory feed 64 FMAs, so the FMA units, not
 *   workgroup memory, set the pace. (An invocation owning 4 x 4 reads two vec4s for 16 FMAs and is
 *   bound by workgroup memory.)
 * - a's block is staged transposed, so one vec4 read gives four rows at one k; b's block as vec4s
 *   along a row of the tile, and a weight in the Linear orientation (`linear`'s f32 rows, the
 *   quantized kernels' decoded codes) transposed into that same layout.
 * - K walked 16 at a time through one stage of workgroup memory, 16 KiB (WebGPU's default
 *   maxComputeWorkgroupStorageSize, so one kernel serves every device): each invocation loads its
 *   share of a block, stores it, a barrier, the 16 k-steps, a barrier.
 * - The stage is two-dimensional, `array<array<vec4f, LANES>, STEP>` indexed `[k][i]`: WGSL keeps
 *   every index in range, and a k-step's reads then index the outer array by a constant and the
 *   inner one by tx or ty alone, where a flat `a_t[k * LANES + ty]` made each of the four reads of
 *   every k-step an index expression of its own. Same arithmetic in the same order (bit-identical
 *   outputs); on the H100, 4608 x 10240 x 3840: `kernel` 37.4 -> 39.8 TFLOP/s, `linear` 34.8 -> 38.2,
 *   `q8row` 36.6 -> 42.0 (an A/B of the two sources, GPU timestamps, 10 samples:
 *   `harness/baselines/nvidia-h100-log/02-matmul-staging-ab.txt`).
 * - The 16 k-steps are written out inline in the entry point, neither looped over (WGSL compiles
 *   every loop to a bounded `loop`, which a driver may not unroll) nor called as a function.
 * - Operands are read a vec4 at a time when their rows are 16-byte aligned (K % 4 == 0 for a,
 *   N % 4 == 0 for b and c), element by element otherwise; `f16storage` reads four halves of a row
 *   as one 8-byte pair of words under the same conditions (a row then starts on an 8-byte boundary)
 *   and decodes them with `unpack2x16float` as it stages them. The bound checks are in the staging
 *   loads (zeros outside an operand) and the final stores, never in the k-steps.
 * - `kernel`, `linear` and `f16storage` skip even those in interior tiles (wholly inside c,
 *   K % 4 == 0 and N % 4 == 0): their full blocks of K are staged with unchecked loads at indices
 *   computed once, and c is stored unchecked (4096^3 on the H200: 34.8 -> 36.4 TFLOP/s; `f16storage`
 *   31.6 -> 36.5; 512 x 14336 x 4096: 30.0 -> 30.8 and 26.2 -> 31.0). `q8row` and `q4g128` keep the
 *   checks.
 * This design replaced a two-stage one (the next block prefetched into registers, one barrier per
 * block) that needed an NVIDIA variant at 32 KiB of workgroup memory; measured on the H200 it was
 * slower (`harness/baselines/nvidia-h200-design.md`, matmul). With the NVIDIA variant's K-step
 * of 16 now within the portable 16 KiB, there is no target variant. `tile64` and `linear_tile64`
 * are the same design at 64 x 64 (8 x 4 outputs per invocation, 8 KiB); `q8row_tile64` and
 * `q4g128_tile64` keep a simpler one (4 x 4 outputs per invocation, a looped k, element-by-element
 * loads). Every kernel but the pipelined ones stays within WebGPU's default 16 KiB of workgroup
 * memory (a test holds them to it).
 *
 * Refused, with an error naming the argument: M, N or K not an integer >= 1, arrays of the wrong
 * type or length (`matmulF16`'s operands are Uint32Arrays of exactly `ceil(M * K / 2)` and
 * `ceil(K * N / 2)` words), an activation other than the three, a gateRows that is not an integer
 * >= 1 dividing M, a gate without gateRows (or the reverse), accumulate without the prior c (or the
 * reverse), an epilogue given to `matmulF16`, and an override of a plain kernel for a fused plan (or
 * the reverse); and, before anything is uploaded, an operand larger than the device's
 * maxStorageBufferBindingSize, with an error naming the operand and the limit. Grids of more tiles
 * than maxComputeWorkgroupsPerDimension (65,535) fold into a second dimension.
 *
 * On NVIDIA, where the device grants 32 KiB of workgroup memory, the 128 x 128 f32 tiles are
 * pipelined: `kernel_pipelined`, `linear_pipelined` and `linear_fused_pipelined` are `kernel`,
 * `linear` and `linear_fused` with another walk over K, two stages of 16 columns in 32 KiB, the next
 * block's loads issued before this block's k-steps and one barrier per block (kernel_pipelined.wgsl
 * says why). On the H100 at 4608 x 10240 x 3840 they run at 45.0 and 43.0 TFLOP/s against the
 * single stage's 39.8 and 38.1, and 39.2-43.6 against 34.0-38.6 at the other DiT shapes
 * (`harness/baselines/nvidia-h100-log/04-matmul-rows.txt`; the bench times both at every large
 * shape). The two-stage design this op once replaced (below) read flat arrays. Elsewhere they are not
 * measured, so not chosen; an override runs them on any device that grants the memory (a LimitError
 * naming maxComputeWorkgroupStorageSize where it does not), and the tests hold them to the reference.
 * The dp4a products' 128 x 128 tiles have pipelined forms by the same rule (tiles.ts's `tileEntry`
 * chooses for both; dp4a.ts says the design), not yet timed on a GPU.
 *
 * Tile choice: the 128 x 128 tile does four times the work per workgroup of the 64 x 64 one, so it
 * only pays when there are still enough tiles to occupy a large GPU. The plans use it when M and N
 * are both at least 128 and the grid has at least {@link LARGE_TILE_MIN_TILES} of them (an H200
 * runs 132 multiprocessors, two such workgroups each). In the H200 baseline
 * (`harness/baselines/nvidia-h200.json`, every entry point timed at every shape) the choice was the
 * faster entry point at all eight GEMM shapes: 1024^3 (64 tiles) tile64 21.5 against 12.7 TFLOP/s;
 * 2048^3 (256 tiles) the 128 tile 34.1 against 26.8; 4096^3, and 512 x 14336 x 4096 in all three
 * formats, the 128 tile; M = 64 the 64 tile for q8 and q4. Where between 64 and 256 tiles the
 * crossover lies is not measured for those kernels. NVIDIA's pipelined tiles take over from
 * {@link PIPELINED_MIN_TILES} (80) tiles: measured on an H100 at Qwen3-4B's encoder products over 512
 * rows, they beat the 64 x 64 tile at 80, 128 and 304 tiles and lost at 32 (tiles.ts gives the figures).
 *
 * @module
 */

import { requireWorkgroupStorage, workgroupBytesOf } from "../../harness/limits.ts";
import { type BindingSpec, type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import type { Resolution } from "../../harness/resolve.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type MatmulVariant } from "./kernels.gen.ts";
import { tileEntry, tileGrid } from "./tiles.ts";
import { epilogueInputs, gemmEpilogue, planShape } from "./epilogue_plan.ts";
import {
  hasEpilogue,
  type MatmulArgs,
  type MatmulEpilogue,
  type MatmulF16Args,
  type MatmulLinearArgs,
  type MatmulQ4G128Args,
  type MatmulQ8Args,
  type MatmulShape,
  validateMatmul,
  validateMatmulF16,
  validateMatmulF16Shape,
  validateMatmulLinear,
  validateMatmulLinearShape,
  validateMatmulQ4G128,
  validateMatmulQ4G128Shape,
  validateMatmulQ8,
  validateMatmulQ8Shape,
  validateMatmulShape,
} from "./reference.ts";

export * from "./reference.ts";
export * from "./reference_dp4a.ts";
export * from "./dp4a.ts";
export { KERNELS, type MatmulVariant };

export { LARGE_TILE_MIN_TILES, PIPELINED_MIN_TILES } from "./tiles.ts";

type GemmOp = "matmul" | "matmulLinear" | "matmulQ8" | "matmulQ4G128" | "matmulF16";
type FusedOp = Exclude<GemmOp, "matmulF16">;
/** Each product's entry points: the 128 x 128 tile and, where there is one, the 64 x 64 one. */
const ENTRIES: Readonly<Record<GemmOp, readonly [string] | readonly [string, string]>> = {
  matmul: ["kernel", "tile64"],
  matmulLinear: ["linear", "linear_tile64"],
  matmulQ8: ["q8row", "q8row_tile64"],
  matmulQ4G128: ["q4g128", "q4g128_tile64"],
  matmulF16: ["f16storage"],
};
/**
 * The pipelined form of a 128 x 128 entry point, where there is one (two stages of 16 columns in 32
 * KiB; kernel_pipelined.wgsl says the design): what the plans take for that tile on an NVIDIA
 * device that grants the workgroup memory, and what an override may name anywhere.
 */
const PIPELINED: Readonly<Record<string, string>> = {
  kernel: "kernel_pipelined",
  linear: "linear_pipelined",
  linear_fused: "linear_fused_pipelined",
};
/** The same products with the fused epilogue, taken when the plan's shape asks for one. */
const FUSED_ENTRIES: Readonly<Record<FusedOp, readonly [string, string]>> = {
  matmul: ["kernel_fused", "tile64_fused"],
  matmulLinear: ["linear_fused", "linear_tile64_fused"],
  matmulQ8: ["q8row_fused", "q8row_tile64_fused"],
  matmulQ4G128: ["q4g128_fused", "q4g128_tile64_fused"],
};

/**
 * The kernel of a plan: the variant an override names (one of the op's entry points, fused or not
 * as the plan is), or the entry point the size calls for (the only one, where the op has one),
 * resolved for the device's target.
 */
function gemmKernel(
  gpu: ResidentDevice,
  op: GemmOp,
  shape: MatmulShape,
  fused: boolean,
  options: KernelOptions<MatmulVariant> | undefined,
): Resolution {
  const entries = fused && op !== "matmulF16" ? FUSED_ENTRIES[op] : ENTRIES[op];
  const [large, small = large] = entries;
  const pipelined = PIPELINED[large];
  const allowed = pipelined ? [...entries, pipelined] : entries;
  const tile = pipelined ? { entry: pipelined, source: KERNELS[pipelined as MatmulVariant] } : undefined;
  return gpu.resolveAmong(KERNELS, op, allowed, tileEntry(gpu, op, shape, large, small, tile), options);
}

/**
 * A product's plan (shape already validated): its operands' bindings, then the epilogue's part
 * (epilogue_plan.ts): for a fused plan `bias` and `gate` (length 0 where their step is off), then
 * `c`, read and written when the epilogue accumulates. `operandBytes` is what the operands take in
 * memory.
 */
function gemmPlan(
  gpu: ResidentDevice,
  op: GemmOp,
  shape: MatmulShape & MatmulEpilogue,
  operands: readonly BindingSpec[],
  operandBytes: number,
  options: KernelOptions<MatmulVariant> | undefined,
): KernelPlan {
  const { M, N, K } = shape;
  const kernel = gemmKernel(gpu, op, shape, hasEpilogue(shape), options);
  // The pipelined tiles need more workgroup memory than WebGPU's default: refused before dispatch.
  const where = `${op}/${kernel.variant}`;
  requireWorkgroupStorage(gpu, where, workgroupBytesOf(kernel.source, where));
  const epilogue = gemmEpilogue(op, shape);
  return {
    op,
    kernel,
    bindings: [...operands, ...epilogue.bindings],
    params: epilogue.params,
    workgroups: tileGrid(gpu, shape, kernel),
    // The operands read once (a multiply and an add per term), then the epilogue's part.
    cost: { bytes: operandBytes + epilogue.cost.bytes, flops: 2 * M * N * K + epilogue.cost.flops },
  };
}

/** Bytes of f32 (or u32) bindings: four per element. */
const bytesOf = (bindings: readonly BindingSpec[]) => 4 * bindings.reduce((sum, b) => sum + b.length, 0);

/**
 * Plans `matmul` on the GPU, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param shape `M`, `N`, `K` and the epilogue's steps ({@link MatmulEpilogue})
 * @param options kernel override: a variant of `kernel` or of `tile64` (which also picks the tile),
 *   or of `kernel_pipelined`; with an epilogue, of `kernel_fused` or `tile64_fused`
 * @returns the plan, one workgroup per tile of `c`; bindings `a`, `b` (inputs) and `c` (output), or
 *   with an epilogue `a`, `b`, `bias`, `gate` (inputs; each of length 0 where its step is off) and
 *   `c` (output, or `inout` when it accumulates)
 * @throws Error naming the argument, as {@link validateMatmulShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { matmulPlan } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const a = gpu.upload(new Float32Array([1, 2, 3, 4])); // [M = 2, K = 2]
 * const b = gpu.upload(new Float32Array([1, 0, 0, 1])); // [K = 2, N = 2], the identity
 * const c = gpu.alloc("f32", 4);
 * await gpu.submit([matmulPlan(gpu, { M: 2, N: 2, K: 2 }), [a, b, c]]);
 * const product = await gpu.read(c); // [1, 2, 3, 4]
 * // c += a @ b, in place: the fused plan binds bias and gate too (length 0 here: any tensor will do).
 * await gpu.submit([matmulPlan(gpu, { M: 2, N: 2, K: 2, accumulate: true }), [a, b, a, a, c]]);
 * const twice = await gpu.read(c); // [2, 4, 6, 8]
 * gpu.destroy();
 * ```
 */
export function matmulPlan(
  gpu: ResidentDevice,
  shape: MatmulShape & MatmulEpilogue,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmul", gpu);
  checkOptions("matmul", options);
  validateMatmulShape(shape);
  const { M, N, K } = shape;
  const operands: BindingSpec[] = [
    { name: "a", dtype: "f32", length: M * K, role: "input" },
    { name: "b", dtype: "f32", length: K * N, role: "input" },
  ];
  return gemmPlan(gpu, "matmul", shape, operands, bytesOf(operands), options);
}

/**
 * `a @ b` on the GPU, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param args as {@link matmul}
 * @param options kernel override
 * @returns the result, `[M, N]`
 * @throws Error naming the argument, as {@link validateMatmul}
 *
 * @example
 * ```ts
 * import { acquireDevice, matmulGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const a = new Float32Array([1, 2, 3, 4]);
 * const c = await matmulGpu(gpu, { a, b: new Float32Array([5, 6, 7, 8]), M: 2, N: 2, K: 2 }); // [19, 22, 43, 50]
 * const d = await matmulGpu(gpu, { a, b: new Float32Array([5, 6, 7, 8]), M: 2, N: 2, K: 2, bias: new Float32Array([-19, -22]) }); // [0, 0, 24, 28]
 * gpu.destroy();
 * ```
 */
export async function matmulGpu(
  gpu: ResidentDevice,
  args: MatmulArgs,
  options?: KernelOptions<MatmulVariant>,
): Promise<Float32Array> {
  requireDevice("matmul", gpu);
  checkOptions("matmul", options);
  validateMatmul(args);
  const [c] = await gpu.run(matmulPlan(gpu, planShape(args), options), [args.a, args.b, ...epilogueInputs(args)]);
  return c as Float32Array;
}

/**
 * Plans `matmulLinear` (`a @ weight^T`, an f32 weight `[N, K]`) on the GPU, with an optional fused
 * epilogue.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K` and the epilogue's steps
 *   ({@link MatmulEpilogue})
 * @param options kernel override: a variant of `linear` or of `linear_tile64` (which also picks the
 *   tile), or of `linear_pipelined`; with an epilogue, of `linear_fused`, `linear_tile64_fused` or `linear_fused_pipelined`
 * @returns the plan, one workgroup per tile of `c`; bindings `a`, `weight` (inputs) and `c` (output),
 *   or with an epilogue `a`, `weight`, `bias`, `gate` (inputs; each of length 0 where its step is off)
 *   and `c` (output, or `inout` when it accumulates)
 * @throws Error naming the argument, as {@link validateMatmulLinearShape}
 *
 * @example A Linear layer with its bias and a GELU, the weight as the checkpoint stores it
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { matmulLinearPlan } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2])); // [M = 1, K = 2]
 * const weight = gpu.upload(new Float32Array([1, 0, 0, 1, 1, 1])); // [N = 3, K = 2]
 * const bias = gpu.upload(new Float32Array([0, 0, -3]));
 * const y = gpu.alloc("f32", 3);
 * const plan = matmulLinearPlan(gpu, { M: 1, N: 3, K: 2, bias: true, activation: "gelu" });
 * await gpu.submit([plan, [x, weight, bias, bias, y]]); // gate is off: bias stands in for it
 * const out = await gpu.read(y); // gelu([1, 2, 0]) = [0.8413..., 1.9544..., 0]
 * gpu.destroy();
 * ```
 */
export function matmulLinearPlan(
  gpu: ResidentDevice,
  shape: MatmulShape & MatmulEpilogue,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmulLinear", gpu);
  checkOptions("matmulLinear", options);
  validateMatmulLinearShape(shape);
  const { M, N, K } = shape;
  const operands: BindingSpec[] = [
    { name: "a", dtype: "f32", length: M * K, role: "input" },
    { name: "weight", dtype: "f32", length: N * K, role: "input" },
  ];
  return gemmPlan(gpu, "matmulLinear", shape, operands, bytesOf(operands), options);
}

/**
 * `a @ weight^T` with an f32 weight `[N, K]` on the GPU, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param args as {@link matmulLinear}
 * @param options kernel override
 * @returns the result, `[M, N]`
 * @throws Error naming the argument, as {@link validateMatmulLinear}
 *
 * @example
 * ```ts
 * import { acquireDevice, matmulLinearGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const a = new Float32Array([1, 2, 3, 4]);
 * const weight = new Float32Array([5, 6, 7, 8]); // [N = 2, K = 2]
 * const c = await matmulLinearGpu(gpu, { a, weight, M: 2, N: 2, K: 2 }); // [17, 23, 39, 53]
 * gpu.destroy();
 * ```
 */
export async function matmulLinearGpu(
  gpu: ResidentDevice,
  args: MatmulLinearArgs,
  options?: KernelOptions<MatmulVariant>,
): Promise<Float32Array> {
  requireDevice("matmulLinear", gpu);
  checkOptions("matmulLinear", options);
  validateMatmulLinear(args);
  const plan = matmulLinearPlan(gpu, planShape(args), options);
  const [c] = await gpu.run(plan, [args.a, args.weight, ...epilogueInputs(args)]);
  return c as Float32Array;
}

/**
 * Plans `matmulQ8` on the GPU, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K` and the epilogue's steps
 *   ({@link MatmulEpilogue})
 * @param options kernel override: a variant of `q8row` or of `q8row_tile64` (which also picks the
 *   tile); with an epilogue, of `q8row_fused` or `q8row_tile64_fused`
 * @returns the plan; bindings `a`, `weight`, `scales` (inputs) and `c` (output), or with an epilogue
 *   `a`, `weight`, `scales`, `bias`, `gate` (inputs; each of length 0 where its step is off) and `c`
 *   (output, or `inout` when it accumulates)
 * @throws Error naming the argument, as {@link validateMatmulQ8Shape}
 *
 * @example Resident tensors: the int8 weight uploaded once
 * ```ts
 * import { acquireDevice, packQ8 } from "@xpu/ops";
 * import { matmulQ8Plan } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const a = gpu.upload(new Float32Array([1, 1, 1, 1])); // [M = 1, K = 4]
 * const weight = gpu.upload(packQ8(new Int32Array([1, 2, 3, 4]), 1, 4)); // [N = 1, K = 4]
 * const scales = gpu.upload(new Float32Array([0.5]));
 * const c = gpu.alloc("f32", 1);
 * await gpu.submit([matmulQ8Plan(gpu, { M: 1, N: 1, K: 4 }), [a, weight, scales, c]]);
 * const out = await gpu.read(c); // [5]
 * gpu.destroy();
 * ```
 */
export function matmulQ8Plan(
  gpu: ResidentDevice,
  shape: MatmulShape & MatmulEpilogue,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmulQ8", gpu);
  checkOptions("matmulQ8", options);
  validateMatmulQ8Shape(shape);
  const { M, N, K } = shape;
  const operands: BindingSpec[] = [
    { name: "a", dtype: "f32", length: M * K, role: "input" },
    { name: "weight", dtype: "u32", length: N * Math.ceil(K / 4), role: "input" },
    { name: "scales", dtype: "f32", length: N, role: "input" },
  ];
  return gemmPlan(gpu, "matmulQ8", shape, operands, bytesOf(operands), options);
}

/**
 * `a @ dequant(weight)^T` with an int8 weight, on the GPU, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param args as {@link matmulQ8}
 * @param options kernel override
 * @returns the result, `[M, N]`
 * @throws Error naming the argument, as {@link validateMatmulQ8}
 *
 * @example
 * ```ts
 * import { acquireDevice, matmulQ8Gpu, packQ8 } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const weight = packQ8(new Int32Array([1, 2, 3, 4]), 1, 4);
 * const a = new Float32Array([1, 1, 1, 1]);
 * const c = await matmulQ8Gpu(gpu, { a, weight, scales: new Float32Array([0.5]), M: 1, N: 1, K: 4 }); // [5]
 * gpu.destroy();
 * ```
 */
export async function matmulQ8Gpu(
  gpu: ResidentDevice,
  args: MatmulQ8Args,
  options?: KernelOptions<MatmulVariant>,
): Promise<Float32Array> {
  requireDevice("matmulQ8", gpu);
  checkOptions("matmulQ8", options);
  validateMatmulQ8(args);
  const plan = matmulQ8Plan(gpu, planShape(args), options);
  const [c] = await gpu.run(plan, [args.a, args.weight, args.scales, ...epilogueInputs(args)]);
  return c as Float32Array;
}

/**
 * Plans `matmulQ4G128` on the GPU, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K` and the epilogue's steps
 *   ({@link MatmulEpilogue})
 * @param options kernel override: a variant of `q4g128` or of `q4g128_tile64` (which also picks the
 *   tile); with an epilogue, of `q4g128_fused` or `q4g128_tile64_fused`
 * @returns the plan; bindings `a`, `weight`, `scales` (inputs) and `c` (output), or with an epilogue
 *   `a`, `weight`, `scales`, `bias`, `gate` (inputs; each of length 0 where its step is off) and `c`
 *   (output, or `inout` when it accumulates)
 * @throws Error naming the argument, as {@link validateMatmulQ4G128Shape}
 *
 * @example Resident tensors: the int4 weight uploaded once
 * ```ts
 * import { acquireDevice, packQ4 } from "@xpu/ops";
 * import { matmulQ4G128Plan } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const a = gpu.upload(new Float32Array([1, 2])); // [M = 1, K = 2]
 * const weight = gpu.upload(packQ4(new Int32Array([7, -7]), 1, 2)); // [N = 1, K = 2]
 * const scales = gpu.upload(new Float32Array([0.5])); // [N, ceil(K / 128)]
 * const c = gpu.alloc("f32", 1);
 * await gpu.submit([matmulQ4G128Plan(gpu, { M: 1, N: 1, K: 2 }), [a, weight, scales, c]]);
 * const out = await gpu.read(c); // [-3.5]
 * gpu.destroy();
 * ```
 */
export function matmulQ4G128Plan(
  gpu: ResidentDevice,
  shape: MatmulShape & MatmulEpilogue,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmulQ4G128", gpu);
  checkOptions("matmulQ4G128", options);
  validateMatmulQ4G128Shape(shape);
  const { M, N, K } = shape;
  const operands: BindingSpec[] = [
    { name: "a", dtype: "f32", length: M * K, role: "input" },
    { name: "weight", dtype: "u32", length: N * Math.ceil(K / 8), role: "input" },
    { name: "scales", dtype: "f32", length: N * Math.ceil(K / 128), role: "input" },
  ];
  return gemmPlan(gpu, "matmulQ4G128", shape, operands, bytesOf(operands), options);
}

/**
 * `a @ dequant(weight)^T` with an int4, group-128 weight, on the GPU, with an optional fused
 * epilogue.
 *
 * @param gpu the device
 * @param args as {@link matmulQ4G128}
 * @param options kernel override
 * @returns the result, `[M, N]`
 * @throws Error naming the argument, as {@link validateMatmulQ4G128}
 *
 * @example
 * ```ts
 * import { acquireDevice, matmulQ4G128Gpu, packQ4 } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const weight = packQ4(new Int32Array([7, -7]), 1, 2);
 * const a = new Float32Array([1, 2]);
 * const c = await matmulQ4G128Gpu(gpu, { a, weight, scales: new Float32Array([0.5]), M: 1, N: 1, K: 2 }); // [-3.5]
 * gpu.destroy();
 * ```
 */
export async function matmulQ4G128Gpu(
  gpu: ResidentDevice,
  args: MatmulQ4G128Args,
  options?: KernelOptions<MatmulVariant>,
): Promise<Float32Array> {
  requireDevice("matmulQ4G128", gpu);
  checkOptions("matmulQ4G128", options);
  validateMatmulQ4G128(args);
  const plan = matmulQ4G128Plan(gpu, planShape(args), options);
  const [c] = await gpu.run(plan, [args.a, args.weight, args.scales, ...epilogueInputs(args)]);
  return c as Float32Array;
}

/**
 * Plans `matmulF16` on the GPU.
 *
 * @param gpu the device
 * @param shape `M`, `N`, `K`
 * @param options kernel override: a variant of `f16storage`
 * @returns the plan; bindings `a`, `b` (inputs, packed halves) and `c` (output), one workgroup per
 *   128 x 128 tile of `c`
 * @throws Error naming the argument, as {@link validateMatmulF16Shape}
 *
 * @example Resident tensors: f16 operands, two to a word
 * ```ts
 * import { acquireDevice, packF16 } from "@xpu/ops";
 * import { matmulF16Plan } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const a = gpu.upload(packF16(new Float32Array([1, 2, 3, 4])));
 * const b = gpu.upload(packF16(new Float32Array([0.5, 0, 0, 0.5])));
 * const c = gpu.alloc("f32", 4);
 * await gpu.submit([matmulF16Plan(gpu, { M: 2, N: 2, K: 2 }), [a, b, c]]);
 * const product = await gpu.read(c); // [0.5, 1, 1.5, 2], in f32
 * gpu.destroy();
 * ```
 */
export function matmulF16Plan(
  gpu: ResidentDevice,
  shape: MatmulShape,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmulF16", gpu);
  checkOptions("matmulF16", options);
  validateMatmulF16Shape(shape);
  const { M, N, K } = shape;
  const operands: BindingSpec[] = [
    { name: "a", dtype: "u32", length: Math.ceil((M * K) / 2), role: "input" },
    { name: "b", dtype: "u32", length: Math.ceil((K * N) / 2), role: "input" },
  ];
  // Each operand read once at two bytes an element.
  return gemmPlan(gpu, "matmulF16", shape, operands, 2 * (M * K + K * N), options);
}

/**
 * `a @ b` with both operands stored as halves, on the GPU (f32 arithmetic).
 *
 * @param gpu the device
 * @param args as {@link matmulF16}
 * @param options kernel override
 * @returns the result, `[M, N]`
 * @throws Error naming the argument, as {@link validateMatmulF16}
 *
 * @example
 * ```ts
 * import { acquireDevice, matmulF16Gpu, packF16 } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const a = packF16(new Float32Array([1, 2, 3, 4]));
 * const c = await matmulF16Gpu(gpu, { a, b: packF16(new Float32Array([1, 0, 0, 1])), M: 2, N: 2, K: 2 }); // [1, 2, 3, 4]
 * gpu.destroy();
 * ```
 */
export async function matmulF16Gpu(
  gpu: ResidentDevice,
  args: MatmulF16Args,
  options?: KernelOptions<MatmulVariant>,
): Promise<Float32Array> {
  requireDevice("matmulF16", gpu);
  checkOptions("matmulF16", options);
  validateMatmulF16(args);
  const [c] = await gpu.run(matmulF16Plan(gpu, args, options), [args.a, args.b]);
  return c as Float32Array;
}
