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
import { BENCH as MATMUL } from "../ops/matmul/bench.ts";
import { BENCH as MATVEC } from "../ops/matvec/bench.ts";
import { BENCH as DEQUANT_TRANSPOSE } from "../ops/dequant_transpose/bench.ts";
import { BENCH as TRANSPOSE } from "../ops/transpose/bench.ts";
import { BENCH as PERMUTE } from "../ops/permute/bench.ts";
import { BENCH as GATHER } from "../ops/gather/bench.ts";
import { BENCH as SCATTER } from "../ops/scatter/bench.ts";
import { BENCH as QUANTIZE } from "../ops/quantize/bench.ts";
import { BENCH as DEQUANTIZE } from "../ops/dequantize/bench.ts";
import { BENCH as CONV } from "../ops/conv/bench.ts";
import { BENCH as CONV_TRANSPOSE } from "../ops/conv_transpose/bench.ts";
import { BENCH as GROUP_NORM } from "../ops/group_norm/bench.ts";
import { BENCH as SNAKE } from "../ops/snake/bench.ts";
import { BENCH as MEL } from "../ops/mel/bench.ts";
import { BENCH as PAD } from "../ops/pad/bench.ts";
import { BENCH as STFT } from "../ops/stft/bench.ts";
import { BENCH as UPSAMPLE } from "../ops/upsample/bench.ts";
import { BENCH as ROPE } from "../ops/rope/bench.ts";
import { BENCH as ALIBI } from "../ops/alibi/bench.ts";
import { BENCH as POPE } from "../ops/pope/bench.ts";
import { BENCH as MOE } from "../ops/moe/bench.ts";
import { BENCH as CTC_DECODE } from "../ops/ctc_decode/bench.ts";
import { BENCH as ATTENTION } from "../ops/attention/bench.ts";
import { BENCH as FLASH_ATTENTION } from "../ops/flash_attention/bench.ts";
import { BENCH as GQA } from "../ops/gqa/bench.ts";

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
  ...MATMUL,
  ...MATVEC,
  ...DEQUANT_TRANSPOSE,
  ...TRANSPOSE,
  ...PERMUTE,
  ...GATHER,
  ...SCATTER,
  ...QUANTIZE,
  ...DEQUANTIZE,
  ...CONV,
  ...CONV_TRANSPOSE,
  ...GROUP_NORM,
  ...SNAKE,
  ...MEL,
  ...PAD,
  ...STFT,
  ...UPSAMPLE,
  ...ROPE,
  ...ALIBI,
  ...POPE,
  ...MOE,
  ...CTC_DECODE,
  ...ATTENTION,
  ...FLASH_ATTENTION,
  ...GQA,
];
