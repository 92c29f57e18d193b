/**
 * Test helpers for Anima (Deno only; used by tests alone): the golden-tiny fixtures (copied from
 * the oracle pack, see fixtures/README.md), a header-only store of the real layout, and the
 * oracle's relative measure, max|a − b| / max|b|.
 *
 * @module
 */

import { SafetensorsFile, type TensorInfo, type TensorStore } from "../../llm/safetensors.ts";
import { bytesSource } from "../../llm/safetensors_sources.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url);

/** Opens one of the fixtures' safetensors files (`io`, `weights_dit`, `weights_vae`, `weights_qwen3`). */
export async function fixture(name: string): Promise<SafetensorsFile> {
  const bytes = await Deno.readFile(new URL(`${name}.safetensors`, FIXTURES));
  return await SafetensorsFile.open(bytesSource(bytes, `${name}.safetensors`));
}

/** Reads an I32 tensor of a fixture. */
export async function readInt32(file: TensorStore, name: string): Promise<Int32Array> {
  const bytes = await file.read(name);
  return new Int32Array(bytes.slice().buffer);
}

/** The golden set's index.json (configs, checks, tensor descriptions). */
export async function goldenIndex(): Promise<
  { configs: Record<string, Record<string, unknown>>; checks: Record<string, unknown> }
> {
  return JSON.parse(await Deno.readTextFile(new URL("index.json", FIXTURES)));
}

/**
 * A store that has names and shapes but no data (the real models' layout): reading throws.
 *
 * @param entries `[name, shape]` pairs
 */
export function headerStore(entries: readonly (readonly [string, readonly number[]])[]): TensorStore {
  const tensors: TensorInfo[] = entries.map(([name, shape]) => ({
    name,
    dtype: "BF16",
    shape: [...shape],
    begin: 0,
    end: 0,
  }));
  const byName = new Map(tensors.map((t) => [t.name, t]));
  const info = (name: string) => {
    const t = byName.get(name);
    if (!t) throw new Error(`header store: no tensor ${name}`);
    return t;
  };
  const noData = (name: string): never => {
    throw new Error(`header store: ${name} has no data`);
  };
  return { tensors, metadata: {}, info, read: noData, readFloat32: noData, readRows: noData };
}

/** The real layout's names and shapes (fixtures/layout.json). */
export async function realLayout(): Promise<{ dit52: [string, number[]][]; vae: [string, number[]][] }> {
  return JSON.parse(await Deno.readTextFile(new URL("layout.json", FIXTURES)));
}

/**
 * The oracle's relative difference: max|a − b| / max(max|b|, 1e-6).
 *
 * @param actual values under test
 * @param expected golden values
 */
export function relativeDiff(actual: ArrayLike<number>, expected: ArrayLike<number>): number {
  if (actual.length !== expected.length) throw new Error(`length ${actual.length}, expected ${expected.length}`);
  let diff = 0, scale = 0;
  for (let i = 0; i < actual.length; i++) {
    const d = Math.abs(actual[i] - expected[i]);
    diff = d > diff || Number.isNaN(d) ? d : diff;
    scale = Math.max(scale, Math.abs(expected[i]));
  }
  return diff / Math.max(scale, 1e-6);
}

/**
 * Asserts the oracle's relative difference is within `tol` (1e-4, the oracle's own cpu-vs-cuda
 * tolerance, unless a stage says why it needs another).
 *
 * @param actual values under test
 * @param expected golden values
 * @param label what is compared
 * @param tol the bound
 * @returns the measured difference
 */
export function assertRel(actual: ArrayLike<number>, expected: ArrayLike<number>, label: string, tol = 1e-4): number {
  const rel = relativeDiff(actual, expected);
  if (!(rel <= tol)) throw new Error(`${label}: relative difference ${rel.toExponential(3)} > ${tol}`);
  return rel;
}

/**
 * A view of a DiT store whose blocks are the source's blocks in `order` (block i reads block
 * `order[i]`), to make a deeper model out of the tiny one.
 *
 * @param store the DiT's tensors (names without `net.`)
 * @param order the source block of each block
 */
export function reorderedBlocks(store: TensorStore, order: readonly number[]): TensorStore {
  const source = (name: string) => {
    const m = /^blocks\.(\d+)\.(.*)$/.exec(name);
    return m ? `blocks.${order[Number(m[1])]}.${m[2]}` : name;
  };
  const tensors: TensorInfo[] = store.tensors.filter((t) => !t.name.startsWith("blocks."));
  for (const [i, from] of order.entries()) {
    for (const t of store.tensors) {
      if (t.name.startsWith(`blocks.${from}.`)) {
        tensors.push({ ...t, name: `blocks.${i}.${t.name.slice(`blocks.${from}.`.length)}` });
      }
    }
  }
  return {
    tensors,
    metadata: store.metadata,
    info: (name) => ({ ...store.info(source(name)), name }),
    read: (name) => store.read(source(name)),
    readFloat32: (name) => store.readFloat32(source(name)),
    readRows: (name, row0, rows) => store.readRows(source(name), row0, rows),
  };
}
