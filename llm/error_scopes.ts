/**
 * The error checks of a generation loop kept on the GPU: the host submits step after step without
 * awaiting anything between them (see `TokenRing`), so it cannot await each submission's error
 * scopes as it goes. An {@link ErrorScopeBatch} runs each piece of work in error scopes of its own
 * (the harness's `ResidentDevice.withErrorScopes`: pushed, the work, popped, with no `await` in
 * between), keeps the popped outcome, and examines the kept outcomes in order when the loop asks,
 * before it reads the next ids back: a step WebGPU rejected (a kernel the browser would not compile,
 * a validation error, an allocation out of memory) fails the generate call that submitted it, and no
 * other.
 *
 * @module
 */

import type { ResidentDevice } from "../harness/device.ts";

/**
 * Work run in error scopes now, its outcome examined later (see the module doc).
 *
 * @example A rejected command fails the next check, by the batch's name
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { ErrorScopeBatch } from "@xpu/ops/llm";
 * const gpu = await acquireDevice();
 * const checks = new ErrorScopeBatch(gpu, "my loop");
 * checks.run(() => gpu.device.queue.submit([gpu.device.createCommandEncoder().finish()])); // fine
 * checks.run(() => gpu.device.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE }));
 * const outcome = await checks.check().then(() => "no error", (e) => e.message);
 * // outcome: "WebGPU rejected my loop: ..." (MAP_READ combines with COPY_DST only)
 * await checks.check(); // the batch is empty again: nothing to throw
 * gpu.destroy();
 * ```
 */
export class ErrorScopeBatch {
  /** Names the work in an error's message: `WebGPU rejected <what>: ...`. */
  readonly what: string;
  readonly #gpu: ResidentDevice;
  readonly #checks: Promise<unknown>[] = [];

  /**
   * An empty batch.
   *
   * @param gpu the device the work runs on
   * @param what names the work in an error's message (the caller's name, such as "qwen3 generate")
   * @throws Error when gpu has no withErrorScopes or what is not a string
   */
  constructor(gpu: ResidentDevice, what: string) {
    if (typeof gpu?.withErrorScopes !== "function") {
      throw new Error(`ErrorScopeBatch: gpu must be a ResidentDevice, got ${String(gpu)}`);
    }
    if (typeof what !== "string") throw new Error(`ErrorScopeBatch: what must be a string, got ${String(what)}`);
    this.#gpu = gpu;
    this.what = what;
  }

  /**
   * Runs `work` now, synchronously, in error scopes of its own, and keeps their outcome for
   * {@link check}. An exception `work` throws is kept the same way.
   *
   * @param work encodes and submits, synchronously
   * @throws Error when work is not a function
   */
  run(work: () => void): void {
    if (typeof work !== "function") {
      throw new Error(`ErrorScopeBatch.run: work must be a function, got ${String(work)}`);
    }
    const check = this.#gpu.withErrorScopes(() => this.what, work);
    check.catch(() => {}); // examined by check(), in order
    this.#checks.push(check);
  }

  /**
   * Awaits the outcomes kept since the last check, in the order their work ran, and empties the batch.
   *
   * @returns when every kept outcome was clean
   * @throws the first failure: what its work threw, or Error `WebGPU rejected <what>: <message>` (the
   *   outcomes after it are dropped)
   */
  async check(): Promise<void> {
    for (const check of this.#checks.splice(0)) await check;
  }
}
