/**
 * scatter: indexed writes. Two functions, one entry point each:
 * - `scatter` (entry point `kernel`): indexed accumulation, as
 *   `torch.zeros(rows, cols).scatter_add_(1, index, src)`; the goldens (`goldens/gen.py`) hold it to torch.
 * - `indexCopy` (entry point `index_copy`): whole rows written into an existing tensor, as
 *   `out.view(outer, rows, cols).index_copy_(1, index, src)` (`index_copy_reference.ts`; goldens from
 *   `goldens/gen_index_copy.py`); what a KV cache's update is. `out` is read_write: rows no index names
 *   keep their values. An index outside `[0, rows)` is dropped; a repeated one is the caller's mistake
 *   (torch calls the result nondeterministic; here which row lands is unspecified, and the reference
 *   refuses it). One invocation per source element.
 *
 * What it refuses and why each convention was chosen (details in `reference.ts`):
 * - Colliding indices accumulate: the only rule whose answer does not depend on the order in which
 *   a GPU's writes land. `scatter_` ("last write wins") is not offered; torch itself documents it
 *   as non-deterministic on collision.
 * - `self` is implicitly zero; an index outside `[0, cols)` is dropped (torch raises; a kernel
 *   cannot), `-1` included; `index` is `Int32Array` because WGSL has no 64-bit integer.
 *
 * WGSL has no f32 atomic add, so the kernel adds with a compare-exchange loop on the value's bits
 * (`atomic<u32>`), one invocation per source element. Slots with many colliding writes serialise
 * on that loop, and the sum's rounding depends on the order the writes land: the result is within
 * f32 summation error of the reference (which rounds an f64 sum once), not bit-equal to it or to
 * another run.
 *
 * The output binding is accumulated into, so the plan marks it `zeroed`: the device clears it in the
 * same command buffer before the pass, and a reused resident output starts from zero too.
 *
 * On NVIDIA, `kernel.nvidia` is resolved instead. When an output row fits in workgroup memory
 * (cols <= 4096), each workgroup takes blocks of whole rows: it adds their sources into a workgroup
 * copy of their output rows (workgroup atomics, the same compare-exchange loop) and writes the
 * rows out once, so global memory sees src and index read once and out written once, with no
 * atomic traffic; sources stream as vec4s when indexCols is a multiple of 4. Wider rows fall back to
 * global atomics, one source element per invocation in a grid-stride loop.
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type ScatterVariant } from "./kernels.gen.ts";
import {
  type IndexCopyArgs,
  type IndexCopyShape,
  type ScatterArgs,
  type ScatterShape,
  validateIndexCopy,
  validateIndexCopyShape,
  validateScatter,
  validateScatterShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type ScatterVariant };

/** Invocations per workgroup, as declared in `wgsl/kernel.wgsl`. */
const WORKGROUP_SIZE = 256;
/** Floats of workgroup memory `kernel.nvidia` accumulates a block of output rows in. */
const LOCAL_SLOTS = 4096;
/** Blocks `kernel.nvidia` aims to have at least, so that every SM of a large GPU has rows to take. */
const LEAST_BLOCKS = 1024;

const PARAMS: ParamField[] = ["total", "k", "d"].map((name) => ({ name, type: "u32" }));
const NVIDIA_PARAMS: ParamField[] = ["total", "k", "d", "n", "rows"].map((name) => ({ name, type: "u32" }));

/** Params and workgroups of each variant. */
function geometryOf(
  variant: string,
  shape: ScatterShape,
  maxPerDimension: number,
): { params: ArrayBuffer; workgroups: [number, number, number] } {
  const { rows, indexCols, cols } = shape;
  const total = rows * indexCols;
  if (variant === "kernel") {
    return {
      params: packParams(PARAMS, { total, k: indexCols, d: cols }, "scatter"),
      workgroups: foldWorkgroups(Math.ceil(total / WORKGROUP_SIZE), maxPerDimension),
    };
  }
  if (variant === "kernel.nvidia") {
    // Rows per block: as many as workgroup memory holds, fewer when that would leave few blocks;
    // 0 selects global atomics for rows wider than workgroup memory.
    const blockRows = cols > LOCAL_SLOTS
      ? 0
      : Math.max(1, Math.min(Math.floor(LOCAL_SLOTS / cols), Math.ceil(rows / LEAST_BLOCKS)));
    const blocks = blockRows > 0 ? Math.ceil(rows / blockRows) : Math.ceil(total / WORKGROUP_SIZE);
    return {
      params: packParams(NVIDIA_PARAMS, { total, k: indexCols, d: cols, n: rows, rows: blockRows }, "scatter"),
      workgroups: [Math.min(blocks, maxPerDimension), 1, 1],
    };
  }
  throw new Error(`scatter: no dispatch geometry for variant "${variant}"`);
}

/**
 * Plans `scatter` on the GPU for `[rows, indexCols]` sources into an `[rows, cols]` output.
 *
 * The cost is the least a call moves and does: `src` and `index` read once, the output written
 * once, and one add per source element.
 *
 * @param gpu the device
 * @param shape `rows`, `indexCols` of `src` and `index`, and `cols`, the output's columns
 * @param options kernel override
 * @returns the plan; bindings `src`, `index` (inputs) and `out` (output, `[rows, cols]`, cleared to zero
 *   before the pass)
 * @throws Error naming the argument, as {@link validateScatterShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { scatterPlan } from "@xpu/ops/ops/scatter";
 * const gpu = await acquireDevice();
 * const src = gpu.upload(new Float32Array([1, 2, 4]));
 * const index = gpu.upload(new Int32Array([0, 0, 1]));
 * const out = gpu.alloc("f32", 2);
 * await gpu.submit([scatterPlan(gpu, { rows: 1, indexCols: 3, cols: 2 }), [src, index, out]]);
 * const sums = await gpu.read(out); // [3, 4]
 * gpu.destroy();
 * ```
 */
export function scatterPlan(
  gpu: ResidentDevice,
  shape: ScatterShape,
  options?: KernelOptions<ScatterVariant>,
): KernelPlan {
  checkOptions("scatter", options);
  validateScatterShape(shape);
  const { rows, indexCols, cols } = shape;
  const total = rows * indexCols;
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  return {
    op: "scatter",
    kernel,
    bindings: [
      { name: "src", dtype: "f32", length: total, role: "input" },
      { name: "index", dtype: "i32", length: total, role: "input" },
      { name: "out", dtype: "f32", length: rows * cols, role: "output", zeroed: true },
    ],
    ...geometryOf(kernel.variant, shape, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost: { bytes: 8 * total + 4 * rows * cols, flops: total },
  };
}

/**
 * Scatter-adds `src` into a zero `[rows, cols]` output on the GPU.
 *
 * @param gpu the device
 * @param args as {@link scatter}
 * @param options kernel override
 * @returns the `[rows, cols]` sums, row-major
 * @throws Error naming the argument, as {@link validateScatter}
 *
 * @example
 * ```ts
 * import { acquireDevice, scatterGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const src = new Float32Array([1, 2, 4, 8]);
 * const out = await scatterGpu(gpu, { src, index: new Int32Array([1, 1, 0, 5]), rows: 2, indexCols: 2, cols: 2 });
 * // [0, 3, 4, 0]: row 0 adds 1 + 2 into column 1; row 1 adds 4 into column 0 and drops column 5
 * gpu.destroy();
 * ```
 */
export async function scatterGpu(
  gpu: ResidentDevice,
  args: ScatterArgs,
  options?: KernelOptions<ScatterVariant>,
): Promise<Float32Array> {
  checkOptions("scatter", options);
  validateScatter(args);
  const plan = scatterPlan(gpu, { rows: args.rows, indexCols: args.indexCols, cols: args.cols }, options);
  const [out] = await gpu.run(plan, [args.src, args.index]);
  return out as Float32Array;
}

const INDEX_COPY_PARAMS: ParamField[] = ["total", "n", "rows", "cols"].map((name) => ({ name, type: "u32" }));

/**
 * Plans `indexCopy` on the GPU: rows of `src` `[outer, indexLength, cols]` written into `out`
 * `[outer, rows, cols]` in place, at the rows `index` names.
 *
 * @param gpu the device
 * @param shape `outer`, `rows`, `cols` and `indexLength`
 * @param options kernel override
 * @returns the plan; bindings `src`, `index` (inputs) and `out` (inout: rows no index names are kept)
 * @throws Error naming the argument, as {@link validateIndexCopyShape}
 *
 * @example Resident tensors: a KV cache of 2 heads x 4 positions x 2 values, position 3 written
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { indexCopyPlan } from "@xpu/ops/ops/scatter";
 * const gpu = await acquireDevice();
 * const cache = gpu.alloc("f32", 2 * 4 * 2);
 * const k = gpu.upload(new Float32Array([1, 2, 3, 4])); // [2 heads, 1 position, 2 values]
 * const position = gpu.upload(new Int32Array([3]));
 * await gpu.submit([indexCopyPlan(gpu, { outer: 2, rows: 4, cols: 2, indexLength: 1 }), [k, position, cache]]);
 * const values = await gpu.read(cache); // [0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 3, 4]
 * gpu.destroy();
 * ```
 */
export function indexCopyPlan(
  gpu: ResidentDevice,
  shape: IndexCopyShape,
  options?: KernelOptions<ScatterVariant>,
): KernelPlan {
  checkOptions("indexCopy", options);
  validateIndexCopyShape(shape);
  const { outer, rows, cols, indexLength } = shape;
  const total = outer * indexLength * cols;
  return {
    op: "indexCopy",
    kernel: gpu.resolve(KERNELS, "index_copy", options),
    bindings: [
      { name: "src", dtype: "f32", length: total, role: "input" },
      { name: "index", dtype: "i32", length: indexLength, role: "input" },
      { name: "out", dtype: "f32", length: outer * rows * cols, role: "inout" },
    ],
    params: packParams(INDEX_COPY_PARAMS, { total, n: indexLength, rows, cols }, "indexCopy"),
    workgroups: foldWorkgroups(Math.ceil(total / WORKGROUP_SIZE), gpu.limits.maxComputeWorkgroupsPerDimension),
    // src and the index read once, as many values of out written; no arithmetic.
    cost: { bytes: 8 * total + 4 * indexLength, flops: 0 },
  };
}

/**
 * Writes rows of `src` into a copy of `out` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link indexCopy}
 * @param options kernel override
 * @returns the updated tensor, `[outer, rows, cols]`
 * @throws Error naming the argument, as {@link validateIndexCopy}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { indexCopyGpu } from "@xpu/ops/ops/scatter";
 * const gpu = await acquireDevice();
 * const out = new Float32Array([9, 9, 9, 9, 9, 9]); // [rows 3, cols 2]
 * const y = await indexCopyGpu(gpu, { out, src: new Float32Array([1, 2]), index: new Int32Array([1]), outer: 1, rows: 3, cols: 2 });
 * // [9, 9, 1, 2, 9, 9]
 * gpu.destroy();
 * ```
 */
export async function indexCopyGpu(
  gpu: ResidentDevice,
  args: IndexCopyArgs,
  options?: KernelOptions<ScatterVariant>,
): Promise<Float32Array> {
  checkOptions("indexCopy", options);
  validateIndexCopy(args);
  const { outer, rows, cols } = args;
  const plan = indexCopyPlan(gpu, { outer, rows, cols, indexLength: args.index.length }, options);
  const [out] = await gpu.run(plan, [args.src, args.index, args.out]);
  return out as Float32Array;
}
