/**
 * Every op, by name, with its benchmark cases: the one list `deno task bench` runs (`ops/bench.ts`)
 * and any test that needs every op reads. The harness sits below the ops and imports none of them;
 * each op declares its own cases in `ops/<op>/bench.ts` (see `harness/bench_case.ts`).
 *
 * To add an op: import its `BENCH` and add one `{ name, bench }` line (the test beside this file
 * fails while an `ops/<op>/bench.ts` is not listed).
 *
 * @module
 */

import type { BenchCase } from "../harness/bench_case.ts";
import { BENCH as ELEMENTWISE } from "./elementwise/bench.ts";
import { BENCH as AXPY } from "./axpy/bench.ts";
import { BENCH as ACTIVATION } from "./activation/bench.ts";
import { BENCH as SOFTMAX } from "./softmax/bench.ts";
import { BENCH as RMSNORM } from "./rmsnorm/bench.ts";
import { BENCH as LAYERNORM } from "./layernorm/bench.ts";
import { BENCH as REDUCE } from "./reduce/bench.ts";
import { BENCH as MATMUL } from "./matmul/bench.ts";
import { BENCH as MATVEC } from "./matvec/bench.ts";
import { BENCH as DEQUANT_TRANSPOSE } from "./dequant_transpose/bench.ts";
import { BENCH as TRANSPOSE } from "./transpose/bench.ts";
import { BENCH as PERMUTE } from "./permute/bench.ts";
import { BENCH as GATHER } from "./gather/bench.ts";
import { BENCH as SCATTER } from "./scatter/bench.ts";
import { BENCH as QUANTIZE } from "./quantize/bench.ts";
import { BENCH as DEQUANTIZE } from "./dequantize/bench.ts";
import { BENCH as CONV } from "./conv/bench.ts";
import { BENCH as CONV_TRANSPOSE } from "./conv_transpose/bench.ts";
import { BENCH as GROUP_NORM } from "./group_norm/bench.ts";
import { BENCH as CHANNEL_NORM } from "./channel_norm/bench.ts";
import { BENCH as SNAKE } from "./snake/bench.ts";
import { BENCH as MEL } from "./mel/bench.ts";
import { BENCH as PAD } from "./pad/bench.ts";
import { BENCH as STFT } from "./stft/bench.ts";
import { BENCH as UPSAMPLE } from "./upsample/bench.ts";
import { BENCH as ROPE } from "./rope/bench.ts";
import { BENCH as ALIBI } from "./alibi/bench.ts";
import { BENCH as POPE } from "./pope/bench.ts";
import { BENCH as MOE } from "./moe/bench.ts";
import { BENCH as CTC_DECODE } from "./ctc_decode/bench.ts";
import { BENCH as ATTENTION } from "./attention/bench.ts";
import { BENCH as FLASH_ATTENTION } from "./flash_attention/bench.ts";
import { BENCH as GQA } from "./gqa/bench.ts";
import { BENCH as SAMPLE } from "./sample/bench.ts";
import { BENCH as FUSED_GEMV } from "./fused_gemv/bench.ts";

/** An op's directory name under `ops/` and its benchmark cases. */
export interface RegisteredOp {
  /** The directory name, e.g. `softmax`. */
  name: string;
  /** The op's `BENCH` (from `ops/<name>/bench.ts`). */
  bench: readonly BenchCase[];
}

/** Every op, in the order the bench runs them. */
export const OPS: readonly RegisteredOp[] = [
  { name: "elementwise", bench: ELEMENTWISE },
  { name: "axpy", bench: AXPY },
  { name: "activation", bench: ACTIVATION },
  { name: "softmax", bench: SOFTMAX },
  { name: "rmsnorm", bench: RMSNORM },
  { name: "layernorm", bench: LAYERNORM },
  { name: "reduce", bench: REDUCE },
  { name: "matmul", bench: MATMUL },
  { name: "matvec", bench: MATVEC },
  { name: "dequant_transpose", bench: DEQUANT_TRANSPOSE },
  { name: "transpose", bench: TRANSPOSE },
  { name: "permute", bench: PERMUTE },
  { name: "gather", bench: GATHER },
  { name: "scatter", bench: SCATTER },
  { name: "quantize", bench: QUANTIZE },
  { name: "dequantize", bench: DEQUANTIZE },
  { name: "conv", bench: CONV },
  { name: "conv_transpose", bench: CONV_TRANSPOSE },
  { name: "group_norm", bench: GROUP_NORM },
  { name: "channel_norm", bench: CHANNEL_NORM },
  { name: "snake", bench: SNAKE },
  { name: "mel", bench: MEL },
  { name: "pad", bench: PAD },
  { name: "stft", bench: STFT },
  { name: "upsample", bench: UPSAMPLE },
  { name: "rope", bench: ROPE },
  { name: "alibi", bench: ALIBI },
  { name: "pope", bench: POPE },
  { name: "moe", bench: MOE },
  { name: "ctc_decode", bench: CTC_DECODE },
  { name: "attention", bench: ATTENTION },
  { name: "flash_attention", bench: FLASH_ATTENTION },
  { name: "gqa", bench: GQA },
  { name: "sample", bench: SAMPLE },
  { name: "fused_gemv", bench: FUSED_GEMV },
];

/** Every benchmark case of every op. */
export const BENCH_CASES: readonly BenchCase[] = OPS.flatMap((op) => op.bench);
