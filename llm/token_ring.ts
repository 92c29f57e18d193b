/**
 * The readback half of a generation loop kept on the GPU: each step's sampler (ops/sample's
 * `argmaxTokenPlan` or `sampleTokenPlan`) writes its id to `tokens[step]` on the GPU, the host submits
 * the steps back to back without waiting for any of them, and a {@link TokenRing} copies the ids back
 * in groups through a ring of staging buffers, each group's map overlapping the steps queued after it.
 *
 * The steps' command buffers go through {@link TokenRing.submit} in order, one per token (token 0 is
 * the prompt's, the prefill's). The first token is read alone, as soon as the prompt is done; then
 * `readEvery` tokens at a time (the last group may be shorter); a readback is a copy appended to the
 * command buffer of the group's last step and a `mapAsync` started after its submission. At most
 * `inFlight` readbacks are outstanding, so the host queues at most `inFlight` groups of steps ahead of
 * the ids it has: {@link TokenRing.room} says whether another step may be submitted now.
 *
 * Why groups: a `mapAsync` per token makes the host's next submission wait on it (DESIGN.md: a fence
 * costs ~11 ms of latency on the H200 whatever the work, while fences issued back to back overlap), so
 * a loop that read every id before its next step would be capped near 90 tokens/s on any GPU.
 *
 * @module
 */

import type { GpuTensor } from "../harness/device.ts";
import { requireSize } from "../harness/limits.ts";

/** Options of a {@link TokenRing}. */
export interface TokenRingOptions {
  /** Tokens per readback after the first (default 16). */
  readEvery?: number;
  /** Readbacks outstanding at once: the ring's staging buffers (default 4). */
  inFlight?: number;
}

/** One readback's ids: tokens `[first, first + ids.length)`. */
export interface TokenGroup {
  /** The index of the group's first token (0 for the prompt's). */
  readonly first: number;
  /** The ids the sampler wrote, in order (a marker such as ops/sample's `NONFINITE_LOGITS` included as written). */
  readonly ids: Uint32Array;
}

interface Pending {
  first: number;
  count: number;
  slot: number;
  mapped: Promise<void>;
}

/**
 * The grouping a generation's {@link TokenRing} will use: the options' `readEvery` and `inFlight` with
 * the ring's defaults (16, 4) applied and checked, for a caller that refuses bad options by its own
 * name before it claims anything (the ring itself checks them again when it is made). With
 * `oneAtATime`, for a loop whose host needs each id before it submits the next step (a constraint
 * on the next token, a callback on each step's logits), both are 1 (the options' values, still
 * checked, are not used): one readback per token, none queued ahead.
 *
 * @param where the caller's name, the start of an error's message
 * @param options the caller's options (keys other than readEvery and inFlight are not looked at)
 * @param oneAtATime whether each id is needed before the next step is submitted
 * @returns readEvery and inFlight
 * @throws Error `${where}: readEvery must be an integer >= 1, got ...` (or inFlight)
 *
 * @example
 * ```ts
 * import { tokenRingGrouping } from "@xpu/ops/llm";
 * tokenRingGrouping("generate", {}); // { readEvery: 16, inFlight: 4 }
 * tokenRingGrouping("generate", { readEvery: 4 }, true); // { readEvery: 1, inFlight: 1 }
 * ```
 */
export function tokenRingGrouping(
  where: string,
  options: TokenRingOptions,
  oneAtATime = false,
): Required<TokenRingOptions> {
  const readEvery = requireSize(where, "readEvery", options.readEvery ?? 16, 1);
  const inFlight = requireSize(where, "inFlight", options.inFlight ?? 4, 1);
  return oneAtATime ? { readEvery: 1, inFlight: 1 } : { readEvery, inFlight };
}

/**
 * Reads the ids of a GPU-resident generation loop back in groups (see the module doc).
 *
 * @example Three steps of a sampler that writes its ids on the GPU, submitted without waiting
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { TokenRing } from "@xpu/ops/llm";
 * import { argmaxTokenPlan } from "@xpu/ops/ops/sample";
 * const gpu = await acquireDevice();
 * const plan = argmaxTokenPlan(gpu, { vocab: 4, steps: 3 });
 * const [logits, ids, tokens, state, partial, counter] = plan.bindings.map((b) => gpu.alloc(b.dtype, b.length));
 * const program = gpu.program("argmax", [[plan, [logits, ids, tokens, state, partial, counter]]]);
 * const ring = new TokenRing(gpu.device, tokens, 3, { readEvery: 2 });
 * while (ring.room) {
 *   // The logits of step k (a model's forward would write them on the GPU): the largest at k.
 *   gpu.device.queue.writeBuffer(logits.buffer, 0, new Float32Array(4).map((_, i) => (i === ring.submitted ? 1 : 0)));
 *   const encoder = gpu.device.createCommandEncoder();
 *   program.encode(encoder);
 *   ring.submit(encoder);
 * }
 * const got: number[] = [];
 * while (ring.pending > 0) got.push(...(await ring.read()).ids); // [0], then [1, 2]
 * await ring.destroy();
 * gpu.destroy();
 * ```
 */
export class TokenRing {
  /** Tokens per readback after the first. */
  readonly readEvery: number;
  /** Readbacks outstanding at most. */
  readonly inFlight: number;
  /** Tokens the loop makes (steps submitted at most). */
  readonly maxTokens: number;
  readonly #tokens: GpuTensor;
  readonly #device: GPUDevice;
  readonly #ring: GPUBuffer[] = [];
  readonly #pending: Pending[] = [];
  #submitted = 0;
  #reads = 0;
  #destroyed = false;
  /** The map a `read()` awaits, once it has left the pending list (for `destroy` to wait on). */
  #reading: Promise<void> | undefined;

  /**
   * Makes the ring's staging buffers.
   *
   * @param device the device the steps run on
   * @param tokens where the sampler writes token k's id, u32 with at least `maxTokens` elements
   * @param maxTokens tokens the loop makes
   * @param options readEvery, inFlight
   * @throws Error naming a size that is not an integer >= 1, an unknown option, or a tokens tensor
   *   that is not u32 or holds fewer than maxTokens ids, before anything is allocated
   */
  constructor(device: GPUDevice, tokens: GpuTensor, maxTokens: number, options: TokenRingOptions = {}) {
    if (options === null || typeof options !== "object") {
      throw new Error(`TokenRing: options must be an object ({ readEvery, inFlight }), got ${String(options)}`);
    }
    for (const key of Object.keys(options)) {
      if (key !== "readEvery" && key !== "inFlight") {
        throw new Error(`TokenRing: unknown option "${key}" (expected readEvery, inFlight)`);
      }
    }
    this.maxTokens = requireSize("TokenRing", "maxTokens", maxTokens, 1);
    const grouping = tokenRingGrouping("TokenRing", options);
    this.readEvery = grouping.readEvery;
    this.inFlight = grouping.inFlight;
    if (tokens?.dtype !== "u32" || !(tokens.length >= maxTokens)) {
      throw new Error(
        `TokenRing: tokens must be a u32 tensor of at least maxTokens (${maxTokens}) ids, got ${
          tokens ? `${tokens.length} ${tokens.dtype}` : String(tokens)
        }`,
      );
    }
    this.#device = device;
    this.#tokens = tokens;
    const size = 4 * Math.min(this.readEvery, maxTokens);
    for (let slot = 0; slot < Math.min(this.inFlight, maxTokens); slot++) {
      this.#ring.push(
        device.createBuffer({
          label: `token readback ${slot}`,
          size,
          usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
        }),
      );
    }
  }

  /** Steps submitted so far: the index of the token the next {@link submit} makes. */
  get submitted(): number {
    return this.#submitted;
  }

  /** Readbacks submitted and not yet {@link read}. */
  get pending(): number {
    return this.#pending.length;
  }

  /** Whether another step may be submitted now: tokens remain, and the ring has a free buffer for its group. */
  get room(): boolean {
    return !this.#destroyed && this.#submitted < this.maxTokens && this.#pending.length < this.inFlight;
  }

  /** Whether token k's step ends a readback: the first token, every readEvery-th after it, the last. */
  #endsRead(k: number): boolean {
    return k === 0 || k === this.maxTokens - 1 || k % this.readEvery === 0;
  }

  /**
   * Finishes and submits the command buffer of the next token's step, with the copy of its group's
   * ids when it is the group's last step (whose `mapAsync` starts after the submission).
   *
   * @param encoder the step's commands, ending with the sampler that writes `tokens[k]`
   * @throws Error when there is no room ({@link room}): every token submitted, the ring full, or destroyed
   */
  submit(encoder: GPUCommandEncoder): void {
    if (!this.room) {
      throw new Error(
        this.#destroyed
          ? "TokenRing: submit after destroy()"
          : `TokenRing: no room for another step (${this.#submitted} of ${this.maxTokens} submitted, ` +
            `${this.#pending.length} of ${this.inFlight} readbacks pending: read one first)`,
      );
    }
    const k = this.#submitted++;
    if (!this.#endsRead(k)) {
      this.#device.queue.submit([encoder.finish()]);
      return;
    }
    const first = k === 0 ? 0 : k - ((k - 1) % this.readEvery);
    const count = k - first + 1;
    const slot = this.#reads++ % this.#ring.length;
    const staging = this.#ring[slot];
    const offset = (this.#tokens.offset ?? 0) + 4 * first;
    encoder.copyBufferToBuffer(this.#tokens.buffer, offset, staging, 0, 4 * count);
    this.#device.queue.submit([encoder.finish()]);
    const mapped = staging.mapAsync(GPUMapMode.READ, 0, 4 * count);
    mapped.catch(() => {}); // awaited by read(), or settled by destroy()
    this.#pending.push({ first, count, slot, mapped });
  }

  /**
   * Waits for the oldest readback and returns its ids; its staging buffer is free again.
   *
   * @returns the group
   * @throws Error when no readback is pending, or the map failed (the device lost)
   */
  async read(): Promise<TokenGroup> {
    const head = this.#pending.shift();
    if (!head) throw new Error("TokenRing: read() with no readback pending");
    this.#reading = head.mapped;
    await head.mapped;
    const staging = this.#ring[head.slot];
    const ids = new Uint32Array(staging.getMappedRange(0, 4 * head.count).slice(0));
    staging.unmap();
    return { first: head.first, ids };
  }

  /**
   * Waits for the maps still outstanding (their ids are dropped), a `read()` in progress included, and
   * frees the staging buffers.
   */
  async destroy(): Promise<void> {
    if (this.#destroyed) return;
    this.#destroyed = true;
    await Promise.allSettled([...this.#pending.splice(0).map((p) => p.mapped), this.#reading]);
    for (const b of this.#ring) b.destroy();
  }
}
