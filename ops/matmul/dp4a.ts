/**
 * matmul's products on integer dot products: `matmulQ8Dp4a` (entry points `q8row_dp4a`,
 * `q8row_dp4a_tile64` and `q8row_dp4a_pipelined`; with an epilogue `q8row_dp4a_fused`,
 * `q8row_dp4a_tile64_fused` and `q8row_dp4a_fused_pipelined`) and `matmulQ4G128Dp4a`
 * (`q4g128_dp4a`, `q4g128_dp4a_tile64`, `q4g128_dp4a_pipelined`; `q4g128_dp4a_fused`,
 * `q4g128_dp4a_tile64_fused`, `q4g128_dp4a_fused_pipelined`), the int8-activation forms of
 * `matmulQ8` and `matmulQ4G128` for prefill and for a DiT's Linear layers. reference_dp4a.ts defines
 * what they compute; in short, the activations are int8 codes
 * with one scale per row (ops/quantize's `quantizePackedPlan` writes them from f32, once per GEMM
 * input, so the products sharing an input share its quantisation), the weight is in ops/matvec's q8
 * or q4 format, the sums of code products are taken exactly in i32 by WGSL's `dot4I8Packed`, and
 * the scales are applied in f32 after them. Why: the H200 runs `dot4I8Packed` at 121 TOPS through
 * this WebGPU against 64 TFLOP/s of f32 FMA (harness/roofline's probes), and int8 activations are a
 * quarter of f32's bytes in workgroup memory.
 *
 * The kernels need WGSL's `packed_4x8_integer_dot_product` language feature; where the adapter
 * lacks it, the plans refuse with an error saying so before anything is dispatched (use `matmulQ8`
 * or `matmulQ4G128`). The tiles are the other products': 128 x 128 (8 x 8 outputs per invocation)
 * where the size gives enough of them to keep a large GPU busy, 64 x 64 (8 x 4 per invocation)
 * otherwise, by mod.ts's rule (q8row_dp4a.wgsl and q8row_dp4a_tile64.wgsl say the designs). Timed inside
 * models: the engine's int8 prefill (harness/baselines/nvidia-h200-llm.md) and Z-Image's DiT step
 * on int8 activations (models/zimage/baselines/nvidia-h100.json); the bench times both tiles beside
 * `q8row` and `q4g128` at the same shapes.
 *
 * Pipelined tiles: each 128 x 128 kernel has a `_pipelined` form (`q8row_dp4a_pipelined`,
 * `q4g128_dp4a_pipelined`, `q8row_dp4a_fused_pipelined`, `q4g128_dp4a_fused_pipelined`) with the
 * same bindings, params, tile and outputs, bit for bit, and another walk over K, as mod.ts's f32
 * `kernel_pipelined`: two stages of 16 words of a's and the weight's blocks in 32 KiB of workgroup
 * memory, the next step's global loads issued into registers before this step's dot products and
 * stored to the other stage after them, one barrier per step, stores into the transposed stage
 * without bank conflicts and unchecked loads in interior tiles (q8row_dp4a_pipelined.wgsl and
 * q4g128_dp4a_pipelined.wgsl say the design). They are not yet timed on a GPU, so the plans do not
 * take them (`planned: false`, tiles.ts): the bench times them beside the single-stage tiles at the
 * DiT and prefill shapes, and once it shows them faster, mod.ts's rule for its pipelined f32 tiles
 * would take them on an adapter whose target is `nvidia` and whose device grants their 32 KiB, from
 * `PIPELINED_MIN_TILES` (80) tiles of 128 x 128. An override may name them on any device; where the
 * device does not grant their 32 KiB the plan is refused before dispatch with a LimitError naming
 * maxComputeWorkgroupStorageSize.
 *
 * Fused epilogue: the plans take the other products' {@link MatmulEpilogue} in their shape (`bias`,
 * `activation`, `gateRows`, `accumulate`; mod.ts says the design), applied to each finished output
 * (the integer sum after the weight's and the activations' scales) in the same order: `+ bias[n]`,
 * the activation, `x gate[floor(m / gateRows), n]`, then `c =` or `c +=`. So a model runs, say,
 * `silu(x W1^T)` or `(x W3^T) * gate` on int8 activations in one dispatch each. With any step on, a
 * plan takes the fused kernel of its tile, whose bindings are, in order,
 *
 *     a, aScales, weight, scales, bias, gate, c
 *
 * (`bias` `[N]` and `gate` `[M / gateRows, N]`, each of length 0 where its step is off: bind any f32
 * tensor there; `c` read and written with `accumulate`); without one, the plain kernel and its
 * bindings `a, aScales, weight, scales, c`, as before the epilogue existed. A fused kernel's product
 * is its plain kernel's, include for include (wgsl/include/dp4a_*_product*.wgsl); the epilogue is
 * the f32 kernels' (epilogue.wgsl), run once per output before the store.
 *
 * @module
 */

import { type BindingSpec, type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import { requireWorkgroupStorage, workgroupBytesOf } from "../../harness/limits.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { hasDp4a } from "../../harness/roofline.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type MatmulVariant } from "./kernels.gen.ts";
import type { MatmulEpilogue, MatmulShape } from "./reference.ts";
import { tileEntry, tileGrid } from "./tiles.ts";
import { epilogueInputs, gemmEpilogue, planShape } from "./epilogue_plan.ts";
import {
  type MatmulQ4G128Dp4aArgs,
  type MatmulQ8Dp4aArgs,
  validateMatmulQ4G128Dp4a,
  validateMatmulQ4G128Dp4aShape,
  validateMatmulQ8Dp4a,
  validateMatmulQ8Dp4aShape,
} from "./reference_dp4a.ts";

type Dp4aOp = "matmulQ8Dp4a" | "matmulQ4G128Dp4a";

/** A product's entry points: the 128 x 128 tile, the 64 x 64 one and the pipelined 128 x 128 one. */
type Tiles = readonly [large: string, small: string, pipelined: string];

/** Each product's entry points, plain and with the epilogue. */
const ENTRIES: Readonly<Record<Dp4aOp, { plain: Tiles; fused: Tiles }>> = {
  matmulQ8Dp4a: {
    plain: ["q8row_dp4a", "q8row_dp4a_tile64", "q8row_dp4a_pipelined"],
    fused: ["q8row_dp4a_fused", "q8row_dp4a_tile64_fused", "q8row_dp4a_fused_pipelined"],
  },
  matmulQ4G128Dp4a: {
    plain: ["q4g128_dp4a", "q4g128_dp4a_tile64", "q4g128_dp4a_pipelined"],
    fused: ["q4g128_dp4a_fused", "q4g128_dp4a_tile64_fused", "q4g128_dp4a_fused_pipelined"],
  },
};

/**
 * Refuses a dp4a plan where WGSL lacks `dot4I8Packed` (the language feature
 * `packed_4x8_integer_dot_product` of `navigator.gpu.wgslLanguageFeatures`).
 */
function requireDp4a(op: Dp4aOp): void {
  if (!hasDp4a()) {
    const f32 = op === "matmulQ8Dp4a" ? "matmulQ8" : "matmulQ4G128";
    throw new Error(
      `${op}: this adapter's WGSL lacks the packed_4x8_integer_dot_product language feature ` +
        `(dot4I8Packed), which the kernel needs; ${f32} computes the product on f32 activations`,
    );
  }
}

/**
 * A dp4a product's plan (shape already validated): the activations' codes and scales, the weight's
 * bindings, then the epilogue's part (epilogue_plan.ts: `bias` and `gate` for a fused plan, then
 * `c`); the fused kernel of the tile where any step is on; the tile by tiles.ts's rule (the pipelined
 * one on NVIDIA where granted), or the override's; refused before dispatch where the device does not
 * grant the kernel's workgroup memory.
 */
function dp4aPlan(
  gpu: ResidentDevice,
  op: Dp4aOp,
  shape: MatmulShape & MatmulEpilogue,
  weight: readonly BindingSpec[],
  options: KernelOptions<MatmulVariant> | undefined,
): KernelPlan {
  requireDp4a(op);
  const { M, N, K } = shape;
  const operands: BindingSpec[] = [
    { name: "a", dtype: "u32", length: M * Math.ceil(K / 4), role: "input" },
    { name: "aScales", dtype: "f32", length: M, role: "input" },
    ...weight,
  ];
  const epilogue = gemmEpilogue(op, shape);
  const entries = epilogue.fused ? ENTRIES[op].fused : ENTRIES[op].plain;
  const [large, small, pipelined] = entries;
  // Not yet timed on a GPU: only an override takes them until the bench has measured them.
  const tile = { entry: pipelined, source: KERNELS[pipelined as MatmulVariant], planned: false };
  const kernel = gpu.resolveAmong(KERNELS, op, entries, tileEntry(gpu, op, shape, large, small, tile), options);
  // The pipelined tiles need more workgroup memory than WebGPU's default: refused before dispatch.
  const where = `${op}/${kernel.variant}`;
  requireWorkgroupStorage(gpu, where, workgroupBytesOf(kernel.source, where));
  return {
    op,
    kernel,
    bindings: [...operands, ...epilogue.bindings],
    params: epilogue.params,
    workgroups: tileGrid(gpu, shape, kernel),
    // The operands read once (a multiply and an add per term, integer ops), then the epilogue's part.
    cost: {
      bytes: 4 * operands.reduce((sum, b) => sum + b.length, 0) + epilogue.cost.bytes,
      flops: 2 * M * N * K + epilogue.cost.flops,
    },
  };
}

/**
 * Plans `matmulQ8Dp4a` on the GPU: int8 activations times a q8 weight on `dot4I8Packed`, with an
 * optional fused epilogue.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K` and the epilogue's steps
 *   ({@link MatmulEpilogue})
 * @param options kernel override: a variant of `q8row_dp4a`, `q8row_dp4a_tile64` or
 *   `q8row_dp4a_pipelined` (which also picks the tile); with an epilogue, of `q8row_dp4a_fused`,
 *   `q8row_dp4a_tile64_fused` or `q8row_dp4a_fused_pipelined`
 * @returns the plan, one workgroup per tile of `c`; bindings `a` (`[M, ceil(K/4)]` words),
 *   `aScales` (`[M]`), `weight` (`[N, ceil(K/4)]` words), `scales` (`[N]`) and `c` (output,
 *   `[M, N]`), or with an epilogue `a`, `aScales`, `weight`, `scales`, `bias` (`[N]`), `gate`
 *   (`[M / gateRows, N]`; each of length 0 where its step is off) and `c` (output, or `inout` when it
 *   accumulates)
 * @throws Error naming the argument, as {@link validateMatmulQ8Dp4aShape}, or saying that WGSL lacks
 *   `dot4I8Packed`
 * @throws LimitError naming maxComputeWorkgroupStorageSize where an override names a pipelined
 *   kernel the device does not grant 32 KiB of workgroup memory
 *
 * @example f32 activations quantised once on the GPU (ops/quantize), then the product
 * ```ts
 * import { acquireDevice, packQ8 } from "@xpu/ops";
 * import { matmulQ8Dp4aPlan } from "@xpu/ops/ops/matmul";
 * import { quantizePackedPlan } from "@xpu/ops/ops/quantize";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2, 3, 4])); // [M = 1, K = 4]
 * const a = gpu.alloc("u32", 1);
 * const aScales = gpu.alloc("f32", 1);
 * const weight = gpu.upload(packQ8(new Int32Array([1, 1, 1, -1]), 1, 4)); // [N = 1, K = 4]
 * const scales = gpu.upload(new Float32Array([2]));
 * const c = gpu.alloc("f32", 1);
 * await gpu.submit(
 *   [quantizePackedPlan(gpu, { rows: 1, cols: 4 }), [x, a, aScales]],
 *   [matmulQ8Dp4aPlan(gpu, { M: 1, N: 1, K: 4 }), [a, aScales, weight, scales, c]],
 * );
 * const out = await gpu.read(c); // [4.0314...]: codes [32, 64, 95, 127] at scale 4 / 127, times [2, 2, 2, -2]
 * // silu(x W^T) in one dispatch: bias and gate are off, so any f32 tensor but c stands in their bindings.
 * await gpu.submit([matmulQ8Dp4aPlan(gpu, { M: 1, N: 1, K: 4, activation: "silu" }), [a, aScales, weight, scales, x, x, c]]);
 * const activated = await gpu.read(c); // [3.9611...] = silu(4.0314...)
 * gpu.destroy();
 * ```
 */
export function matmulQ8Dp4aPlan(
  gpu: ResidentDevice,
  shape: MatmulShape & MatmulEpilogue,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmulQ8Dp4a", gpu);
  checkOptions("matmulQ8Dp4a", options);
  validateMatmulQ8Dp4aShape(shape);
  const { N, K } = shape;
  return dp4aPlan(gpu, "matmulQ8Dp4a", shape, [
    { name: "weight", dtype: "u32", length: N * Math.ceil(K / 4), role: "input" },
    { name: "scales", dtype: "f32", length: N, role: "input" },
  ], options);
}

/**
 * `matmulQ8Dp4a` on the GPU, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param args as {@link matmulQ8Dp4a}
 * @param options kernel override
 * @returns the result, `[M, N]`
 * @throws Error naming the argument, as {@link validateMatmulQ8Dp4a}, or saying that WGSL lacks
 *   `dot4I8Packed`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { matmulQ8Dp4aGpu } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const a = new Uint32Array([0x04030201]); // codes [1, 2, 3, 4]
 * const weight = new Uint32Array([0xff010101]); // codes [1, 1, 1, -1]
 * const c = await matmulQ8Dp4aGpu(gpu, { a, aScales: new Float32Array([0.5]), weight, scales: new Float32Array([2]), M: 1, N: 1, K: 4 }); // [2]
 * const gated = await matmulQ8Dp4aGpu(gpu, { a, aScales: new Float32Array([0.5]), weight, scales: new Float32Array([2]), M: 1, N: 1, K: 4, gate: new Float32Array([-3]), gateRows: 1 }); // [-6]
 * gpu.destroy();
 * ```
 */
export async function matmulQ8Dp4aGpu(
  gpu: ResidentDevice,
  args: MatmulQ8Dp4aArgs,
  options?: KernelOptions<MatmulVariant>,
): Promise<Float32Array> {
  requireDevice("matmulQ8Dp4a", gpu);
  checkOptions("matmulQ8Dp4a", options);
  validateMatmulQ8Dp4a(args);
  const plan = matmulQ8Dp4aPlan(gpu, planShape(args), options);
  const [c] = await gpu.run(plan, [args.a, args.aScales, args.weight, args.scales, ...epilogueInputs(args)]);
  return c as Float32Array;
}

/**
 * Plans `matmulQ4G128Dp4a` on the GPU: int8 activations times a q4 group-128 weight on
 * `dot4I8Packed`, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K` and the epilogue's steps
 *   ({@link MatmulEpilogue})
 * @param options kernel override: a variant of `q4g128_dp4a`, `q4g128_dp4a_tile64` or
 *   `q4g128_dp4a_pipelined` (which also picks the tile); with an epilogue, of `q4g128_dp4a_fused`,
 *   `q4g128_dp4a_tile64_fused` or `q4g128_dp4a_fused_pipelined`
 * @returns the plan, one workgroup per tile of `c`; bindings `a` (`[M, ceil(K/4)]` words),
 *   `aScales` (`[M]`), `weight` (`[N, ceil(K/8)]` words), `scales` (`[N, ceil(K/128)]`) and `c`
 *   (output, `[M, N]`), or with an epilogue `a`, `aScales`, `weight`, `scales`, `bias` (`[N]`),
 *   `gate` (`[M / gateRows, N]`; each of length 0 where its step is off) and `c` (output, or `inout`
 *   when it accumulates)
 * @throws Error naming the argument, as {@link validateMatmulQ4G128Dp4aShape}, or saying that WGSL
 *   lacks `dot4I8Packed`
 * @throws LimitError naming maxComputeWorkgroupStorageSize where an override names a pipelined
 *   kernel the device does not grant 32 KiB of workgroup memory
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { matmulQ4G128Dp4aPlan } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const plan = matmulQ4G128Dp4aPlan(gpu, { M: 512, N: 12544, K: 1792 }); // 4 x 98 tiles of 128 x 128
 * // A DiT's FFN up-projection with its SiLU, and its gated twin (one gate row per batch item of 4608 tokens):
 * const up = matmulQ4G128Dp4aPlan(gpu, { M: 4608, N: 10240, K: 3840, activation: "silu" }); // q4g128_dp4a_fused (q4g128_dp4a_fused_pipelined on NVIDIA)
 * const gated = matmulQ4G128Dp4aPlan(gpu, { M: 4608, N: 10240, K: 3840, gateRows: 4608 }); // binds gate [1, 10240]
 * gpu.destroy();
 * ```
 */
export function matmulQ4G128Dp4aPlan(
  gpu: ResidentDevice,
  shape: MatmulShape & MatmulEpilogue,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmulQ4G128Dp4a", gpu);
  checkOptions("matmulQ4G128Dp4a", options);
  validateMatmulQ4G128Dp4aShape(shape);
  const { N, K } = shape;
  return dp4aPlan(gpu, "matmulQ4G128Dp4a", shape, [
    { name: "weight", dtype: "u32", length: N * Math.ceil(K / 8), role: "input" },
    { name: "scales", dtype: "f32", length: N * Math.ceil(K / 128), role: "input" },
  ], options);
}

/**
 * `matmulQ4G128Dp4a` on the GPU, with an optional fused epilogue.
 *
 * @param gpu the device
 * @param args as {@link matmulQ4G128Dp4a}
 * @param options kernel override
 * @returns the result, `[M, N]`
 * @throws Error naming the argument, as {@link validateMatmulQ4G128Dp4a}, or saying that WGSL lacks
 *   `dot4I8Packed`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { matmulQ4G128Dp4aGpu } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const a = new Uint32Array([0x0103]); // codes [3, 1]
 * const weight = new Uint32Array([0xf1]); // nibbles [1, -1]
 * const c = await matmulQ4G128Dp4aGpu(gpu, { a, aScales: new Float32Array([0.5]), weight, scales: new Float32Array([2]), M: 1, N: 1, K: 2 }); // [2]
 * const biased = await matmulQ4G128Dp4aGpu(gpu, { a, aScales: new Float32Array([0.5]), weight, scales: new Float32Array([2]), M: 1, N: 1, K: 2, bias: new Float32Array([1]) }); // [3]
 * gpu.destroy();
 * ```
 */
export async function matmulQ4G128Dp4aGpu(
  gpu: ResidentDevice,
  args: MatmulQ4G128Dp4aArgs,
  options?: KernelOptions<MatmulVariant>,
): Promise<Float32Array> {
  requireDevice("matmulQ4G128Dp4a", gpu);
  checkOptions("matmulQ4G128Dp4a", options);
  validateMatmulQ4G128Dp4a(args);
  const plan = matmulQ4G128Dp4aPlan(gpu, planShape(args), options);
  const [c] = await gpu.run(plan, [args.a, args.aScales, args.weight, args.scales, ...epilogueInputs(args)]);
  return c as Float32Array;
}
