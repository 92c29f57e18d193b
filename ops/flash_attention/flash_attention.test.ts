import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { LimitError } from "../../harness/limits.ts";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  planningDevice,
} from "../../harness/testing.ts";
import { requireWorkgroupStorage } from "../../harness/limits.ts";
import { attentionPlan } from "../attention/mod.ts";
import { boundBytes, gpuTolerance, loadSdpaGolden, mha, randomCase } from "../attention/testing_helpers.ts";
import { cases } from "./cases.ts";
import {
  columnsPerWorkgroup,
  flashAttention,
  flashAttentionGpu,
  flashAttentionPlan,
  KERNELS,
  NARROW_MAX_DV,
  rowsPerWorkgroup,
  validateFlashAttentionShape,
  visiblePairs,
  workgroupBytes,
} from "./mod.ts";

const f32 = (xs: number[]) => new Float32Array(xs);
const goldenUrl = new URL("./goldens/flash_attention.json", import.meta.url);
const mask = (s: [number, number, number, number]) => s;

Deno.test("flashAttention: the score matrix is never bound: 132n + 80 bytes at L = S = n, D = Dv = 8, against attention's 4n^2 + 132n + 96", () => {
  const gpu = planningDevice();
  for (const n of [16, 100, 1000, 4096]) {
    const shape = { B: 1, H: 1, L: n, S: n, D: 8, maskShape: [1, 1, 1, n] as [number, number, number, number] };
    const flash = boundBytes([flashAttentionPlan(gpu, shape)]);
    strictEqual(flash, 132 * n + 80, `flash n = ${n}`);
    const { scores, weightedSum } = attentionPlan(gpu, shape);
    strictEqual(boundBytes([scores, weightedSum]), 4 * n * n + 132 * n + 96, `unfused n = ${n}`);
  }
  // Linear in n: doubling n doubles the n-dependent part exactly.
  const at = (n: number) => boundBytes([flashAttentionPlan(gpu, { B: 1, H: 1, L: n, S: n, D: 8 })]);
  strictEqual(at(2048) - at(1024), at(1024) - at(512) + 128 * 512);
});

Deno.test("flashAttention: the plan takes `tiled` (47,104 bytes of workgroup memory), `staged` (32 KiB) or `kernel` (16 KiB), the first the device grants; `wide` (25,600) for Dv over 256", async () => {
  strictEqual(workgroupBytes(KERNELS.kernel), 16384); // WebGPU's default maxComputeWorkgroupStorageSize
  strictEqual(workgroupBytes(KERNELS.staged), 32768);
  strictEqual(workgroupBytes(KERNELS.tiled), 47104);
  const shape = { B: 1, H: 1, L: 1, S: 1, D: 4 };
  for (
    const [storage, variant] of [
      [16384, "kernel"],
      [32767, "kernel"],
      [32768, "staged"],
      [41983, "staged"],
      [41984, "buffered"],
      [49152, "buffered"], // the H100 and H200: never tiled unless named
    ] as const
  ) {
    strictEqual(flashAttentionPlan(planningDevice(storage), shape).kernel.variant, variant, `${storage} bytes`);
  }
  // Dv > NARROW_MAX_DV (256): `wide` wherever its 25,600 bytes are granted, so at Dv = 384 and 512
  // (the VAEs' single heads); at Dv = 256 the 128-column kernels as above.
  strictEqual(NARROW_MAX_DV, 256);
  for (
    const [storage, Dv, variant] of [
      [49152, 512, "wide"],
      [32768, 384, "wide"],
      [25600, 260, "wide"],
      [25599, 512, "kernel"],
      [49152, 256, "buffered"],
      [32768, 256, "staged"],
    ] as const
  ) {
    const plan = flashAttentionPlan(planningDevice(storage), { ...shape, D: 512, Dv });
    strictEqual(plan.kernel.variant, variant, `${storage} bytes, Dv = ${Dv}`);
  }
  strictEqual(flashAttentionPlan(planningDevice(49152), shape, { override: "wide" }).kernel.variant, "wide");
  // tiled: only when named (47,104 bytes; buffered, 41,984, is the same kernel measured faster).
  strictEqual(workgroupBytes(KERNELS.buffered), 41984);
  strictEqual(flashAttentionPlan(planningDevice(49152), shape, { override: "tiled" }).kernel.variant, "tiled");
  strictEqual(flashAttentionPlan(planningDevice(49152), shape, { override: "kernel" }).kernel.variant, "kernel");
  strictEqual(flashAttentionPlan(planningDevice(49152), shape, { override: "staged" }).kernel.variant, "staged");
  for (
    const [storage, override, needed] of [[32768, "tiled", 47104], [16384, "staged", 32768], [
      8192,
      "kernel",
      16384,
    ]] as const
  ) {
    let thrown: unknown;
    try {
      flashAttentionPlan(planningDevice(storage), shape, { override });
    } catch (e) {
      thrown = e;
    }
    ok(thrown instanceof LimitError && thrown.limit === "maxComputeWorkgroupStorageSize", String(thrown));
    ok(thrown.message.includes(`needs maxComputeWorkgroupStorageSize >= ${needed}, but this device allows ${storage}`));
  }
  requireWorkgroupStorage(planningDevice(49152), "x", 49152);
  await assertThrowsMessage(
    () => flashAttentionPlan(planningDevice(), shape, { override: "scores" as never }),
    'flashAttention: override "scores" is not a variant of entry point "wide" or "buffered" or "staged" or "kernel" or "tiled"',
  );
});

Deno.test("flashAttention: the grid follows the kernel's rows per workgroup", () => {
  strictEqual(rowsPerWorkgroup(KERNELS.kernel), 128);
  strictEqual(rowsPerWorkgroup(KERNELS.staged), 128);
  strictEqual(rowsPerWorkgroup(KERNELS.tiled), 128);
  for (const entry of ["tiled", "buffered", "staged", "kernel"] as const) {
    strictEqual(rowsPerWorkgroup(KERNELS[entry]), 128);
    strictEqual(columnsPerWorkgroup(KERNELS[entry]), 128);
  }
  // 3 row tiles x 6 (b, h) pairs, two column tiles of 128 for Dv = 132.
  const shape = { B: 2, H: 3, L: 300, S: 5, D: 4, Dv: 132 };
  deepStrictEqual(flashAttentionPlan(planningDevice(49152), shape).workgroups, [18, 1, 2]);
  // wide: 10 row tiles of 32 x 6 pairs, one column tile of 512 for Dv = 512, two for 516.
  deepStrictEqual(flashAttentionPlan(planningDevice(49152), { ...shape, Dv: 512 }).workgroups, [60, 1, 1]);
  deepStrictEqual(flashAttentionPlan(planningDevice(49152), { ...shape, Dv: 516 }).workgroups, [60, 1, 2]);
  throws(() => rowsPerWorkgroup("fn main() {}"), /declares no `const ROWS`/);
  throws(() => columnsPerWorkgroup("const ROWS = 4u;"), /declares no `const COLS`/);
});

Deno.test("flashAttention: FLOPs count visible pairs: 2·B·H·L·S·D for causal prefill at D = Dv (the issue's count), twice that without", () => {
  const gpu = planningDevice();
  const shape = { B: 1, H: 32, L: 4096, S: 4096, D: 128 };
  const causal = flashAttentionPlan(gpu, { ...shape, causal: true }).cost.flops;
  const full = flashAttentionPlan(gpu, shape).cost.flops;
  strictEqual(full, 4 * 32 * 4096 * 4096 * 128);
  // Causal sees n(n + 1)/2 pairs, the 2·B·H·L·S·D plus the diagonal's half.
  strictEqual(causal, 2 * 32 * 128 * 2 * (4096 * 4097) / 2);
  ok(Math.abs(causal / (2 * 32 * 4096 * 4096 * 128) - 1) < 1 / 4096 + 1e-12);
  strictEqual(
    visiblePairs(validateFlashAttentionShape({ B: 1, H: 1, L: 3, S: 5, D: 4, causal: true, queryOffset: -1 })),
    0 + 1 + 2,
  );
  deepStrictEqual(flashAttentionPlan(gpu, { B: 2, H: 3, L: 300, S: 5, D: 4, Dv: 132 }).workgroups, [18, 1, 2]);
});

Deno.test("flashAttention reference: bad input throws naming the argument", async () => {
  const args = { B: 1, H: 1, L: 1, S: 1, D: 3, q: f32([1, 1, 1]), k: f32([1, 1, 1]), v: f32([1, 1, 1]) };
  await assertThrowsMessage(
    () => flashAttention(args),
    "flashAttention: D must be a multiple of 4 (the kernel reads rows as vec4s; ops/attention takes any), got 3",
  );
  await assertThrowsMessage(
    () => flashAttention({ ...args, D: 4, Dv: 6, q: f32([1, 1, 1, 1]), k: f32([1, 1, 1, 1]) }),
    "flashAttention: Dv must be a multiple of 4",
  );
  await assertThrowsMessage(
    () => flashAttention({ ...args, D: 4, causal: true, mask: f32([0]), maskShape: [1, 1, 1, 1] }),
    "flashAttention: causal and mask cannot both be given",
  );
  await assertThrowsMessage(
    () => flashAttention({ ...args, D: 4 }),
    "flashAttention: q must have length B * H * L * D = 4, got 3",
  );
});

/**
 * A heads-first `[B, H, T, X]` array copied element by element into token-major `[B, T, H, X]` order
 * (index arithmetic of its own, not the reference's permute).
 */
function tokenMajor(x: Float32Array, B: number, H: number, T: number, X: number): Float32Array {
  const out = new Float32Array(x.length);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < T; t++) {
        for (let d = 0; d < X; d++) out[((b * T + t) * H + h) * X + d] = x[((b * H + h) * T + t) * X + d];
      }
    }
  }
  return out;
}

Deno.test("flashAttention reference: layout BLHD is q[b, l, h, d], k and v [b, s, h, d], out [b, l, h, dv]", async () => {
  const [B, H, L, S, D, Dv] = [2, 3, 4, 5, 4, 8];
  const args = mha(randomCase({ B, H, L, S, D, Dv, causal: true, queryOffset: 1 }, 5));
  const heads = flashAttention(args);
  strictEqual(flashAttention({ ...args, layout: "BHLD" }).join(), heads.join(), "BHLD is the default");
  const tokens = flashAttention({
    ...args,
    layout: "BLHD",
    q: tokenMajor(args.q, B, H, L, D),
    k: tokenMajor(args.k, B, H, S, D),
    v: tokenMajor(args.v, B, H, S, Dv),
  });
  deepStrictEqual(tokens, tokenMajor(heads, B, H, L, Dv));
  // The same arrays read heads-first give another answer: the layout is not ignored.
  ok(flashAttention({ ...args, layout: "BLHD" }).some((x, i) => x !== heads[i]));
  await assertThrowsMessage(
    () => flashAttention({ ...args, layout: "BSHD" as "BLHD" }),
    'flashAttention: layout must be one of "BHLD", "BLHD", got "BSHD"',
  );
  await assertThrowsMessage(
    () => flashAttentionPlan(planningDevice(), { B, H, L, S, D, layout: "bhld" as "BHLD" }),
    'flashAttention: layout must be one of "BHLD", "BLHD", got "bhld"',
  );
});

Deno.test("flashAttention: the plan binds the same lengths in either layout and passes the layout's row strides", () => {
  const gpu = planningDevice(49152);
  const shape = { B: 2, H: 3, L: 300, S: 70, D: 8, Dv: 12 };
  const heads = flashAttentionPlan(gpu, shape);
  const tokens = flashAttentionPlan(gpu, { ...shape, layout: "BLHD" });
  deepStrictEqual(tokens.bindings, heads.bindings);
  deepStrictEqual(tokens.workgroups, heads.workgroups);
  deepStrictEqual(tokens.cost, heads.cost);
  // The last four u32 of the params: q_head, q_step, kv_head, kv_step.
  const strides = (plan: { params?: ArrayBuffer }) => [...new Uint32Array(plan.params!, 15 * 4, 4)];
  deepStrictEqual(strides(heads), [300, 1, 70, 1]);
  deepStrictEqual(strides(tokens), [1, 3, 1, 3]);
});

Deno.test("flashAttention reference matches the torch goldens", async () => {
  const golden = await loadSdpaGolden(goldenUrl);
  ok(golden.cases.length > 0 && golden.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    // torch in float64 on the same inputs, rounded once, as the reference (see attention's test).
    assertClose(flashAttention(mha(c.args)), c.out, { atol: 1e-12, rtol: 2 ** -22 }, `torch ${c.label}`);
  }
});

// The awkward cases every kernel is held to (cases.ts); `kernel` is checked in portable.test.ts and
// `tiled` in tiled.test.ts, so that each test file compiles one kernel (tens of seconds each on llvmpipe).
checkAgainstReference("flashAttention", KERNELS, "staged", cases, flashAttention, flashAttentionGpu, gpuTolerance);

gpuTest("flashAttention GPU: a fully masked row is zeros, logits of +-1000 stay finite", async (gpu) => {
  const masked = {
    B: 1,
    H: 1,
    L: 2,
    S: 2,
    D: 4,
    q: f32([1, 0, 0, 0, 1, 0, 0, 0]),
    k: f32([1, 0, 0, 0, 2, 0, 0, 0]),
    v: f32([5, 0, 0, 0, 7, 0, 0, 0]),
    mask: f32([-Infinity, -Infinity, 0, -Infinity]),
    maskShape: mask([1, 1, 2, 2]),
  };
  deepStrictEqual([...await flashAttentionGpu(gpu, masked)], [0, 0, 0, 0, 5, 0, 0, 0]);
  const big = mha(randomCase({ B: 1, H: 1, L: 3, S: 40, D: 4, scale: 1 }, 9));
  big.q = big.q.map((x) => 1000 * x);
  assertClose(await flashAttentionGpu(gpu, big), flashAttention(big), gpuTolerance(big), "logits of +-1000");
});

gpuTest("flashAttention GPU (the kernel the device resolves) matches the torch goldens", async (gpu) => {
  const golden = await loadSdpaGolden(goldenUrl);
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    assertClose(await flashAttentionGpu(gpu, mha(c.args)), c.out, gpuTolerance(c.args), `torch ${c.label}`);
  }
});

gpuTest("flashAttention GPU: bad input throws before dispatch", async (gpu) => {
  const args = { B: 1, H: 1, L: 1, S: 1, D: 4, q: f32([1, 1, 1, 1]), k: f32([1, 1, 1, 1]), v: f32([1, 1, 1]) };
  await assertThrowsMessage(
    () => flashAttentionGpu(gpu, args),
    "flashAttention: v must have length B * H * S * Dv = 4, got 3",
  );
  await assertThrowsMessage(
    () => flashAttentionGpu(gpu, { ...args, v: f32([1, 1, 1, 1]) }, { override: "kernel.amd" as never }),
    'override "kernel.amd" is not a variant',
  );
});

gpuTest("flashAttention GPU: (row tile, head) pairs past the per-dimension limit fold into y", async (gpu) => {
  // 2 row tiles x 7 heads = 14 pairs at a limit of 4: a 4 x 4 grid whose last 2 workgroups do nothing.
  const narrow = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 4 });
  const args = mha(randomCase({ B: 1, H: 7, L: 130, S: 40, D: 8, causal: true }, 11));
  deepStrictEqual(flashAttentionPlan(narrow, args).workgroups, [4, 4, 1]);
  assertClose(await flashAttentionGpu(narrow, args), flashAttention(args), gpuTolerance(args), "folded");
});

Deno.test("visiblePairs: the closed form equals counting row by row, and refuses a shape that is not resolved", async () => {
  for (let L = 0; L <= 9; L++) {
    for (let S = 0; S <= 9; S++) {
      for (let queryOffset = -12; queryOffset <= 12; queryOffset++) {
        let counted = 0;
        for (let i = 0; i < L; i++) counted += Math.max(0, Math.min(S, i + queryOffset + 1));
        const shape = { B: 1, H: 1, kvHeads: 1, L, S, D: 4, Dv: 4, scale: 0.5, causal: true, queryOffset };
        strictEqual(visiblePairs(shape), counted, `L ${L} S ${S} queryOffset ${queryOffset}`);
      }
    }
  }
  const shape = validateFlashAttentionShape({ B: 1, H: 1, L: 3, S: 3, D: 4, causal: true });
  await assertThrowsMessage(() => visiblePairs({ ...shape, L: NaN }), "visiblePairs: L must be an integer");
  await assertThrowsMessage(() => visiblePairs(undefined as never), "visiblePairs: shape must be an object");
});
