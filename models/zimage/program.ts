/**
 * A model's forward as one replayable recording: dispatches (plans with their tensors) and row
 * copies between tensors, in order. Consecutive dispatches are bound once into a {@link Program}
 * (one compute pass per run); a copy (`copyBufferToBuffer`, which is not a kernel) ends the pass
 * and runs between two. Everything is checked and bound when the recording is made; a run only
 * encodes and submits.
 *
 * @module
 */

import type { GpuTensor, KernelPlan, ResidentDevice } from "../../harness/device.ts";
import type { BoundDispatch, Program } from "../../harness/program.ts";

/** A copy of `length` elements from `src` at element `srcOffset` to `dst` at `dstOffset`. */
export interface Copy {
  /** The tensor read. */
  src: GpuTensor;
  /** First element read. */
  srcOffset: number;
  /** The tensor written. */
  dst: GpuTensor;
  /** First element written. */
  dstOffset: number;
  /** Elements copied. */
  length: number;
}

/** A dispatch of a recording, with what it computes for messages (a layer's name). */
export interface Dispatch {
  /** The plan. */
  plan: KernelPlan;
  /** Its tensors, in binding order. */
  tensors: readonly GpuTensor[];
  /** What it computes, e.g. `layers.3.feed_forward.w1`; named when binding it fails. */
  label?: string;
}

/** One step of a recording: a dispatch, or a copy. */
export type Step = { dispatch: Dispatch } | { copy: Copy };

/** The steps of a forward, appended in order by the blocks that make them. */
export class Steps {
  /** The steps so far. */
  readonly list: Step[] = [];

  /**
   * Appends a dispatch.
   *
   * @param plan the plan
   * @param tensors its tensors, in binding order
   * @param label what it computes, named when binding it fails (e.g. a layer's checkpoint name)
   * @returns this
   */
  run(plan: KernelPlan, tensors: readonly GpuTensor[], label?: string): this {
    this.list.push({ dispatch: { plan, tensors, label } });
    return this;
  }

  /**
   * Appends a dispatch made elsewhere (a Linear layer's product, models/linear.ts).
   *
   * @param dispatch the plan, its tensors in binding order, and what it computes
   * @returns this
   */
  dispatch(dispatch: Dispatch): this {
    this.list.push({ dispatch });
    return this;
  }

  /**
   * Appends a copy of `length` elements.
   *
   * @param src read from here
   * @param srcOffset first element read
   * @param dst written here
   * @param dstOffset first element written
   * @param length elements
   * @returns this
   */
  copy(src: GpuTensor, srcOffset: number, dst: GpuTensor, dstOffset: number, length: number): this {
    this.list.push({ copy: { src, srcOffset, dst, dstOffset, length } });
    return this;
  }
}

type Segment = { program: Program } | { copy: Copy };

function checkCopy(c: Copy, name: string): void {
  const ok = (t: GpuTensor, offset: number) =>
    Number.isInteger(offset) && offset >= 0 && Number.isInteger(c.length) && c.length >= 0 &&
    offset + c.length <= t.length;
  if (c.src === c.dst || c.src.buffer === c.dst.buffer) throw new Error(`${name}: a copy within one tensor`);
  if (!ok(c.src, c.srcOffset) || !ok(c.dst, c.dstOffset)) {
    throw new Error(
      `${name}: copy of ${c.length} elements from ${c.srcOffset} of ${c.src.length} to ${c.dstOffset} of ${c.dst.length} ` +
        `is out of range`,
    );
  }
  if (c.src.dtype !== c.dst.dtype) throw new Error(`${name}: copy from ${c.src.dtype} to ${c.dst.dtype}`);
}

/**
 * A recording bound once: dispatches grouped into programs, copies between them.
 *
 * @example
 * ```ts
 * import { acquireDevice, elementwisePlan } from "@xpu/ops";
 * import { Recording, Steps } from "@xpu/ops/models/zimage";
 * const gpu = await acquireDevice();
 * const [a, b, sum, wide] = [
 *   gpu.upload(new Float32Array([1, 2])), gpu.upload(new Float32Array([3, 4])), gpu.alloc("f32", 2), gpu.alloc("f32", 4),
 * ];
 * const steps = new Steps().run(elementwisePlan(gpu, { op: "add", n: 2 }), [a, b, sum]).copy(sum, 0, wide, 2, 2);
 * const recording = new Recording(gpu, "add then place", steps.list);
 * await recording.run();
 * console.log(await gpu.read(wide)); // Float32Array [0, 0, 4, 6]
 * recording.destroy();
 * gpu.destroy();
 * ```
 */
export class Recording {
  /** What it computes, for messages. */
  readonly name: string;
  readonly #gpu: ResidentDevice;
  readonly #segments: Segment[] = [];

  /**
   * Checks and binds every step.
   *
   * @param gpu the device
   * @param name what it computes
   * @param steps the steps, in order
   * @throws Error naming the step that does not fit (its label, and the binding and limit as
   *   {@link ResidentDevice.bind} names them), or a copy out of range
   */
  constructor(gpu: ResidentDevice, name: string, steps: readonly Step[]) {
    this.#gpu = gpu;
    this.name = name;
    let run: BoundDispatch[] = [];
    const flush = () => {
      if (run.length > 0) this.#segments.push({ program: gpu.program(`${name} ${this.#segments.length}`, run) });
      run = [];
    };
    try {
      for (const step of steps) {
        if ("copy" in step) {
          checkCopy(step.copy, name);
          flush();
          this.#segments.push({ copy: step.copy });
          continue;
        }
        const { plan, tensors, label } = step.dispatch;
        try {
          run.push(gpu.bind(plan, tensors));
        } catch (e) {
          throw new Error(`${name}: ${label ? `${label}: ` : ""}${(e as Error).message}`, { cause: e });
        }
      }
      flush();
    } catch (e) {
      for (const b of run) b.uniform?.destroy();
      this.destroy();
      throw e;
    }
  }

  /** Dispatches in the recording. */
  get dispatches(): number {
    return this.#segments.reduce((n, s) => n + ("program" in s ? s.program.steps.length : 0), 0);
  }

  /** Its programs, in order (the copies between them apart): what a profile times dispatch by dispatch. */
  get programs(): Program[] {
    return this.#segments.flatMap((s) => "program" in s ? [s.program] : []);
  }

  /**
   * Records the steps into `encoder`.
   *
   * @param encoder the command encoder
   */
  encode(encoder: GPUCommandEncoder): void {
    for (const s of this.#segments) {
      if ("program" in s) s.program.encode(encoder);
      else {
        const { src, srcOffset, dst, dstOffset, length } = s.copy;
        if (length > 0) encoder.copyBufferToBuffer(src.buffer, 4 * srcOffset, dst.buffer, 4 * dstOffset, 4 * length);
      }
    }
  }

  /**
   * Runs the recording: one command buffer, inside the device's error scopes.
   *
   * @throws Error when WebGPU rejects the work, naming the recording
   */
  async run(): Promise<void> {
    await this.#gpu.withErrorScopes(() => `recording "${this.name}" (${this.dispatches} dispatches)`, () => {
      const encoder = this.#gpu.device.createCommandEncoder();
      this.encode(encoder);
      this.#gpu.device.queue.submit([encoder.finish()]);
    });
  }

  /** Frees the programs' params uniforms; the tensors are the caller's. */
  destroy(): void {
    for (const s of this.#segments) if ("program" in s) s.program.destroy();
  }
}
