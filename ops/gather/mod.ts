/**
 * gather: row selection (`gather`, entry point `kernel`), as `torch.index_select(table, 0,
 * index)`, which the goldens (`goldens/gen.py`) hold it to; not `torch.gather`, which picks one
 * element per index instead of a row.
 *
 * What it refuses and why each convention was chosen (details in `reference.ts`):
 * - An index outside `[0, rows)` gathers a row of zeros. torch raises; a kernel cannot, and a host
 *   check would need the index on the host, which an engine feeding token ids from the GPU does
 *   not have. `-1` is such an index, not Python's "last row".
 * - Indices are `Int32Array`: WGSL has no 64-bit integer, so `rows` is at most 2^31 - 1.
 * - An empty `index` gives an empty result, as in torch; rows and cols must be at least 1.
 *
 * The kernel runs one invocation per output element, so consecutive invocations copy consecutive
 * columns of a row; a grid past 65,535 workgroups folds into y.
 *
 * On NVIDIA, `kernel.nvidia` is resolved instead, tuned for bandwidth: the output streams as vec4s
 * (with cols a multiple of 4, each one aligned vec4 of a table row), four per invocation with every
 * load issued before the first store, blocks dealt to at most 65,535 workgroups in a grid-stride
 * loop; one float per invocation keeps too few bytes in flight to stream at the H200's bandwidth.
 *
 * Tables past one binding. A storage binding spans at most maxStorageBufferBindingSize bytes (2 GiB - 4
 * on the H200, 128 MiB in browsers; Qwen3-4B's embedding, 151,936 x 2,560 f32, is 1.56 GB), so a
 * caller holds a large table as row blocks, one GpuTensor per block: block i is rows
 * `[i * blockRows, min((i + 1) * blockRows, rows))`, row-major, in a buffer of its own.
 * {@link gatherBlockRows} says how many rows one binding of this device holds, {@link uploadTableBlocks}
 * uploads a host table as such blocks, and {@link gatherBlocksPlan} plans the gather over them: one
 * dispatch per block, in one compute pass, each writing the output rows whose index falls in its block
 * (the first also the zeros of indices out of range), so every output element is written once.
 * {@link gatherPlan} binds the table whole and refuses one past the limit (a LimitError naming the
 * limit and pointing here); {@link gatherGpu} splits by itself.
 *
 * Quantized tables (`gatherQuantized`, entry points `q8row` and `q4g128`): an embedding kept in
 * matvec's q8 or q4g128 wire format (the format of the head it is tied to) is gathered as the f32
 * rows it stands for, each element decoded (the code sign-extended by two shifts) and scaled as it
 * is copied; the portable kernel's shape and conventions otherwise (one element per invocation,
 * out-of-range indices give zeros, row blocks with their scales, `first`). The Llama engine gathers
 * one row per decode step this way: not a bandwidth kernel, and not timed on a GPU apart from the
 * engine.
 *
 * @module
 */

import { foldWorkgroups, LimitError } from "../../harness/limits.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import {
  type BindingSpec,
  type GpuTensor,
  type KernelPlan,
  type KernelSequence,
  kernelSequence,
  requireDevice,
  type ResidentDevice,
} from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import type { Resolution } from "../../harness/resolve.ts";
import { checkOptions, requireArgs, requireArray, requireInt, U32_MAX } from "../validate.ts";
import { type GatherVariant, KERNELS } from "./kernels.gen.ts";
import {
  type GatherArgs,
  type GatherQuantizedArgs,
  type GatherShape,
  type GatherTableFormat,
  MAX_ROWS,
  quantizedRowWords,
  validateGather,
  validateGatherQuantized,
  validateGatherShape,
} from "./reference.ts";

export * from "./reference.ts";
export { type GatherVariant, KERNELS };

/** Invocations per workgroup, as declared in `wgsl/kernel.wgsl`. */
const WORKGROUP_SIZE = 256;
/** Output elements one workgroup of `kernel.nvidia` moves per block: 256 invocations x 4 vec4s. */
const BLOCK = 256 * 4 * 4;

const PARAMS: readonly ParamField[] = [
  { name: "total", type: "u32", of: "indexLength * cols" },
  { name: "d", type: "u32" },
  { name: "v", type: "u32" },
  { name: "row0", type: "u32" },
  { name: "block_rows", type: "u32" },
  { name: "first", type: "u32" },
];

/**
 * Workgroups of each variant: the portable kernel takes one element per invocation, the grid
 * folded past the per-dimension limit; `kernel.nvidia` strides over blocks of {@link BLOCK}.
 */
function workgroupsOf(variant: string, total: number, maxPerDimension: number): [number, number, number] {
  if (variant === "kernel") return foldWorkgroups(Math.ceil(total / WORKGROUP_SIZE), maxPerDimension);
  if (variant === "kernel.nvidia") return [Math.min(Math.ceil(total / BLOCK), maxPerDimension), 1, 1];
  throw new Error(`gather: no dispatch geometry for variant "${variant}"`);
}

/** The bytes one table binding may span on this device: the tighter of the binding and buffer limits. */
function bindingLimit(gpu: ResidentDevice): { limit: "maxStorageBufferBindingSize" | "maxBufferSize"; bytes: number } {
  const { maxStorageBufferBindingSize, maxBufferSize } = gpu.limits;
  return maxBufferSize < maxStorageBufferBindingSize
    ? { limit: "maxBufferSize", bytes: maxBufferSize }
    : { limit: "maxStorageBufferBindingSize", bytes: maxStorageBufferBindingSize };
}

/** Bytes a block of `rows` rows of `cols` f32 occupies (ResidentDevice pads buffers to 16 bytes). */
function blockBytes(rows: number, cols: number): number {
  return Math.max(16, Math.ceil((rows * cols * 4) / 16) * 16);
}

/**
 * Rows of a `cols`-column f32 table that one binding holds on this device: as many as fit
 * maxStorageBufferBindingSize and maxBufferSize (each block's buffer padded to 16 bytes), at most
 * 2^31 - 1.
 *
 * @param gpu the device (or a {@link ResidentDevice.withLimits} view of it)
 * @param cols columns of the table, >= 1
 * @returns rows per block
 * @throws Error naming cols when it is not an integer >= 1
 * @throws LimitError when one row alone is past the limit
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { gatherBlockRows } from "@xpu/ops/ops/gather";
 * const gpu = await acquireDevice();
 * // At a browser's 128 MiB, a 2,560-column f32 table (Qwen3-4B's embedding) holds 13,107 rows a block.
 * gatherBlockRows(gpu.withLimits({ maxStorageBufferBindingSize: 128 << 20 }), 2560); // 13107
 * gpu.destroy();
 * ```
 */
export function gatherBlockRows(gpu: ResidentDevice, cols: number): number {
  requireDevice("gather", gpu);
  requireInt("gather", "cols", cols, 1, MAX_ROWS);
  const { limit, bytes } = bindingLimit(gpu);
  const rows = Math.floor(Math.floor(bytes / 16) * 16 / (4 * cols));
  if (rows < 1) throw new LimitError("gather/table", limit, blockBytes(1, cols), bytes, `one row of ${cols} f32`);
  return Math.min(rows, MAX_ROWS);
}

/** One dispatch of gather over rows `[row0, row0 + blockRows)` of the table, bound as `table`. */
function blockPlan(
  gpu: ResidentDevice,
  kernel: Resolution,
  shape: GatherShape,
  row0: number,
  blockRows: number,
  first: boolean,
  cost: { bytes: number; flops: number },
): KernelPlan {
  const { rows, cols, indexLength } = shape;
  const total = indexLength * cols;
  return {
    op: "gather",
    kernel,
    bindings: [
      { name: "table", dtype: "f32", length: blockRows * cols, role: "input" },
      { name: "index", dtype: "i32", length: indexLength, role: "input" },
      { name: "out", dtype: "f32", length: total, role: "output" },
    ],
    params: packParams(
      PARAMS,
      { total, d: cols, v: rows, row0, block_rows: blockRows, first: Number(first) },
      "gather",
    ),
    workgroups: workgroupsOf(kernel.variant, total, gpu.limits.maxComputeWorkgroupsPerDimension),
    cost,
  };
}

/**
 * Plans `gather` on the GPU for a `[rows, cols]` table bound whole and `indexLength` indices.
 *
 * The cost is what a call moves when its indices are distinct and in range: the index, one
 * table row read per output row, and the output written; no arithmetic.
 *
 * @param gpu the device
 * @param shape `rows`, `cols` of the table and `indexLength`, the number of indices
 * @param options kernel override
 * @returns the plan; bindings `table`, `index` (inputs) and `out` (output, `[indexLength, cols]`)
 * @throws Error naming the argument, as {@link validateGatherShape}
 * @throws LimitError when the table is past one binding (maxStorageBufferBindingSize or maxBufferSize):
 *   hold it as row blocks ({@link uploadTableBlocks}) and plan with {@link gatherBlocksPlan}
 *
 * @example Resident tensors: upload once, submit plans, read back
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gatherPlan } from "@xpu/ops/ops/gather";
 * const gpu = await acquireDevice();
 * const table = gpu.upload(new Float32Array([0, 1, 2, 3, 4, 5])); // [[0, 1], [2, 3], [4, 5]]
 * const index = gpu.upload(new Int32Array([2, 0]));
 * const out = gpu.alloc("f32", 4);
 * await gpu.submit([gatherPlan(gpu, { rows: 3, cols: 2, indexLength: 2 }), [table, index, out]]);
 * const rows = await gpu.read(out); // [4, 5, 0, 1]
 * gpu.destroy();
 * ```
 */
export function gatherPlan(
  gpu: ResidentDevice,
  shape: GatherShape,
  options?: KernelOptions<GatherVariant>,
): KernelPlan {
  requireDevice("gather", gpu);
  checkOptions("gather", options);
  validateGatherShape(shape);
  const { rows, cols, indexLength } = shape;
  const { limit, bytes } = bindingLimit(gpu);
  if (blockBytes(rows, cols) > bytes) {
    throw new LimitError(
      "gather/table",
      limit,
      blockBytes(rows, cols),
      bytes,
      `a ${rows} x ${cols} f32 table in one binding (hold it as row blocks: uploadTableBlocks, gatherBlocksPlan)`,
    );
  }
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  return blockPlan(gpu, kernel, shape, 0, rows, true, { bytes: 4 * indexLength + 8 * indexLength * cols, flops: 0 });
}

/** Sizes of a gather from a table held as row blocks. */
export interface GatherBlocksShape extends GatherShape {
  /** Rows per block, every block but the last (default: {@link gatherBlockRows} of the device). */
  blockRows?: number;
}

/** The dispatches of a gather from a table held as row blocks. */
export interface GatherBlocks {
  /** Rows per block (the last block holds the rest). */
  blockRows: number;
  /** Number of blocks: ceil(rows / blockRows). */
  blocks: number;
  /**
   * The operation, one dispatch per block in one compute pass: bindings `table0` .. `table<blocks - 1>`
   * (block i: rows `[i * blockRows, min((i + 1) * blockRows, rows))`, row-major), then `index` and `out`
   * (`[indexLength, cols]`); no intermediates.
   */
  sequence: KernelSequence;
}

/**
 * Plans `gather` over a table held as row blocks, one binding each: what a table past
 * maxStorageBufferBindingSize needs (see the module doc). One block is the whole table.
 *
 * @param gpu the device
 * @param shape `rows`, `cols`, `indexLength`, and `blockRows` (default: as many as one binding holds)
 * @param options kernel override
 * @returns the blocks and the sequence to submit (`gpu.submitSequence(sequence, [...blocks, index, out])`)
 * @throws Error naming the argument, as {@link validateGatherShape}, or blockRows when it is not an
 *   integer >= 1
 * @throws LimitError when a block of blockRows rows is past one binding
 *
 * @example A table split into blocks of 2 rows
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gatherBlocksPlan, uploadTableBlocks } from "@xpu/ops/ops/gather";
 * const gpu = await acquireDevice();
 * const shape = { rows: 5, cols: 2, indexLength: 3, blockRows: 2 };
 * const blocks = uploadTableBlocks(gpu, new Float32Array([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]), 5, 2, 2); // 3 blocks
 * const index = gpu.upload(new Int32Array([4, 0, 7]));
 * const out = gpu.alloc("f32", 6);
 * await gpu.submitSequence(gatherBlocksPlan(gpu, shape).sequence, [...blocks, index, out]);
 * const rows = await gpu.read(out); // [8, 9, 0, 1, 0, 0]
 * gpu.destroy();
 * ```
 */
export function gatherBlocksPlan(
  gpu: ResidentDevice,
  shape: GatherBlocksShape,
  options?: KernelOptions<GatherVariant>,
): GatherBlocks {
  requireDevice("gather", gpu);
  checkOptions("gather", options);
  validateGatherShape(shape);
  const { rows, cols, indexLength } = shape;
  const blockRows = Math.min(
    rows,
    shape.blockRows === undefined ? gatherBlockRows(gpu, cols) : requireInt("gather", "blockRows", shape.blockRows, 1),
  );
  const { limit, bytes } = bindingLimit(gpu);
  if (blockBytes(blockRows, cols) > bytes) {
    throw new LimitError("gather/table", limit, blockBytes(blockRows, cols), bytes, `a block of ${blockRows} rows`);
  }
  const kernel = gpu.resolve(KERNELS, "kernel", options);
  const blocks = Math.ceil(rows / blockRows);
  const tables: BindingSpec[] = [];
  const steps: { plan: KernelPlan; tensors: number[] }[] = [];
  for (let i = 0; i < blocks; i++) {
    const row0 = i * blockRows;
    const held = Math.min(blockRows, rows - row0);
    tables.push({ name: `table${i}`, dtype: "f32", length: held * cols, role: "input" });
    // Each dispatch reads the index; which rows it copies depends on the indices (the sequence holds
    // the operation's cost).
    const plan = blockPlan(gpu, kernel, shape, row0, held, i === 0, { bytes: 4 * indexLength, flops: 0 });
    steps.push({ plan, tensors: [i, blocks, blocks + 1] });
  }
  const [, index, out] = steps[0].plan.bindings;
  const sequence = kernelSequence("gather", [...tables, index, out], [], steps, {
    bytes: 4 * indexLength + 8 * indexLength * cols,
    flops: 0,
  });
  return { blockRows, blocks, sequence };
}

/**
 * Uploads a host table as row blocks of `blockRows` rows, one GpuTensor each (labelled
 * `table[row0:row0 + rows]`), as {@link gatherBlocksPlan}'s sequence binds them. A loader that
 * streams a checkpoint can do the same block by block: block i is
 * `gpu.upload(table.subarray(i * blockRows * cols, min((i + 1) * blockRows, rows) * cols))`.
 *
 * @param gpu the device
 * @param table the `[rows, cols]` table, row-major
 * @param rows rows of the table
 * @param cols columns of the table
 * @param blockRows rows per block (default: {@link gatherBlockRows} of the device)
 * @returns the blocks, in row order
 * @throws Error naming table, rows, cols or blockRows when one does not fit the others
 * @throws LimitError when a block is past one binding
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { uploadTableBlocks } from "@xpu/ops/ops/gather";
 * const gpu = await acquireDevice();
 * const blocks = uploadTableBlocks(gpu, new Float32Array(12), 6, 2, 4); // rows 0-3 and 4-5
 * blocks.map((b) => b.length); // [8, 4]
 * gpu.destroy();
 * ```
 */
export function uploadTableBlocks(
  gpu: ResidentDevice,
  table: Float32Array,
  rows: number,
  cols: number,
  blockRows?: number,
): GpuTensor[] {
  requireDevice("gather", gpu);
  requireInt("gather", "rows", rows, 1, MAX_ROWS);
  requireInt("gather", "cols", cols, 1, MAX_ROWS);
  requireArray("gather", "table", table, "Float32Array", [rows * cols, "rows * cols"]);
  const per = blockRows === undefined ? gatherBlockRows(gpu, cols) : requireInt("gather", "blockRows", blockRows, 1);
  const { limit, bytes } = bindingLimit(gpu);
  const held = Math.min(per, rows);
  if (blockBytes(held, cols) > bytes) {
    throw new LimitError("gather/table", limit, blockBytes(held, cols), bytes, `a block of ${held} rows`);
  }
  const blocks: GpuTensor[] = [];
  for (let row0 = 0; row0 < rows; row0 += per) {
    const end = Math.min(row0 + per, rows);
    blocks.push(gpu.upload(table.subarray(row0 * cols, end * cols), `table[${row0}:${end}]`));
  }
  return blocks;
}

/**
 * Selects rows of `table` on the GPU; a table past one binding is uploaded as row blocks and gathered
 * by {@link gatherBlocksPlan}.
 *
 * @param gpu the device
 * @param args as {@link gather}
 * @param options kernel override
 * @returns the `[indexLength, cols]` result, row-major
 * @throws Error naming the argument, as {@link validateGather}
 *
 * @example
 * ```ts
 * import { acquireDevice, gatherGpu } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const table = new Float32Array([0, 1, 2, 3, 4, 5]);
 * const out = await gatherGpu(gpu, { table, index: new Int32Array([1, -1]), rows: 3, cols: 2 }); // [2, 3, 0, 0]
 * gpu.destroy();
 * ```
 */
export async function gatherGpu(
  gpu: ResidentDevice,
  args: GatherArgs,
  options?: KernelOptions<GatherVariant>,
): Promise<Float32Array> {
  requireDevice("gather", gpu);
  checkOptions("gather", options);
  validateGather(args);
  const { rows, cols } = args;
  const shape = { rows, cols, indexLength: args.index.length };
  if (rows <= gatherBlockRows(gpu, cols)) {
    const [out] = await gpu.run(gatherPlan(gpu, shape, options), [args.table, args.index]);
    return out as Float32Array;
  }
  const { sequence } = gatherBlocksPlan(gpu, shape, options);
  const tensors: GpuTensor[] = [];
  try {
    tensors.push(...uploadTableBlocks(gpu, args.table, rows, cols));
    tensors.push(gpu.upload(args.index, "index"), gpu.alloc("f32", shape.indexLength * cols, "out"));
    await gpu.submitSequence(sequence, tensors);
    return await gpu.read(tensors.at(-1)!) as Float32Array;
  } finally {
    for (const t of tensors) t.buffer.destroy();
  }
}

const QUANTIZED_PARAMS: readonly ParamField[] = [...PARAMS, { name: "words", type: "u32" }, {
  name: "groups",
  type: "u32",
}];

/** Sizes of a gather from a quantized table held as row blocks. */
export interface GatherQuantizedShape extends GatherShape {
  /** The table's format. */
  format: GatherTableFormat;
  /** Rows per block, every block but the last (default: as many as one binding holds). */
  blockRows?: number;
}

/**
 * Plans {@link gatherQuantized} over a table held as row blocks (a block's codes and its scales each
 * in a binding of their own); one block is the whole table.
 *
 * @param gpu the device
 * @param shape `format`, `rows`, `cols`, `indexLength` and `blockRows`
 * @param options kernel override (a variant of `q8row` or `q4g128`, as the format)
 * @returns the blocks and the sequence: bindings `table0`, `scales0`, `table1`, `scales1`, ... then
 *   `index` (i32) and `out` (`[indexLength, cols]`); each step's plan binds `[table_i, scales_i, index, out]`
 * @throws Error naming the argument, as {@link validateGatherShape}, or format or blockRows
 * @throws LimitError when a block's codes are past one binding
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gatherQuantizedBlocksPlan } from "@xpu/ops/ops/gather";
 * import { packQ8 } from "@xpu/ops/ops/matvec";
 * const gpu = await acquireDevice();
 * const { sequence } = gatherQuantizedBlocksPlan(gpu, { format: "q8", rows: 2, cols: 2, indexLength: 1 });
 * const table = gpu.upload(packQ8(new Int32Array([1, -2, 3, 4]), 2, 2)), scales = gpu.upload(new Float32Array([0.5, 2]));
 * const out = gpu.alloc("f32", 2);
 * await gpu.submitSequence(sequence, [table, scales, gpu.upload(new Int32Array([1])), out]);
 * console.log(await gpu.read(out)); // Float32Array [6, 8]
 * gpu.destroy();
 * ```
 */
export function gatherQuantizedBlocksPlan(
  gpu: ResidentDevice,
  shape: GatherQuantizedShape,
  options?: KernelOptions<GatherVariant>,
): GatherBlocks {
  requireDevice("gatherQuantizedBlocks", gpu);
  checkOptions("gatherQuantized", options);
  requireArgs("gatherQuantized", "shape", shape, "{ format, rows, cols, indexLength, blockRows? }", [
    "format",
    "rows",
    "cols",
    "indexLength",
    "blockRows",
  ]);
  const { format, rows, cols, indexLength } = shape;
  // As validateGatherQuantized checks them, so the plan and the reference refuse alike.
  if (format !== "q8" && format !== "q4g128") {
    throw new Error(`gatherQuantized: format must be "q8" or "q4g128", got ${JSON.stringify(format)}`);
  }
  requireInt("gatherQuantized", "rows", rows, 1, MAX_ROWS);
  requireInt("gatherQuantized", "cols", cols, 1, U32_MAX);
  requireInt("gatherQuantized", "indexLength", indexLength, 0, U32_MAX);
  const per = quantizedRowWords(format, cols);
  const { limit, bytes } = bindingLimit(gpu);
  const fit = Math.min(MAX_ROWS, Math.floor(Math.floor(bytes / 16) * 16 / (4 * per.words)));
  if (fit < 1) throw new LimitError("gather/table", limit, 4 * per.words, bytes, `one ${format} row of ${cols}`);
  const blockRows = Math.min(
    rows,
    shape.blockRows === undefined ? fit : requireInt("gatherQuantized", "blockRows", shape.blockRows, 1),
  );
  if (blockBytes(blockRows, per.words) > bytes) {
    throw new LimitError(
      "gather/table",
      limit,
      blockBytes(blockRows, per.words),
      bytes,
      `a block of ${blockRows} rows`,
    );
  }
  const kernel = gpu.resolve(KERNELS, format === "q8" ? "q8row" : "q4g128", options);
  const blocks = Math.ceil(rows / blockRows);
  const total = indexLength * cols;
  const tables: BindingSpec[] = [];
  const steps: { plan: KernelPlan; tensors: number[] }[] = [];
  for (let i = 0; i < blocks; i++) {
    const row0 = i * blockRows;
    const held = Math.min(blockRows, rows - row0);
    const table: BindingSpec = { name: `table${i}`, dtype: "u32", length: held * per.words, role: "input" };
    const scales: BindingSpec = { name: `scales${i}`, dtype: "f32", length: held * per.scales, role: "input" };
    tables.push(table, scales);
    const plan: KernelPlan = {
      op: "gather",
      kernel,
      bindings: [
        table,
        scales,
        { name: "index", dtype: "i32", length: indexLength, role: "input" },
        { name: "out", dtype: "f32", length: total, role: "output" },
      ],
      params: packParams(
        QUANTIZED_PARAMS,
        {
          total,
          d: cols,
          v: rows,
          row0,
          block_rows: held,
          first: Number(i === 0),
          words: per.words,
          groups: per.scales,
        },
        "gatherQuantized",
      ),
      workgroups: foldWorkgroups(Math.ceil(total / WORKGROUP_SIZE), gpu.limits.maxComputeWorkgroupsPerDimension),
      // Each dispatch reads the index; which rows it decodes depends on the indices (the sequence
      // holds the operation's cost).
      cost: { bytes: 4 * indexLength, flops: 0 },
    };
    steps.push({ plan, tensors: [2 * i, 2 * i + 1, 2 * blocks, 2 * blocks + 1] });
  }
  const [, , index, out] = steps[0].plan.bindings;
  const sequence = kernelSequence("gather", [...tables, index, out], [], steps, {
    // The index, one row of codes and scales read per output row, the output written; a multiply per element.
    bytes: 4 * indexLength + 4 * indexLength * (per.words + per.scales) + 4 * total,
    flops: total,
  });
  return { blockRows, blocks, sequence };
}

/**
 * Selects rows of a quantized table on the GPU, dequantized ({@link gatherQuantized}); the table is
 * bound whole (one block).
 *
 * @param gpu the device
 * @param args as {@link gatherQuantized}
 * @param options kernel override
 * @returns the `[indexLength, cols]` result
 * @throws Error naming the argument, as {@link validateGatherQuantized}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { gatherQuantizedGpu } from "@xpu/ops/ops/gather";
 * import { packQ4 } from "@xpu/ops/ops/matvec";
 * const gpu = await acquireDevice();
 * const table = packQ4(new Int32Array([7, -7]), 1, 2);
 * await gatherQuantizedGpu(gpu, { format: "q4g128", table, scales: new Float32Array([0.5]), index: new Int32Array([0, 3]), rows: 1, cols: 2 });
 * // [3.5, -3.5, 0, 0]
 * gpu.destroy();
 * ```
 */
export async function gatherQuantizedGpu(
  gpu: ResidentDevice,
  args: GatherQuantizedArgs,
  options?: KernelOptions<GatherVariant>,
): Promise<Float32Array> {
  requireDevice("gatherQuantized", gpu);
  checkOptions("gatherQuantized", options);
  validateGatherQuantized(args);
  const { format, rows, cols } = args;
  const { sequence } = gatherQuantizedBlocksPlan(
    gpu,
    { format, rows, cols, indexLength: args.index.length, blockRows: rows },
    options,
  );
  const tensors: GpuTensor[] = [];
  try {
    tensors.push(gpu.upload(args.table, "table"), gpu.upload(args.scales, "scales"), gpu.upload(args.index, "index"));
    tensors.push(gpu.alloc("f32", args.index.length * cols, "out"));
    await gpu.submitSequence(sequence, tensors);
    return await gpu.read(tensors[3]) as Float32Array;
  } finally {
    for (const t of tensors) t.buffer.destroy();
  }
}
