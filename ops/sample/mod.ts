/**
 * sample: the next token of a generation loop kept on the GPU, from one row of logits. Three entry
 * points, each held to `reference.ts` (whose definitions `sampleNext` in llm/sampler.ts applies):
 * `argmax` (the greedy choice, {@link argmaxToken}: torch.argmax's first index of the largest
 * logit), `sample` (the seeded temperature / top-k / top-p / min-p draw, {@link sampleToken}) and
 * `mask` (a constraint's bitset applied to the logits, {@link maskLogits}).
 *
 * The choosing kernels serve a loop that never waits for the host: the chosen id goes to `ids[0]`
 * (where the next step's embedding gather reads it) and to `tokens[step]`, and the loop's `state`
 * (`[pos0, step, 0, 0]`, u32: the call's first position and the tokens generated so far) advances by
 * one step and by `advance` positions. What a kernel cannot throw it writes as a marker instead of an
 * id ({@link NONFINITE_LOGITS}, {@link NO_POSSIBLE_TOKEN}), which the host reports.
 *
 * - `argmax`: each workgroup takes a slice of 4,096 logits; the last workgroup to finish (an atomic
 *   counter) combines the slices' best, the lower index on a tie. Its `partial` and `counter`
 *   bindings are scratch it keeps in a reset state: `counter` must be zeros when first used (as
 *   `alloc` makes it).
 * - `sample`: one workgroup of 256 invocations making passes over the vocabulary (3 for temperature
 *   alone, 28 with top-k and top-p; `wgsl/sample.wgsl` says which), `probs` its scratch; so a sampled
 *   step costs one dispatch, like a greedy one. Not measured on the H200 yet: at a 102,400
 *   vocabulary that is ~11,000 reads of L2-resident probabilities per invocation on one compute unit
 *   (the bench rows `sample/sample` will say whether it shows).
 * - `mask`: one invocation per logit.
 *
 * Where the f32 draw and the f64 reference can choose differently (and only there): a logit so far
 * below the largest that `exp` underflows f32 (probability below ~1e-45) is never kept, where the
 * reference keeps it with that probability; and a top-p cut-off, a min-p floor or the draw
 * `u × total` that falls within f32 rounding of the sums (relative ~1e-6 typically, a few 1e-5 at
 * worst for a 102,400-token sum) of a boundary between two tokens. The tests keep their cases clear
 * of such boundaries and check the margin.
 *
 * Refused before any GPU work, naming the argument: a vocab that is not an integer in
 * [1, 2^32 - 3], steps or advance that is not a u32 (steps >= 1), settings
 * {@link validateSampleOptions} refuses in f32 (a temperature that is 0 or infinite in f32, a topK of
 * 2^32 or more, ...).
 *
 * @module
 */

import { packParams, type ParamField } from "../../harness/params.ts";
import { type KernelPlan, requireDevice, type ResidentDevice } from "../../harness/device.ts";
import type { KernelOptions } from "../../harness/options.ts";
import { checkOptions, requireArgs, requireInt } from "../validate.ts";
import { KERNELS, type SampleVariant } from "./kernels.gen.ts";
import {
  type ArgmaxTokenArgs,
  type MaskLogitsArgs,
  type SampleOptions,
  type SampleTokenArgs,
  validateArgmaxToken,
  validateMaskLogits,
  validateSampleOptions,
  validateSampleToken,
} from "./reference.ts";

export * from "./reference.ts";
export { KERNELS, type SampleVariant };

/** Sizes of the choosing plans. */
export interface SampleShape {
  /** Logits in the row (the vocabulary), in [1, 2^32 - 3]: both markers lie above every id. */
  vocab: number;
  /** Entries of `tokens` (the most steps a loop records), >= 1. */
  steps: number;
  /** Positions `state.pos0` advances by per dispatch (the rows of the call), default 1. */
  advance?: number;
}

const PARAMS: readonly ParamField[] = [{ name: "vocab", type: "u32" }, { name: "advance", type: "u32" }];

/** Validates {@link SampleShape}, returning it with its default. */
function validateSampleShape(op: string, shape: SampleShape): Required<SampleShape> {
  requireArgs(op, "shape", shape, "{ vocab, steps, advance? }", ["vocab", "steps", "advance"]);
  return {
    vocab: requireInt(op, "vocab", shape.vocab, 1, 0xfffffffd),
    steps: requireInt(op, "steps", shape.steps, 1, 0xffffffff),
    advance: requireInt(op, "advance", shape.advance ?? 1, 0, 0xffffffff),
  };
}

/** The slice of logits one workgroup of a kernel scans: its `SLICE` constant (the source is the one truth). */
function sliceOf(source: string): number {
  const m = /\bconst SLICE = (\d+)u;/.exec(source);
  if (!m) throw new Error("sample/argmax: the kernel must declare const SLICE = <logits per workgroup>u");
  return Number(m[1]);
}

/**
 * Plans the greedy choice of one row of logits.
 *
 * @param gpu the device
 * @param shape `vocab`, `steps` and `advance`
 * @param options kernel override
 * @returns the plan; bindings `logits` (f32, input), `ids` (u32 [1], output: the chosen id),
 *   `tokens` (u32 [steps], `tokens[state.step]` written), `state` (u32 [4], advanced), `partial`
 *   (u32, scratch) and `counter` (u32 [2], zeros when first used; the kernel leaves them so)
 * @throws Error naming the argument when a size is out of range
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { argmaxTokenPlan } from "@xpu/ops/ops/sample";
 * const gpu = await acquireDevice();
 * const plan = argmaxTokenPlan(gpu, { vocab: 3, steps: 4 });
 * const tensors = plan.bindings.map((b) => gpu.alloc(b.dtype, b.length, b.name)); // state, counter: zeros
 * gpu.device.queue.writeBuffer(tensors[0].buffer, 0, new Float32Array([0.5, 2, 1]));
 * await gpu.submit([plan, tensors], [plan, tensors]); // two steps
 * console.log(await gpu.read(tensors[2])); // Uint32Array [1, 1, 0, 0]; state is now [2, 2, 0, 0]
 * gpu.destroy();
 * ```
 */
export function argmaxTokenPlan(
  gpu: ResidentDevice,
  shape: SampleShape,
  options?: KernelOptions<SampleVariant>,
): KernelPlan {
  requireDevice("argmaxToken", gpu);
  checkOptions("argmaxToken", options);
  const { vocab, steps, advance } = validateSampleShape("argmaxToken", shape);
  const kernel = gpu.resolve(KERNELS, "argmax", options);
  const slices = Math.ceil(vocab / sliceOf(kernel.source));
  return {
    op: "sample",
    kernel,
    bindings: [
      { name: "logits", dtype: "f32", length: vocab, role: "input" },
      { name: "ids", dtype: "u32", length: 1, role: "output" },
      { name: "tokens", dtype: "u32", length: steps, role: "inout" },
      { name: "state", dtype: "u32", length: 4, role: "inout" },
      { name: "partial", dtype: "u32", length: 2 * slices, role: "output" },
      { name: "counter", dtype: "u32", length: 2, role: "inout" },
    ],
    params: packParams(PARAMS, { vocab, advance }, "argmaxToken"),
    workgroups: slices,
    // The logits read once; a compare per logit.
    cost: { bytes: 4 * vocab, flops: vocab },
  };
}

/**
 * Plans the seeded draw from one row of logits; the settings are a binding (`options`, written by
 * {@link packSampleOptions}), so one plan serves every setting.
 *
 * @param gpu the device
 * @param shape `vocab`, `steps` and `advance`
 * @param options kernel override
 * @returns the plan; bindings `logits` (f32, input), `probs` (f32 [vocab], scratch), `ids` (u32 [1],
 *   output), `tokens` (u32 [steps]), `state` (u32 [4]) and `options` (u32 [8], input)
 * @throws Error naming the argument when a size is out of range
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { packSampleOptions, sampleTokenPlan } from "@xpu/ops/ops/sample";
 * const gpu = await acquireDevice();
 * const plan = sampleTokenPlan(gpu, { vocab: 3, steps: 1 });
 * const [logits, probs, ids, tokens, state] = plan.bindings.map((b) => gpu.alloc(b.dtype, b.length, b.name));
 * gpu.device.queue.writeBuffer(logits.buffer, 0, new Float32Array([0.5, 2, 1]));
 * const settings = gpu.upload(packSampleOptions({ temperature: 0.8, topK: 2, seed: 7 }));
 * await gpu.submit([plan, [logits, probs, ids, tokens, state, settings]]);
 * console.log(await gpu.read(ids)); // id 1 or 2: sampleToken's choice for step 0
 * gpu.destroy();
 * ```
 */
export function sampleTokenPlan(
  gpu: ResidentDevice,
  shape: SampleShape,
  options?: KernelOptions<SampleVariant>,
): KernelPlan {
  requireDevice("sampleToken", gpu);
  checkOptions("sampleToken", options);
  const { vocab, steps, advance } = validateSampleShape("sampleToken", shape);
  return {
    op: "sample",
    kernel: gpu.resolve(KERNELS, "sample", options),
    bindings: [
      { name: "logits", dtype: "f32", length: vocab, role: "input" },
      { name: "probs", dtype: "f32", length: vocab, role: "output" },
      { name: "ids", dtype: "u32", length: 1, role: "output" },
      { name: "tokens", dtype: "u32", length: steps, role: "inout" },
      { name: "state", dtype: "u32", length: 4, role: "inout" },
      { name: "options", dtype: "u32", length: 8, role: "input" },
    ],
    params: packParams(PARAMS, { vocab, advance }, "sampleToken"),
    workgroups: 1,
    // The least: the logits read once and the probabilities written once; an exp, a divide and a
    // compare per logit. The passes of top-k and top-p read the probabilities again (from L2).
    cost: { bytes: 8 * vocab, flops: 3 * vocab },
  };
}

/**
 * Plans a constraint's mask over one row of logits, in place.
 *
 * @param gpu the device
 * @param shape `vocab`
 * @param options kernel override
 * @returns the plan; bindings `logits` (f32 [vocab], in place) and `mask` (u32 [ceil(vocab / 32)])
 * @throws Error naming vocab when it is out of range
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { maskLogitsPlan } from "@xpu/ops/ops/sample";
 * const gpu = await acquireDevice();
 * const logits = gpu.upload(new Float32Array([1, 2, 3]));
 * await gpu.submit([maskLogitsPlan(gpu, { vocab: 3 }), [logits, gpu.upload(new Uint32Array([0b101]))]]);
 * console.log(await gpu.read(logits)); // Float32Array [1, -Infinity, 3]
 * gpu.destroy();
 * ```
 */
export function maskLogitsPlan(
  gpu: ResidentDevice,
  shape: { vocab: number },
  options?: KernelOptions<SampleVariant>,
): KernelPlan {
  requireDevice("maskLogits", gpu);
  checkOptions("maskLogits", options);
  requireArgs("maskLogits", "shape", shape, "{ vocab }", ["vocab"]);
  const vocab = requireInt("maskLogits", "vocab", shape.vocab, 1, 0xfffffffd);
  // -Infinity rides in the params (the kernel cannot make it): packed by hand, since packParams
  // refuses a non-finite f32 on purpose.
  const params = new ArrayBuffer(16);
  new Uint32Array(params)[0] = vocab;
  new Float32Array(params)[1] = -Infinity;
  return {
    op: "sample",
    kernel: gpu.resolve(KERNELS, "mask", options),
    bindings: [
      { name: "logits", dtype: "f32", length: vocab, role: "inout" },
      { name: "mask", dtype: "u32", length: Math.ceil(vocab / 32), role: "input" },
    ],
    params,
    workgroups: Math.ceil(vocab / 256),
    cost: { bytes: 4 * vocab + 4 * Math.ceil(vocab / 32), flops: 0 },
  };
}

/**
 * The draw's settings as the `sample` kernel reads them: 8 words (temperature, topK with 0 for
 * none, topP, minP, seed, padding), checked as {@link validateSampleOptions} checks them in f32.
 *
 * @param options the settings
 * @returns the words
 * @throws Error naming the field that is out of range
 *
 * @example
 * ```ts
 * import { packSampleOptions } from "@xpu/ops/ops/sample";
 * packSampleOptions({ temperature: 1, topK: 40, seed: 3 })[1]; // 40
 * ```
 */
export function packSampleOptions(options: SampleOptions): Uint32Array<ArrayBuffer> {
  validateSampleOptions("sample: ", options, true);
  const words = new Uint32Array(8);
  const f = new Float32Array(words.buffer);
  f[0] = options.temperature;
  words[1] = options.topK ?? 0;
  f[2] = options.topP ?? 1;
  f[3] = options.minP ?? 0;
  words[4] = options.seed;
  return words;
}

/** Runs a choosing plan once on host arrays and returns the id it wrote. */
async function choose(gpu: ResidentDevice, plan: KernelPlan, inputs: (Float32Array | Uint32Array)[]) {
  const outputs = await gpu.run(plan, inputs);
  return outputs[plan.bindings.filter((b) => b.role !== "input").findIndex((b) => b.name === "ids")][0];
}

/**
 * The greedy choice on the GPU ({@link argmaxToken}).
 *
 * @param gpu the device
 * @param args the row of logits
 * @param options kernel override
 * @returns the id, or a marker
 * @throws Error naming the argument, as {@link validateArgmaxToken}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { argmaxTokenGpu } from "@xpu/ops/ops/sample";
 * const gpu = await acquireDevice();
 * await argmaxTokenGpu(gpu, { logits: new Float32Array([1, 3, 3, 2]) }); // 1
 * gpu.destroy();
 * ```
 */
export async function argmaxTokenGpu(
  gpu: ResidentDevice,
  args: ArgmaxTokenArgs,
  options?: KernelOptions<SampleVariant>,
): Promise<number> {
  requireDevice("argmaxToken", gpu);
  checkOptions("argmaxToken", options);
  validateArgmaxToken(args);
  const plan = argmaxTokenPlan(gpu, { vocab: args.logits.length, steps: 1 }, options);
  return await choose(gpu, plan, [args.logits, new Uint32Array(1), new Uint32Array(4), new Uint32Array(2)]);
}

/**
 * The seeded draw of step `step` on the GPU ({@link sampleToken}).
 *
 * @param gpu the device
 * @param args the row of logits, the draw's settings and its step
 * @param options kernel override
 * @returns the id, or a marker
 * @throws Error naming the argument, as {@link validateSampleToken} and {@link packSampleOptions}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { sampleTokenGpu } from "@xpu/ops/ops/sample";
 * const gpu = await acquireDevice();
 * await sampleTokenGpu(gpu, { logits: new Float32Array([0.5, 2, 1]), temperature: 0.8, topP: 0.9, seed: 7, step: 0 });
 * gpu.destroy();
 * ```
 */
export async function sampleTokenGpu(
  gpu: ResidentDevice,
  args: SampleTokenArgs,
  options?: KernelOptions<SampleVariant>,
): Promise<number> {
  requireDevice("sampleToken", gpu);
  checkOptions("sampleToken", options);
  validateSampleToken(args);
  const { logits, step } = args;
  const plan = sampleTokenPlan(gpu, { vocab: logits.length, steps: step + 1 }, options);
  const state = new Uint32Array([0, step, 0, 0]);
  return await choose(gpu, plan, [logits, new Uint32Array(step + 1), state, packSampleOptions(args)]);
}

/**
 * A constraint's mask on the GPU ({@link maskLogits}).
 *
 * @param gpu the device
 * @param args the row of logits and the mask
 * @param options kernel override
 * @returns the masked logits
 * @throws Error naming the argument, as {@link validateMaskLogits}
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops";
 * import { maskLogitsGpu } from "@xpu/ops/ops/sample";
 * const gpu = await acquireDevice();
 * await maskLogitsGpu(gpu, { logits: new Float32Array([1, 2, 3]), mask: new Uint32Array([0b011]) }); // [1, 2, -Infinity]
 * gpu.destroy();
 * ```
 */
export async function maskLogitsGpu(
  gpu: ResidentDevice,
  args: MaskLogitsArgs,
  options?: KernelOptions<SampleVariant>,
): Promise<Float32Array> {
  requireDevice("maskLogits", gpu);
  checkOptions("maskLogits", options);
  validateMaskLogits(args);
  const [out] = await gpu.run(maskLogitsPlan(gpu, { vocab: args.logits.length }, options), [args.logits, args.mask]);
  return out as Float32Array;
}
