/**
 * Every op's benchmark cases, in one list: what `deno task bench` runs. Each op declares its own in
 * `ops/<op>/bench.ts` (see `harness/bench_case.ts`).
 *
 * @module
 */

import type { BenchCase } from "./bench_case.ts";
import { BENCH as ELEMENTWISE } from "../ops/elementwise/bench.ts";
import { BENCH as AXPY } from "../ops/axpy/bench.ts";
import { BENCH as ACTIVATION } from "../ops/activation/bench.ts";
import { BENCH as SOFTMAX } from "../ops/softmax/bench.ts";
import { BENCH as RMSNORM } from "../ops/rmsnorm/bench.ts";
import { BENCH as LAYERNORM } from "../ops/layernorm/bench.ts";
import { BENCH as REDUCE } from "../ops/reduce/bench.ts";

export type { BenchCase, SizeClass } from "./bench_case.ts";

/** Every benchmark case. */
export const BENCH_CASES: readonly BenchCase[] = [
  ...ELEMENTWISE,
  ...AXPY,
  ...ACTIVATION,
  ...SOFTMAX,
  ...RMSNORM,
  ...LAYERNORM,
  ...REDUCE,
];
