/**
 * The token embedding table on the GPU, held as row blocks that each fit one binding (Qwen3-4B's
 * table, 151,936 x 2,560 in f32, is 1.56 GB, twelve blocks under a 128 MiB binding limit), and the two
 * things a model does with it:
 *
 * - the lookup `embed_tokens(ids)` (`torch.index_select(table, 0, ids)`): ops/gather once per block,
 *   with the ids made relative to the block on the host (`id - row0`); an id outside the block is out
 *   of range there and gathers zeros (gather's convention), so every row has exactly one block that
 *   writes it. The first block's gather writes the output, each later one writes a scratch tensor that
 *   ops/axpy's in-place entry point adds into it (`out += 1 · rows`: exact, one side is zero);
 * - the tied head `logits = table @ h` for one hidden state: ops/matvec once per block, each block's
 *   logits in a tensor of their own (`headSteps`).
 *
 * An encoder that need not hold the table does the lookup on the host instead ({@link hostEmbeddingRows}):
 * the prompt's rows read from the checkpoint, only their bytes, and uploaded as the first hidden state.
 *
 * The table is f32 in every format: there is no gather of a q8 row in ops/ yet.
 *
 * @module
 */

import type { GpuTensor, ResidentDevice } from "../../harness/device.ts";
import { axpyInplacePlan } from "../../ops/axpy/mod.ts";
import { gatherPlan } from "../../ops/gather/mod.ts";
import { matvecPlan } from "../../ops/matvec/mod.ts";
import { type TensorStore, toFloat32 } from "../../llm/safetensors.ts";
import { bindingLimit, type Step, type Workspace } from "./steps.ts";

/** Rows `[row0, row0 + rows)` of the table, in a tensor of their own. */
export interface TableBlock {
  /** First row. */
  readonly row0: number;
  /** Rows in the block. */
  readonly rows: number;
  /** The rows, `[rows, cols]` f32. */
  readonly table: GpuTensor;
}

/** An embedding table `[rows, cols]` in row blocks. */
export interface EmbeddingTable {
  /** Rows (the vocabulary). */
  readonly rows: number;
  /** Columns (the hidden size). */
  readonly cols: number;
  /** The blocks, in row order. */
  readonly blocks: readonly TableBlock[];
}

/**
 * Rows of a block of `cols` f32 columns: as many as one binding holds (its 16-byte padding
 * included), at most `rows`.
 *
 * @throws Error when one row is over the limit
 */
function tableBlockRows(gpu: ResidentDevice, rows: number, cols: number, what: string): number {
  const limit = Math.floor(bindingLimit(gpu) / 16) * 16;
  const per = Math.floor(limit / (4 * cols));
  if (per < 1) throw new Error(`qwen3: one row of ${what} (${4 * cols} bytes) is over the binding limit ${limit}`);
  return Math.min(rows, per);
}

/**
 * Uploads a table in row blocks.
 *
 * @param gpu the device (its binding limit sizes the blocks)
 * @param name the checkpoint tensor, for labels and messages
 * @param values `[rows, cols]` row-major
 * @param rows rows
 * @param cols columns
 * @returns the table (the caller destroys it with {@link destroyTable})
 */
export function uploadTable(
  gpu: ResidentDevice,
  name: string,
  values: Float32Array,
  rows: number,
  cols: number,
): EmbeddingTable {
  if (values.length !== rows * cols) {
    throw new Error(`qwen3: ${name} must have ${rows * cols} values ([${rows}, ${cols}]), got ${values.length}`);
  }
  const per = tableBlockRows(gpu, rows, cols, name);
  const blocks: TableBlock[] = [];
  for (let row0 = 0; row0 < rows; row0 += per) {
    const n = Math.min(per, rows - row0);
    blocks.push({ row0, rows: n, table: gpu.upload(values.subarray(row0 * cols, (row0 + n) * cols), name) });
  }
  return { rows, cols, blocks };
}

/**
 * The ids as each block's gather takes them: `id - row0` (out of the block's range for ids of other blocks).
 *
 * @param table the table
 * @param ids token ids, each in `[0, rows)` (checked by the caller)
 * @returns one Int32Array per block
 */
export function blockIndices(table: EmbeddingTable, ids: ArrayLike<number>): Int32Array<ArrayBuffer>[] {
  return table.blocks.map(({ row0 }) => Int32Array.from(ids, (id) => id - row0));
}

/**
 * The lookup of `L` ids into `out` `[L, cols]`, as steps.
 *
 * @param gpu the device
 * @param table the table
 * @param L ids
 * @param indices one i32 tensor `[L]` per block, holding {@link blockIndices}
 * @param out the output `[L, cols]`
 * @param work where a scratch tensor is allocated when there are several blocks
 * @returns the steps
 */
export function embeddingSteps(
  gpu: ResidentDevice,
  table: EmbeddingTable,
  L: number,
  indices: readonly GpuTensor[],
  out: GpuTensor,
  work: Workspace,
): Step[] {
  const { cols, blocks } = table;
  if (indices.length !== blocks.length) {
    throw new Error(
      `qwen3: the embedding lookup takes one index tensor per block (${blocks.length}), got ${indices.length}`,
    );
  }
  const steps: Step[] = [[gatherPlan(gpu, { rows: blocks[0].rows, cols, indexLength: L }), [
    blocks[0].table,
    indices[0],
    out,
  ]]];
  if (blocks.length === 1) return steps;
  const part = work.alloc("f32", L * cols, "embedding block rows");
  const add = axpyInplacePlan(gpu, { alpha: 1, n: L * cols });
  for (let b = 1; b < blocks.length; b++) {
    steps.push([gatherPlan(gpu, { rows: blocks[b].rows, cols, indexLength: L }), [blocks[b].table, indices[b], part]]);
    steps.push([add, [part, out]]);
  }
  return steps;
}

/**
 * The tied head for one hidden state `x` `[cols]`: `logits[b] = block_b @ x`, one tensor per block.
 *
 * @param gpu the device
 * @param table the table
 * @param x the hidden state `[cols]` (after the final norm)
 * @param logits one tensor per block, `[block.rows]` each
 * @returns the steps
 */
export function headSteps(
  gpu: ResidentDevice,
  table: EmbeddingTable,
  x: GpuTensor,
  logits: readonly GpuTensor[],
): Step[] {
  return table.blocks.map((b, i): Step => [matvecPlan(gpu, { N: b.rows, K: table.cols }), [b.table, x, logits[i]]]);
}

/**
 * The lookup on the host: the rows of `ids` read from the checkpoint's table (`[rows, cols]`, F32,
 * F16 or BF16), one {@link TensorStore.readRows} per run of consecutive distinct ids, so only those
 * rows' bytes are fetched; each row decoded to f32 exactly, as the GPU table holds it.
 *
 * @param store the checkpoint
 * @param name the table's tensor
 * @param ids token ids, each in `[0, rows)` (checked by the caller)
 * @returns `[ids.length, cols]` row-major
 */
export async function hostEmbeddingRows(
  store: TensorStore,
  name: string,
  ids: ArrayLike<number>,
): Promise<Float32Array<ArrayBuffer>> {
  const { dtype, shape } = store.info(name), cols = shape[1];
  const runs: [number, number][] = []; // [first row, rows]
  for (const id of [...new Set(Array.from(ids))].sort((a, b) => a - b)) {
    const last = runs.at(-1);
    if (last && last[0] + last[1] === id) last[1]++;
    else runs.push([id, 1]);
  }
  const rowOf = new Map<number, Float32Array>();
  await Promise.all(runs.map(async ([row0, rows]) => {
    const values = toFloat32(dtype, await store.readRows(name, row0, rows));
    for (let r = 0; r < rows; r++) rowOf.set(row0 + r, values.subarray(r * cols, (r + 1) * cols));
  }));
  const out = new Float32Array(ids.length * cols);
  for (let i = 0; i < ids.length; i++) out.set(rowOf.get(ids[i])!, i * cols);
  return out;
}

/**
 * Frees a table's blocks.
 *
 * @param table the table
 */
export function destroyTable(table: EmbeddingTable): void {
  for (const b of table.blocks) b.table.buffer.destroy();
}
