/**
 * pad: one axis of a tensor viewed as `[outer, size, inner]`, as `torch.nn.functional.pad` pads it
 * (entry point `kernel`): `"constant"` (with `value`), `"reflect"` (the edge element not repeated)
 * and `"replicate"` (the edge element repeated), with separate `before` and `after` counts so that a
 * causal temporal pad (frames before the data, none after) is one call.
 *
 * Conventions, each pinned by a test that the alternative fails (torch 2.11 goldens):
 * - reflect does not repeat the edge and replicate does: swapping the two gives a tensor of the
 *   right shape with a correct interior, so both are checked against torch, not only described.
 * - One axis per call. Three calls (last axis, then the middle, then the first) equal torch's single
 *   multi-axis call element for element, for reflect, replicate and constant, including the corners,
 *   where a reflection reads values that are themselves padding.
 * - reflect with a pad >= size is refused, as torch refuses it; replicate of an empty axis is refused;
 *   a non-zero `value` with a mode other than constant is refused, as torch refuses it.
 *
 * Refused besides, with an error naming the argument: non-integer or negative sizes and pads (no
 * cropping by negative pads), `"circular"` (nothing here uses it, and an unused mode is an untested
 * one), a non-f32 `value`, and `x` of the wrong type or length.
 *
 * The kernel writes one vec4 of the output per invocation per step of a grid-stride loop: one read
 * and one write per output element, the least the op can move. When `inner % 4 == 0` a vec4 of the
 * output copies one vec4 of the input. When `inner == 1` (padding the last axis) a vec4 of the output
 * wholly inside its row's copied span is read as the two vec4s of the input that hold its elements,
 * shifted by the span's offset in them; the other vec4s of such rows (the pads, a vec4 across two
 * rows) and every vec4 of other inner sizes read their elements as scalars after one division chain
 * for the first, and a partial last vec4 is written one element at a time.
 *
 * On the H200 (Deno 2.9.6 over Vulkan, GPU timestamps, median of 10; fractions of the same run's
 * read probe; harness/baselines/nvidia-h200-log/27-bandops-bench.json, 2026-12-02, probe 4,593
 * GB/s) reflect 512 x 32768 (+3/+3) 0.0389 ms (75.2%), replicate 16 x 16 x 65536 (+2/+0) 0.0419 ms
 * (74.1%), constant 4096 x 4096 (+1/+1) 0.0390 ms (74.9%). A plain vec4 copy of the same bytes
 * (harness/baselines/nvidia-h200-log/27-bandops-explore.json, read probe 4,522 GB/s) reached 76.9%
 * for reflect's 64 + 64 MiB and 78.1% for replicate's 64 + 72 MiB: the 85% target is out of reach
 * at these sizes for any kernel. In that run the shifted vec4 reads took reflect from 0.0410 ms
 * (72.4%) to 0.0383 ms (77.5%) and constant from 0.0407 (72.9%) to 0.0388 ms (76.5%); replicate
 * (inner % 4 == 0, vec4 copies before and after) took 0.0403 ms (78.2%, at the copy's rate) with the
 * previous kernel and 0.0415 ms (76.0%) with this one, whose only addition on that path is the
 * inner == 1 test and the length of x: about 3% slower in that run and in the bench run above, not
 * explained further. Earlier
 * (23-opsperf.json) four vec4s per invocation, every read before the first write, was slower at
 * every shape (0.0500, 0.0441 and 0.0479 ms against 0.0417, 0.0407 and 0.0416).
 *
 * At a 1024 x 1024 image's VAE decoder sizes, 256 MiB each way (the H200 baseline,
 * harness/baselines/nvidia-h200.json, 2026-12-02T08:12Z, read probe 4,517 GB/s): a video VAE's causal
 * temporal pad (replicate, 2 frames before, 128 x 8 x 65,536) 0.151 ms (88.4%); a 1-pixel constant
 * border on the last axis of 256 x 512 x 512 (rows of 514) 0.146 ms (81.7%), where a plain copy of
 * 256 + 256 MiB reaches 87.5% (27-bandops-explore). With rows that short the vec4s over a pad or
 * across two rows decide the rate: computing each of their elements' row by one comparison, rather
 * than carrying the position through the general path, took that row from 79.7% (34-vae-shapes) to
 * 81.7%. Passing each invocation's first vec4 of x to its neighbour through workgroup memory, so that
 * every vec4 is loaded once, was slower at every last-axis shape (34-pad-ab: the border 0.161 against
 * 0.148 ms, reflect 0.0427 against 0.0388) and was not kept.
 *
 * @module
 */

import { streamWorkgroups } from "../../harness/grid.ts";
import { packParams, type ParamField } from "../../harness/params.ts";
import type { KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions } from "../validate.ts";
import { KERNELS, type PadVariant } from "./kernels.gen.ts";
import { PAD_MODES, type PadArgs, type PadShape, validatePad, validatePadShape } from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type PadVariant };

/** The kernel's uniform, in WGSL declaration order. */
const PARAMS: readonly ParamField[] = [
  { name: "outer", type: "u32" },
  { name: "size", type: "u32" },
  { name: "inner", type: "u32" },
  { name: "before", type: "u32" },
  { name: "padded", type: "u32" },
  { name: "mode", type: "u32" },
  { name: "value", type: "f32" },
  { name: "n", type: "u32" },
];

/** Output elements one workgroup writes per step: 256 invocations x one vec4. */
const BLOCK_ELEMENTS = 256 * 4;

/**
 * Plans `pad` on the GPU.
 *
 * @param gpu the device
 * @param shape the sizes `[outer, size, inner]`, the pads, the mode and value
 * @param options kernel override
 * @returns the plan; bindings `x` (input) and `out` (output, `[outer, before + size + after, inner]`)
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { padPlan } from "@xpu/ops/ops/pad";
 * const gpu = await acquireDevice();
 * // A causal pad of 2 frames before the time axis of [1, 8, 16, 32, 32] (N, C, T, H, W).
 * const plan = padPlan(gpu, { outer: 8, size: 16, inner: 32 * 32, before: 2, after: 0, mode: "replicate" });
 * ```
 */
export function padPlan(gpu: ResidentDevice, shape: PadShape, options?: KernelOptions<PadVariant>): KernelPlan {
  checkOptions("pad", options);
  validatePadShape(shape);
  const { outer, size, inner, before, after } = shape;
  const padded = before + size + after;
  const n = outer * size * inner;
  const outN = outer * padded * inner;
  const values = {
    outer,
    size,
    inner,
    before,
    padded,
    mode: PAD_MODES.indexOf(shape.mode ?? "constant"),
    value: shape.value ?? 0,
    n: outN,
  };
  return {
    op: "pad",
    kernel: gpu.resolve(KERNELS, "kernel", options),
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: outN, role: "output" },
    ],
    params: packParams(PARAMS, values, "pad"),
    workgroups: streamWorkgroups(outN, BLOCK_ELEMENTS, gpu.limits.maxComputeWorkgroupsPerDimension),
    // The input read once and the output written once; no arithmetic.
    cost: { bytes: 4 * (n + outN), flops: 0 },
  };
}

/**
 * Pads one axis of `x` on the GPU.
 *
 * @param gpu the device
 * @param args as {@link pad}
 * @param options kernel override
 * @returns the padded tensor, `[outer, before + size + after, inner]`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { padGpu } from "@xpu/ops/ops/pad";
 * const gpu = await acquireDevice();
 * const x = new Float32Array([1, 2, 3]);
 * await padGpu(gpu, { x, outer: 1, size: 3, inner: 1, before: 2, after: 1, mode: "reflect" }); // [3, 2, 1, 2, 3, 2]
 * ```
 */
export async function padGpu(
  gpu: ResidentDevice,
  args: PadArgs,
  options?: KernelOptions<PadVariant>,
): Promise<Float32Array> {
  checkOptions("pad", options);
  validatePad(args);
  const [out] = await gpu.run(padPlan(gpu, args, options), [args.x]);
  return out as Float32Array;
}
