/**
 * Bound dispatches and programs: what engines and models replay.
 *
 * {@link ResidentDevice.bind} checks a plan against its tensors and the device's limits once and
 * makes its pipeline (from the device's one pipeline cache), params uniform and bind group once; a
 * {@link Program} is a list of such dispatches encoded in order into one compute pass per run (a
 * new pass only where a dispatch's `zeroed` bindings must be cleared first). Running a program
 * again validates and allocates nothing: it records the same dispatches into a new command buffer,
 * so a model's forward is built once and replayed every step, on whatever its input tensors hold.
 *
 * @module
 */

import { DeviceLostError, type GpuTensor, type KernelPlan, type ResidentDevice } from "./device.ts";

/** A plan bound to its tensors by {@link ResidentDevice.bind}: ready to encode, nothing left to check. */
export interface BoundDispatch {
  /** The plan. */
  readonly plan: KernelPlan;
  /** Its tensors, one per binding. */
  readonly tensors: readonly GpuTensor[];
  /** The compiled pipeline (from the device's pipeline cache). */
  readonly pipeline: GPUComputePipeline;
  /** The bind group: the tensors, then the params uniform if any. */
  readonly bindGroup: GPUBindGroup;
  /** Workgroup counts, checked against the device's limits. */
  readonly workgroups: readonly [number, number, number];
  /** Tensors of `zeroed` bindings (their buffers, or a view's range), cleared before the dispatch's pass. */
  readonly cleared: readonly GpuTensor[];
  /** The params uniform the bind made (destroyed with its program). */
  readonly uniform?: GPUBuffer;
}

/**
 * Encodes bound dispatches in order: consecutive ones share a compute pass (WebGPU makes each one's
 * writes visible to the next), and a new pass begins where a dispatch clears a `zeroed` binding.
 * Timestamp writes span them all: the beginning is written by the first pass, the end by the last.
 * A pipeline is set only where it differs from the previous dispatch's in the pass.
 *
 * @param encoder the command encoder to record into
 * @param steps the dispatches
 * @param timestampWrites optional timestamp writes: the start of the first pass, the end of the last
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { encodeBound } from "@xpu/ops/harness";
 * import { softmaxPlan } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2, 3])), out = gpu.alloc("f32", 3);
 * const program = gpu.program("softmax", [[softmaxPlan(gpu, { rows: 1, cols: 3 }), [x, out]]]);
 * const encoder = gpu.device.createCommandEncoder();
 * encodeBound(encoder, program.steps); // one compute pass; an engine adds its own work to the same encoder
 * gpu.device.queue.submit([encoder.finish()]);
 * await gpu.read(out);
 * gpu.destroy();
 * ```
 */
export function encodeBound(
  encoder: GPUCommandEncoder,
  steps: readonly BoundDispatch[],
  timestampWrites?: GPUComputePassTimestampWrites,
): void {
  const lastPassStart = steps.findLastIndex((step, i) => i === 0 || step.cleared.length > 0);
  const writesFor = (i: number): GPUComputePassDescriptor => {
    if (!timestampWrites) return {};
    const { querySet, beginningOfPassWriteIndex: begin, endOfPassWriteIndex: end } = timestampWrites;
    const writes: GPUComputePassTimestampWrites = { querySet };
    if (i === 0 && begin !== undefined) writes.beginningOfPassWriteIndex = begin;
    if (i === lastPassStart && end !== undefined) writes.endOfPassWriteIndex = end;
    return writes.beginningOfPassWriteIndex === undefined && writes.endOfPassWriteIndex === undefined
      ? {}
      : { timestampWrites: writes };
  };
  let pass: GPUComputePassEncoder | undefined;
  let pipeline: GPUComputePipeline | undefined;
  for (const [i, step] of steps.entries()) {
    if (step.cleared.length > 0) {
      pass?.end();
      pass = undefined;
      for (const t of step.cleared) {
        if (t.offset === undefined) encoder.clearBuffer(t.buffer);
        else encoder.clearBuffer(t.buffer, t.offset, 4 * t.length);
      }
    }
    if (!pass) {
      pass = encoder.beginComputePass(writesFor(i));
      pipeline = undefined;
    }
    if (step.pipeline !== pipeline) pass.setPipeline(pipeline = step.pipeline);
    pass.setBindGroup(0, step.bindGroup);
    const [x, y, z] = step.workgroups;
    if (x > 0 && y > 0 && z > 0) pass.dispatchWorkgroups(x, y, z);
  }
  pass?.end();
}

/**
 * Dispatches bound once and replayed: made by {@link ResidentDevice.program}.
 *
 * @example
 * ```ts
 * import { acquireDevice, softmaxPlan } from "@xpu/ops";
 * const gpu = await acquireDevice();
 * const x = gpu.upload(new Float32Array([1, 2, 3]));
 * const out = gpu.alloc("f32", 3);
 * const program = gpu.program("softmax", [[softmaxPlan(gpu, { rows: 1, cols: 3 }), [x, out]]]);
 * await program.run(); // validated and bound once, above; each run only encodes and submits
 * gpu.device.queue.writeBuffer(x.buffer, 0, new Float32Array([0, 0, 0]));
 * await program.run();
 * console.log(await gpu.read(out)); // Float32Array [0.333.., 0.333.., 0.333..]
 * program.destroy();
 * gpu.destroy();
 * ```
 */
export class Program {
  /** What the program computes, for messages. */
  readonly name: string;
  /** Its dispatches, in order. */
  readonly steps: readonly BoundDispatch[];
  readonly #gpu: ResidentDevice;
  #destroyed = false;

  /** @internal Use {@link ResidentDevice.program}. */
  constructor(gpu: ResidentDevice, name: string, steps: readonly BoundDispatch[]) {
    this.#gpu = gpu;
    this.name = name;
    this.steps = steps;
  }

  /** The least the program's dispatches must do: the sum of their plans' bytes and FLOPs. */
  get cost(): { bytes: number; flops: number } {
    let bytes = 0, flops = 0;
    for (const { plan } of this.steps) {
      bytes += plan.cost.bytes;
      flops += plan.cost.flops;
    }
    return { bytes, flops };
  }

  /**
   * Records the program into `encoder` (for a caller that submits it with other work).
   *
   * @param encoder the command encoder
   * @param timestampWrites optional timestamp writes for the pass (GPU timing)
   * @throws Error after {@link destroy}, or when the device is lost
   */
  encode(encoder: GPUCommandEncoder, timestampWrites?: GPUComputePassTimestampWrites): void {
    this.#usable();
    encodeBound(encoder, this.steps, timestampWrites);
  }

  /**
   * Runs the program: one command buffer, submitted inside the device's error scopes, so a
   * WebGPU error (a tensor destroyed since the bind, out of memory) is thrown here, naming the
   * program, never read back as zeros.
   *
   * @throws Error after {@link destroy}, when the device is lost, or when WebGPU rejects the work
   */
  async run(): Promise<void> {
    this.#usable();
    await this.#gpu.withErrorScopes(
      () => `program "${this.name}" (${this.steps.length} dispatches: ${this.#ops()})`,
      () => {
        const encoder = this.#gpu.device.createCommandEncoder();
        encodeBound(encoder, this.steps);
        this.#gpu.device.queue.submit([encoder.finish()]);
      },
    );
  }

  /** Frees the params uniforms the program's binds made; its tensors are the caller's. */
  destroy(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    for (const step of this.steps) step.uniform?.destroy();
  }

  #usable(): void {
    if (this.#destroyed) throw new Error(`program "${this.name}" was destroyed`);
    const lost = this.#gpu.lost;
    if (lost !== undefined) {
      throw new DeviceLostError(lost, `program "${this.name}"`);
    }
  }

  #ops(): string {
    const counts = new Map<string, number>();
    for (const { plan } of this.steps) {
      const key = `${plan.op}/${plan.kernel.variant}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([k, n]) => n > 1 ? `${k} x${n}` : k).join(", ");
  }
}
