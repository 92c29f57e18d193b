/**
 * The token embedding table on the GPU, held as row blocks that each fit one binding (Qwen3-4B's
 * table, 151,936 x 2,560 in f32, is 1.56 GB, twelve blocks under a 128 MiB binding limit), and the two
 * things a model does with it:
 *
 * - the lookup `embed_tokens(ids)` (`torch.index_select(table, 0, ids)`): ops/gather's
 *   `gatherBlocksPlan`, one dispatch per block, each writing the rows whose id falls in its block, from
 *   one i32 tensor of token ids (written by the host for a prompt, or by the sampler of a decode loop
 *   kept on the GPU);
 * - the head `logits = table @ h` for one hidden state (`headSteps`): ops/matvec once per block, each
 *   writing its rows' logits into its range of one `[rows]` tensor (a view: so every block but the last
 *   holds a multiple of the device's storage offset alignment in rows), which a sampler reads whole.
 *
 * An encoder that need not hold the table does the lookup on the host instead ({@link hostEmbeddingRows}):
 * the prompt's rows read from the checkpoint, only their bytes, and uploaded as the first hidden state.
 *
 * The table is f32 in every format: there is no gather of a q8 row in ops/ yet.
 *
 * @module
 */

import { type GpuTensor, type ResidentDevice, tensorView } from "../../harness/device.ts";
import { gatherBlocksPlan } from "../../ops/gather/mod.ts";
import { matvecPlan } from "../../ops/matvec/mod.ts";
import { type TensorStore, toFloat32 } from "../../llm/safetensors.ts";
import { bindingBytes } from "../../harness/limits.ts";
import type { Step } from "./steps.ts";

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
 * included), at most `rows`; when that splits the table, a multiple of the rows whose f32 logits
 * fill the device's storage offset alignment (64 at 256 bytes), so each block's logits begin where a
 * view may (unless one binding holds fewer rows than that: a table such a head cannot read).
 *
 * @throws Error when one row is over the limit
 */
function tableBlockRows(gpu: ResidentDevice, rows: number, cols: number, what: string): number {
  const limit = Math.floor(bindingBytes(gpu.limits) / 16) * 16;
  const per = Math.floor(limit / (4 * cols));
  if (per < 1) throw new Error(`qwen3: one row of ${what} (${4 * cols} bytes) is over the binding limit ${limit}`);
  if (per >= rows) return rows;
  const align = logitsAlignment(gpu);
  return per >= align ? Math.floor(per / align) * align : per;
}

/** Rows whose f32 logits fill the device's storage offset alignment. */
function logitsAlignment(gpu: ResidentDevice): number {
  return Math.max(1, gpu.device.limits.minStorageBufferOffsetAlignment / 4);
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
 * The lookup of `L` ids into `out` `[L, cols]`, as steps: ops/gather over the table's blocks (an id
 * outside `[0, rows)` gathers zeros: gather's convention).
 *
 * @param gpu the device
 * @param table the table
 * @param L ids
 * @param index the token ids, i32 `[L]`
 * @param out the output `[L, cols]`
 * @returns the steps
 */
export function embeddingSteps(
  gpu: ResidentDevice,
  table: EmbeddingTable,
  L: number,
  index: GpuTensor,
  out: GpuTensor,
): Step[] {
  const { rows, cols, blocks } = table;
  const { sequence } = gatherBlocksPlan(gpu, { rows, cols, indexLength: L, blockRows: blocks[0].rows });
  const tensors = [...blocks.map((b) => b.table), index, out];
  return sequence.steps.map(({ plan, tensors: at }): Step => [plan, at.map((i) => tensors[i])]);
}

/**
 * The head for one hidden state `x` `[cols]`: `logits = table @ x`, each block's rows into their
 * range of `logits`.
 *
 * @param gpu the device
 * @param table the table (the embedding when tied, else `lm_head.weight`)
 * @param x the hidden state `[cols]` (after the final norm)
 * @param logits `[rows]`
 * @returns the steps
 * @throws Error when a block's logits cannot begin at a storage offset alignment (one binding holds
 *   fewer of the table's rows than that alignment's f32 count)
 */
export function headSteps(gpu: ResidentDevice, table: EmbeddingTable, x: GpuTensor, logits: GpuTensor): Step[] {
  const align = logitsAlignment(gpu);
  const misaligned = table.blocks.find((b) => b.row0 % align !== 0);
  if (misaligned) {
    throw new Error(
      `qwen3: the head's row block at row ${misaligned.row0} cannot write its logits into a view (a view begins at a ` +
        `multiple of ${align} rows, the storage offset alignment): one binding holds fewer than ${align} of its rows`,
    );
  }
  return table.blocks.map((b): Step => [
    matvecPlan(gpu, { N: b.rows, K: table.cols }),
    [b.table, x, table.blocks.length === 1 ? logits : tensorView(logits, b.row0, b.rows)],
  ]);
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
