/**
 * Every generated kernel writes its accumulators (the function-scope vectors named `acc…`, as every
 * tiled kernel here names them) through constant component indices only: no `acc0[j] = …` or
 * `acc0[j] += …` with an index that is not a literal. A compiler may move a vector written through a
 * run-time index out of registers into memory for the whole kernel, whether or not that write runs.
 * The q8 GEMMs' infinite-scale fix-up had that form while every q8 product measured 3 to 7 times
 * slower on an H200 than before it (harness/baselines/nvidia-h200-llm.md, sixth run); it now uses
 * whole-vector selects (ops/matmul/wgsl/include/q8_infinite_scale.wgsl). Small vectors a helper
 * fills in a short loop (`v[j] = …` of a ragged load) are not accumulators and are not checked;
 * reads through a run-time index are not flagged either.
 *
 * @module
 */

import { deepStrictEqual, ok } from "node:assert/strict";

/** A write to a run-time component of an accumulator: the variable and the line. */
export interface IndexedWrite {
  variable: string;
  line: string;
}

/** Vector types a `var` can hold whose components an index writes. */
const VECTOR = /^(vec[234][fiuh]|vec[234]<[^>]+>)$/;

/** The accumulators of a WGSL source (comments removed): `var acc… = vec4f(…)` or `var acc…: vec4f`. */
function accumulators(source: string): Set<string> {
  const names = new Set<string>();
  for (const m of source.matchAll(/\bvar\s+([A-Za-z_]\w*)\s*(?::\s*([\w<>]+))?\s*(?:=\s*([\w<>]+)\s*\()?/g)) {
    const [, name, type, init] = m;
    if (!name.startsWith("acc")) continue;
    if ((type !== undefined && VECTOR.test(type)) || (init !== undefined && VECTOR.test(init))) names.add(name);
  }
  return names;
}

/**
 * The writes to a run-time component of an accumulator in a WGSL source.
 *
 * @param source a kernel's WGSL
 * @returns each such write
 */
export function indexedAccumulatorWrites(source: string): IndexedWrite[] {
  const code = source.replace(/\/\/[^\n]*/g, "");
  const vectors = accumulators(code);
  const writes: IndexedWrite[] = [];
  for (const line of code.split("\n")) {
    for (const m of line.matchAll(/\b([A-Za-z_]\w*)\s*\[([^\]]+)\]\s*(?:[-+*/]?=)(?!=)/g)) {
      const [, variable, index] = m;
      if (vectors.has(variable) && !/^\s*\d+[iu]?\s*$/.test(index)) writes.push({ variable, line: line.trim() });
    }
  }
  return writes;
}

Deno.test("wgsl registers: the scan finds a run-time component write to an accumulator and passes the rest", () => {
  const source = `
fn f() {
  var acc0 = vec4f(0.0);
  var acc_sum: vec4u;
  var acc_table: array<f32, 4>;
  var v = vec4f(0.0);
  for (var j = 0u; j < 4u; j++) {
    acc0[j] = 1.0;       // flagged
    acc_sum[j] += 1u;    // flagged
    acc_table[j] = 2.0;  // an array: not a vector
    v[j] = 5.0;          // not an accumulator
  }
  acc0[2] = 3.0;         // a constant index
  acc0.x = 4.0;
  let same = acc0[j] == 1.0;
}`;
  deepStrictEqual(indexedAccumulatorWrites(source), [
    { variable: "acc0", line: "acc0[j] = 1.0;" },
    { variable: "acc_sum", line: "acc_sum[j] += 1u;" },
  ]);
});

Deno.test("wgsl registers: no generated kernel writes a run-time component of an accumulator", async () => {
  const root = new URL("../ops/", import.meta.url);
  let kernels = 0;
  const found: string[] = [];
  for await (const entry of Deno.readDir(root)) {
    if (!entry.isDirectory) continue;
    const file = new URL(`${entry.name}/kernels.gen.ts`, root);
    try {
      await Deno.stat(file);
    } catch {
      continue;
    }
    const { KERNELS } = await import(file.href) as { KERNELS: Record<string, string> };
    for (const [variant, source] of Object.entries(KERNELS)) {
      kernels++;
      for (const w of indexedAccumulatorWrites(source)) found.push(`${entry.name}/${variant}: ${w.line}`);
    }
  }
  ok(kernels > 100, `scanned ${kernels} kernels`);
  deepStrictEqual(found, []);
});
