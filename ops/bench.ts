/**
 * `deno task bench`: the benchmark CLI (`harness/bench.ts`, see its module doc for the options) over
 * every op's cases (`ops/registry.ts`). Deno-only tooling; not published.
 *
 * @module
 */

import { benchMain, exitWith } from "../harness/bench.ts";
import { BENCH_CASES } from "./registry.ts";

if (import.meta.main) await exitWith((args) => benchMain(args, BENCH_CASES), Deno.args);
