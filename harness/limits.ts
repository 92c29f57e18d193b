/**
 * The limits guard: a dispatch or binding that would exceed a device limit throws before anything
 * is encoded. WebGPU reports such a mistake as a validation error that is otherwise silent (the
 * readback is zeros), so the check names the limit, the value asked for and the op.
 *
 * @module
 */

/** The limits the guard reads (a subset of `GPUSupportedLimits`). */
export interface GuardedLimits {
  /** Workgroups per dispatch dimension. */
  maxComputeWorkgroupsPerDimension: number;
  /** Invocations per workgroup (product of the workgroup size). */
  maxComputeInvocationsPerWorkgroup: number;
  /** Workgroup size in x. */
  maxComputeWorkgroupSizeX: number;
  /** Workgroup size in y. */
  maxComputeWorkgroupSizeY: number;
  /** Workgroup size in z. */
  maxComputeWorkgroupSizeZ: number;
  /** Bytes one storage binding may span. */
  maxStorageBufferBindingSize: number;
  /** Bytes one buffer may hold. */
  maxBufferSize: number;
  /** Storage bindings one shader stage may use. */
  maxStorageBuffersPerShaderStage: number;
}

/**
 * The bytes one storage binding may span on a device: the smaller of maxStorageBufferBindingSize
 * and maxBufferSize (a binding lies in one buffer).
 *
 * @param limits the device's limits (`gpu.limits`, lowered ones included)
 * @returns bytes
 *
 * @example
 * ```ts
 * import { bindingBytes } from "@xpu/ops/harness";
 * bindingBytes({ maxStorageBufferBindingSize: 128 << 20, maxBufferSize: 256 << 20 }); // 134217728
 * ```
 */
export function bindingBytes(limits: Pick<GuardedLimits, "maxStorageBufferBindingSize" | "maxBufferSize">): number {
  return Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize);
}

/**
 * Thrown when a dispatch would exceed a device limit.
 *
 * @example
 * ```ts
 * import { checkDispatch, LimitError } from "@xpu/ops/harness";
 * const limits = {
 *   maxComputeWorkgroupsPerDimension: 65535,
 *   maxComputeInvocationsPerWorkgroup: 256,
 *   maxComputeWorkgroupSizeX: 256,
 *   maxComputeWorkgroupSizeY: 256,
 *   maxComputeWorkgroupSizeZ: 64,
 *   maxStorageBufferBindingSize: 128 << 20,
 *   maxBufferSize: 256 << 20,
 *   maxStorageBuffersPerShaderStage: 8,
 * };
 * try {
 *   checkDispatch(limits, { where: "demo/main", workgroups: [70000, 1, 1], workgroupSize: [64, 1, 1], storage: [] });
 * } catch (e) {
 *   if (!(e instanceof LimitError)) throw e;
 *   e.limit; // "maxComputeWorkgroupsPerDimension"
 *   e.requested; // 70000
 * }
 * ```
 */
export class LimitError extends Error {
  /** The limit's WebGPU name. */
  readonly limit: string;
  /** The value the dispatch asked for. */
  readonly requested: number;
  /** The device's value of the limit. */
  readonly allowed: number;
  /**
   * Builds the message from the dispatch, the limit, the value asked for and the device's value.
   *
   * @param where `op/entry` of the dispatch
   * @param limit the limit's WebGPU name
   * @param requested the value asked for
   * @param allowed the device's limit
   * @param what what the value is, e.g. "binding 0 (x)"
   */
  constructor(where: string, limit: string, requested: number, allowed: number, what: string) {
    super(`${where}: ${what} needs ${limit} >= ${requested}, but this device allows ${allowed}`);
    this.name = "LimitError";
    this.limit = limit;
    this.requested = requested;
    this.allowed = allowed;
  }
}

/** The shape of a dispatch, as the guard sees it. */
export interface DispatchShape {
  /** `op/entry`, for messages. */
  where: string;
  /** Workgroup counts, x, y, z. */
  workgroups: readonly [number, number, number];
  /** `@workgroup_size` of the entry point, x, y, z. */
  workgroupSize: readonly [number, number, number];
  /** Byte size and name of every storage binding. */
  storage: readonly { name: string; bytes: number }[];
}

/**
 * Checks a dispatch against device limits.
 *
 * @param limits the device's limits
 * @param shape the dispatch
 * @throws LimitError naming the first limit exceeded
 * @throws Error when a workgroup count or a binding's bytes is not a non-negative integer, or a
 *   workgroup size not a positive one (NaN would pass every comparison with a limit)
 *
 * @example
 * ```ts
 * import { acquireDevice, checkDispatch } from "@xpu/ops/harness";
 * const gpu = await acquireDevice();
 * // Passes silently: 1024 workgroups of 64 over one 256 KiB binding fit every adapter's limits.
 * checkDispatch(gpu.limits, {
 *   where: "demo/main",
 *   workgroups: [1024, 1, 1],
 *   workgroupSize: [64, 1, 1],
 *   storage: [{ name: "x", bytes: 65536 * 4 }],
 * });
 * gpu.destroy();
 * ```
 */
export function checkDispatch(limits: GuardedLimits, shape: DispatchShape): void {
  const { where, workgroups, workgroupSize, storage } = shape ?? {};
  if (!Array.isArray(storage)) {
    throw new Error(`${where ?? "checkDispatch"}: storage must be an array of { name, bytes }, got ${String(storage)}`);
  }
  if (
    !Array.isArray(workgroups) || !Array.isArray(workgroupSize) || workgroups.length !== 3 || workgroupSize.length !== 3
  ) {
    throw new Error(`${where}: workgroups and @workgroup_size must each have three dimensions`);
  }
  for (const [i, n] of workgroupSize.entries()) requireSize(where, `@workgroup_size ${"xyz"[i]}`, n, 1);
  for (const [i, b] of storage.entries()) requireSize(where, `binding ${i} (${b.name}) bytes`, b.bytes, 0);
  for (const [i, n] of workgroups.entries()) {
    if (!Number.isInteger(n) || n < 0) {
      throw new Error(`${where}: workgroup count ${"xyz"[i]} must be a non-negative integer, got ${n}`);
    }
    if (n > limits.maxComputeWorkgroupsPerDimension) {
      throw new LimitError(
        where,
        "maxComputeWorkgroupsPerDimension",
        n,
        limits.maxComputeWorkgroupsPerDimension,
        `dispatch dimension ${"xyz"[i]}`,
      );
    }
  }
  const sizeLimits = [
    "maxComputeWorkgroupSizeX",
    "maxComputeWorkgroupSizeY",
    "maxComputeWorkgroupSizeZ",
  ] as const;
  for (const [i, key] of sizeLimits.entries()) {
    if (workgroupSize[i] > limits[key]) {
      throw new LimitError(where, key, workgroupSize[i], limits[key], "@workgroup_size");
    }
  }
  const invocations = workgroupSize[0] * workgroupSize[1] * workgroupSize[2];
  if (invocations > limits.maxComputeInvocationsPerWorkgroup) {
    throw new LimitError(
      where,
      "maxComputeInvocationsPerWorkgroup",
      invocations,
      limits.maxComputeInvocationsPerWorkgroup,
      "@workgroup_size",
    );
  }
  if (storage.length > limits.maxStorageBuffersPerShaderStage) {
    throw new LimitError(
      where,
      "maxStorageBuffersPerShaderStage",
      storage.length,
      limits.maxStorageBuffersPerShaderStage,
      "storage bindings",
    );
  }
  for (const [i, b] of storage.entries()) {
    if (b.bytes > limits.maxStorageBufferBindingSize) {
      throw new LimitError(
        where,
        "maxStorageBufferBindingSize",
        b.bytes,
        limits.maxStorageBufferBindingSize,
        `binding ${i} (${b.name})`,
      );
    }
    if (b.bytes > limits.maxBufferSize) {
      throw new LimitError(where, "maxBufferSize", b.bytes, limits.maxBufferSize, `binding ${i} (${b.name})`);
    }
  }
}

/**
 * Reads `@workgroup_size(x[, y[, z]])` of the compute entry point `main` from WGSL source.
 *
 * @param source WGSL text with one `@compute @workgroup_size(...)` declaration using literals
 * @param where `op/entry`, for messages
 * @returns the workgroup size, x, y, z
 * @throws Error when the declaration is missing or not made of integer literals
 *
 * @example
 * ```ts
 * import { workgroupSizeOf } from "@xpu/ops/harness";
 * workgroupSizeOf("@compute @workgroup_size(64, 4) fn main() {}", "demo/main"); // [64, 4, 1]
 * ```
 */
export function workgroupSizeOf(source: string, where: string): [number, number, number] {
  if (typeof source !== "string") {
    throw new Error(`${where}: source must be WGSL text (a string), got ${source === null ? "null" : typeof source}`);
  }
  const m = /@workgroup_size\(\s*(\d+)u?\s*(?:,\s*(\d+)u?\s*)?(?:,\s*(\d+)u?\s*)?\)/.exec(source);
  if (!m) {
    throw new Error(`${where}: no @workgroup_size(<integer literals>) in the kernel source (source must be WGSL text)`);
  }
  return [Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1)];
}

/**
 * Bytes of workgroup memory a WGSL source declares: the sum over its `var<workgroup>` arrays (nested
 * to any depth) of f32, u32, i32, vec4f or vec4u, each length a product of integer literals and
 * module-scope `const`s (themselves such products). The source is the one truth a plan checks
 * against the device's maxComputeWorkgroupStorageSize ({@link requireWorkgroupStorage}).
 *
 * @param source WGSL text
 * @param where `op/entry`, for messages
 * @returns bytes
 * @throws Error naming `where` for a `var<workgroup>` this cannot size
 *
 * @example
 * ```ts
 * import { workgroupBytesOf } from "@xpu/ops/harness";
 * const wgsl = "const STEP = 16u;\nvar<workgroup> a_t: array<array<vec4f, 32>, STEP>;";
 * workgroupBytesOf(wgsl, "demo/main"); // 8192
 * ```
 */
export function workgroupBytesOf(source: string, where: string): number {
  if (typeof source !== "string") {
    throw new Error(`${where}: source must be WGSL text (a string), got ${source === null ? "null" : typeof source}`);
  }
  const consts = new Map<string, number>();
  const product = (expr: string) =>
    expr.split("*").map((factor) => factor.trim()).reduce((result, factor) => {
      const value = /^\d+u?$/.test(factor) ? parseInt(factor) : consts.get(factor);
      if (value === undefined) throw new Error(`${where}: cannot size the workgroup array length ${expr}`);
      return result * value;
    }, 1);
  const sizeOf = (type: string): number => {
    const array = type.match(/^array<(.+), ([\w\s*]+)>$/);
    if (array) return sizeOf(array[1]) * product(array[2]);
    const bytes = ({ f32: 4, u32: 4, i32: 4, vec4f: 16, vec4u: 16 } as Record<string, number>)[type];
    if (bytes === undefined) throw new Error(`${where}: workgroup memory of element type ${type} is not sized`);
    return bytes;
  };
  for (const [, name, expr] of source.matchAll(/^const (\w+) = ([\w\s*]+);/gm)) consts.set(name, product(expr));
  const arrays = [...source.matchAll(/var<workgroup> \w+: (array<.+>);/g)];
  if (arrays.length !== [...source.matchAll(/var<workgroup>/g)].length) {
    throw new Error(`${where}: a var<workgroup> that is not an array of sized elements`);
  }
  return arrays.reduce((total, [, type]) => total + sizeOf(type), 0);
}

/**
 * Throws before dispatch when a kernel needs more workgroup memory than the device grants.
 *
 * @param gpu the device (its `device.limits.maxComputeWorkgroupStorageSize`)
 * @param where `op/variant`, for the message
 * @param bytes workgroup memory the kernel declares ({@link workgroupBytesOf})
 * @throws LimitError naming maxComputeWorkgroupStorageSize
 *
 * @example
 * ```ts
 * import { acquireDevice, requireWorkgroupStorage } from "@xpu/ops/harness";
 * const gpu = await acquireDevice();
 * requireWorkgroupStorage(gpu, "demo/main", 16384); // passes: every device grants 16 KiB
 * gpu.destroy();
 * ```
 */
export function requireWorkgroupStorage(
  gpu: { device: { limits: { maxComputeWorkgroupStorageSize: number } } },
  where: string,
  bytes: number,
): void {
  const allowed = gpu.device.limits.maxComputeWorkgroupStorageSize;
  if (bytes > allowed) {
    throw new LimitError(where, "maxComputeWorkgroupStorageSize", bytes, allowed, "workgroup memory");
  }
}

/**
 * Splits a count of workgroups that may exceed the per-dimension limit into x and y, so that
 * `x * y >= count` and both stay within the limit. Kernels fold the id back with
 * `id.x + id.y * num_workgroups.x` (times the workgroup size) and bound-check against the count.
 *
 * @param count workgroups needed
 * @param maxPerDimension the device's maxComputeWorkgroupsPerDimension
 * @param where the op asking, for messages (default `foldWorkgroups`)
 * @returns [x, y, 1]
 * @throws Error when `count` is not a non-negative integer or `maxPerDimension` not a positive one
 * @throws LimitError when `count` exceeds `maxPerDimension` squared
 *
 * @example
 * ```ts
 * import { foldWorkgroups } from "@xpu/ops/harness";
 * foldWorkgroups(1000, 65535); // [1000, 1, 1]
 * foldWorkgroups(100000, 65535); // [50000, 2, 1]
 * ```
 */
export function foldWorkgroups(count: number, maxPerDimension: number, where?: string): [number, number, number] {
  requireSize(where ?? "foldWorkgroups", "count", count, 0);
  requireSize(where ?? "foldWorkgroups", "maxPerDimension", maxPerDimension, 1);
  if (count <= maxPerDimension) return [count, 1, 1];
  if (count > maxPerDimension * maxPerDimension) {
    // Folded into x and y, each dimension would need the square root of the count.
    throw new LimitError(
      where ?? "foldWorkgroups",
      "maxComputeWorkgroupsPerDimension",
      Math.ceil(Math.sqrt(count)),
      maxPerDimension,
      `a grid of ${count} workgroups, even folded into two dimensions,`,
    );
  }
  const y = Math.ceil(count / maxPerDimension);
  return [Math.ceil(count / y), y, 1];
}

/**
 * Requires an integer of at least `min`: NaN, a fraction or a negative size would otherwise pass
 * every `>` comparison with a limit and reach the GPU.
 *
 * @param where who asks, for the message
 * @param name the size
 * @param value the value given
 * @param min the least allowed value
 * @returns the value
 * @throws Error naming the size, the bound and the value
 */
export function requireSize(where: string, name: string, value: number, min: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new Error(`${where}: ${name} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}
