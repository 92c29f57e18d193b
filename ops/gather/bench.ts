/**
 * Benchmark cases of gather: rows of an embedding-like table, indices distinct (the cost assumes
 * each selected row is read once, so repeats, which a cache could serve, are not drawn).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { gatherPlan, KERNELS } from "./mod.ts";

interface Shape {
  V: number;
  D: number;
  N: number;
}

/**
 * `N` distinct row indices in `[0, V)`, in random order (a seeded partial Fisher-Yates shuffle).
 *
 * @param V rows of the table
 * @param N indices wanted, at most V
 * @param seed any integer
 * @returns the indices
 */
function distinctIndices(V: number, N: number, seed: number): Int32Array {
  const rows = Int32Array.from({ length: V }, (_, i) => i);
  let s = (seed ^ 0x2545f491) >>> 0 || 1;
  for (let i = 0; i < N; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    const j = i + (s % (V - i));
    [rows[i], rows[j]] = [rows[j], rows[i]];
  }
  return rows.slice(0, N);
}

/** gather's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape>({
    op: "gather",
    entry: "kernel",
    sources: KERNELS,
    // Each shape moves well past the 50 MB L2 per pass: the whole table is one binding, so the
    // timing does not rotate input sets, and the rows read must not fit in the cache themselves.
    gpu: [{ V: 32768, D: 4096, N: 8192 }, { V: 131072, D: 1024, N: 16384 }],
    quick: [{ V: 256, D: 64, N: 128 }, { V: 4096, D: 256, N: 1024 }],
    label: ({ V, D, N }) => `${V}x${D}-${N}rows`,
    plan: (gpu, shape, options) => gatherPlan(gpu, shape, options),
    inputs: ({ V, D, N }, seed) => [randomInput(V * D, seed), distinctIndices(V, N, seed + 1)],
  }),
];
