/**
 * The device, resident buffers, and dispatch.
 *
 * {@link acquireDevice} accepts a caller's `GPUDevice` (and never destroys it) or creates one with
 * the adapter's limits and the features the ops can use, reporting what was granted. The returned
 * {@link ResidentDevice} keeps buffers on the GPU between dispatches (what engines want), caches
 * pipelines, resolves kernels for its target, checks every dispatch against the device's limits
 * before encoding it, and turns WebGPU's silent validation errors into thrown ones that name the
 * op, the entry point and the sizes.
 *
 * Errors land on the call that caused them. WebGPU's error scopes are one stack per device, not
 * per call, so every call here pushes its scopes, encodes, submits and pops them with no `await` in
 * between (JavaScript runs that span alone), and only then awaits what they caught: a concurrent
 * call's error can never land on a neighbour. Reads (`mapAsync`) are checked the same way.
 *
 * A lost device (`device.lost`, or {@link ResidentDevice.destroy} of a device this library created)
 * makes every later call fail at once with `device lost: <reason>`; {@link acquireDevice} again gives
 * a new device.
 *
 * @module
 */

import { checkDispatch, type GuardedLimits, LimitError, workgroupSizeOf } from "./limits.ts";
import { checkOverride, overrideEntry, type Resolution, resolve } from "./resolve.ts";
import { type AdapterDescription, type AdapterInfoLike, describeAdapter, detectTarget } from "./target.ts";
import { type Dtype, type KernelSources, parseVariantName } from "./variants.ts";
import { type BoundDispatch, encodeBound, Program } from "./program.ts";

/** Element types a tensor may hold. */
export type TensorDtype = "f32" | "i32" | "u32";
/** Host arrays matching {@link TensorDtype}. */
export type HostArray = Float32Array | Int32Array | Uint32Array;

/**
 * A buffer resident on the device, with its element type and length; or a view of a range of one
 * ({@link tensorView}): `length` elements from byte `offset`, bound as that range.
 */
export interface GpuTensor {
  /** The storage buffer (usage STORAGE | COPY_SRC | COPY_DST). */
  readonly buffer: GPUBuffer;
  /** Element type. */
  readonly dtype: TensorDtype;
  /** Number of elements. */
  readonly length: number;
  /**
   * Where a view begins in the buffer, in bytes (a multiple of the device's
   * minStorageBufferOffsetAlignment, checked when it is bound). Absent: the tensor is the whole buffer.
   */
  readonly offset?: number;
}

/**
 * A view of elements `[first, first + length)` of a tensor: the same buffer, bound as that range
 * (a plan sees a tensor of `length` elements). What a caller uses to run a plan on a piece of a
 * buffer, e.g. a range of a weight's rows. The view's byte offset must be a multiple of the
 * device's minStorageBufferOffsetAlignment (256 on most devices) when it is bound.
 *
 * @param tensor the tensor (itself possibly a view)
 * @param first its first element in the view
 * @param length elements in the view
 * @returns the view
 * @throws Error when the range is not within the tensor
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan, tensorView } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array(128).fill(1));
 * const sum = gpu.alloc("f32", 64);
 * // Elements 64..127 of x: byte offset 256, the usual storage offset alignment.
 * await gpu.submit([elementwisePlan(gpu, { op: "add", n: 64 }), [tensorView(x, 64, 64), tensorView(x, 64, 64), sum]]);
 * console.log((await gpu.read(sum))[0]); // 2
 * gpu.destroy();
 * ```
 */
export function tensorView(tensor: GpuTensor, first: number, length: number): GpuTensor {
  if (
    tensor === null || typeof tensor !== "object" || typeof tensor.buffer?.size !== "number" ||
    !isTensorDtype(tensor.dtype) || !Number.isSafeInteger(tensor.length)
  ) {
    throw new Error(`tensorView: tensor must be a GpuTensor ({ buffer, dtype, length }), got ${given(tensor)}`);
  }
  if (!Number.isSafeInteger(first) || first < 0 || !Number.isSafeInteger(length) || length < 0) {
    throw new Error(`tensorView: first and length must be non-negative integers, got ${first} and ${length}`);
  }
  if (first + length > tensor.length) {
    throw new Error(
      `tensorView: elements [${first}, ${
        first + length
      }) are not within the tensor's ${tensor.length} (first + length must be <= ${tensor.length})`,
    );
  }
  return { buffer: tensor.buffer, dtype: tensor.dtype, length, offset: (tensor.offset ?? 0) + 4 * first };
}

/** The role of a binding: read by the kernel, written by it, or both. */
export type BindingRole = "input" | "output" | "inout";

/** One storage binding of a kernel plan. */
export interface BindingSpec {
  /** The argument it carries, for messages, e.g. `x`. */
  name: string;
  /** Element type. */
  dtype: TensorDtype;
  /** Number of elements. */
  length: number;
  /** Whether the kernel reads it, writes it, or both. */
  role: BindingRole;
  /**
   * The kernel accumulates into this binding, so it is cleared to zero in the same command buffer,
   * before the pass (a reused resident output would otherwise add to stale values).
   */
  zeroed?: boolean;
}

/**
 * A typed description of one dispatch: which kernel, which bindings (in binding order, group 0),
 * which params (a uniform at the binding after the storage ones), how many workgroups, and what
 * the call must cost at least (bytes moved, FLOPs done) for roofline reporting. An op's GPU entry
 * point builds one from validated arguments; the device runs it on host arrays ({@link
 * ResidentDevice.run}) or on resident tensors ({@link ResidentDevice.submit}).
 */
export interface KernelPlan {
  /** The op, e.g. `softmax`. */
  op: string;
  /** The resolved kernel (variant name, source, rung). */
  kernel: Resolution;
  /** Storage bindings in binding order. */
  bindings: readonly BindingSpec[];
  /** Packed uniform params, if the kernel has any. */
  params?: ArrayBuffer;
  /**
   * Values of the kernel's pipeline-overridable constants (`override` declarations), by name: given
   * to `createComputePipeline`, so the driver compiles the kernel with them as constants. Part of
   * the pipeline cache's key: one kernel with two sets of constants is two pipelines.
   */
  constants?: Readonly<Record<string, number>>;
  /** Workgroup counts; a number means `[n, 1, 1]`. */
  workgroups: number | readonly [number, number, number];
  /** The least the call must do: bytes through memory and floating-point operations. */
  cost: { bytes: number; flops: number };
}

/**
 * Dispatches that make one operation, run in order in one compute pass: the operation's own
 * bindings (what a caller gives and gets, in order), the intermediates one step writes for a later
 * one, and each step's tensors as indices into `[...bindings, ...intermediates]`. Built by
 * {@link kernelSequence}; timed and benchmarked as a whole, as it runs.
 */
export interface KernelSequence {
  /** The op, e.g. `gqa`. */
  op: string;
  /** Its name in a report: the steps' variants joined by `+`, e.g. `decode+combine`. */
  variant: string;
  /** The operation's bindings, in the order a caller supplies them. */
  bindings: readonly BindingSpec[];
  /** Tensors only the steps see. */
  intermediates: readonly BindingSpec[];
  /** The dispatches, each with its tensors as indices into `[...bindings, ...intermediates]`. */
  steps: readonly { plan: KernelPlan; tensors: readonly number[] }[];
  /** The least the whole operation must do (not the sum of its steps' costs). */
  cost: { bytes: number; flops: number };
}

/**
 * Builds a {@link KernelSequence}, checking that every index names a tensor, that each step's
 * tensor matches its binding's dtype and length, and that no step but the first clears a binding
 * (`zeroed`), which would need a pass of its own.
 *
 * @param op the op
 * @param bindings the operation's bindings, in the caller's order
 * @param intermediates tensors only the steps see
 * @param steps the dispatches and their tensors' indices
 * @param cost the whole operation's bytes and FLOPs
 * @returns the sequence
 * @throws Error naming the step and binding that does not fit
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan, kernelSequence } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const add = elementwisePlan(gpu, { op: "add", n: 4 });
 * const [a, b, sum] = add.bindings;
 * // out = (a + b) + b: the first sum is an intermediate, both dispatches one pass.
 * const twice = kernelSequence("elementwise", [a, b, { ...sum, name: "out" }], [sum], [
 *   { plan: add, tensors: [0, 1, 3] },
 *   { plan: add, tensors: [3, 1, 2] },
 * ], { bytes: 12 * 4, flops: 8 });
 * const tensors = [
 *   gpu.upload(new Float32Array([1, 2, 3, 4])),
 *   gpu.upload(new Float32Array([1, 1, 1, 1])),
 *   gpu.alloc("f32", 4),
 *   gpu.alloc("f32", 4),
 * ];
 * await gpu.submitSequence(twice, tensors);
 * console.log(await gpu.read(tensors[2])); // Float32Array [3, 4, 5, 6]
 * gpu.destroy();
 * ```
 */
export function kernelSequence(
  op: string,
  bindings: readonly BindingSpec[],
  intermediates: readonly BindingSpec[],
  steps: readonly { plan: KernelPlan; tensors: readonly number[] }[],
  cost: { bytes: number; flops: number },
): KernelSequence {
  checkArray(bindings, `${op}: bindings`, "BindingSpecs");
  checkArray(intermediates, `${op}: intermediates`, "BindingSpecs");
  checkArray(steps, `${op}: steps`, "{ plan, tensors } dispatches");
  const all = [...bindings, ...intermediates];
  for (const [s, step] of steps.entries()) {
    const plan = checkPlan(step?.plan, `${op}: step ${s}`);
    const where = `${op}: step ${s} (${plan.op}/${plan.kernel.variant})`;
    const tensors = checkArray<number>(
      step.tensors,
      `${where}: tensors`,
      "indices into [...bindings, ...intermediates]",
    );
    if (tensors.length !== plan.bindings.length) {
      throw new Error(
        `${where} has ${plan.bindings.length} bindings, so tensors must hold ${plan.bindings.length} indices, given ${tensors.length}`,
      );
    }
    for (const [i, spec] of plan.bindings.entries()) {
      const t = all[tensors[i]];
      if (!t || t.dtype !== spec.dtype || t.length < spec.length) {
        throw new Error(`${where}: binding ${i} (${spec.name}) expects ${spec.length} ${spec.dtype}`);
      }
      if (spec.zeroed && s > 0) throw new Error(`${where}: binding ${i} (${spec.name}) is cleared, so not in one pass`);
    }
  }
  return { op, variant: steps.map((s) => s.plan.kernel.variant).join("+"), bindings, intermediates, steps, cost };
}

/**
 * What every call on a lost (or destroyed) device throws: `device lost: <reason> (<call> refused;
 * acquireDevice() gives a new device)`. Device loss is an event to recover from, not a crash: catch
 * this error, acquire a new device, and load again from host-side weights (a file, a URL, the weight
 * cache), e.g. with `LlamaEngine.rebind`.
 *
 * @example
 * ```ts
 * import { acquireDevice, DeviceLostError } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * gpu.destroy();
 * try {
 *   gpu.alloc("f32", 4);
 * } catch (e) {
 *   console.log(e instanceof DeviceLostError, (e as DeviceLostError).reason); // true "destroyed (ResidentDevice.destroy())"
 * }
 * ```
 */
export class DeviceLostError extends Error {
  /** Why the device was lost: `device.lost`'s reason and message, or that it was destroyed. */
  readonly reason: string;
  /**
   * Makes the error.
   *
   * @param reason why the device was lost
   * @param what the call that was refused
   */
  constructor(reason: string, what: string) {
    super(`device lost: ${reason} (${what} refused; acquireDevice() gives a new device)`);
    this.name = "DeviceLostError";
    this.reason = reason;
  }
}

/** Options for {@link acquireDevice}. */
export interface AcquireOptions {
  /** Use this device instead of creating one; it is never destroyed by this library. */
  device?: GPUDevice;
  /** Adapter to create a device from (ignored when `device` is given). */
  adapter?: GPUAdapter;
  /** Power preference when requesting an adapter. Default "high-performance". */
  powerPreference?: GPUPowerPreference;
}

/** The poison word {@link ResidentDevice.poisonOutputs} fills outputs with, and the guard's length. */
const POISON = 0xffffffff;
const POISON_GUARD = 16;

const ELEMENT_ARRAYS = { f32: Float32Array, i32: Int32Array, u32: Uint32Array } as const;

/** The dtypes a tensor may hold, for messages and checks. */
const TENSOR_DTYPES = Object.keys(ELEMENT_ARRAYS) as TensorDtype[];

function isTensorDtype(dtype: unknown): dtype is TensorDtype {
  return typeof dtype === "string" && Object.hasOwn(ELEMENT_ARRAYS, dtype);
}

/** What the device views of one GPUDevice share: its loss, once known. */
interface DeviceState {
  lost?: string;
  memory: { bytes: number; buffers: number; peakBytes: number; made: number };
  /** Each live buffer's label and size, by the serial its creation got (the `made` count then). */
  live: Map<number, { label: string; size: number }>;
}

/**
 * The buffers alive on a device, as {@link ResidentDevice.memory} reports them: every `createBuffer`
 * on the GPUDevice since the library first saw it (whoever called it: ops, engines, models, the
 * caller), less the buffers destroyed or garbage-collected since. WebGPU does not report the memory a
 * driver holds, so this is what the application allocated: the size each buffer was created with,
 * not the driver's rounding, textures or internal scratch.
 */
export interface DeviceMemory {
  /** Bytes in live buffers now. */
  bytes: number;
  /** Live buffers now. */
  buffers: number;
  /** The most bytes live at once since the device was first seen or {@link ResidentDevice.resetPeakMemory}. */
  peakBytes: number;
  /** Buffers made since the device was first seen: a mark for {@link ResidentDevice.liveBuffers}. */
  made: number;
}

/** Pipelines by `op/variant` (one source each), then by the constants they were compiled with. */
type PipelineCache = Map<
  string,
  { source: string; module: GPUShaderModule; pipelines: Map<string, GPUComputePipeline> }
>;

/** One pipeline cache per GPUDevice, shared by every ResidentDevice made over it. */
const PIPELINES = new WeakMap<GPUDevice, PipelineCache>();

function pipelinesOf(device: GPUDevice): PipelineCache {
  let cache = PIPELINES.get(device);
  if (!cache) PIPELINES.set(device, cache = new Map());
  return cache;
}

const KNOWN_ANSWER_F16 = `enable f16;
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3u) {
  let h = f16(data[id.x]);
  data[id.x] = f32(h * 2.0h + 0.5h);
}`;

/**
 * A device with resident buffers, a pipeline cache, kernel resolution and a limits guard.
 * Create one with {@link acquireDevice}.
 *
 * @example Upload, dispatch a plan on resident tensors, read back
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const a = gpu.upload(new Float32Array([1, 2, 3]));
 * const b = gpu.upload(new Float32Array([10, 20, 30]));
 * const sum = gpu.alloc("f32", 3);
 * await gpu.submit([elementwisePlan(gpu, { op: "add", n: 3 }), [a, b, sum]]);
 * const y = await gpu.read(sum); // Float32Array [11, 22, 33]
 * gpu.destroy();
 * ```
 */
export class ResidentDevice {
  /** The WebGPU device. */
  readonly device: GPUDevice;
  /** What the adapter said about itself and the target detected from it. */
  readonly adapter: AdapterDescription;
  /** Features granted on the device, sorted. */
  readonly features: string[];
  /** Whether f16 variants may be used: shader-f16 granted and the known-answer check passed. */
  readonly f16Verified: boolean;
  /**
   * When set (the test helpers set it), {@link run} fills each output with a poison pattern (all bits
   * set: NaN as f32, -1 as i32) followed by a guard tail of the same pattern. An element the kernel
   * leaves unwritten then reads back as poison instead of a plausible zero, and a write past the end
   * of an output throws.
   */
  poisonOutputs = false;
  readonly #owned: boolean;
  readonly #pipelines: PipelineCache;
  readonly #limits: GuardedLimits;
  readonly #state: DeviceState;

  /** @internal Use {@link acquireDevice}. */
  constructor(
    device: GPUDevice,
    adapter: AdapterDescription,
    owned: boolean,
    f16Verified: boolean,
    shared?: { limits: GuardedLimits; pipelines: PipelineCache; state: DeviceState },
  ) {
    this.device = device;
    this.adapter = adapter;
    this.features = [...device.features].sort();
    this.f16Verified = f16Verified;
    this.#owned = owned;
    this.#limits = shared?.limits ?? device.limits;
    this.#pipelines = shared?.pipelines ?? pipelinesOf(device);
    this.#state = shared?.state ?? watchLoss(device);
  }

  /**
   * Why the device was lost (`device.lost`'s message or reason), or `undefined` while it works.
   * Once set, every call that would use the device throws `device lost: <reason>`.
   */
  get lost(): string | undefined {
    return this.#state.lost;
  }

  /**
   * The buffers alive on this device now and the peak since it was first seen (or since
   * {@link resetPeakMemory}): see {@link DeviceMemory} for what is counted. Shared by every view of
   * the device ({@link withLimits}); zero once the device is lost or destroyed.
   *
   * @example
   * ```ts
   * import { acquireDevice } from "@xpu/ops";
   * const gpu = await acquireDevice();
   * const before = gpu.memory.bytes;
   * const t = gpu.alloc("f32", 1024);
   * gpu.memory.bytes - before; // 4096
   * t.buffer.destroy();
   * gpu.memory.bytes - before; // 0
   * gpu.destroy();
   * ```
   */
  get memory(): DeviceMemory {
    return { ...this.#state.memory };
  }

  /**
   * Starts a new peak: {@link memory}'s `peakBytes` becomes the bytes live now, so a stage's peak can
   * be read after it runs.
   */
  resetPeakMemory(): void {
    this.#state.memory.peakBytes = this.#state.memory.bytes;
  }

  /**
   * The buffers still alive that were made since `mark` (a {@link memory}`.made` taken earlier), as
   * `label (bytes)`: what a check that finds bytes left behind names.
   *
   * @param mark a `memory.made` count (default 0: every live buffer)
   * @returns their labels and sizes, oldest first
   *
   * @example
   * ```ts
   * import { acquireDevice } from "@xpu/ops";
   * const gpu = await acquireDevice();
   * const mark = gpu.memory.made;
   * gpu.alloc("f32", 4, "kept");
   * gpu.liveBuffers(mark); // ["kept (16)"]
   * gpu.destroy();
   * ```
   */
  liveBuffers(mark = 0): string[] {
    const left: string[] = [];
    for (const [serial, b] of this.#state.live) if (serial >= mark) left.push(`${b.label} (${b.size})`);
    return left;
  }

  /** Throws a {@link DeviceLostError} once the device is lost or destroyed. */
  #live(what: string): void {
    const reason = this.#state.lost;
    if (reason !== undefined) {
      throw new DeviceLostError(reason, what);
    }
  }

  /** The limits every dispatch is checked against: the device's, or lower ones from {@link withLimits}. */
  get limits(): GuardedLimits {
    return this.#limits;
  }

  /**
   * The same device seen through lower limits, e.g. to check that a plan folds or refuses as it
   * would on a browser's default limits. It shares the pipeline cache and never destroys the device.
   *
   * @param lowered limits to lower (raising one beyond the device's throws)
   * @returns a view of this device with those limits
   * @throws Error when a value is not a non-negative integer, names no guarded limit, or exceeds the
   *   device's own limit
   */
  withLimits(lowered: Partial<GuardedLimits>): ResidentDevice {
    if (typeof lowered !== "object" || lowered === null || Array.isArray(lowered) || ArrayBuffer.isView(lowered)) {
      throw new Error(`withLimits: lowered must be an object of limits, got ${given(lowered)}`);
    }
    for (const [key, value] of Object.entries(lowered) as [keyof GuardedLimits, number][]) {
      if (!(GUARDED_LIMITS as readonly string[]).includes(key)) {
        throw new Error(`withLimits: ${key} is not a guarded limit (${GUARDED_LIMITS.join(", ")})`);
      }
      if (value === undefined) continue;
      if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
        throw new Error(`withLimits: ${key} must be a non-negative integer, got ${String(value)}`);
      }
      if (value > this.device.limits[key]) {
        throw new Error(`withLimits: ${key} = ${value} exceeds the device's ${this.device.limits[key]}`);
      }
    }
    const limits = Object.fromEntries(GUARDED_LIMITS.map((key) => [key, lowered[key] ?? this.#limits[key]]));
    return new ResidentDevice(this.device, this.adapter, false, this.f16Verified, {
      limits: limits as unknown as GuardedLimits,
      pipelines: this.#pipelines,
      state: this.#state,
    });
  }

  /**
   * Resolves an op's entry point for this device's target.
   *
   * @param sources the op's kernel sources
   * @param entry the entry point
   * @param options `override` names a variant explicitly; `dtype` asks for a dtype variant
   *   (an f16 request is honoured only when {@link f16Verified})
   * @returns the resolution, with the rung that hit and every candidate tried
   * @throws Error when an override names a missing variant, or an f16 variant on a device whose f16
   *   is not verified (it would not compile)
   */
  resolve(sources: KernelSources, entry: string, options?: { override?: string; dtype?: Dtype }): Resolution {
    const override = options?.override;
    if (override !== undefined) this.#checkOverrideDtype(checkOverride(override));
    const dtype = options?.dtype === "f16" && !this.f16Verified ? undefined : options?.dtype;
    return resolve(sources, { entry, target: this.adapter.target, dtype, override });
  }

  /** An override is exact, but an f16 variant still needs f16 verified on this device. */
  #checkOverrideDtype(override: string): void {
    let dtype: Dtype | undefined;
    try {
      dtype = parseVariantName(override).dtype;
    } catch {
      return; // a malformed name: resolve() refuses it, naming the variants there are
    }
    if (dtype === "f16" && !this.f16Verified) {
      throw new Error(
        `override "${override}" is an f16 variant, but this device's f16 is not verified (shader-f16 missing or ` +
          `its known-answer check failed)`,
      );
    }
  }

  /**
   * Resolves one of the entry points an op's plan chooses between by size (matmul's tiles, the
   * quantized GEMVs' row layouts): the entry point an override's variant belongs to, which must be
   * one of `entries`, or else `chosen`.
   *
   * @param sources the op's kernel sources
   * @param op the op, for the error message
   * @param entries the entry points the plan chooses between
   * @param chosen the one the size calls for
   * @param options as {@link resolve}
   * @returns the resolution
   * @throws Error naming the op and its entry points when an override is a variant of none of them
   *   or `chosen` is not among them; as {@link resolve} for an f16 override without verified f16
   */
  resolveAmong(
    sources: KernelSources,
    op: string,
    entries: readonly string[],
    chosen: string,
    options?: { override?: string; dtype?: Dtype },
  ): Resolution {
    if (!entries.includes(chosen)) {
      throw new Error(`${op}: the chosen entry point "${chosen}" is not among ${entries.join(", ")}`);
    }
    if (options?.override === undefined) return this.resolve(sources, chosen, options);
    const entry = overrideEntry(options.override)!;
    if (!entries.includes(entry)) {
      const names = entries.map((e) => `"${e}"`).join(" or ");
      throw new Error(`${op}: override "${options.override}" is not a variant of entry point ${names}`);
    }
    return this.resolve(sources, entry, options);
  }

  /**
   * Copies a host array to a new resident tensor.
   *
   * @param data the values
   * @param label a debugging label
   * @returns the tensor
   * @throws Error when the device is lost, or `data` is not a Float32Array, Int32Array or Uint32Array
   */
  upload(data: HostArray, label?: string): GpuTensor {
    label ??= "tensor";
    this.#live(`upload of "${label}"`);
    const dtype = hostDtype(data);
    if (dtype === undefined) {
      throw new Error(
        `upload of "${label}": data must be a Float32Array, Int32Array or Uint32Array, got ${given(data)}`,
      );
    }
    const tensor = this.alloc(dtype, data.length, label);
    if (data.length > 0) this.device.queue.writeBuffer(tensor.buffer, 0, data as Float32Array<ArrayBuffer>);
    return tensor;
  }

  /**
   * Allocates a zero-filled resident tensor.
   *
   * @param dtype element type
   * @param length number of elements
   * @param label a debugging label
   * @returns the tensor
   * @throws Error when the device is lost, the dtype is not a {@link TensorDtype} or the length is not
   *   a non-negative integer
   * @throws LimitError when the size exceeds maxBufferSize
   */
  alloc(dtype: TensorDtype, length: number, label?: string): GpuTensor {
    label ??= "tensor";
    this.#live(`alloc of "${label}"`);
    if (!isTensorDtype(dtype)) {
      throw new Error(`${label}: dtype must be one of ${TENSOR_DTYPES.join(", ")}, got ${String(dtype)}`);
    }
    if (!Number.isInteger(length) || length < 0) {
      throw new Error(`${label}: length must be a non-negative integer, got ${length}`);
    }
    const bytes = allocatedBytes(length);
    if (bytes > this.limits.maxBufferSize) {
      throw new LimitError(label, "maxBufferSize", bytes, this.limits.maxBufferSize, `length ${length} (${dtype})`);
    }
    const buffer = this.device.createBuffer({
      label,
      size: bytes,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    return { buffer, dtype, length };
  }

  /**
   * Reads a resident tensor back to the host. The copy and the mapping run inside their own error
   * scopes, so a buffer that is destroyed or belongs to another device is an error, never zeros.
   *
   * @param tensor the tensor
   * @returns a new host array of the tensor's type and length
   * @throws Error naming the buffer (its label) and the sizes when the tensor claims more elements
   *   than its buffer holds, or when WebGPU rejects the copy (a destroyed buffer, another device's)
   */
  async read(tensor: GpuTensor): Promise<HostArray> {
    const name = `"${tensor?.buffer?.label || "tensor"}"`;
    this.#live(`read of ${name}`);
    const { length, dtype, buffer } = checkTensor(tensor, `read of ${name}`);
    const bytes = length * 4;
    const ctor = ELEMENT_ARRAYS[dtype];
    if (bytes === 0) return new ctor(0);
    let staging: GPUBuffer | undefined;
    let mapped: Promise<void> | undefined;
    try {
      // Push, copy, submit, map and pop with no await in between: the scopes catch this read's errors only.
      await this.withErrorScopes(
        () => `read of ${name} (${length} ${dtype}: ${bytes} bytes of its ${buffer.size})`,
        () => {
          staging = this.device.createBuffer({
            label: `read of ${name}`,
            size: bytes,
            usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
          });
          const encoder = this.device.createCommandEncoder();
          encoder.copyBufferToBuffer(buffer, tensor.offset ?? 0, staging, 0, bytes);
          this.device.queue.submit([encoder.finish()]);
          mapped = staging.mapAsync(GPUMapMode.READ);
          mapped.catch(() => {}); // a rejected copy is reported by the scopes; see below
        },
      );
      try {
        await mapped;
      } catch (e) {
        throw await this.#mapFailure(`read of ${name}`, e);
      }
      return new ctor(staging!.getMappedRange().slice(0, bytes));
    } finally {
      staging?.destroy();
    }
  }

  /**
   * Checks a plan and its tensors against the device's limits and encodes the dispatch into a
   * compute pass of `encoder`. Nothing is encoded when a check fails.
   *
   * @param encoder the command encoder to record into
   * @param plan the dispatch
   * @param tensors one resident tensor per binding of the plan, in order
   * @param timestampWrites optional timestamp writes for the pass (GPU timing)
   * @returns transient buffers (the params uniform) to destroy once submitted
   * @throws LimitError naming the limit, the value asked for and the op, before encoding
   * @throws Error when the device is lost, or a tensor does not match its binding's dtype, is too
   *   short, or claims more elements than its buffer holds
   */
  encode(
    encoder: GPUCommandEncoder,
    plan: KernelPlan,
    tensors: readonly GpuTensor[],
    timestampWrites?: GPUComputePassTimestampWrites,
  ): GPUBuffer[] {
    checkEncoder(encoder, "ResidentDevice.encode");
    return this.#encodeSteps(encoder, [[plan, tensors]], timestampWrites);
  }

  /**
   * Encodes a sequence's dispatches into one compute pass of `encoder` (see {@link encode}).
   *
   * @param encoder the command encoder to record into
   * @param sequence the dispatches
   * @param tensors one resident tensor per binding and then per intermediate of the sequence
   * @param timestampWrites optional timestamp writes for the pass (GPU timing)
   * @returns transient buffers (the params uniforms) to destroy once submitted
   * @throws as {@link encode}, for any step
   *
   * @example
   * ```ts
   * import { acquireDevice, elementwisePlan, kernelSequence } from "@xpu/ops";
   * const gpu = await acquireDevice();
   * const add = elementwisePlan(gpu, { op: "add", n: 2 });
   * const once = kernelSequence("elementwise", add.bindings, [], [{ plan: add, tensors: [0, 1, 2] }], add.cost);
   * const tensors = [gpu.upload(new Float32Array([1, 2])), gpu.upload(new Float32Array([3, 4])), gpu.alloc("f32", 2)];
   * const encoder = gpu.device.createCommandEncoder();
   * const transient = gpu.encodeSequence(encoder, once, tensors);
   * gpu.device.queue.submit([encoder.finish()]);
   * console.log(await gpu.read(tensors[2])); // Float32Array [4, 6]
   * for (const b of transient) b.destroy();
   * gpu.destroy();
   * ```
   */
  encodeSequence(
    encoder: GPUCommandEncoder,
    sequence: KernelSequence,
    tensors: readonly GpuTensor[],
    timestampWrites?: GPUComputePassTimestampWrites,
  ): GPUBuffer[] {
    checkEncoder(encoder, "ResidentDevice.encodeSequence");
    return this.#encodeSteps(encoder, this.#stepsOf(sequence, tensors), timestampWrites);
  }

  /**
   * Runs a sequence on resident tensors, as {@link submit} runs its steps.
   *
   * @param sequence the dispatches
   * @param tensors one resident tensor per binding and then per intermediate of the sequence
   * @throws as {@link submit}
   *
   * @example
   * ```ts
   * import { acquireDevice, elementwisePlan, kernelSequence } from "@xpu/ops";
   * const gpu = await acquireDevice();
   * const add = elementwisePlan(gpu, { op: "add", n: 2 });
   * const once = kernelSequence("elementwise", add.bindings, [], [{ plan: add, tensors: [0, 1, 2] }], add.cost);
   * const out = gpu.alloc("f32", 2);
   * await gpu.submitSequence(once, [gpu.upload(new Float32Array([1, 2])), gpu.upload(new Float32Array([3, 4])), out]);
   * console.log(await gpu.read(out)); // Float32Array [4, 6]
   * gpu.destroy();
   * ```
   */
  async submitSequence(sequence: KernelSequence, tensors: readonly GpuTensor[]): Promise<void> {
    await this.submit(...this.#stepsOf(sequence, tensors));
  }

  #stepsOf(sequence: KernelSequence, tensors: readonly GpuTensor[]): [KernelPlan, readonly GpuTensor[]][] {
    const s = sequence as Partial<KernelSequence> | undefined;
    if (typeof s !== "object" || s === null || !Array.isArray(s.steps) || !Array.isArray(s.bindings)) {
      throw new Error(
        `ResidentDevice: sequence must be a KernelSequence (from kernelSequence), got ${given(sequence)}`,
      );
    }
    checkArray(tensors, `${sequence.op}/${sequence.variant}: tensors`, "GpuTensors");
    const count = sequence.bindings.length + sequence.intermediates.length;
    if (tensors.length !== count) {
      throw new Error(`${sequence.op}/${sequence.variant}: expected ${count} tensors, got ${tensors.length}`);
    }
    return sequence.steps.map(({ plan, tensors: at }) => [plan, at.map((i) => tensors[i])]);
  }

  /**
   * Encodes dispatches in order, as few compute passes as possible: consecutive dispatches share a
   * pass (WebGPU orders them, each one's writes visible to the next), and a new pass begins only
   * where a dispatch has `zeroed` bindings, cleared between the passes. Every step is checked before
   * anything is encoded.
   */
  #encodeSteps(
    encoder: GPUCommandEncoder,
    steps: readonly [KernelPlan, readonly GpuTensor[]][],
    timestampWrites?: GPUComputePassTimestampWrites,
  ): GPUBuffer[] {
    const workgroups = steps.map(([plan, tensors]) => this.#check(plan, tensors));
    const bound: BoundDispatch[] = [];
    try {
      for (const [i, [plan, tensors]] of steps.entries()) bound.push(this.#bindChecked(plan, tensors, workgroups[i]));
      encodeBound(encoder, bound, timestampWrites);
    } catch (e) {
      for (const b of bound) b.uniform?.destroy();
      throw e;
    }
    return bound.flatMap((b) => b.uniform ? [b.uniform] : []);
  }

  /**
   * Checks a plan and its tensors (device alive, one tensor per binding of the right dtype and
   * length, every device limit), returning the workgroup counts.
   */
  #check(plan: KernelPlan, tensors: readonly GpuTensor[]): [number, number, number] {
    checkPlan(plan, "ResidentDevice");
    const where = `${plan.op}/${plan.kernel.variant}`;
    checkArray(tensors, `${where}: tensors`, "GpuTensors, one per binding of the plan");
    this.#live(where);
    const workgroups: [number, number, number] = typeof plan.workgroups === "number"
      ? [plan.workgroups, 1, 1]
      : [...plan.workgroups];
    if (tensors.length !== plan.bindings.length) {
      throw new Error(`${where}: expected ${plan.bindings.length} tensors, got ${tensors.length}`);
    }
    for (const [i, spec] of plan.bindings.entries()) {
      const binding = `${where}: binding ${i} (${spec.name})`;
      const t = checkTensor(tensors[i], binding);
      if (t.dtype !== spec.dtype || t.length < spec.length) {
        throw new Error(`${binding} expects ${spec.length} ${spec.dtype}, got ${t.length} ${t.dtype}`);
      }
      const align = this.device.limits.minStorageBufferOffsetAlignment;
      if (t.offset !== undefined && t.offset % align !== 0) {
        throw new Error(`${binding}: a view's offset (${t.offset} bytes) must be a multiple of ${align}`);
      }
    }
    checkDispatch(this.limits, {
      where,
      workgroups,
      workgroupSize: workgroupSizeOf(plan.kernel.source, where),
      storage: tensors.map((t, i) => ({ name: plan.bindings[i].name, bytes: bindBytes(t) })),
    });
    for (const [name, value] of Object.entries(plan.constants ?? {})) {
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || typeof value !== "number" || !Number.isFinite(value)) {
        throw new Error(`${where}: constant ${name} must be a finite number named as a WGSL identifier, got ${value}`);
      }
    }
    return workgroups;
  }

  /** Makes the pipeline, params uniform and bind group of a dispatch {@link #check} passed. */
  #bindChecked(
    plan: KernelPlan,
    tensors: readonly GpuTensor[],
    workgroups: readonly [number, number, number],
  ): BoundDispatch {
    const pipeline = this.#pipeline(plan.op, plan.kernel, plan.constants);
    const entries: GPUBindGroupEntry[] = tensors.map((t, i) => ({
      binding: i,
      resource: t.offset === undefined
        ? { buffer: t.buffer }
        : { buffer: t.buffer, offset: t.offset, size: bindBytes(t) },
    }));
    let uniform: GPUBuffer | undefined;
    if (plan.params) {
      uniform = this.device.createBuffer({
        label: `${plan.op}/${plan.kernel.variant} params`,
        size: plan.params.byteLength,
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
      });
      this.device.queue.writeBuffer(uniform, 0, plan.params);
      entries.push({ binding: tensors.length, resource: { buffer: uniform } });
    }
    const bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const cleared = plan.bindings.flatMap((spec, i) => spec.zeroed ? [tensors[i]] : []);
    return { plan, tensors: [...tensors], pipeline, bindGroup, workgroups, cleared, uniform };
  }

  /**
   * Binds a plan to its tensors once: everything {@link submit} checks is checked now (dtypes,
   * lengths, device limits), and the pipeline, the params uniform and the bind group are made now,
   * so encoding the result again and again (in a {@link Program}) costs no validation and no
   * allocation. The bound dispatch owns its params uniform: {@link Program.destroy} frees it.
   *
   * @param plan the dispatch
   * @param tensors one resident tensor per binding of the plan, in order
   * @returns the bound dispatch
   * @throws as {@link encode}
   *
   * @example
   * ```ts
   * import { acquireDevice, elementwisePlan } from "@xpu/ops";
   * const gpu = await acquireDevice();
   * const [a, b, sum] = [gpu.upload(new Float32Array([1, 2])), gpu.upload(new Float32Array([3, 4])), gpu.alloc("f32", 2)];
   * const add = gpu.bind(elementwisePlan(gpu, { op: "add", n: 2 }), [a, b, sum]);
   * const program = gpu.program("add", [add]);
   * await program.run();
   * console.log(await gpu.read(sum)); // Float32Array [4, 6]
   * program.destroy();
   * gpu.destroy();
   * ```
   */
  bind(plan: KernelPlan, tensors: readonly GpuTensor[]): BoundDispatch {
    return this.#bindChecked(plan, tensors, this.#check(plan, tensors));
  }

  /**
   * A replayable program: dispatches bound once ({@link bind}), encoded in order into one compute
   * pass per run (a new pass only before a dispatch whose `zeroed` bindings are cleared). Steps given
   * as `[plan, tensors]` are bound here. Running it again reruns the same dispatches on whatever the
   * tensors hold by then (write new inputs with `device.queue.writeBuffer` between runs).
   *
   * @param name what the program computes, for messages (e.g. `qwen3 layer 3`)
   * @param steps bound dispatches, or plans with their tensors, in order
   * @returns the program
   * @throws as {@link encode}, for any step, before anything is bound
   *
   * @example
   * ```ts
   * import { acquireDevice, elementwisePlan } from "@xpu/ops";
   * const gpu = await acquireDevice();
   * const add = elementwisePlan(gpu, { op: "add", n: 2 });
   * const [x, one, y] = [gpu.upload(new Float32Array([1, 2])), gpu.upload(new Float32Array([1, 1])), gpu.alloc("f32", 2)];
   * // y = x + 1, then x = y + 1: twice per run
   * const program = gpu.program("add twice", [[add, [x, one, y]], [add, [y, one, x]]]);
   * await program.run();
   * await program.run();
   * console.log(await gpu.read(x)); // Float32Array [5, 6]
   * program.destroy();
   * gpu.destroy();
   * ```
   */
  program(name: string, steps: readonly (BoundDispatch | readonly [KernelPlan, readonly GpuTensor[]])[]): Program {
    const where = `ResidentDevice.program "${String(name)}"`;
    checkArray(steps, `${where}: steps`, "bound dispatches or [plan, tensors] pairs");
    for (const [i, step] of steps.entries()) {
      if (Array.isArray(step)) checkStep(step, `${where}: step ${i}`);
      else if (!isBound(step)) {
        throw new Error(
          `${where}: step ${i} must be a bound dispatch (gpu.bind) or a [plan, tensors] pair, got ${given(step)}`,
        );
      }
    }
    const workgroups = steps.map((step) => isUnbound(step) ? this.#check(step[0], step[1]) : step.workgroups);
    const bound: BoundDispatch[] = [];
    try {
      for (const [i, step] of steps.entries()) {
        bound.push(isUnbound(step) ? this.#bindChecked(step[0], step[1], workgroups[i]) : step);
      }
    } catch (e) {
      for (const [i, b] of bound.entries()) if (isUnbound(steps[i])) b.uniform?.destroy();
      throw e;
    }
    return new Program(this, name, bound);
  }

  /**
   * Encodes a sequence of dispatches on resident tensors into one command buffer, in one compute
   * pass (a new one only before a dispatch whose `zeroed` bindings are cleared), submits it, and
   * throws if WebGPU reports a validation or out-of-memory error for them.
   *
   * @param steps the dispatches, each a plan and its tensors, in order
   * @throws LimitError before encoding when a limit would be exceeded; Error naming the op, the
   *   variant and the bindings' sizes when WebGPU rejects the work; `device lost: <reason>` at once
   *   after the device is lost
   */
  async submit(...steps: [KernelPlan, readonly GpuTensor[]][]): Promise<void> {
    for (const [i, step] of steps.entries()) checkStep(step, `ResidentDevice.submit: step ${i}`);
    const what = () =>
      steps.map(([plan]) =>
        `${plan.op}/${plan.kernel.variant} [${
          plan.bindings.map((b) => `${b.name}: ${b.length} ${b.dtype}`).join(", ")
        }]`
      ).join("; ");
    this.#live(`submit of ${steps.map(([plan]) => plan.op).join(", ")}`);
    await this.withErrorScopes(what, () => this.#encodeAndSubmit(steps));
  }

  #encodeAndSubmit(steps: readonly [KernelPlan, readonly GpuTensor[]][]): void {
    const transient: GPUBuffer[] = [];
    try {
      const encoder = this.device.createCommandEncoder();
      transient.push(...this.#encodeSteps(encoder, steps));
      this.device.queue.submit([encoder.finish()]);
    } finally {
      for (const b of transient) b.destroy();
    }
  }

  /**
   * Runs `work` inside WebGPU's validation and out-of-memory error scopes: pushes both, runs `work`,
   * and pops both before anything is awaited, so the scopes hold this work's errors and no other
   * call's (error scopes are one stack per device). An exception `work` throws is rethrown once the
   * scopes are popped; an error either scope caught is thrown as `WebGPU rejected <what>: <message>`,
   * so no rejected command goes unnoticed.
   *
   * `work` must be synchronous: encode and submit in it, start a `mapAsync` in it if needed, and
   * await the mapping after this call's promise settles. A `work` that returns a promise is refused,
   * because what it does after its first `await` would run outside the scopes.
   *
   * @param what describes the work for the error message (called only on error)
   * @param work encodes and submits, synchronously
   * @returns what `work` returns
   * @throws what `work` throws, or Error when WebGPU rejected the work, `work` returned a promise,
   *   or the device is lost
   */
  async withErrorScopes<T>(what: () => string, work: () => T): Promise<T> {
    if (typeof what !== "function" || typeof work !== "function") {
      throw new Error(`withErrorScopes: what and work must be functions, got ${given(what)} and ${given(work)}`);
    }
    this.#live("work in error scopes");
    this.device.pushErrorScope("out-of-memory");
    this.device.pushErrorScope("validation");
    let result: T | undefined;
    let failure: { thrown: unknown } | undefined;
    try {
      result = work();
    } catch (e) {
      failure = { thrown: e };
    }
    const popped = [this.device.popErrorScope(), this.device.popErrorScope()];
    // Nothing above awaited: the scopes were this call's alone. Only now is anything awaited.
    if (!failure && typeof (result as { then?: unknown } | undefined)?.then === "function") {
      (result as Promise<unknown>).then(() => {}, () => {});
      failure = {
        thrown: new Error(
          `withErrorScopes (${what()}): work must be synchronous; it returned a promise, and what it does after ` +
            `an await would run outside the error scopes`,
        ),
      };
    }
    const [validation, oom] = await Promise.all(popped);
    if (failure) throw failure.thrown;
    const error = validation ?? oom;
    if (error) throw new Error(`WebGPU rejected ${what()}: ${error.message}`);
    // A device lost while the work was recorded catches nothing in its scopes: the work was dropped.
    this.#live(what());
    return result as T;
  }

  /**
   * Runs one plan on host arrays: uploads the inputs, dispatches, reads the outputs back, and
   * frees every buffer it made. The uploads, the dispatch and each read run inside their own error
   * scopes, so concurrent calls each get their own errors.
   *
   * @param plan the dispatch
   * @param inputs one host array per `input` or `inout` binding, in binding order
   * @returns one host array per `output` or `inout` binding, in binding order
   * @throws LimitError before anything is uploaded when the plan exceeds a device limit
   * @throws Error when an input's type or length does not match its binding, when WebGPU rejects
   *   the work, or when the device is lost
   */
  async run(plan: KernelPlan, inputs: readonly HostArray[]): Promise<HostArray[]> {
    checkPlan(plan, "ResidentDevice.run");
    const where = `${plan.op}/${plan.kernel.variant}`;
    this.#live(where);
    checkArray(inputs, `${where}: inputs`, "host arrays, one per input binding");
    const fed = plan.bindings.filter((b) => b.role !== "output");
    if (inputs.length !== fed.length) {
      throw new Error(
        `${plan.op}: expected ${fed.length} input arrays (${fed.map((b) => b.name).join(", ")}), got ${inputs.length}`,
      );
    }
    for (const [i, spec] of fed.entries()) {
      const data = inputs[i];
      const dtype = hostDtype(data);
      if (dtype !== spec.dtype || data.length !== spec.length) {
        const given = dtype ? `${data.length} ${dtype}` : Object.prototype.toString.call(data);
        throw new Error(`${plan.op}: ${spec.name} must be ${spec.length} ${spec.dtype} elements, got ${given}`);
      }
    }
    checkDispatch(this.limits, {
      where,
      workgroups: typeof plan.workgroups === "number" ? [plan.workgroups, 1, 1] : plan.workgroups,
      workgroupSize: workgroupSizeOf(plan.kernel.source, where),
      storage: plan.bindings.map((b) => ({ name: b.name, bytes: allocatedBytes(b.length) })),
    });
    const tensors: GpuTensor[] = [];
    const describe = () => `${where} [${plan.bindings.map((b) => `${b.name}: ${b.length} ${b.dtype}`).join(", ")}]`;
    try {
      await this.withErrorScopes(describe, () => {
        let next = 0;
        for (const spec of plan.bindings) {
          if (spec.role === "output") {
            tensors.push(
              this.poisonOutputs && !spec.zeroed
                ? this.#poisoned(spec)
                : this.alloc(spec.dtype, spec.length, spec.name),
            );
          } else tensors.push(this.upload(inputs[next++], spec.name));
        }
        this.#encodeAndSubmit([[plan, tensors]]);
      });
      const outputs: Promise<HostArray>[] = [];
      for (const [i, spec] of plan.bindings.entries()) {
        if (spec.role === "input") continue;
        outputs.push(
          this.poisonOutputs && spec.role === "output" && !spec.zeroed
            ? this.#readGuarded(plan, spec, tensors[i])
            : this.read(tensors[i]),
        );
      }
      return await Promise.all(outputs);
    } finally {
      for (const t of tensors) t.buffer.destroy();
    }
  }

  /**
   * What a rejected `mapAsync` means. A device lost by other means than `destroy()` (a GPU reset)
   * rejects its maps with a bare OperationError before `device.lost` settles, a macrotask later:
   * after one macrotask, a loss is reported as such; anything else names the read.
   */
  async #mapFailure(what: string, cause: unknown): Promise<Error> {
    await new Promise((resolve) => setTimeout(resolve, 0));
    const reason = this.#state.lost;
    if (reason !== undefined) return new DeviceLostError(reason, what);
    return new Error(`${what}: mapping its staging buffer failed (${String(cause)})`);
  }

  #poisoned(spec: BindingSpec): GpuTensor {
    const words = new Uint32Array(spec.length + POISON_GUARD).fill(POISON);
    const { buffer } = this.upload(words, spec.name);
    return { buffer, dtype: spec.dtype, length: spec.length };
  }

  async #readGuarded(plan: KernelPlan, spec: BindingSpec, tensor: GpuTensor): Promise<HostArray> {
    const words = await this.read({ buffer: tensor.buffer, dtype: "u32", length: spec.length + POISON_GUARD });
    const overrun = words.subarray(spec.length).findIndex((w) => w !== POISON);
    if (overrun >= 0) {
      throw new Error(
        `${plan.op}/${plan.kernel.variant}: wrote past the end of ${spec.name} (element ${
          spec.length + overrun
        } of ${spec.length})`,
      );
    }
    return new ELEMENT_ARRAYS[spec.dtype]((words.buffer as ArrayBuffer).slice(0, spec.length * 4));
  }

  /**
   * Destroys the device if this library created it; a caller's device is left alone (and so is the
   * device behind a {@link withLimits} view). After destroying its own device, every call fails at
   * once with `device lost: destroyed`; {@link acquireDevice} gives a new device.
   */
  destroy(): void {
    this.#pipelines.clear();
    if (this.#owned) {
      this.#state.lost ??= "destroyed (ResidentDevice.destroy())";
      this.device.destroy();
    }
  }

  #pipeline(op: string, kernel: Resolution, constants?: Readonly<Record<string, number>>): GPUComputePipeline {
    const key = `${op}/${kernel.variant}`;
    let entry = this.#pipelines.get(key);
    if (entry && entry.source !== kernel.source) {
      throw new Error(`pipeline cache: ${key} was already compiled from a different source`);
    }
    if (!entry) {
      const module = this.device.createShaderModule({ label: key, code: kernel.source });
      this.#pipelines.set(key, entry = { source: kernel.source, module, pipelines: new Map() });
    }
    const names = constants ? Object.keys(constants).sort() : [];
    const constantsKey = names.map((name) => `${name}=${constants![name]}`).join(",");
    const cached = entry.pipelines.get(constantsKey);
    if (cached) return cached;
    const label = constantsKey ? `${key} (${constantsKey})` : key;
    const pipeline = this.device.createComputePipeline({
      label,
      layout: "auto",
      compute: { module: entry.module, entryPoint: "main", ...(constantsKey ? { constants: { ...constants } } : {}) },
    });
    entry.pipelines.set(constantsKey, pipeline);
    return pipeline;
  }
}

const GUARDED_LIMITS: readonly (keyof GuardedLimits)[] = [
  "maxComputeWorkgroupsPerDimension",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupSizeX",
  "maxComputeWorkgroupSizeY",
  "maxComputeWorkgroupSizeZ",
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxStorageBuffersPerShaderStage",
];

/** Whether `step` is a bound dispatch (what {@link ResidentDevice.bind} returns). */
function isBound(step: unknown): step is BoundDispatch {
  const b = step as Partial<BoundDispatch> | null;
  return typeof b === "object" && b !== null && typeof b.plan === "object" && Array.isArray(b.workgroups) &&
    typeof b.pipeline === "object" && typeof b.bindGroup === "object";
}

/** Checks that `encoder` is a command encoder. */
function checkEncoder(encoder: unknown, what: string): void {
  if (typeof (encoder as GPUCommandEncoder | undefined)?.beginComputePass !== "function") {
    throw new Error(
      `${what}: encoder must be a GPUCommandEncoder (gpu.device.createCommandEncoder()), got ${given(encoder)}`,
    );
  }
}

function isUnbound(
  step: BoundDispatch | readonly [KernelPlan, readonly GpuTensor[]],
): step is readonly [KernelPlan, readonly GpuTensor[]] {
  return Array.isArray(step);
}

/**
 * Bytes a binding of the tensor spans: its buffer, or a view's range, at least 16 bytes (a kernel
 * reading `array<vec4f>` needs one vec4 bound; kernels read only the elements the plan's lengths name).
 * A view's offset is aligned (256 bytes or more) and a buffer is whole 16-byte units, so 16 bytes
 * from a view's offset are always within its buffer.
 */
function bindBytes(t: GpuTensor): number {
  return t.offset === undefined ? t.buffer.size : Math.min(t.buffer.size - t.offset, Math.max(16, 4 * t.length));
}

/** Bytes a tensor of `length` 4-byte elements occupies: whole 16-byte units, at least one. */
function allocatedBytes(length: number): number {
  return Math.max(16, Math.ceil((length * 4) / 16) * 16);
}

/** A value as a message shows it: `undefined`, `null`, a quoted string, or its kind. */
function given(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value !== "object") return `${typeof value} ${String(value)}`;
  return Array.isArray(value)
    ? `an array of ${value.length}`
    : `an object (${Object.keys(value).slice(0, 4).join(", ")})`;
}

/**
 * Checks that `plan` is a {@link KernelPlan}: a plan from an op's `<op>Plan`, or one built to its shape.
 *
 * @param plan the value given as a plan
 * @param what where it was given, for the message (e.g. `ResidentDevice.run`)
 * @returns the plan
 * @throws Error naming `what` and what a plan holds
 */
function checkPlan(plan: unknown, what: string): KernelPlan {
  const p = plan as Partial<KernelPlan> | null | undefined;
  const ok = typeof p === "object" && p !== null && typeof p.op === "string" &&
    typeof p.kernel?.variant === "string" && typeof p.kernel?.source === "string" && Array.isArray(p.bindings) &&
    (typeof p.workgroups === "number" || Array.isArray(p.workgroups));
  if (!ok) {
    throw new Error(
      `${what}: plan must be a KernelPlan ({ op, kernel, bindings, workgroups, cost }, from an op's <op>Plan), got ${
        given(plan)
      }`,
    );
  }
  return p as KernelPlan;
}

/**
 * Checks that `value` is an array.
 *
 * @param value the value given
 * @param what where and what it is, for the message (e.g. `ResidentDevice.run: inputs`)
 * @param of what its elements are, for the message
 * @returns the array
 * @throws Error naming `what` and what was given
 */
function checkArray<T>(value: unknown, what: string, of: string): readonly T[] {
  if (!Array.isArray(value)) throw new Error(`${what} must be an array of ${of}, got ${given(value)}`);
  return value;
}

/** Checks a `[plan, tensors]` step of `submit` or `program`. */
function checkStep(step: unknown, what: string): readonly [KernelPlan, readonly GpuTensor[]] {
  if (!Array.isArray(step) || step.length !== 2) {
    throw new Error(`${what} must be a [plan, tensors] pair, got ${given(step)}`);
  }
  checkPlan(step[0], what);
  checkArray(step[1], `${what}: tensors`, "GpuTensors, one per binding of the plan");
  return step as unknown as readonly [KernelPlan, readonly GpuTensor[]];
}

/**
 * Checks that `tensor` is a tensor whose buffer holds the elements it claims.
 *
 * @param tensor the value given as a tensor
 * @param what where it was given, for the message (e.g. `matmul/kernel: binding 0 (a)`)
 * @returns the tensor
 * @throws Error naming `what`, the buffer's label and the sizes
 */
function checkTensor(tensor: GpuTensor, what: string): GpuTensor {
  if (typeof tensor !== "object" || tensor === null || typeof tensor.buffer?.size !== "number") {
    throw new Error(`${what}: expected a GpuTensor ({ buffer, dtype, length }), got ${String(tensor)}`);
  }
  const { buffer, dtype, length } = tensor;
  const offset = tensor.offset ?? 0;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset % 4 !== 0) {
    throw new Error(`${what}: offset must be a non-negative multiple of 4 bytes, got ${String(tensor.offset)}`);
  }
  if (!isTensorDtype(dtype)) {
    throw new Error(`${what}: dtype must be one of ${TENSOR_DTYPES.join(", ")}, got ${String(dtype)}`);
  }
  if (!Number.isInteger(length) || length < 0) {
    throw new Error(`${what}: length must be a non-negative integer, got ${String(length)}`);
  }
  if (offset + length * 4 > buffer.size) {
    throw new Error(
      `${what}: the tensor claims ${length} ${dtype} elements (${length * 4} bytes${
        offset ? ` from byte ${offset}` : ""
      }), but its buffer "${buffer.label || "tensor"}" holds ${buffer.size} bytes`,
    );
  }
  return tensor;
}

/** The loss of each GPUDevice, shared by every {@link ResidentDevice} made over it. */
const STATES = new WeakMap<GPUDevice, DeviceState>();

/**
 * The state shared by every view of `device`, watching for its loss. `device.lost` settles a
 * macrotask after `device.destroy()`, and until then a destroyed device accepts buffers and
 * submissions without an error (its error scopes catch nothing, its maps reject with a bare
 * OperationError): so the device's own `destroy` is wrapped to record the loss at once, whoever
 * calls it. The wrapper only records; the device's own method still does the destroying.
 */
function watchLoss(device: GPUDevice): DeviceState {
  const known = STATES.get(device);
  if (known) return known;
  const state: DeviceState = { memory: { bytes: 0, buffers: 0, peakBytes: 0, made: 0 }, live: new Map() };
  STATES.set(device, state);
  countBuffers(device, state);
  // A caller's device from an older runtime may lack `lost`; then only destroy() marks it lost.
  device.lost?.then((info) => {
    state.lost ??= info.message ? `${info.reason}: ${info.message}` : String(info.reason ?? "unknown reason");
    state.memory.bytes = 0;
    state.memory.buffers = 0;
    state.live.clear();
  });
  const destroy = device.destroy;
  if (typeof destroy === "function") {
    Object.defineProperty(device, "destroy", {
      configurable: true,
      writable: true,
      value: function (this: GPUDevice): void {
        state.lost ??= "destroyed (GPUDevice.destroy())";
        state.memory.bytes = 0;
        state.memory.buffers = 0;
        state.live.clear();
        return destroy.call(this);
      },
    });
  }
  return state;
}

/** What a buffer counted by {@link countBuffers} still owes the device's count. */
interface CountedBuffer {
  serial: number;
  size: number;
  counted: boolean;
}

/** Buffers dropped without `destroy()`: their bytes leave the count when they are collected. */
const COLLECTED = new FinalizationRegistry<{ state: DeviceState; counted: CountedBuffer }>(({ state, counted }) => {
  uncount(state, counted);
});

function uncount(state: DeviceState, counted: CountedBuffer): void {
  if (!counted.counted || state.lost !== undefined) return;
  counted.counted = false;
  state.memory.bytes -= counted.size;
  state.memory.buffers -= 1;
  state.live.delete(counted.serial);
}

/**
 * Wraps `device.createBuffer` so that every buffer made on the device is counted in
 * `state.memory` until its `destroy()` (or its collection, or the device's destruction). The wrapper
 * only counts; the device's own methods still create and destroy.
 */
function countBuffers(device: GPUDevice, state: DeviceState): void {
  const create = device.createBuffer;
  if (typeof create !== "function") return;
  Object.defineProperty(device, "createBuffer", {
    configurable: true,
    writable: true,
    value: function (this: GPUDevice, descriptor: GPUBufferDescriptor): GPUBuffer {
      const buffer = create.call(this, descriptor);
      if (state.lost !== undefined) return buffer;
      const counted: CountedBuffer = { serial: state.memory.made++, size: buffer.size, counted: true };
      state.live.set(counted.serial, { label: descriptor.label || "(no label)", size: counted.size });
      state.memory.bytes += counted.size;
      state.memory.buffers += 1;
      if (state.memory.bytes > state.memory.peakBytes) state.memory.peakBytes = state.memory.bytes;
      COLLECTED.register(buffer, { state, counted }, counted);
      const destroyBuffer = buffer.destroy;
      Object.defineProperty(buffer, "destroy", {
        configurable: true,
        writable: true,
        value: function (this: GPUBuffer): undefined {
          COLLECTED.unregister(counted);
          uncount(state, counted);
          return destroyBuffer.call(this);
        },
      });
      return buffer;
    },
  });
}

/**
 * Requires a live {@link ResidentDevice}: every op's plan and GPU entry point calls it first, so a
 * call given no device, a plain object or a bare `GPUDevice` fails naming `gpu` and what it must be,
 * never with a TypeError from inside the op, and a call on a lost or destroyed device fails with a
 * {@link DeviceLostError} before anything is planned.
 *
 * @param op the op, for the message
 * @param gpu the value given as the device
 * @throws Error naming `gpu` when it is not a ResidentDevice (a `GPUDevice` is told to go through
 *   `acquireDevice({ device })`)
 * @throws DeviceLostError when the device is lost or destroyed
 *
 * @example
 * ```ts
 * import { acquireDevice, requireDevice } from "@xpu/ops/harness";
 * try {
 *   requireDevice("softmax", undefined);
 * } catch (e) {
 *   (e as Error).message; // "softmax: gpu must be a ResidentDevice (from acquireDevice()), got undefined"
 * }
 * const gpu = await acquireDevice();
 * requireDevice("softmax", gpu); // passes
 * gpu.destroy();
 * ```
 */
export function requireDevice(op: string, gpu: unknown): asserts gpu is ResidentDevice {
  if (!isResidentDevice(gpu)) {
    const what = "a ResidentDevice (from acquireDevice())";
    if (typeof (gpu as GPUDevice | undefined)?.createBuffer === "function") {
      throw new Error(`${op}: gpu must be ${what}, got a GPUDevice: wrap it once with acquireDevice({ device })`);
    }
    const given = gpu === null || typeof gpu !== "object"
      ? (typeof gpu === "string" ? JSON.stringify(gpu) : String(gpu))
      : `an object without the device's members (${Object.keys(gpu).slice(0, 4).join(", ") || "no keys"})`;
    throw new Error(`${op}: gpu must be ${what}, got ${given}`);
  }
  const lost = gpu.lost;
  if (lost !== undefined) throw new DeviceLostError(lost, op);
}

/**
 * A ResidentDevice, one from another copy of this module (two bundles of the package on one page),
 * or a stand-in that plans on the CPU: checked by the members every plan uses (`resolve` and
 * `limits`), as `instanceof` cannot see across copies.
 */
function isResidentDevice(gpu: unknown): gpu is ResidentDevice {
  if (gpu instanceof ResidentDevice) return true;
  if (gpu === null || typeof gpu !== "object") return false;
  const g = gpu as Record<string, unknown>;
  return typeof g.resolve === "function" && typeof g.limits === "object" && g.limits !== null;
}

/**
 * The element type of a host array.
 *
 * @param data a host array
 * @returns its {@link TensorDtype}
 * @throws Error when `data` is not a Float32Array, Int32Array or Uint32Array
 *
 * @example
 * ```ts
 * import { dtypeOf } from "@xpu/ops/harness";
 * dtypeOf(new Float32Array(4)); // "f32"
 * dtypeOf(new Uint32Array(4)); // "u32"
 * ```
 */
export function dtypeOf(data: HostArray): TensorDtype {
  const dtype = hostDtype(data);
  if (dtype) return dtype;
  throw new Error(`expected a Float32Array, Int32Array or Uint32Array, got ${Object.prototype.toString.call(data)}`);
}

function hostDtype(data: unknown): TensorDtype | undefined {
  if (data instanceof Float32Array) return "f32";
  if (data instanceof Int32Array) return "i32";
  if (data instanceof Uint32Array) return "u32";
  return undefined;
}

/** Limits requested at the adapter's maximum when this library creates the device. */
const REQUESTED_LIMITS = [...GUARDED_LIMITS, "maxComputeWorkgroupStorageSize"] as const;

const OPTIONAL_FEATURES: GPUFeatureName[] = ["shader-f16", "timestamp-query"];

/** The keys {@link AcquireOptions} may carry. */
const ACQUIRE_KEYS = ["device", "adapter", "powerPreference"];

/**
 * Refuses acquireDevice's options when they are not an object, carry an unknown key (a misspelt `devise`
 * would otherwise create a device of its own), or hold a device, adapter or power preference that is not one.
 */
function checkAcquireOptions(options: AcquireOptions): void {
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new Error(
      `acquireDevice: options must be an object { device?, adapter?, powerPreference? }, got ${given(options)}`,
    );
  }
  const unknown = Object.keys(options).filter((k) =>
    !ACQUIRE_KEYS.includes(k) && (options as Record<string, unknown>)[k] !== undefined
  );
  if (unknown.length > 0) {
    throw new Error(
      `acquireDevice: unknown option ${unknown.map((k) => `"${k}"`).join(", ")} (expected ${ACQUIRE_KEYS.join(", ")})`,
    );
  }
  const { device, adapter, powerPreference } = options;
  if (
    device !== undefined && (typeof device?.features?.has !== "function" || typeof device?.limits !== "object")
  ) {
    throw new Error(`acquireDevice: device must be a GPUDevice, got ${given(device)}`);
  }
  if (adapter !== undefined && (typeof adapter?.requestDevice !== "function" || typeof adapter?.limits !== "object")) {
    throw new Error(
      `acquireDevice: adapter must be a GPUAdapter (navigator.gpu.requestAdapter()), got ${given(adapter)}`,
    );
  }
  if (powerPreference !== undefined && powerPreference !== "high-performance" && powerPreference !== "low-power") {
    throw new Error(
      `acquireDevice: powerPreference must be "high-performance" or "low-power", got ${given(powerPreference)}`,
    );
  }
}

/**
 * Acquires a device: the caller's, or a new one with the adapter's limits and the optional
 * features (shader-f16, timestamp-query) the adapter offers. When shader-f16 is granted, a
 * known-answer f16 kernel runs once and f16 variants are used only if it returns the right values.
 *
 * After the device is lost (or destroyed), every call on the returned {@link ResidentDevice} fails
 * with `device lost: <reason>`: call `acquireDevice()` again for a new device.
 *
 * @param options a device to wrap, or an adapter / power preference to create one from
 * @returns the resident device
 * @throws Error when the runtime has no WebGPU (`navigator.gpu`) or no adapter is available
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * const gpu = await acquireDevice();
 * console.log(gpu.adapter.description, gpu.adapter.target);
 * gpu.destroy();
 * ```
 */
export async function acquireDevice(options?: AcquireOptions): Promise<ResidentDevice> {
  options ??= {};
  checkAcquireOptions(options);
  if (options.device) {
    const device = options.device;
    // `adapterInfo` is recent: a caller's device from an older runtime may not have it.
    const info: AdapterInfoLike = device.adapterInfo ?? {
      vendor: "",
      architecture: "",
      description: "unknown (the device has no adapterInfo)",
    };
    const description: AdapterDescription = {
      vendor: info.vendor,
      architecture: info.architecture,
      description: info.description,
      isFallbackAdapter: info.isFallbackAdapter ?? false,
      features: [...device.features].sort(),
      ...detectTarget(info),
    };
    return new ResidentDevice(device, description, false, await knownAnswerF16(device));
  }
  let adapter = options.adapter;
  if (!adapter) {
    const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
    if (!gpu) {
      throw new Error(
        "no WebGPU in this runtime (navigator.gpu is undefined): use Deno or a browser with WebGPU, " +
          "or pass { device } from a WebGPU implementation",
      );
    }
    adapter = await gpu.requestAdapter({ powerPreference: options.powerPreference ?? "high-performance" }) ??
      undefined;
  }
  if (!adapter) throw new Error("no WebGPU adapter is available (navigator.gpu.requestAdapter returned null)");
  const requiredLimits: Record<string, number> = {};
  for (const key of REQUESTED_LIMITS) requiredLimits[key] = adapter.limits[key];
  const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f));
  const device = await adapter.requestDevice({ requiredFeatures, requiredLimits });
  return new ResidentDevice(device, describeAdapter(adapter), true, await knownAnswerF16(device));
}

async function knownAnswerF16(device: GPUDevice): Promise<boolean> {
  if (!device.features.has("shader-f16")) return false;
  const input = new Float32Array([1, -2.5, 0.25, 100]); // x * 2 + 0.5 is exact in f16 for each
  const expected = input.map((x) => x * 2 + 0.5);
  const buffer = device.createBuffer({
    size: 16,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  const staging = device.createBuffer({ size: 16, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    device.pushErrorScope("validation");
    device.queue.writeBuffer(buffer, 0, input);
    const module = device.createShaderModule({ code: KNOWN_ANSWER_F16 });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(
      0,
      device.createBindGroup({
        layout: pipeline.getBindGroupLayout(0),
        entries: [{ binding: 0, resource: { buffer } }],
      }),
    );
    pass.dispatchWorkgroups(1);
    pass.end();
    encoder.copyBufferToBuffer(buffer, 0, staging, 0, 16);
    device.queue.submit([encoder.finish()]);
    if (await device.popErrorScope()) return false;
    await staging.mapAsync(GPUMapMode.READ);
    const got = new Float32Array(staging.getMappedRange().slice(0));
    return got.every((v, i) => v === expected[i]);
  } finally {
    buffer.destroy();
    staging.destroy();
  }
}
