/**
 * For the models' benchmarks (models/<name>/bench.ts; not published): a TensorStore with a
 * checkpoint's names and shapes whose F32 values are made when read, so a bench loads a real model's
 * sizes through the real loaders (their layout checks included) with no checkpoint at hand.
 *
 * Each tensor's values are `center + half * u`, u uniform in [-1, 1) from a xorshift32 stream seeded
 * by the tensor's name (so a tensor's values do not depend on which others the store holds); the
 * caller's `range` gives each tensor its center and half-width (norms near 1, matrices within
 * ±sqrt(3 / fan_in), as trained weights are, so no activation overflows). What the values are does
 * not change the work a bench times.
 *
 * @module
 */

import { type TensorInfo, tensorRowBytes, type TensorStore } from "../llm/safetensors.ts";
import type { ExpectedTensor } from "../llm/weights/checkpoint.ts";

/** Where one tensor's synthetic values lie: `center ± half`. */
export interface SyntheticRange {
  /** The middle of the values (1 for a norm's weight, 0 for a matrix). */
  center: number;
  /** Half the width; 0 makes every value `center`. */
  half: number;
}

/**
 * A store of `expected`'s tensors (F32, laid out one after another) whose values are seeded draws in
 * the range `range` gives each.
 *
 * @param expected the names and shapes, in the order the store lists them
 * @param range each tensor's center and half-width, from its name and shape
 * @returns the store; reading a name it does not hold throws
 *
 * @example
 * ```ts
 * import { syntheticStore } from "./synthetic_store.ts";
 * const store = syntheticStore(
 *   [{ name: "norm.weight", shape: [4] }, { name: "proj.weight", shape: [4, 3] }],
 *   (_, shape) => shape.length === 1 ? { center: 1, half: 0 } : { center: 0, half: Math.sqrt(3 / shape[1]) },
 * );
 * await store.readFloat32("norm.weight"); // Float32Array [1, 1, 1, 1]
 * (await store.readRows("proj.weight", 1, 2)).length; // 24: two rows of three f32
 * ```
 */
export function syntheticStore(
  expected: readonly ExpectedTensor[],
  range: (name: string, shape: readonly number[]) => SyntheticRange,
): TensorStore {
  let offset = 0;
  const tensors: TensorInfo[] = expected.map(({ name, shape }) => {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    offset += bytes;
    return { name, dtype: "F32", shape: [...shape], begin: offset - bytes, end: offset };
  });
  const byName = new Map(tensors.map((t) => [t.name, t]));
  const info = (name: string) => {
    const t = byName.get(name);
    if (!t) throw new Error(`synthetic store: no tensor ${name}`);
    return t;
  };
  const readFloat32 = (name: string) => {
    const { shape, begin, end } = info(name);
    const out = new Float32Array((end - begin) / 4);
    const { center, half } = range(name, shape);
    let s = 0x9e3779b9 ^ [...name].reduce((h, c) => (h * 31 + c.charCodeAt(0)) | 0, 7);
    for (let i = 0; i < out.length; i++) {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      out[i] = center + half * ((s >>> 0) / 2 ** 31 - 1);
    }
    return Promise.resolve(out);
  };
  return {
    tensors,
    metadata: {},
    info,
    readFloat32,
    read: async (name) => new Uint8Array((await readFloat32(name)).buffer),
    readRows: async (name, row0, rows) => {
      const { offset, length } = tensorRowBytes(info(name), row0, rows);
      return new Uint8Array((await readFloat32(name)).buffer, offset, length);
    },
  };
}
