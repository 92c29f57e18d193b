/**
 * The pieces every Qwen3 program is made of: a step (a plan and the tensors it binds, what
 * `gpu.program` takes) and the tensors a program allocates for itself, freed with it.
 *
 * @module
 */

import type { GpuTensor, KernelPlan, ResidentDevice, TensorDtype } from "../../harness/device.ts";

/** One dispatch of a program: a plan and its tensors, in the plan's binding order. */
export type Step = readonly [KernelPlan, readonly GpuTensor[]];

/** Tensors allocated for one program (activations, scratch, its inputs), destroyed together. */
export class Workspace {
  readonly #gpu: ResidentDevice;
  readonly #tensors: GpuTensor[] = [];

  /** @param gpu the device the tensors are allocated on */
  constructor(gpu: ResidentDevice) {
    this.#gpu = gpu;
  }

  /**
   * Allocates a zero-filled tensor owned by this workspace.
   *
   * @param dtype element type
   * @param length elements
   * @param label a debugging label
   * @returns the tensor
   */
  alloc(dtype: TensorDtype, length: number, label: string): GpuTensor {
    const t = this.#gpu.alloc(dtype, length, label);
    this.#tensors.push(t);
    return t;
  }

  /**
   * Uploads a host array into a tensor owned by this workspace.
   *
   * @param data the values
   * @param label a debugging label
   * @returns the tensor
   */
  upload(data: Float32Array | Int32Array | Uint32Array, label: string): GpuTensor {
    const t = this.#gpu.upload(data, label);
    this.#tensors.push(t);
    return t;
  }

  /** Bytes of the tensors allocated so far. */
  get bytes(): number {
    return this.#tensors.reduce((s, t) => s + t.buffer.size, 0);
  }

  /** Destroys every tensor of the workspace. */
  destroy(): void {
    for (const t of this.#tensors.splice(0)) t.buffer.destroy();
  }
}
