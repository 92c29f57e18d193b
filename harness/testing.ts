/**
 * Test helpers shared by every op's tests (Deno-only: reads files and the environment).
 *
 * GPU tests decide once, here, whether they can run: with no adapter they are ignored with the
 * reason printed, except under `CI=true`, where a missing adapter is a failing test, never a skip.
 *
 * @module
 */

import { acquireDevice, type AcquireOptions, type KernelPlan, ResidentDevice } from "./device.ts";
import { packParams } from "./params.ts";
import { parseVariantName, variantsOf } from "./variants.ts";

const adapter = await navigator.gpu?.requestAdapter({ powerPreference: "high-performance" }) ?? null;
const inCI = Deno.env.get("CI") === "true";

/** Whether a WebGPU adapter is present in this process. */
export const hasAdapter: boolean = adapter !== null;

let shared: Promise<ResidentDevice> | undefined;

/**
 * The device shared by the GPU tests of one test module (created on first use). It poisons outputs
 * ({@link ResidentDevice.poisonOutputs}), so an unwritten element or a write past the end fails.
 *
 * @param options passed to {@link acquireDevice} on first use
 * @returns the shared device
 */
export function testDevice(options: AcquireOptions = {}): Promise<ResidentDevice> {
  shared ??= acquireDevice({ adapter: adapter ?? undefined, ...options }).then((gpu) => {
    gpu.poisonOutputs = true;
    return gpu;
  });
  return shared;
}

/**
 * Registers a test that needs a GPU. Without an adapter it is ignored (and says so), except under
 * `CI=true`, where it fails.
 *
 * @param name test name
 * @param fn the test body, given the shared device
 */
export function gpuTest(name: string, fn: (gpu: ResidentDevice) => Promise<void> | void): void {
  if (!hasAdapter && inCI) {
    Deno.test(name, () => {
      throw new Error("CI=true but no WebGPU adapter was found: GPU tests cannot be skipped in CI");
    });
    return;
  }
  Deno.test({
    name: hasAdapter ? name : `${name} (ignored: no WebGPU adapter)`,
    ignore: !hasAdapter,
    sanitizeResources: false,
    sanitizeOps: false,
    fn: async () => await fn(await testDevice()),
  });
}

/**
 * A device for planning only, no GPU behind it: plans resolve their entry point to its portable
 * variant (or the override), and see the target and the workgroup memory given here, 65,535
 * workgroups a dimension and 1 GiB bindings. Running anything on it fails.
 *
 * @param workgroupStorage the maxComputeWorkgroupStorageSize it grants (default 16 KiB)
 * @param target the adapter's target (none by default)
 * @returns the device
 */
export function planningDevice(workgroupStorage = 16384, target?: string): ResidentDevice {
  return {
    adapter: { target },
    resolve: (sources: Record<string, string>, entry: string, options: { override?: string } = {}) => {
      const variant = options.override ?? entry;
      return { variant, source: sources[variant], rung: "portable", tried: [variant] };
    },
    resolveAmong: ResidentDevice.prototype.resolveAmong,
    limits: { maxComputeWorkgroupsPerDimension: 65535, maxStorageBufferBindingSize: 2 ** 30, maxBufferSize: 2 ** 30 },
    device: { limits: { maxComputeWorkgroupStorageSize: workgroupStorage } },
  } as unknown as ResidentDevice;
}

/** Absolute and relative tolerance: |a - e| <= atol + rtol * |e|. */
export interface Tolerance {
  atol: number;
  rtol: number;
}

/**
 * Asserts two arrays agree elementwise within tolerance (exactly, for integer arrays with zero
 * tolerance). NaN matches only NaN; infinities must match exactly. Reports the worst element.
 *
 * @param actual values under test
 * @param expected values to match
 * @param tol tolerance
 * @param label what is compared, for the message
 * @throws Error on a length mismatch or an element outside tolerance
 */
export function assertClose(
  actual: ArrayLike<number>,
  expected: ArrayLike<number>,
  tol: Tolerance,
  label = "values",
): void {
  if (actual.length !== expected.length) {
    throw new Error(`${label}: length ${actual.length}, expected ${expected.length}`);
  }
  let worst = -1;
  let worstExcess = 0;
  for (let i = 0; i < actual.length; i++) {
    const a = actual[i], e = expected[i];
    if (Number.isNaN(e) || !Number.isFinite(e)) {
      if (!Object.is(a, e) && !(Number.isNaN(a) && Number.isNaN(e))) {
        throw new Error(`${label}: element ${i} is ${a}, expected ${e}`);
      }
      continue;
    }
    const excess = Math.abs(a - e) - (tol.atol + tol.rtol * Math.abs(e));
    if (!(excess <= 0) && (worst < 0 || !(excess <= worstExcess))) {
      worst = i;
      worstExcess = excess;
    }
  }
  if (worst >= 0) {
    const a = actual[worst], e = expected[worst];
    throw new Error(
      `${label}: element ${worst} is ${a}, expected ${e} (|diff| ${
        Math.abs(a - e)
      } > atol ${tol.atol} + rtol ${tol.rtol} * |expected|)`,
    );
  }
}

/**
 * Asserts that `fn` throws (or rejects) with a message matching `pattern`.
 *
 * @param fn the call expected to fail
 * @param pattern what the message must contain or match
 */
export async function assertThrowsMessage(fn: () => unknown, pattern: RegExp | string): Promise<void> {
  let error: unknown;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  if (!(error instanceof Error)) throw new Error(`expected an Error matching ${pattern}, but nothing was thrown`);
  const ok = typeof pattern === "string" ? error.message.includes(pattern) : pattern.test(error.message);
  if (!ok) throw new Error(`expected an Error matching ${pattern}, got: ${error.message}`);
}

/**
 * Iterates every variant of an entry point (portable first), as read from the op's generated
 * kernel sources, so a new variant file is tested without anyone extending a list.
 * `unguardedOps` checks that each entry point with variants is iterated by a test.
 *
 * @param sources the op's kernel sources
 * @param entry the entry point
 * @param fn called with each variant name
 */
export function eachVariant<V extends string>(
  sources: Readonly<Record<V, string>>,
  entry: string,
  fn: (variant: V) => void,
): void {
  for (const variant of variantsOf(sources, entry)) fn(variant);
}

/** A test case for {@link checkAgainstReference}. */
export interface ReferenceCase<A> {
  /** What the case is, e.g. `"rows=3 cols=257"`. */
  label: string;
  /** Arguments given to both the reference and the GPU entry point. */
  args: A;
}

/**
 * Registers one GPU test per variant of `entry` that runs every case through the GPU entry point
 * (with that variant as override) and compares it with the reference.
 *
 * @param op op name, for test names
 * @param sources the op's kernel sources
 * @param entry the entry point under test
 * @param cases the inputs
 * @param reference the reference function
 * @param kernel the GPU entry point, given the variant to force
 * @param tol the tolerance (or a function of the case's arguments giving it), with its reason stated where
 *   the test is written
 */
export function checkAgainstReference<A, V extends string = string>(
  op: string,
  sources: Readonly<Record<V, string>>,
  entry: string,
  cases: readonly ReferenceCase<A>[],
  reference: (args: A) => ArrayLike<number>,
  kernel: (gpu: ResidentDevice, args: A, options: { override: V }) => Promise<ArrayLike<number>>,
  tol: Tolerance | ((args: A) => Tolerance),
): void {
  eachVariant(sources, entry, (variant) => {
    gpuTest(`${op}: ${variant} matches the reference`, async (gpu) => {
      for (const { label, args } of cases) {
        const expected = reference(args);
        const actual = await kernel(gpu, args, { override: variant });
        assertClose(actual, expected, typeof tol === "function" ? tol(args) : tol, `${op}/${variant} ${label}`);
      }
    });
  });
}

/**
 * A seeded pseudo-random generator (mulberry32): the same seed gives the same inputs everywhere.
 *
 * @param seed any 32-bit integer
 * @returns a function returning uniform values in [0, 1)
 */
export function seededRandom(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Uniform random f32 values in [lo, hi).
 *
 * @param length number of values
 * @param seed generator seed
 * @param lo lower bound
 * @param hi upper bound
 * @returns the values
 */
export function randomF32(length: number, seed: number, lo = -1, hi = 1): Float32Array {
  const next = seededRandom(seed);
  return Float32Array.from({ length }, () => lo + (hi - lo) * next());
}

/**
 * Uniform random integers in [lo, hi).
 *
 * @param length number of values
 * @param seed generator seed
 * @param lo lower bound (inclusive)
 * @param hi upper bound (exclusive)
 * @returns the values
 */
export function randomInt32(length: number, seed: number, lo: number, hi: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length }, () => lo + Math.floor((hi - lo) * next()));
}

/**
 * Reads a golden fixture (JSON written by a generator script beside it).
 *
 * @param url the fixture's URL, e.g. `new URL("./goldens/softmax.json", import.meta.url)`
 * @returns the parsed fixture
 */
export async function loadGolden<T>(url: URL): Promise<T> {
  return JSON.parse(await Deno.readTextFile(url)) as T;
}

/**
 * A float as a golden generator writes it: a number, or Python's `str()` of a non-finite float, since
 * JSON has no NaN or Infinity.
 */
export type GoldenFloat = number | "nan" | "inf" | "-inf";

/**
 * The f32 values of a golden list that may hold non-finite floats (see {@link GoldenFloat}).
 *
 * @param values numbers, `"nan"`, `"inf"` or `"-inf"`
 * @returns the values as f32
 * @throws Error on any other string
 */
export function goldenF32(values: readonly GoldenFloat[]): Float32Array {
  const named: Record<string, number> = { nan: NaN, inf: Infinity, "-inf": -Infinity };
  return Float32Array.from(values, (v, i) => {
    if (typeof v === "number") return v;
    if (!(v in named)) {
      throw new Error(`golden value ${i} is ${JSON.stringify(v)}: a number, "nan", "inf" or "-inf" expected`);
    }
    return named[v];
  });
}

/**
 * Asserts that every named operand holds a NaN, a +Infinity and a -Infinity, so a test of non-finite
 * input cannot pass on inputs that lost them.
 *
 * @param operands the inputs by name
 * @throws Error naming the operand and the value it lacks
 */
export function assertNonFiniteOperands(operands: Record<string, ArrayLike<number>>): void {
  for (const [name, values] of Object.entries(operands)) {
    const xs = Array.from(values);
    for (
      const [what, has] of [["NaN", Number.isNaN], ["+Infinity", (v: number) => v === Infinity], [
        "-Infinity",
        (v: number) => v === -Infinity,
      ]] as const
    ) {
      if (!xs.some(has)) throw new Error(`operand ${name} holds no ${what}: the non-finite test lost its input`);
    }
  }
}

/**
 * Entry points under `opsDir` that have variants beyond the portable kernel but that no test file
 * of the op iterates with `eachVariant(<sources>, "<entry>", …)` or `checkAgainstReference(…,
 * "<entry>", …)`. A tuned variant that no test holds to the reference is the failure the variant
 * axis is designed against. Snippets in `wgsl/include/` are not variants and are not counted.
 *
 * @param opsDir the `ops/` directory
 * @returns `op/entry` strings, empty when everything is guarded
 */
export async function unguardedOps(opsDir: URL): Promise<string[]> {
  const unguarded: string[] = [];
  for await (const op of Deno.readDir(opsDir)) {
    if (!op.isDirectory) continue;
    const dir = new URL(`${op.name}/`, opsDir);
    const files = [...Deno.readDirSync(dir)].map((f) => f.name);
    if (!files.includes("wgsl")) continue;
    const variants = new Map<string, number>();
    for await (const f of Deno.readDir(new URL("wgsl/", dir))) {
      // Only plain files directly in wgsl/ are kernels; wgsl/include/ holds snippets (harness/gen.ts).
      if (!f.isFile || !f.name.endsWith(".wgsl")) continue;
      const { entry } = parseVariantName(f.name);
      variants.set(entry, (variants.get(entry) ?? 0) + 1);
    }
    let tests = "";
    for await (const f of Deno.readDir(dir)) {
      if (f.name.endsWith(".test.ts")) tests += await Deno.readTextFile(new URL(f.name, dir));
    }
    for (const [entry, count] of variants) {
      if (count < 2) continue;
      const iterated = new RegExp(
        String
          .raw`(?:eachVariant\(\s*\w+\s*,|checkAgainstReference(?:<[^>]*>)?\(\s*(?:"[^"]*"|\x60[^\x60]*\x60)\s*,\s*\w+\s*,)\s*"${entry}"`,
      );
      if (!iterated.test(tests)) unguarded.push(`${op.name}/${entry}`);
    }
  }
  return unguarded.sort();
}

/**
 * The harness's own tests' kernel (harness/ knows no op): `out[i] = 2 * x[i]` for `i < params.n`,
 * 64 invocations a workgroup.
 */
export const DOUBLE_WGSL = `struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<f32>;
@group(0) @binding(2) var<uniform> params: Params;
@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3u) {
  if (id.x < params.n) { out[id.x] = 2.0 * x[id.x]; }
}`;

/**
 * A plan of {@link DOUBLE_WGSL} (or a variant of its source) over `n` floats.
 *
 * @param n elements
 * @param source the kernel's source (a test may break it on purpose)
 * @param variant the variant name the plan reports
 * @returns the plan, op "double"
 */
export function doublePlan(n: number, source: string = DOUBLE_WGSL, variant = "kernel"): KernelPlan {
  return {
    op: "double",
    kernel: { variant, source, rung: "portable", tried: [variant] },
    bindings: [
      { name: "x", dtype: "f32", length: n, role: "input" },
      { name: "out", dtype: "f32", length: n, role: "output" },
    ],
    params: packParams([{ name: "n", type: "u32" }], { n }, "double"),
    workgroups: Math.ceil(n / 64),
    cost: { bytes: 8 * n, flops: n },
  };
}
