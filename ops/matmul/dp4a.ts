/**
 * matmul's products on integer dot products: `matmulQ8Dp4a` (entry points `q8row_dp4a` and
 * `q8row_dp4a_tile64`) and `matmulQ4G128Dp4a` (`q4g128_dp4a`, `q4g128_dp4a_tile64`), the
 * int8-activation forms of `matmulQ8` and `matmulQ4G128` for prefill. reference_dp4a.ts defines
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
 * or `matmulQ4G128`). They have no fused epilogue, and refuse its arguments by name. The tiles are
 * the other products': 128 x 128 (8 x 8 outputs per invocation) where the size gives enough of them
 * to keep a large GPU busy, 64 x 64 (8 x 4 per invocation) otherwise, by mod.ts's rule
 * (q8row_dp4a.wgsl and q8row_dp4a_tile64.wgsl say the designs). Not yet timed on a GPU: the bench
 * times both tiles beside `q8row` and `q4g128` at the same shapes, the engine's 1B prefill among them.
 *
 * @module
 */

import { packParams } from "../../harness/params.ts";
import { type BindingSpec, type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { hasDp4a } from "../../harness/roofline.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type MatmulVariant } from "./kernels.gen.ts";
import type { MatmulShape } from "./reference.ts";
import { largeTile, tileGrid } from "./tiles.ts";
import {
  type MatmulQ4G128Dp4aArgs,
  type MatmulQ8Dp4aArgs,
  validateMatmulQ4G128Dp4a,
  validateMatmulQ4G128Dp4aShape,
  validateMatmulQ8Dp4a,
  validateMatmulQ8Dp4aShape,
} from "./reference_dp4a.ts";

/** The params of every matmul kernel (wgsl/include/params.wgsl). */
const PARAMS = [{ name: "m", type: "u32" }, { name: "n", type: "u32" }, { name: "k", type: "u32" }] as const;

type Dp4aOp = "matmulQ8Dp4a" | "matmulQ4G128Dp4a";

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

function dp4aPlan(
  gpu: ResidentDevice,
  op: Dp4aOp,
  entries: readonly [string, string],
  shape: MatmulShape,
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
  const [large, small] = entries;
  const kernel = gpu.resolveAmong(KERNELS, op, entries, largeTile(shape) ? large : small, options);
  return {
    op,
    kernel,
    bindings: [...operands, { name: "c", dtype: "f32", length: M * N, role: "output" }],
    params: packParams(PARAMS, { m: M, n: N, k: K }, op),
    workgroups: tileGrid(gpu, shape, kernel),
    // The operands read once and c written once; a multiply and an add per term (integer ops).
    cost: { bytes: 4 * (operands.reduce((sum, b) => sum + b.length, 0) + M * N), flops: 2 * M * N * K },
  };
}

/**
 * Plans `matmulQ8Dp4a` on the GPU: int8 activations times a q8 weight on `dot4I8Packed`.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K`
 * @param options kernel override: a variant of `q8row_dp4a` or of `q8row_dp4a_tile64` (which also
 *   picks the tile)
 * @returns the plan, one workgroup per tile of `c`; bindings `a` (`[M, ceil(K/4)]` words),
 *   `aScales` (`[M]`), `weight` (`[N, ceil(K/4)]` words), `scales` (`[N]`) and `c` (output, `[M, N]`)
 * @throws Error naming the argument, as {@link validateMatmulQ8Dp4aShape}, or saying that WGSL lacks
 *   `dot4I8Packed`
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
 * gpu.destroy();
 * ```
 */
export function matmulQ8Dp4aPlan(
  gpu: ResidentDevice,
  shape: MatmulShape,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmulQ8Dp4a", gpu);
  checkOptions("matmulQ8Dp4a", options);
  validateMatmulQ8Dp4aShape(shape);
  const { N, K } = shape;
  return dp4aPlan(gpu, "matmulQ8Dp4a", ["q8row_dp4a", "q8row_dp4a_tile64"], shape, [
    { name: "weight", dtype: "u32", length: N * Math.ceil(K / 4), role: "input" },
    { name: "scales", dtype: "f32", length: N, role: "input" },
  ], options);
}

/**
 * `matmulQ8Dp4a` on the GPU.
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
  const { M, N, K } = args;
  const plan = matmulQ8Dp4aPlan(gpu, { M, N, K }, options);
  const [c] = await gpu.run(plan, [args.a, args.aScales, args.weight, args.scales]);
  return c as Float32Array;
}

/**
 * Plans `matmulQ4G128Dp4a` on the GPU: int8 activations times a q4 group-128 weight on
 * `dot4I8Packed`.
 *
 * @param gpu the device
 * @param shape `M` (rows of `a`), `N` (rows of the weight), `K`
 * @param options kernel override: a variant of `q4g128_dp4a` or of `q4g128_dp4a_tile64` (which also
 *   picks the tile)
 * @returns the plan, one workgroup per tile of `c`; bindings `a` (`[M, ceil(K/4)]` words),
 *   `aScales` (`[M]`), `weight` (`[N, ceil(K/8)]` words), `scales` (`[N, ceil(K/128)]`) and `c`
 *   (output, `[M, N]`)
 * @throws Error naming the argument, as {@link validateMatmulQ4G128Dp4aShape}, or saying that WGSL
 *   lacks `dot4I8Packed`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { matmulQ4G128Dp4aPlan } from "@xpu/ops/ops/matmul";
 * const gpu = await acquireDevice();
 * const plan = matmulQ4G128Dp4aPlan(gpu, { M: 512, N: 12544, K: 1792 }); // 4 x 98 tiles of 128 x 128
 * gpu.destroy();
 * ```
 */
export function matmulQ4G128Dp4aPlan(
  gpu: ResidentDevice,
  shape: MatmulShape,
  options?: KernelOptions<MatmulVariant>,
): KernelPlan {
  requireDevice("matmulQ4G128Dp4a", gpu);
  checkOptions("matmulQ4G128Dp4a", options);
  validateMatmulQ4G128Dp4aShape(shape);
  const { N, K } = shape;
  return dp4aPlan(gpu, "matmulQ4G128Dp4a", ["q4g128_dp4a", "q4g128_dp4a_tile64"], shape, [
    { name: "weight", dtype: "u32", length: N * Math.ceil(K / 8), role: "input" },
    { name: "scales", dtype: "f32", length: N * Math.ceil(K / 128), role: "input" },
  ], options);
}

/**
 * `matmulQ4G128Dp4a` on the GPU.
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
  const { M, N, K } = args;
  const plan = matmulQ4G128Dp4aPlan(gpu, { M, N, K }, options);
  const [c] = await gpu.run(plan, [args.a, args.aScales, args.weight, args.scales]);
  return c as Float32Array;
}
