/**
 * Benchmark cases of pope: the table an absolute position encoding adds to the embeddings, at a
 * Llama-sized prefill (4,096 positions of width 4,096 = 32 heads x 128: 64 MiB written) and at a
 * smaller model, plus one decode row at position 8,191 (all 8,192 orders stepped through, one row
 * written).
 *
 * @module
 */

import { type BenchCase, defineCase } from "../../harness/bench_case.ts";
import { foldWorkgroups } from "../../harness/limits.ts";
import { packParams } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import { KERNELS, popeArguments, popeCoefficients, popePlan } from "./mod.ts";

type Shape = { S: number; D: number; posOffset: number };
const GPU: Shape[] = [{ S: 4096, D: 4096, posOffset: 0 }, { S: 2048, D: 768, posOffset: 0 }, {
  S: 1,
  D: 4096,
  posOffset: 8191,
}];
const QUICK: Shape[] = [{ S: 64, D: 256, posOffset: 0 }, { S: 33, D: 100, posOffset: 1 }];
const label = ({ S, D, posOffset }: Shape) => `${S}x${D}+${posOffset}`;

/**
 * Measurement only: the present plan with another layout of the scan (columns per workgroup and
 * chunks), for `previous` (16 columns by 64 chunks, a division per step, no coefficient table) and
 * `cols16` (16 columns by 64 chunks with the coefficient table).
 */
export function layoutPlan(gpu: ResidentDevice, shape: Shape, entry: "previous" | "cols16"): KernelPlan {
  const plan = popePlan(gpu, shape);
  const { S, D, posOffset } = shape;
  return {
    ...plan,
    kernel: gpu.resolve(KERNELS, entry),
    bindings: entry === "previous" ? [plan.bindings[0], plan.bindings[2]] : plan.bindings,
    params: packParams(
      [{ name: "s", type: "u32" }, { name: "d", type: "u32" }, { name: "posOffset", type: "u32" }, {
        name: "len",
        type: "u32",
      }],
      { s: S, d: D, posOffset, len: Math.ceil((posOffset + S) / 64) },
      "pope",
    ),
    workgroups: foldWorkgroups(Math.ceil(D / 16), gpu.limits.maxComputeWorkgroupsPerDimension),
  };
}

/** pope's benchmark cases. */
export const BENCH: readonly BenchCase[] = [
  defineCase<{ S: number; D: number; posOffset: number }>({
    op: "pope",
    entry: "kernel",
    sources: KERNELS,
    gpu: [{ S: 4096, D: 4096, posOffset: 0 }, { S: 2048, D: 768, posOffset: 0 }, { S: 1, D: 4096, posOffset: 8191 }],
    quick: [{ S: 64, D: 256, posOffset: 0 }, { S: 33, D: 100, posOffset: 1 }],
    label: ({ S, D, posOffset }) => `${S}x${D}+${posOffset}`,
    plan: (gpu, shape, options) => popePlan(gpu, shape, options),
    inputs: ({ S, D, posOffset }) => [popeArguments(D), popeCoefficients(posOffset + S)],
  }),
  defineCase<Shape>({
    op: "pope",
    entry: "previous",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape) => layoutPlan(gpu, shape, "previous"),
    inputs: ({ D }) => [popeArguments(D)],
  }),
  defineCase<Shape>({
    op: "pope",
    entry: "cols16",
    sources: KERNELS,
    gpu: GPU,
    quick: QUICK,
    label,
    plan: (gpu, shape) => layoutPlan(gpu, shape, "cols16"),
    inputs: ({ S, D, posOffset }) => [popeArguments(D), popeCoefficients(posOffset + S)],
  }),
];
