import { ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "./testing.ts";
import {
  checkBandwidthKernel,
  checkDp4aKernel,
  checkFmaKernel,
  hasDp4a,
  measureRoofline,
  runtimeVersion,
} from "./roofline.ts";
import { bandwidthSource, dot4I8PackedAdd, dp4aSource, fmaSource } from "./roofline.wgsl.ts";

Deno.test("dot4I8PackedAdd: signed bytes, little-endian, plus the accumulator, wrapping at i32", () => {
  strictEqual(dot4I8PackedAdd(0x04030201, 0x01010101, 0), 1 + 2 + 3 + 4);
  strictEqual(dot4I8PackedAdd(0x000000ff, 0x00000002, 10), -2 + 10); // 0xff is -1, not 255
  strictEqual(dot4I8PackedAdd(0x80808080, 0x80808080, 0), 4 * 128 * 128); // (-128)^2 four times
  strictEqual(dot4I8PackedAdd(0x00000001, 0x00000001, 0x7fffffff), -(2 ** 31)); // wraps
});

Deno.test("kernel generators validate their configs and name the field", async () => {
  await assertThrowsMessage(() => fmaSource({ dtype: "f32", chains: 0, unroll: 4, workgroupSize: 256 }), "chains");
  await assertThrowsMessage(
    () => fmaSource({ dtype: "f32", chains: 8, unroll: 4, workgroupSize: 100 }),
    "multiple of 32",
  );
  await assertThrowsMessage(
    () => bandwidthSource({ kind: "copy", perThread: 1.5, workgroupSize: 256 }),
    "perThread must be an integer",
  );
  await assertThrowsMessage(() => dp4aSource({ chains: 8, unroll: 65, workgroupSize: 256 }), "unroll");
});

Deno.test("the FMA kernel has chains x unroll steps in its loop and a store guarded by all chains", () => {
  const src = fmaSource({ dtype: "f32", chains: 3, unroll: 5, workgroupSize: 64 });
  strictEqual(src.match(/= fma\(/g)?.length, 15);
  ok(src.includes("vec4f(c0) + vec4f(c1) + vec4f(c2)"));
  ok(src.includes("params.threshold"));
});

gpuTest("roofline: bandwidth kernels pass their known-answer checks (copy, read, write)", async (gpu) => {
  for (const kind of ["copy", "read", "write"] as const) {
    for (const perThread of [1, 3]) await checkBandwidthKernel(gpu, { kind, perThread, workgroupSize: 64 });
  }
});

gpuTest("roofline: FMA and DP4a kernels pass their known-answer checks", async (gpu) => {
  await checkFmaKernel(gpu, { dtype: "f32", chains: 3, unroll: 2, workgroupSize: 64 });
  await checkFmaKernel(gpu, { dtype: "f32", chains: 8, unroll: 4, workgroupSize: 256 });
  if (gpu.f16Verified) await checkFmaKernel(gpu, { dtype: "f16", chains: 3, unroll: 2, workgroupSize: 64 });
  if (hasDp4a()) await checkDp4aKernel(gpu, { chains: 3, unroll: 2, workgroupSize: 64 });
});

gpuTest("roofline: a kernel that does less than it is credited with fails its check", async (gpu) => {
  // One chain step fewer per iteration: the flop count would be overstated.
  const fma = { dtype: "f32" as const, chains: 2, unroll: 2, workgroupSize: 64 };
  const lazyFma = fmaSource(fma).replace("c1 = fma(c1, a, b);", "");
  await assertThrowsMessage(() => checkFmaKernel(gpu, fma, lazyFma), "known-answer check failed");
  // x * b + a instead of x * a + b.
  const swapped = fmaSource(fma).replaceAll("fma(c0, a, b)", "fma(c0, b, a)");
  await assertThrowsMessage(() => checkFmaKernel(gpu, fma, swapped), "known-answer check failed");
  // A read kernel that skips its second load.
  const read = { kind: "read" as const, perThread: 2, workgroupSize: 64 };
  const lazyRead = bandwidthSource(read).replace(/acc \+= src\[i\];(?![\s\S]*acc \+= src\[i\];)/, "");
  await assertThrowsMessage(() => checkBandwidthKernel(gpu, read, lazyRead), "known-answer check failed");
  if (hasDp4a()) {
    const dp4a = { chains: 2, unroll: 2, workgroupSize: 64 };
    const lazyDp4a = dp4aSource(dp4a).replace("c1 = dot4I8Packed(bitcast<u32>(c1), b) + c1;", "");
    await assertThrowsMessage(() => checkDp4aKernel(gpu, dp4a, lazyDp4a), "known-answer check failed");
  }
});

gpuTest("measureRoofline: small probes give positive, stamped figures", async (gpu) => {
  const r = await measureRoofline(gpu, { size: "small", bandwidthBytes: 4 * 2 ** 20, targetMs: 4, samples: 5 }, {
    bandwidth: [{ kind: "copy", perThread: 4, workgroupSize: 256 }],
    fma: [{ dtype: "f32", chains: 4, unroll: 4, workgroupSize: 256 }],
    fmaF16: [{ dtype: "f16", chains: 4, unroll: 4, workgroupSize: 256 }],
    dp4a: [{ chains: 8, unroll: 4, workgroupSize: 256 }],
  });
  ok(r.bandwidthGBps > 0 && r.computeTFLOPs > 0, `${r.bandwidthGBps} GB/s, ${r.computeTFLOPs} TFLOP/s`);
  strictEqual(r.adapter.description, gpu.adapter.description);
  strictEqual(r.runtime, runtimeVersion());
  ok(r.runtime.startsWith("deno "));
  ok(!Number.isNaN(Date.parse(r.date)));
  strictEqual(r.computeF16TFLOPs === null, !gpu.f16Verified);
  strictEqual(r.dp4aTOPS === null, !hasDp4a());
  for (const p of r.probes) ok(p.figure > 0 && p.samples === 5 && p.ms > 0, p.kernel);
  const copy = r.probes.find((p) => p.probe === "bandwidth")!;
  strictEqual(copy.bytes, 2 * 4 * 2 ** 20); // copy counts the read and the write
});
