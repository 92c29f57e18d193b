/**
 * A forward pass written as a list of op plans over resident tensors, bound once into a
 * {@link Program} and replayed. A component appends its dispatches with {@link Graph.add}, naming
 * each plan's bindings (`{ x, weight, out }`), so a plan's binding order is the op's business.
 *
 * Scratch tensors come from a pool keyed by dtype and length: {@link Graph.scope} returns the
 * tensors a sub-computation took to the pool when it ends (all but the ones it returns), and later
 * steps reuse them. That is safe because a program's dispatches run in order in one compute pass
 * and WebGPU makes each one's writes visible to the next: a buffer is rewritten only after every
 * step that reads its earlier value. A 52-block forward therefore holds a few blocks' worth of
 * activations, not 52.
 *
 * @module
 */

import type { GpuTensor, KernelPlan, ResidentDevice, TensorDtype } from "../../harness/device.ts";
import type { Program } from "../../harness/program.ts";

/**
 * Dispatches over resident tensors, and the scratch tensors they use.
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { activationPlan } from "@xpu/ops/ops/activation";
 * import { Graph } from "@xpu/ops/models/anima";
 * const gpu = await acquireDevice();
 * const g = new Graph(gpu, "silu twice");
 * const x = gpu.upload(new Float32Array([-1, 0, 1, 2]));
 * const once = g.tensor(4), twice = g.tensor(4);
 * g.add(activationPlan(gpu, { kind: "silu", n: 4 }), { x, out: once });
 * g.add(activationPlan(gpu, { kind: "silu", n: 4 }), { x: once, out: twice });
 * const program = g.program();
 * await program.run();
 * console.log(await gpu.read(twice));
 * program.destroy();
 * g.destroy();
 * gpu.destroy();
 * ```
 */
export class Graph {
  /** The device. */
  readonly gpu: ResidentDevice;
  /** What the graph computes, for messages. */
  readonly name: string;
  /** The dispatches, in order. */
  readonly steps: [KernelPlan, GpuTensor[]][] = [];
  readonly #pool = new Map<string, GpuTensor[]>();
  readonly #allocated: GpuTensor[] = [];
  readonly #scopes: Set<GpuTensor>[] = [];
  readonly #unused = new Map<number, GpuTensor>();
  readonly #pinned = new Set<GpuTensor>();

  /**
   * An empty graph.
   *
   * @param gpu the device
   * @param name what the graph computes
   */
  constructor(gpu: ResidentDevice, name: string) {
    this.gpu = gpu;
    this.name = name;
  }

  /** Bytes of the scratch tensors allocated so far. */
  get scratchBytes(): number {
    return this.#allocated.reduce((s, t) => s + 4 * t.length, 0);
  }

  /**
   * A scratch tensor: a pooled one of this dtype and length, or a new one. Its contents are
   * whatever an earlier step left there.
   *
   * @param length elements
   * @param dtype element type
   * @returns the tensor, owned by the current scope
   */
  tensor(length: number, dtype: TensorDtype = "f32"): GpuTensor {
    const free = this.#pool.get(`${dtype}:${length}`);
    let t = free?.pop();
    if (!t) {
      t = this.gpu.alloc(dtype, length, `${this.name} scratch`);
      this.#allocated.push(t);
    }
    this.#scopes.at(-1)?.add(t);
    return t;
  }

  /**
   * A tensor for a binding an op leaves unused: zero-length (a norm without weight) or a
   * placeholder element (attention without a mask).
   *
   * @param length the binding's length
   */
  unused(length = 0): GpuTensor {
    let t = this.#unused.get(length);
    if (!t) {
      t = this.gpu.alloc("f32", length, `${this.name} unused`);
      this.#unused.set(length, t);
    }
    return t;
  }

  /**
   * Keeps a scratch tensor out of the pool for good (its value is read after the program runs:
   * an output, or an intermediate a test inspects).
   *
   * @param t the tensor
   */
  pin(t: GpuTensor): void {
    this.#pinned.add(t);
  }

  /**
   * Returns scratch tensors to the pool (pinned ones excepted); a later step may overwrite them.
   *
   * @param tensors tensors taken with {@link tensor}
   */
  release(...tensors: GpuTensor[]): void {
    for (const t of tensors) {
      for (const s of this.#scopes) s.delete(t);
      if (this.#pinned.has(t)) continue;
      const key = `${t.dtype}:${t.length}`;
      const free = this.#pool.get(key) ?? [];
      if (free.includes(t)) throw new Error(`${this.name}: a scratch tensor was released twice`);
      free.push(t);
      this.#pool.set(key, free);
    }
  }

  /**
   * Runs `fn`; the scratch tensors it takes go back to the pool when it returns, except those it
   * returns, which pass to the enclosing scope.
   *
   * @param fn builds some steps
   * @returns what `fn` returns
   */
  scope<T extends GpuTensor | readonly GpuTensor[]>(fn: () => T): T {
    const taken = new Set<GpuTensor>();
    this.#scopes.push(taken);
    let result: T;
    try {
      result = fn();
    } finally {
      this.#scopes.pop();
    }
    const kept = new Set<GpuTensor>(Array.isArray(result) ? result : [result as GpuTensor]);
    for (const t of taken) {
      if (kept.has(t)) this.#scopes.at(-1)?.add(t);
      else this.release(t);
    }
    return result;
  }

  /**
   * Appends a dispatch.
   *
   * @param plan the op's plan
   * @param tensors a tensor for each of the plan's bindings: by binding name, or all of them in
   *   binding order (as a dispatch made elsewhere, models/linear.ts's, lists them)
   * @throws Error naming a binding with no tensor, or a tensor that names no binding
   */
  add(plan: KernelPlan, tensors: Record<string, GpuTensor> | readonly GpuTensor[]): void {
    const names = plan.bindings.map((b) => b.name);
    if (Array.isArray(tensors)) {
      if (tensors.length !== names.length) {
        throw new Error(
          `${this.name}: ${plan.op} takes ${names.length} tensors (${names.join(", ")}), was given ${tensors.length}`,
        );
      }
      this.steps.push([plan, [...tensors]]);
      return;
    }
    const named = tensors as Record<string, GpuTensor>;
    for (const key of Object.keys(named)) {
      if (!names.includes(key)) {
        throw new Error(`${this.name}: ${plan.op} has no binding "${key}" (it has ${names.join(", ")})`);
      }
    }
    this.steps.push([
      plan,
      plan.bindings.map((b) => {
        const t = named[b.name];
        if (!t) throw new Error(`${this.name}: ${plan.op}'s binding "${b.name}" was given no tensor`);
        return t;
      }),
    ]);
  }

  /**
   * Binds steps into a program (checked once, replayed by `run()`): all of them, or those in
   * `[from, to)` (a segment run between host writes, as a streamed block).
   *
   * @param from the first step
   * @param to one past the last step
   * @returns the program; destroy it, then the graph
   */
  program(from = 0, to: number = this.steps.length): Program {
    const name = from === 0 && to === this.steps.length ? this.name : `${this.name} [${from}, ${to})`;
    return this.gpu.program(name, this.steps.slice(from, to));
  }

  /** Frees every scratch tensor the graph allocated (inputs and weights are the caller's). */
  destroy(): void {
    for (const t of this.#allocated) t.buffer.destroy();
    for (const t of this.#unused.values()) t.buffer.destroy();
    this.#unused.clear();
    this.#allocated.length = 0;
    this.#pool.clear();
  }
}
