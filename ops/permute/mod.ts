/**
 * permute: a tensor of rank 1 to 6 with its axes reordered (`permute`, entry point `kernel`),
 * matching `x.permute(*dims).contiguous()`; see `reference.ts` for the conventions (output axis
 * `a` is input axis `dims[a]`, negative entries count from the end, rank above 6 is refused).
 *
 * The kernel is one invocation per output element, gathering: it splits its output index into
 * coordinates and reads x at the sum of coordinate * stride, with the output shape and the source
 * strides in the params uniform. Its writes are consecutive and its reads follow the permutation;
 * for the two-axis case, `transpose` moves the data through workgroup tiles so that reads are
 * consecutive as well.
 *
 * On NVIDIA, `kernel.nvidia` is resolved instead, tuned for bandwidth. The host first collapses the
 * permutation ({@link collapsePermutation}: size-1 axes dropped, input axes that stay neighbours
 * merged). When the last input axis stays last (an attention head split `[B, S, H, D] ->
 * [B, H, S, D]`, say), every output row of the merged last axes is one contiguous piece of x, and
 * the plan runs the `rows` kernel: invocations stream vec4s, four per invocation before the first
 * store. When it moves (`[B, M, N] -> [B, N, M]`, `[A, B, C] -> [C, B, A]`), the tensor is a batch
 * of matrix transposes, and `kernel.nvidia` moves it through 64x64 workgroup tiles with 16-byte
 * accesses on every side, as transpose's `kernel.nvidia` does. Sizes that are not multiples of 4
 * move element by element. A gather of one element per invocation, as the portable kernel does,
 * reads 4 of every 32 bytes it fetches when the last axis moves.
 *
 * The two are separate modules, so that the row copy carries none of the tiles' 16 KiB of workgroup
 * memory and barriers. The row copy is a module of its own because, measured on the H200, sharing
 * one with the tiles cost it 6 points of the roofline (`harness/baselines/nvidia-h200-design.md`,
 * permute).
 *
 * @module
 */

import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import type { Resolution } from "../../harness/resolve.ts";
import { KERNELS, type PermuteVariant } from "./kernels.gen.ts";
import {
  MAX_PERMUTE_RANK,
  type PermuteArgs,
  type PermuteShape,
  validatePermute,
  validatePermuteShape,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type PermuteVariant };

const WORKGROUP_SIZE = 256;
const AXES = Array.from({ length: MAX_PERMUTE_RANK }, (_, a) => a);
/** The element count, which bounds every other size and stride the kernels take. */
const N: ParamField = { name: "n", type: "u32", of: "the product of shape's sizes" };

const PARAMS: ParamField[] = [
  N,
  ...AXES.map((a): ParamField => ({ name: `size${a}`, type: "u32" })),
  ...AXES.map((a): ParamField => ({ name: `stride${a}`, type: "u32" })),
];

/** Elements one workgroup of the `rows` kernel moves per block: 256 invocations x 4 vec4s. */
const ROWS_BLOCK = 256 * 4 * 4;
/** Tile edge of `kernel.nvidia`. */
const TILE = 64;
/** Outer (`rows`) or batch (`kernel.nvidia`) axes the params hold. */
const SLOTS = 5;
const u32Fields = (names: string[]) => names.map((name): ParamField => ({ name, type: "u32" }));
const slotFields = (fields: string[]) =>
  fields.flatMap((field) => u32Fields(Array.from({ length: SLOTS }, (_, a) => `${field}${a}`)));
const ROWS_PARAMS: ParamField[] = [N, ...u32Fields(["inner", "axes"]), ...slotFields(["size", "xs"])];
const TILES_PARAMS: ParamField[] = [
  N,
  ...u32Fields(["p", "q", "p_stride", "q_stride", "axes"]),
  ...slotFields(["size", "xs", "os"]),
];

/**
 * The smallest permutation that moves elements as `x.permute(dims)` does: axes of size 1 are
 * dropped, and input axes that stay next to each other, in the same order, in the output are
 * merged into one. `[32, 128, 64, 64]` with dims `[0, 2, 1, 3]` stays as it is; `[2, 3, 4]` with
 * `[2, 0, 1]` becomes `[6, 4]` with `[1, 0]`; an identity becomes one axis.
 *
 * @param shape the shape of `x` (dimensions >= 1; a tensor with a 0 dimension has nothing to move)
 * @param dims the axis order (negative entries count from the end, as in {@link validatePermuteShape})
 * @returns the collapsed shape and axis order, rank at least 1
 * @throws Error naming the argument, as {@link validatePermuteShape}
 *
 * @example
 * ```ts
 * import { collapsePermutation } from "@xpu/ops/ops/permute";
 * collapsePermutation([2, 1, 3, 4], [3, 1, 0, 2]); // { shape: [6, 4], dims: [1, 0] }
 * ```
 */
export function collapsePermutation(
  shape: readonly number[],
  dims: readonly number[],
): { shape: number[]; dims: number[] } {
  dims = validatePermuteShape({ shape, dims }); // a bad shape or dims would collapse into a wrong answer
  const kept = dims.filter((d) => shape[d] !== 1);
  // Runs of input axes that follow each other in the output, in output order.
  const runs: { first: number; last: number }[] = [];
  for (const d of kept) {
    const run = runs[runs.length - 1];
    if (run && nextKept(shape, run.last) === d) run.last = d;
    else runs.push({ first: d, last: d });
  }
  if (runs.length === 0) return { shape: [1], dims: [0] };
  const inputOrder = [...runs].sort((a, b) => a.first - b.first);
  return {
    shape: inputOrder.map((run) => shape.slice(run.first, run.last + 1).reduce((p, d) => p * d, 1)),
    dims: runs.map((run) => inputOrder.indexOf(run)),
  };
}

/** The next input axis after `axis` whose size is not 1, or -1. */
function nextKept(shape: readonly number[], axis: number): number {
  for (let a = axis + 1; a < shape.length; a++) if (shape[a] !== 1) return a;
  return -1;
}

const stridesOf = (shape: readonly number[]) => shape.map((_, a) => shape.slice(a + 1).reduce((p, d) => p * d, 1));

/** A plan's kernel, params and workgroups. */
interface Geometry {
  kernel: Resolution;
  params: ArrayBuffer;
  workgroups: [number, number, number];
}

/**
 * The slot params of `rows` and `kernel.nvidia`: `axes` (each a value per field, e.g. its size
 * and its stride in x) in the last of the five slots, in order; leading slots have size 1, stride 0.
 */
function slotValues(fields: readonly string[], axes: readonly Record<string, number>[]): Record<string, number> {
  const values: Record<string, number> = { axes: axes.length };
  for (let a = 0; a < SLOTS; a++) {
    const axis = axes[a - (SLOTS - axes.length)];
    for (const field of fields) values[`${field}${a}`] = axis ? axis[field] : field === "size" ? 1 : 0;
  }
  return values;
}

/**
 * The NVIDIA route (see the WGSL of `rows` and `kernel.nvidia`): the `rows` kernel when the
 * collapsed permutation keeps the last axis last (or there is nothing to move), else `nvidia`'s
 * batch of tiled transposes.
 */
function nvidiaGeometry(
  gpu: ResidentDevice,
  nvidia: Resolution,
  shape: readonly number[],
  dims: readonly number[],
): Geometry {
  const n = shape.reduce((p, d) => p * d, 1);
  const max = gpu.limits.maxComputeWorkgroupsPerDimension;
  const c = n > 0 ? collapsePermutation(shape, dims) : { shape: [0], dims: [0] };
  const last = c.shape.length - 1;
  const xs = stridesOf(c.shape);
  if (c.dims[last] === last) {
    const outer = c.dims.slice(0, last).map((d) => ({ size: c.shape[d], xs: xs[d] }));
    const values = { n, inner: Math.max(c.shape[last], 1), ...slotValues(["size", "xs"], outer) };
    return {
      kernel: gpu.resolve(KERNELS, "rows"),
      params: packParams(ROWS_PARAMS, values, "permute"),
      workgroups: [Math.min(Math.ceil(n / ROWS_BLOCK), max), 1, 1],
    };
  }
  const os = stridesOf(c.dims.map((d) => c.shape[d]));
  const p = c.dims[last];
  const [P, Q] = [c.shape[p], c.shape[last]];
  const batch = c.dims.flatMap((d, k) => d === p || d === last ? [] : [{ size: c.shape[d], xs: xs[d], os: os[k] }]);
  const values = {
    n,
    p: P,
    q: Q,
    p_stride: xs[p],
    q_stride: os[c.dims.indexOf(last)],
    ...slotValues(["size", "xs", "os"], batch),
  };
  return {
    kernel: nvidia,
    params: packParams(TILES_PARAMS, values, "permute"),
    workgroups: [Math.min(Math.ceil(P / TILE) * Math.ceil(Q / TILE) * (n / (P * Q)), max), 1, 1],
  };
}

/**
 * Plans `permute` on the GPU.
 *
 * @param gpu the device
 * @param permutation the shape of `x` and the axis order (validated here)
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output). Its kernel is the variant resolved, except
 *   where `kernel.nvidia` hands a permutation that keeps the last axis last to `rows`
 * @throws Error naming a bad shape or axis order
 * @throws Error naming the argument, as {@link validatePermuteShape}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { permutePlan } from "@xpu/ops/ops/permute";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([0, 1, 2, 3, 4, 5, 6, 7])); // [2, 2, 2]
 * const out = gpu.alloc("f32", 8);
 * await gpu.submit([permutePlan(gpu, { shape: [2, 2, 2], dims: [2, 1, 0] }), [x, out]]);
 * const y = await gpu.read(out); // [0, 4, 2, 6, 1, 5, 3, 7]
 * gpu.destroy();
 * ```
 */
export function permutePlan(
  gpu: ResidentDevice,
  permutation: PermuteShape,
  options?: KernelOptions<PermuteVariant>,
): KernelPlan {
  requireDevice("permute", gpu);
  checkOptions("permute", options);
  const dims = validatePermuteShape(permutation);
  const { shape } = permutation;
  const n = shape.reduce((p, d) => p * d, 1);
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  let geometry: Geometry;
  if (kernel.variant === "kernel") {
    const inputStrides = stridesOf(shape);
    // Six axes, the output's own at the end; the leading ones have size 1 and stride 0.
    const padding = MAX_PERMUTE_RANK - dims.length;
    const values: Record<string, number> = { n };
    for (const a of AXES) {
      const from = a < padding ? undefined : dims[a - padding];
      values[`size${a}`] = from === undefined ? 1 : shape[from];
      values[`stride${a}`] = from === undefined ? 0 : inputStrides[from];
    }
    geometry = {
      kernel,
      params: packParams(PARAMS, values, "permute"),
      workgroups: foldWorkgroups(Math.ceil(n / WORKGROUP_SIZE), gpu.limits.maxComputeWorkgroupsPerDimension),
    };
  } else if (kernel.variant === "kernel.nvidia") {
    geometry = nvidiaGeometry(gpu, kernel, shape, dims);
  } else {
    throw new Error(`permute: no dispatch geometry for variant "${kernel.variant}"`);
  }
  return {
    op: "permute",
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    ...geometry,
    cost: { bytes: 8 * n, flops: 0 },
  };
}

/**
 * Puts the axes of `x` in the order `dims` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link permute}
 * @param options kernel override
 * @returns the result, row-major in the shape `dims.map((d) => shape[d])`
 * @throws Error naming the argument, as {@link validatePermute}
 *
 * @example
 * ```ts
 * import { acquireDevice, permuteGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 2, 3, 4, 5, 6]);
 * const y = await permuteGpu(gpu, { x, shape: [2, 3], dims: [1, 0] }); // [1, 4, 2, 5, 3, 6]
 * gpu.destroy();
 * ```
 */
export async function permuteGpu(
  gpu: ResidentDevice,
  args: PermuteArgs,
  options?: KernelOptions<PermuteVariant>,
): Promise<Float32Array> {
  requireDevice("permute", gpu);
  checkOptions("permute", options);
  validatePermute(args);
  const plan = permutePlan(gpu, args, options);
  const [out] = await gpu.run(plan, [args.x]);
  return out as Float32Array;
}
