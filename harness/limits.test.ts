import { deepStrictEqual, strictEqual } from "node:assert/strict";
import {
  bindingBytes,
  checkDispatch,
  foldWorkgroups,
  type GuardedLimits,
  LimitError,
  requireWorkgroupStorage,
  workgroupBytesOf,
  workgroupSizeOf,
} from "./limits.ts";
import { assertThrowsMessage } from "./testing.ts";

const limits: GuardedLimits = {
  maxComputeWorkgroupsPerDimension: 65535,
  maxComputeInvocationsPerWorkgroup: 256,
  maxComputeWorkgroupSizeX: 256,
  maxComputeWorkgroupSizeY: 256,
  maxComputeWorkgroupSizeZ: 64,
  maxStorageBufferBindingSize: 134217728,
  maxBufferSize: 268435456,
  maxStorageBuffersPerShaderStage: 8,
};
const ok = {
  where: "demo/kernel",
  workgroups: [1, 1, 1] as const,
  workgroupSize: [256, 1, 1] as const,
  storage: [{ name: "x", bytes: 1024 }],
};

Deno.test("checkDispatch names the limit, the value asked for and the op", async () => {
  checkDispatch(limits, ok);
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, workgroups: [1, 102400, 1] }),
    "demo/kernel: dispatch dimension y needs maxComputeWorkgroupsPerDimension >= 102400, but this device allows 65535",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, storage: [{ name: "x", bytes: 4 }, { name: "w", bytes: 134217732 }] }),
    "binding 1 (w) needs maxStorageBufferBindingSize >= 134217732",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, workgroupSize: [16, 32, 1] }),
    "maxComputeInvocationsPerWorkgroup >= 512",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, workgroupSize: [1, 1, 65] }),
    "maxComputeWorkgroupSizeZ",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, storage: Array.from({ length: 9 }, (_, i) => ({ name: `b${i}`, bytes: 4 })) }),
    "maxStorageBuffersPerShaderStage >= 9",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, workgroups: [1.5, 1, 1] }),
    "must be a non-negative integer",
  );
  const error = (() => {
    try {
      checkDispatch(limits, { ...ok, workgroups: [70000, 1, 1] });
    } catch (e) {
      return e;
    }
  })();
  strictEqual(error instanceof LimitError, true);
  deepStrictEqual([(error as LimitError).limit, (error as LimitError).requested, (error as LimitError).allowed], [
    "maxComputeWorkgroupsPerDimension",
    70000,
    65535,
  ]);
});

Deno.test("foldWorkgroups covers the count within the per-dimension limit", () => {
  deepStrictEqual(foldWorkgroups(100, 65535), [100, 1, 1]);
  deepStrictEqual(foldWorkgroups(65535, 65535), [65535, 1, 1]);
  for (const count of [65536, 102400, 65535 * 65535]) {
    const [x, y] = foldWorkgroups(count, 65535);
    strictEqual(x <= 65535 && y <= 65535, true, `count ${count}: ${x} x ${y}`);
    strictEqual(x * y >= count && x * (y - 1) < count, true, `count ${count}: ${x} x ${y} covers it tightly`);
  }
});

Deno.test("workgroupSizeOf reads @workgroup_size literals", async () => {
  deepStrictEqual(workgroupSizeOf("@compute @workgroup_size(256) fn main() {}", "w"), [256, 1, 1]);
  deepStrictEqual(workgroupSizeOf("@compute @workgroup_size(8, 32u) fn main() {}", "w"), [8, 32, 1]);
  deepStrictEqual(workgroupSizeOf("@compute @workgroup_size( 4 , 4 , 2 ) fn main() {}", "w"), [4, 4, 2]);
  await assertThrowsMessage(
    () => workgroupSizeOf("@compute @workgroup_size(WG) fn main() {}", "op/k"),
    "op/k: no @workgroup_size",
  );
});

Deno.test("workgroupBytesOf sizes flat and nested var<workgroup> arrays from literals and consts, and refuses what it cannot", async () => {
  const consts = "const STEP = 16u;\nconst LANES = 32u;\n";
  strictEqual(workgroupBytesOf(consts + "var<workgroup> a: array<vec4f, 2u * STEP * LANES>;", "w"), 16384);
  strictEqual(workgroupBytesOf(consts + "var<workgroup> b: array<array<array<vec4f, LANES>, STEP>, 2>;", "w"), 16384);
  strictEqual(
    workgroupBytesOf("var<workgroup> p: array<vec4f, 2112>;\nvar<workgroup> s: array<f32, 3>;", "w"),
    2112 * 16 + 12,
  );
  strictEqual(workgroupBytesOf("fn main() {}", "w"), 0);
  await assertThrowsMessage(
    () => workgroupBytesOf("var<workgroup> a: array<vec4f, ROWS>;", "op/k"),
    "op/k: cannot size the workgroup array length ROWS",
  );
  await assertThrowsMessage(
    () => workgroupBytesOf("var<workgroup> a: array<mat4x4f, 2>;", "op/k"),
    "op/k: workgroup memory of element type mat4x4f is not sized",
  );
  await assertThrowsMessage(() => workgroupBytesOf("var<workgroup> n: atomic<u32>;", "op/k"), "op/k: a var<workgroup>");
});

Deno.test("requireWorkgroupStorage refuses more than the device grants, as a LimitError; bindingBytes is the smaller limit", async () => {
  const gpu = { device: { limits: { maxComputeWorkgroupStorageSize: 16384 } } };
  requireWorkgroupStorage(gpu, "op/k", 16384);
  await assertThrowsMessage(
    () => requireWorkgroupStorage(gpu, "op/k", 16385),
    "op/k: workgroup memory needs maxComputeWorkgroupStorageSize >= 16385, but this device allows 16384",
  );
  strictEqual(bindingBytes({ maxStorageBufferBindingSize: 4096, maxBufferSize: 8192 }), 4096);
  strictEqual(bindingBytes({ maxStorageBufferBindingSize: 4096, maxBufferSize: 1024 }), 1024);
});

Deno.test("foldWorkgroups refuses a count that cannot fit even in two dimensions, as a LimitError naming the op", async () => {
  await assertThrowsMessage(
    () => foldWorkgroups(65535 * 65535 + 1, 65535),
    "foldWorkgroups: a grid of 4294836226 workgroups, even folded into two dimensions, needs maxComputeWorkgroupsPerDimension >= 65536, but this device allows 65535",
  );
  let error: LimitError | undefined;
  try {
    foldWorkgroups(2 ** 40, 65535, "channelNorm");
  } catch (e) {
    if (e instanceof LimitError) error = e;
  }
  strictEqual(error?.message.startsWith("channelNorm: "), true, String(error));
  deepStrictEqual([error.limit, error.requested, error.allowed], ["maxComputeWorkgroupsPerDimension", 2 ** 20, 65535]);
});

Deno.test("checkDispatch and foldWorkgroups refuse NaN, fractional and negative sizes", async () => {
  // NaN passes every `>` comparison with a limit, so it must be refused by name.
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, workgroupSize: [NaN, 1, 1] }),
    "demo/kernel: @workgroup_size x must be an integer >= 1, got NaN",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, workgroupSize: [64, 0, 1] }),
    "demo/kernel: @workgroup_size y must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, storage: [{ name: "x", bytes: NaN }] }),
    "demo/kernel: binding 0 (x) bytes must be an integer >= 0, got NaN",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, storage: [{ name: "x", bytes: -16 }] }),
    "demo/kernel: binding 0 (x) bytes must be an integer >= 0, got -16",
  );
  await assertThrowsMessage(
    () => checkDispatch(limits, { ...ok, workgroups: [NaN, 1, 1] }),
    "demo/kernel: workgroup count x must be a non-negative integer, got NaN",
  );
  for (const count of [NaN, -1, 2.5]) {
    await assertThrowsMessage(
      () => foldWorkgroups(count, 65535),
      `foldWorkgroups: count must be an integer >= 0, got ${count}`,
    );
  }
  for (const max of [NaN, 0, -5]) {
    await assertThrowsMessage(
      () => foldWorkgroups(10, max),
      `foldWorkgroups: maxPerDimension must be an integer >= 1, got ${max}`,
    );
  }
});

Deno.test("the size helpers refuse what is not their argument, naming it", async () => {
  await assertThrowsMessage(() => workgroupSizeOf(undefined as never, "op/k"), "op/k: source must be WGSL text");
  await assertThrowsMessage(
    () => checkDispatch(limits, { where: "op/k", workgroups: null as never, workgroupSize: [1, 1, 1], storage: [] }),
    "op/k: workgroups and @workgroup_size must each have three dimensions",
  );
});
