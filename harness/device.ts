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
 * @module
 */

import { checkDispatch, type GuardedLimits, workgroupSizeOf } from "./limits.ts";
import { type Resolution, resolve } from "./resolve.ts";
import { type AdapterDescription, describeAdapter, detectTarget } from "./target.ts";
import { type Dtype, type KernelSources, parseVariantName } from "./variants.ts";

/** Element types a tensor may hold. */
export type TensorDtype = "f32" | "i32" | "u32";
/** Host arrays matching {@link TensorDtype}. */
export type HostArray = Float32Array | Int32Array | Uint32Array;

/** A buffer resident on the device, with its element type and length. */
export interface GpuTensor {
  /** The storage buffer (usage STORAGE | COPY_SRC | COPY_DST). */
  readonly buffer: GPUBuffer;
  /** Element type. */
  readonly dtype: TensorDtype;
  /** Number of elements. */
  readonly length: number;
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
  /** Workgroup counts; a number means `[n, 1, 1]`. */
  workgroups: number | readonly [number, number, number];
  /** The least the call must do: bytes through memory and floating-point operations. */
  cost: { bytes: number; flops: number };
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

const KNOWN_ANSWER_F16 = `enable f16;
@group(0) @binding(0) var<storage, read_write> data: array<f32>;
@compute @workgroup_size(4) fn main(@builtin(global_invocation_id) id: vec3u) {
  let h = f16(data[id.x]);
  data[id.x] = f32(h * 2.0h + 0.5h);
}`;

/**
 * A device with resident buffers, a pipeline cache, kernel resolution and a limits guard.
 * Create one with {@link acquireDevice}.
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
  readonly #pipelines: Map<string, { source: string; pipeline: GPUComputePipeline }>;
  readonly #limits: GuardedLimits;

  /** @internal Use {@link acquireDevice}. */
  constructor(
    device: GPUDevice,
    adapter: AdapterDescription,
    owned: boolean,
    f16Verified: boolean,
    shared?: { limits: GuardedLimits; pipelines: Map<string, { source: string; pipeline: GPUComputePipeline }> },
  ) {
    this.device = device;
    this.adapter = adapter;
    this.features = [...device.features].sort();
    this.f16Verified = f16Verified;
    this.#owned = owned;
    this.#limits = shared?.limits ?? device.limits;
    this.#pipelines = shared?.pipelines ?? new Map();
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
   * @throws Error when a value exceeds the device's own limit
   */
  withLimits(lowered: Partial<GuardedLimits>): ResidentDevice {
    for (const [key, value] of Object.entries(lowered) as [keyof GuardedLimits, number][]) {
      if (value > this.device.limits[key]) {
        throw new Error(`withLimits: ${key} = ${value} exceeds the device's ${this.device.limits[key]}`);
      }
    }
    const limits = Object.fromEntries(GUARDED_LIMITS.map((key) => [key, lowered[key] ?? this.#limits[key]]));
    return new ResidentDevice(this.device, this.adapter, false, this.f16Verified, {
      limits: limits as unknown as GuardedLimits,
      pipelines: this.#pipelines,
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
   */
  resolve(sources: KernelSources, entry: string, options: { override?: string; dtype?: Dtype } = {}): Resolution {
    const dtype = options.dtype === "f16" && !this.f16Verified ? undefined : options.dtype;
    return resolve(sources, { entry, target: this.adapter.target, dtype, override: options.override });
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
   */
  resolveAmong(
    sources: KernelSources,
    op: string,
    entries: readonly string[],
    chosen: string,
    options: { override?: string; dtype?: Dtype } = {},
  ): Resolution {
    if (options.override === undefined) return this.resolve(sources, chosen, options);
    const { entry } = parseVariantName(options.override);
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
   */
  upload(data: HostArray, label = "tensor"): GpuTensor {
    const tensor = this.alloc(dtypeOf(data), data.length, label);
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
   * @throws Error when the size exceeds maxBufferSize
   */
  alloc(dtype: TensorDtype, length: number, label = "tensor"): GpuTensor {
    if (!Number.isInteger(length) || length < 0) {
      throw new Error(`${label}: length must be a non-negative integer, got ${length}`);
    }
    const bytes = allocatedBytes(length);
    if (bytes > this.limits.maxBufferSize) {
      throw new Error(
        `${label}: ${length} ${dtype} elements need maxBufferSize >= ${bytes}, but this device allows ${this.limits.maxBufferSize}`,
      );
    }
    const buffer = this.device.createBuffer({
      label,
      size: bytes,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    return { buffer, dtype, length };
  }

  /**
   * Reads a resident tensor back to the host.
   *
   * @param tensor the tensor
   * @returns a new host array of the tensor's type and length
   */
  async read(tensor: GpuTensor): Promise<HostArray> {
    const bytes = tensor.length * 4;
    const ctor = ELEMENT_ARRAYS[tensor.dtype];
    if (bytes === 0) return new ctor(0);
    const staging = this.device.createBuffer({
      size: Math.ceil(bytes / 4) * 4,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    try {
      const encoder = this.device.createCommandEncoder();
      encoder.copyBufferToBuffer(tensor.buffer, 0, staging, 0, staging.size);
      this.device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      return new ctor(staging.getMappedRange().slice(0, bytes));
    } finally {
      staging.destroy();
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
   * @throws Error when a tensor does not match its binding's dtype or is too short
   */
  encode(
    encoder: GPUCommandEncoder,
    plan: KernelPlan,
    tensors: readonly GpuTensor[],
    timestampWrites?: GPUComputePassTimestampWrites,
  ): GPUBuffer[] {
    const where = `${plan.op}/${plan.kernel.variant}`;
    const workgroups: [number, number, number] = typeof plan.workgroups === "number"
      ? [plan.workgroups, 1, 1]
      : [...plan.workgroups];
    if (tensors.length !== plan.bindings.length) {
      throw new Error(`${where}: expected ${plan.bindings.length} tensors, got ${tensors.length}`);
    }
    for (const [i, spec] of plan.bindings.entries()) {
      const t = tensors[i];
      if (t.dtype !== spec.dtype || t.length < spec.length) {
        throw new Error(
          `${where}: binding ${i} (${spec.name}) expects ${spec.length} ${spec.dtype}, got ${t.length} ${t.dtype}`,
        );
      }
    }
    checkDispatch(this.limits, {
      where,
      workgroups,
      workgroupSize: workgroupSizeOf(plan.kernel.source, where),
      storage: tensors.map((t, i) => ({ name: plan.bindings[i].name, bytes: t.buffer.size })),
    });
    const pipeline = this.#pipeline(plan.op, plan.kernel);
    const entries: GPUBindGroupEntry[] = tensors.map((t, i) => ({ binding: i, resource: { buffer: t.buffer } }));
    const transient: GPUBuffer[] = [];
    if (plan.params) {
      const uniform = this.device.createBuffer({
        size: plan.params.byteLength,
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
      });
      this.device.queue.writeBuffer(uniform, 0, plan.params);
      entries.push({ binding: tensors.length, resource: { buffer: uniform } });
      transient.push(uniform);
    }
    const bindGroup = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    for (const [i, spec] of plan.bindings.entries()) {
      if (spec.zeroed) encoder.clearBuffer(tensors[i].buffer);
    }
    const pass = encoder.beginComputePass(timestampWrites ? { timestampWrites } : {});
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    if (workgroups.every((n) => n > 0)) pass.dispatchWorkgroups(...workgroups);
    pass.end();
    return transient;
  }

  /**
   * Encodes a sequence of dispatches on resident tensors into one command buffer, submits it, and
   * throws if WebGPU reports a validation or out-of-memory error for them.
   *
   * @param steps the dispatches, each a plan and its tensors, in order
   * @throws LimitError before encoding when a limit would be exceeded; Error naming the op, the
   *   variant and the bindings' sizes when WebGPU rejects the work
   */
  async submit(...steps: [KernelPlan, readonly GpuTensor[]][]): Promise<void> {
    const what = () =>
      steps.map(([plan]) =>
        `${plan.op}/${plan.kernel.variant} [${
          plan.bindings.map((b) => `${b.name}: ${b.length} ${b.dtype}`).join(", ")
        }]`
      ).join("; ");
    await this.withErrorScopes(what, () => {
      const transient: GPUBuffer[] = [];
      try {
        const encoder = this.device.createCommandEncoder();
        for (const [plan, tensors] of steps) transient.push(...this.encode(encoder, plan, tensors));
        this.device.queue.submit([encoder.finish()]);
      } finally {
        for (const b of transient) b.destroy();
      }
    });
  }

  /**
   * Runs `work` inside WebGPU's validation and out-of-memory error scopes. An exception `work`
   * throws is rethrown once both scopes are popped; an error either scope caught is thrown as
   * `WebGPU rejected <what>: <message>`, so no rejected command goes unnoticed.
   *
   * @param what describes the work for the error message (called only on error)
   * @param work encodes and submits; may be async (e.g. wait for a mapping)
   * @returns what `work` returns
   * @throws what `work` throws, or Error when WebGPU rejected the work
   */
  async withErrorScopes<T>(what: () => string, work: () => T | Promise<T>): Promise<T> {
    this.device.pushErrorScope("out-of-memory");
    this.device.pushErrorScope("validation");
    let result: T | undefined;
    let failure: { thrown: unknown } | undefined;
    try {
      result = await work();
    } catch (e) {
      failure = { thrown: e };
    }
    const validation = await this.device.popErrorScope();
    const oom = await this.device.popErrorScope();
    if (failure) throw failure.thrown;
    const error = validation ?? oom;
    if (error) throw new Error(`WebGPU rejected ${what()}: ${error.message}`);
    return result as T;
  }

  /**
   * Runs one plan on host arrays: uploads the inputs, dispatches, reads the outputs back, and
   * frees every buffer it made.
   *
   * @param plan the dispatch
   * @param inputs one host array per `input` or `inout` binding, in binding order
   * @returns one host array per `output` or `inout` binding, in binding order
   * @throws LimitError before anything is uploaded when the plan exceeds a device limit
   * @throws Error when an input's type or length does not match its binding
   */
  async run(plan: KernelPlan, inputs: readonly HostArray[]): Promise<HostArray[]> {
    const fed = plan.bindings.filter((b) => b.role !== "output");
    if (inputs.length !== fed.length) {
      throw new Error(
        `${plan.op}: expected ${fed.length} input arrays (${fed.map((b) => b.name).join(", ")}), got ${inputs.length}`,
      );
    }
    const where = `${plan.op}/${plan.kernel.variant}`;
    checkDispatch(this.limits, {
      where,
      workgroups: typeof plan.workgroups === "number" ? [plan.workgroups, 1, 1] : plan.workgroups,
      workgroupSize: workgroupSizeOf(plan.kernel.source, where),
      storage: plan.bindings.map((b) => ({ name: b.name, bytes: allocatedBytes(b.length) })),
    });
    const tensors: GpuTensor[] = [];
    try {
      let next = 0;
      for (const spec of plan.bindings) {
        if (spec.role === "output") {
          tensors.push(
            this.poisonOutputs && !spec.zeroed ? this.#poisoned(spec) : this.alloc(spec.dtype, spec.length, spec.name),
          );
          continue;
        }
        const data = inputs[next++];
        if (dtypeOf(data) !== spec.dtype || data.length !== spec.length) {
          throw new Error(
            `${plan.op}: ${spec.name} must be ${spec.length} ${spec.dtype} elements, got ${data.length} ${
              dtypeOf(data)
            }`,
          );
        }
        tensors.push(this.upload(data, spec.name));
      }
      await this.submit([plan, tensors]);
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

  /** Destroys the device if this library created it; a caller's device is left alone. */
  destroy(): void {
    this.#pipelines.clear();
    if (this.#owned) this.device.destroy();
  }

  #pipeline(op: string, kernel: Resolution): GPUComputePipeline {
    const key = `${op}/${kernel.variant}`;
    const cached = this.#pipelines.get(key);
    if (cached) {
      if (cached.source !== kernel.source) {
        throw new Error(`pipeline cache: ${key} was already compiled from a different source`);
      }
      return cached.pipeline;
    }
    const module = this.device.createShaderModule({ label: key, code: kernel.source });
    const pipeline = this.device.createComputePipeline({
      label: key,
      layout: "auto",
      compute: { module, entryPoint: "main" },
    });
    this.#pipelines.set(key, { source: kernel.source, pipeline });
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

/** Bytes a tensor of `length` 4-byte elements occupies: whole 16-byte units, at least one. */
function allocatedBytes(length: number): number {
  return Math.max(16, Math.ceil((length * 4) / 16) * 16);
}

/**
 * The element type of a host array.
 *
 * @param data a host array
 * @returns its {@link TensorDtype}
 */
export function dtypeOf(data: HostArray): TensorDtype {
  if (data instanceof Float32Array) return "f32";
  if (data instanceof Int32Array) return "i32";
  if (data instanceof Uint32Array) return "u32";
  throw new Error(`expected a Float32Array, Int32Array or Uint32Array, got ${Object.prototype.toString.call(data)}`);
}

/** Limits requested at the adapter's maximum when this library creates the device. */
const REQUESTED_LIMITS = [...GUARDED_LIMITS, "maxComputeWorkgroupStorageSize"] as const;

const OPTIONAL_FEATURES: GPUFeatureName[] = ["shader-f16", "timestamp-query"];

/**
 * Acquires a device: the caller's, or a new one with the adapter's limits and the optional
 * features (shader-f16, timestamp-query) the adapter offers. When shader-f16 is granted, a
 * known-answer f16 kernel runs once and f16 variants are used only if it returns the right values.
 *
 * @param options a device to wrap, or an adapter / power preference to create one from
 * @returns the resident device
 * @throws Error when no adapter is available
 *
 * @example
 * ```ts ignore
 * import { acquireDevice } from "./device.ts";
 * const gpu = await acquireDevice();
 * console.log(gpu.adapter.description, gpu.adapter.target);
 * gpu.destroy();
 * ```
 */
export async function acquireDevice(options: AcquireOptions = {}): Promise<ResidentDevice> {
  if (options.device) {
    const device = options.device;
    const info = device.adapterInfo;
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
  const adapter = options.adapter ??
    await navigator.gpu?.requestAdapter({ powerPreference: options.powerPreference ?? "high-performance" });
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
