/**
 * The bench's parts, for a program or a page that measures kernels as `deno task bench` does: the
 * roofline probes ({@link measureRoofline} and each probe alone), GPU-timestamp timing
 * ({@link timePlan}, {@link timeResident}, {@link timeProgram}, {@link timeEncoding}, {@link warmClocks}; where a
 * program's time goes, {@link profileProgram}, and its sample {@link dispatchTimes}; every pass's ticks, {@link timestampPasses}), bench cases ({@link defineCase}),
 * one bench run ({@link runBench}) and its report ({@link reportJson}, {@link parseReport},
 * {@link rooflineSvg}, {@link reportHtml}, {@link compareReports}). `examples/roofline/` runs the
 * bench in a browser this way.
 *
 * These are published as `@xpu/ops/harness/bench`, apart from the ops and the harness they are
 * built on (`@xpu/ops`, `@xpu/ops/harness`): what a user of the ops needs is there, and what a
 * benchmark needs is here. Nothing here imports a Deno-only API (the CLI that prints the table and
 * writes the files is `harness/bench.ts`, not published).
 *
 * @example Time a plan and place it against this machine's roofline
 * ```ts
 * import { acquireDevice, softmaxPlan } from "@xpu/ops";
 * import { measureRoofline, rowFigures, timePlan } from "@xpu/ops/harness/bench";
 * const gpu = await acquireDevice();
 * const roofline = await measureRoofline(gpu, { size: "small" });
 * const plan = softmaxPlan(gpu, { rows: 64, cols: 256 });
 * const timing = await timePlan(gpu, plan, () => [new Float32Array(64 * 256).fill(1)], { samples: 5, warmup: 1 });
 * const { fraction, bound } = rowFigures(plan.cost, timing.ms, roofline); // e.g. 0.41 of "bandwidth"
 * gpu.destroy();
 * ```
 *
 * @module
 */

export {
  type ClockWarmupOptions,
  type DispatchTime,
  dispatchTimes,
  isSequence,
  type KernelTime,
  MAX_TIMED_PASSES,
  profileByKernel,
  profileProgram,
  type SampleStats,
  type Timed,
  timeEncoding,
  timePlan,
  timeProgram,
  timeResident,
  timestampPasses,
  type Timing,
  type TimingOptions,
  variantOf,
  warmClocks,
} from "./timing.ts";
export {
  type BenchConditions,
  type BenchDevice,
  type BenchReport,
  type BenchRow,
  type Bound,
  type CompareOptions,
  compareReports,
  type Comparison,
  deviceSummary,
  kernelLabel,
  parseReport,
  type PeerFigure,
  percent,
  reportHtml,
  reportJson,
  rooflineSvg,
  type RowComparison,
  type RowFigures,
  rowFigures,
  rowKey,
  rowLabel,
  SCHEMA,
} from "./report.ts";
export {
  type BenchCase,
  type BenchShape,
  type CaseSpec,
  defineCase,
  entryOptions,
  randomInput,
  type SizeClass,
} from "./bench_case.ts";
export {
  type BenchJob,
  type BenchProgress,
  type BenchRun,
  type BenchRunOptions,
  NoBenchJobError,
  runBench,
} from "./bench_run.ts";
export * from "./roofline.ts";
