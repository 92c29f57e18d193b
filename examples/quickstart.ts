/**
 * The shortest complete program: get a device, run an op on it, hold the result to the op's
 * reference, and say how close the kernel comes to this machine's own ceiling.
 *
 * ```sh
 * deno run -A examples/quickstart.ts
 * ```
 *
 * A CLI example (Deno): it prints to the console.
 *
 * @module
 */

import { acquireDevice, softmax, softmaxGpu, softmaxPlan } from "@xpu/ops";

import { measureRoofline, rowFigures, timePlan } from "@xpu/ops/harness/bench";

const gpu = await acquireDevice();
console.log(`adapter: ${gpu.adapter.description} (target: ${gpu.adapter.target ?? "portable"})`);

// Run the kernel resolved for this adapter and compare it with the definition of softmax.
const rows = 512, cols = 1024;
const x = Float32Array.from({ length: rows * cols }, () => 8 * Math.random() - 4);
const out = await softmaxGpu(gpu, { x, rows, cols });
const expected = softmax({ x, rows, cols });
const worst = out.reduce((w, v, i) => Math.max(w, Math.abs(v - expected[i]) / Math.abs(expected[i])), 0);
console.log(`softmax ${rows}x${cols}: worst relative difference from the reference ${worst.toExponential(2)}`);

// Time it with GPU timestamps against this machine's own measured ceilings.
const roofline = await measureRoofline(gpu);
const plan = softmaxPlan(gpu, { rows, cols });
const timing = await timePlan(gpu, plan, () => [x]);
const figures = rowFigures(plan.cost, timing.ms, roofline);
console.log(
  `${timing.ms.toFixed(4)} ms, ${figures.gbps.toPrecision(3)} GB/s: ${(100 * figures.fraction).toFixed(1)}% of the ` +
    `${figures.bound} roofline (${roofline.bandwidthGBps.toFixed(0)} GB/s, ${
      roofline.computeTFLOPs.toFixed(2)
    } TFLOP/s)`,
);
gpu.destroy();
