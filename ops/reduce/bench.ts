/**
 * Benchmark cases of reduce: sum and max over the last axis (rows read consecutively, short rows
 * sharing a workgroup) and over axis 0 (neighbouring outputs side by side, lanes along the axis).
 *
 * @module
 */

import { type BenchCase, defineCase, randomInput } from "../../harness/bench_case.ts";
import { KERNELS, type ReduceOp, reducePlan } from "./mod.ts";
import type { ReduceVariant } from "./kernels.gen.ts";

interface Shape {
  op: ReduceOp;
  shape: number[];
  dim: number;
}

const square = (n: number, op: ReduceOp, dim: number): Shape => ({ op, shape: [n, n], dim });

/** reduce's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<Shape, ReduceVariant>({
    op: "reduce",
    entry: "kernel",
    sources: KERNELS,
    gpu: [
      square(4096, "sum", -1),
      square(4096, "sum", 0),
      square(8192, "sum", -1),
      square(8192, "sum", 0),
      square(8192, "max", -1),
      square(8192, "max", 0),
      { op: "sum", shape: [65536, 1024], dim: -1 },
      { op: "sum", shape: [1024, 65536], dim: 0 },
    ],
    quick: [square(256, "sum", -1), square(256, "sum", 0), square(1024, "max", -1), square(1024, "max", 0)],
    label: ({ op, shape, dim }) => `${op}-axis${dim < 0 ? dim + shape.length : dim}-${shape.join("x")}`,
    plan: (gpu, shape, options) => reducePlan(gpu, shape, options),
    inputs: ({ shape }, seed) => [randomInput(shape.reduce((p, d) => p * d, 1), seed)],
  }),
];
