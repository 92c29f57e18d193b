import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { ResidentDevice } from "../../harness/device.ts";
import { assertClose, assertThrowsMessage, checkAgainstReference, gpuTest } from "../../harness/testing.ts";
import { attention } from "../attention/reference.ts";
import { gpuTolerance, loadSdpaGolden, mha, randomCase } from "../attention/testing_helpers.ts";
import { COMBINE_MAX_SPLITS, DECODE_CHUNK, gqa, type GqaArgs, gqaGpu, gqaPlan, KERNELS, kvCacheBytes } from "./mod.ts";

const f32 = (xs: number[]) => new Float32Array(xs);
const goldenUrl = new URL("./goldens/gqa.json", import.meta.url);

/** KV head `head` of k or v, `[B = 1, kvHeads, S, D]`, repeated `times` times along the head axis. */
function repeatHead(x: Float32Array, kvHeads: number, head: number, times: number): Float32Array {
  const per = x.length / kvHeads;
  const out = new Float32Array(per * times);
  for (let t = 0; t < times; t++) out.set(x.subarray(head * per, (head + 1) * per), t * per);
  return out;
}

Deno.test("kvCacheBytes reproduces the Llama-3-8B figures", () => {
  const layer = { B: 1, S: 8192, D: 128, Dv: 128 };
  strictEqual(kvCacheBytes({ ...layer, kvHeads: 32 }), 268_435_456);
  strictEqual(kvCacheBytes({ ...layer, kvHeads: 8 }), 67_108_864);
  strictEqual(kvCacheBytes({ ...layer, kvHeads: 1 }), 8_388_608);
  strictEqual(
    kvCacheBytes({ ...layer, kvHeads: 32, layers: 32 }) - kvCacheBytes({ ...layer, kvHeads: 8, layers: 32 }),
    6_442_450_944,
  );
  strictEqual(kvCacheBytes({ kvHeads: 8, S: 8192, D: 128, bytesPerElement: 2 }), 33_554_432);
});

Deno.test("gqa reference: contiguous groups (head h reads KV head h / (H / kvHeads)), not h % kvHeads", () => {
  const args = randomCase({ B: 1, H: 4, kvHeads: 2, L: 3, S: 5, D: 4 }, 1);
  const out = gqa(args);
  for (let h = 0; h < 4; h++) {
    const kvHead = Math.floor(h / 2);
    const alone = attention({
      B: 1,
      H: 1,
      L: 3,
      S: 5,
      D: 4,
      q: args.q.subarray(h * 12, (h + 1) * 12),
      k: repeatHead(args.k, 2, kvHead, 1),
      v: repeatHead(args.v, 2, kvHead, 1),
    });
    deepStrictEqual(out.subarray(h * 12, (h + 1) * 12), alone, `head ${h} reads KV head ${kvHead}`);
    const tiled = attention({
      B: 1,
      H: 1,
      L: 3,
      S: 5,
      D: 4,
      q: args.q.subarray(h * 12, (h + 1) * 12),
      k: repeatHead(args.k, 2, h % 2, 1),
      v: repeatHead(args.v, 2, h % 2, 1),
    });
    if (h % 2 !== kvHead) ok(tiled.some((x, i) => x !== alone[i]), `h % kvHeads would differ at head ${h}`);
  }
});

Deno.test("gqa reference: kvHeads = H is attention; kvHeads = 1 (MQA) is attention over a repeated KV head", () => {
  const heads = mha(randomCase({ B: 2, H: 3, L: 2, S: 6, D: 4 }, 2));
  deepStrictEqual(gqa({ ...heads, kvHeads: 3 }), attention(heads));
  const mqa = randomCase({ B: 1, H: 3, kvHeads: 1, L: 2, S: 6, D: 4 }, 3);
  deepStrictEqual(gqa(mqa), attention(mha({ ...mqa, k: repeatHead(mqa.k, 1, 0, 3), v: repeatHead(mqa.v, 1, 0, 3) })));
});

Deno.test("gqa reference: a mask's head axis counts query heads", () => {
  const args = randomCase({ B: 1, H: 4, kvHeads: 2, L: 1, S: 3, D: 4, maskShape: [1, 4, 1, 3] }, 4);
  const expanded = { ...args, k: f32([]), v: f32([]) };
  expanded.k = f32([...repeatHead(args.k, 2, 0, 2), ...repeatHead(args.k, 2, 1, 2)]);
  expanded.v = f32([...repeatHead(args.v, 2, 0, 2), ...repeatHead(args.v, 2, 1, 2)]);
  deepStrictEqual(gqa(args), attention(mha(expanded)));
});

Deno.test("gqa reference: bad input throws naming the argument", async () => {
  const args = randomCase({ B: 1, H: 4, kvHeads: 2, L: 1, S: 3, D: 4 }, 5);
  await assertThrowsMessage(
    () => gqa({ ...args, kvHeads: 3 }),
    "gqa: H must be a multiple of kvHeads (contiguous groups of H / kvHeads), got H = 4, kvHeads = 3",
  );
  await assertThrowsMessage(
    () => gqa({ ...args, kvHeads: 0 }),
    "gqa: kvHeads must be an integer in [1, 16777216], got 0",
  );
  await assertThrowsMessage(
    () => gqa({ ...args, kvHeads: 4 }),
    "gqa: k must have length B * kvHeads * S * D = 48, got 24",
  );
  await assertThrowsMessage(
    () => gqa({ ...args, mask: f32([0, 0, 0, 0, 0, 0]), maskShape: [1, 2, 1, 3] }),
    "gqa: maskShape[1] must be 1 or H = 4, got 2",
  );
  await assertThrowsMessage(
    () => kvCacheBytes({ kvHeads: 8, S: 0, D: 128 }),
    "kvCacheBytes: S must be an integer >= 1, got 0",
  );
});

Deno.test("gqa reference matches the torch goldens (enable_gqa=True)", async () => {
  const golden = await loadSdpaGolden(goldenUrl);
  ok(golden.cases.length > 0 && golden.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    // torch in float64 on the same inputs, rounded once, as the reference (see attention's test).
    assertClose(gqa(c.args), c.out, { atol: 1e-12, rtol: 2 ** -22 }, `torch ${c.label}`);
  }
});

Deno.test("gqa decode plan at Llama-3-8B's 32/8 heads: K and V bound and counted once; the combine by split count", () => {
  const gpu = {
    resolve: (sources: Record<string, string>, entry: string, options: { override?: string } = {}) => {
      const variant = options.override ?? entry;
      return { variant, source: sources[variant], rung: "portable", tried: [variant] };
    },
    resolveAmong: ResidentDevice.prototype.resolveAmong,
    limits: { maxComputeWorkgroupsPerDimension: 65535 },
    device: { limits: { maxComputeWorkgroupStorageSize: 16384 } },
  } as unknown as ResidentDevice;
  const llama = { B: 1, H: 32, kvHeads: 8, L: 1, D: 128 };
  const { path, steps } = gqaPlan(gpu, { ...llama, S: 8192 });
  strictEqual(path, "decode");
  const [decode, combine] = steps;
  // 64 splits of 128 keys x 8 KV heads, the 4 query heads of a group in one workgroup.
  strictEqual(DECODE_CHUNK, 128);
  deepStrictEqual(decode.workgroups, [64 * 8, 1, 1]);
  const kv = kvCacheBytes({ kvHeads: 8, S: 8192, D: 128 });
  strictEqual(4 * (decode.bindings[1].length + decode.bindings[2].length), kv);
  const partials = 4 * 32 * 64 * (128 + 2);
  strictEqual(decode.cost.bytes, kv + 4 * 32 * 128 + partials);
  strictEqual(combine.cost.bytes, partials + 4 * 32 * 128);
  // 64 splits: `combine`, a workgroup per output row.
  strictEqual(COMBINE_MAX_SPLITS, 64);
  strictEqual(combine.kernel.variant, "combine");
  deepStrictEqual(combine.workgroups, [32, 1, 1]);
  // 65 splits and more: `combine_wide`, a workgroup per row and 8 quads of Dv (4 for Dv = 128, 3 for 80).
  const wide = gqaPlan(gpu, { ...llama, S: 8193 }).steps[1];
  strictEqual(wide.kernel.variant, "combine_wide");
  deepStrictEqual(wide.workgroups, [32 * 4, 1, 1]);
  deepStrictEqual(gqaPlan(gpu, { ...llama, S: 32768, Dv: 80 }).steps[1].workgroups, [32 * 3, 1, 1]);
  // Either is taken when named, whatever the split count.
  strictEqual(
    gqaPlan(gpu, { ...llama, S: 8192 }, { override: "combine_wide" }).steps[1].kernel.variant,
    "combine_wide",
  );
  strictEqual(gqaPlan(gpu, { ...llama, S: 32768 }, { override: "combine" }).steps[1].kernel.variant, "combine");
  strictEqual(gqaPlan(gpu, { ...llama, L: 64, S: 8192 }).path, "prefill");
  strictEqual(gqaPlan(gpu, { ...llama, S: 8192, D: 256 }).path, "prefill");
});

Deno.test("gqa: the override reaches the prefill path, and a name of no prefill kernel throws there", async () => {
  const gpu = {
    resolve: (sources: Record<string, string>, entry: string, options: { override?: string } = {}) => {
      const variant = options.override ?? entry;
      if (!(variant in sources)) throw new Error(`no variant ${variant}`);
      return { variant, source: sources[variant], rung: "portable", tried: [variant] };
    },
    resolveAmong: ResidentDevice.prototype.resolveAmong,
    limits: { maxComputeWorkgroupsPerDimension: 65535 },
    device: { limits: { maxComputeWorkgroupStorageSize: 49152 } },
  } as unknown as ResidentDevice;
  const prefill = { B: 1, H: 16, kvHeads: 8, L: 64, S: 64, D: 128, causal: true };
  // Unforced, the device's first kernel that fits (buffered at 48 KiB); each flash entry point when named.
  strictEqual(gqaPlan(gpu, prefill).steps[0].kernel.variant, "buffered");
  for (const entry of ["wide", "tiled", "staged", "kernel", "buffered"] as const) {
    const plans = gqaPlan(gpu, prefill, { override: entry });
    strictEqual(plans.path, "prefill");
    strictEqual(plans.steps[0].kernel.variant, entry);
    strictEqual(
      gqaPlan(gpu, { ...prefill, L: 1 }, { override: entry, path: "prefill" }).steps[0].kernel.variant,
      entry,
    );
  }
  // A flash entry point forces the prefill path even at a decode length.
  strictEqual(gqaPlan(gpu, { ...prefill, L: 1 }, { override: "staged" }).path, "prefill");
  // A name of no gqa kernel, or of a decode kernel on the prefill path, throws.
  await assertThrowsMessage(
    () => gqaPlan(gpu, prefill, { override: "scores" as never }),
    'gqa: override "scores" is not a variant of entry point "wide" or "buffered" or "staged" or "kernel" or "tiled"',
  );
  await assertThrowsMessage(
    () => gqaPlan(gpu, prefill, { override: "decode", path: "prefill" }),
    'gqa: override "decode" is not a variant of entry point "wide" or "buffered" or "staged" or "kernel" or "tiled"',
  );
});

// Decode: groups of 1, 2, 3, 4 and 8 rows (row groups of 4 with surplus rows), kvHeads = 1 and = H,
// several 128-key chunks with a short last one, L > 1 with causal lower-right, masks (a query-head axis,
// key padding), D and Dv apart, and a chunk in which every key is masked for some rows; split counts
// from 1 to 1,094, on both sides of COMBINE_MAX_SPLITS and of the 128 splits the combines take at a time;
// and the token-major layout (several rows per group, B = 2, Qwen3's 16 over 8 heads).
// Each case runs with the default combine and with each combine forced.
const mask = (s: [number, number, number, number]) => s;
const decodeCases = [
  { B: 1, H: 1, kvHeads: 1, L: 1, S: 1, D: 4 },
  { B: 1, H: 32, kvHeads: 8, L: 1, S: 300, D: 128 },
  { B: 2, H: 6, kvHeads: 2, L: 1, S: 513, D: 64, Dv: 80 },
  { B: 1, H: 8, kvHeads: 1, L: 1, S: 40, D: 16 },
  { B: 1, H: 4, kvHeads: 2, L: 3, S: 600, D: 8, causal: true, queryOffset: 597 },
  { B: 1, H: 4, kvHeads: 4, L: 2, S: 70, D: 112 },
  { B: 2, H: 4, kvHeads: 2, L: 1, S: 260, D: 8, maskShape: mask([2, 4, 1, 260]) },
  { B: 2, H: 4, kvHeads: 1, L: 2, S: 33, D: 4, maskShape: mask([2, 1, 1, 33]) },
  { B: 1, H: 2, kvHeads: 1, L: 1, S: 16700, D: 4 }, // 131 splits, the last of 60 keys
  { B: 1, H: 4, kvHeads: 1, L: 1, S: 1024 * 128 + 30, D: 4 }, // 1,025 splits, the last of 30 keys
  { B: 1, H: 4, kvHeads: 1, L: 2, S: 140000, D: 8, causal: true, queryOffset: 70000 }, // 1,094 splits, later ones hidden
  { B: 2, H: 4, kvHeads: 2, L: 3, S: 300, D: 8, Dv: 12, causal: true, queryOffset: 297, layout: "BLHD" as const },
  { B: 1, H: 16, kvHeads: 8, L: 1, S: 150, D: 16, layout: "BLHD" as const },
  { B: 1, H: 2, kvHeads: 1, L: 1, S: 1024 * 128 + 30, D: 4, maskShape: mask([1, 1, 1, 1024 * 128 + 30]) },
].map((c, i) => ({ label: JSON.stringify(c), args: { ...randomCase(c, 300 + 10 * i), ...c } as GqaArgs }));
// The last case: keys 0-63 (split 0's first half) and 256-319 (split 2's first half) hidden from every row.
decodeCases.at(-1)!.args.mask!.fill(-Infinity, 0, 64).fill(-Infinity, 256, 320);

for (const entry of ["decode", "combine", "combine_wide"]) {
  checkAgainstReference(
    "gqa",
    KERNELS,
    entry,
    decodeCases,
    gqa,
    (gpu, args, options) => gqaGpu(gpu, args, options),
    gpuTolerance,
  );
}

gpuTest("gqa GPU: the prefill path (flash_attention's kernel with kvHeads) matches the reference", async (gpu) => {
  for (
    const c of [
      { B: 1, H: 4, kvHeads: 2, L: 20, S: 50, D: 8, causal: true },
      { B: 2, H: 6, kvHeads: 3, L: 9, S: 33, D: 16, Dv: 8, maskShape: mask([2, 6, 9, 33]) },
      { B: 1, H: 3, kvHeads: 1, L: 1, S: 10, D: 4 },
      // Dv over 256: flash_attention's `wide` kernel, with groups, heads-first and token-major.
      { B: 1, H: 4, kvHeads: 2, L: 40, S: 70, D: 16, Dv: 264, causal: true },
      { B: 2, H: 4, kvHeads: 1, L: 33, S: 20, D: 8, Dv: 512, layout: "BLHD" as const },
    ]
  ) {
    const args = { ...randomCase(c, 7), ...c } as GqaArgs;
    if (c.Dv !== undefined && c.Dv > 256) strictEqual(gqaPlan(gpu, args).steps[0].kernel.variant, "wide");
    assertClose(await gqaGpu(gpu, args, { path: "prefill" }), gqa(args), gpuTolerance(args), JSON.stringify(c));
  }
});

Deno.test("gqa reference: layout BLHD reads k and v as [B, S, kvHeads, D]", () => {
  const [B, H, kvHeads, L, S, D] = [2, 4, 2, 3, 5, 4];
  const args = randomCase({ B, H, kvHeads, L, S, D, causal: true, queryOffset: 2 }, 6) as GqaArgs;
  // [B, N, T, X] to [B, T, N, X], element by element.
  const tokenMajor = (x: Float32Array, N: number, T: number) => {
    const out = new Float32Array(x.length);
    for (let b = 0; b < B; b++) {
      for (let n = 0; n < N; n++) {
        for (let t = 0; t < T; t++) {
          for (let d = 0; d < D; d++) out[((b * T + t) * N + n) * D + d] = x[((b * N + n) * T + t) * D + d];
        }
      }
    }
    return out;
  };
  const tokens = gqa({
    ...args,
    layout: "BLHD",
    q: tokenMajor(args.q, H, L),
    k: tokenMajor(args.k, kvHeads, S),
    v: tokenMajor(args.v, kvHeads, S),
  });
  deepStrictEqual(tokens, tokenMajor(gqa(args), H, L));
});

gpuTest(
  "gqa GPU: token-major (BLHD) q, k, v and out on both paths, Qwen3's 16 query over 8 KV heads, causal",
  async (gpu) => {
    for (
      const c of [
        { B: 1, H: 16, kvHeads: 8, L: 20, S: 20, D: 16, causal: true },
        { B: 2, H: 16, kvHeads: 8, L: 5, S: 40, D: 8, Dv: 12, causal: true, queryOffset: 35 },
        { B: 1, H: 16, kvHeads: 8, L: 1, S: 130, D: 16 },
      ]
    ) {
      const args = { ...randomCase(c, 13), layout: "BLHD" } as GqaArgs;
      const expected = gqa(args);
      for (const path of ["decode", "prefill"] as const) {
        assertClose(await gqaGpu(gpu, args, { path }), expected, gpuTolerance(args), `${path} ${JSON.stringify(c)}`);
      }
    }
  },
);

gpuTest("gqa GPU: a row with every key masked is zeros on both paths", async (gpu) => {
  const args = randomCase({ B: 1, H: 2, kvHeads: 1, L: 1, S: 300, D: 4, maskShape: [1, 2, 1, 300] }, 8) as GqaArgs;
  args.mask!.fill(-Infinity, 0, 300); // head 0 sees nothing, in either chunk
  for (const path of ["decode", "prefill"] as const) {
    const out = await gqaGpu(gpu, args, { path });
    deepStrictEqual([...out.subarray(0, 4)], [0, 0, 0, 0], path);
    assertClose(out, gqa(args), gpuTolerance(args), path);
  }
});

gpuTest("gqa GPU matches the torch goldens", async (gpu) => {
  const golden = await loadSdpaGolden(goldenUrl);
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    assertClose(await gqaGpu(gpu, c.args), c.out, gpuTolerance(c.args), `torch ${c.label}`);
  }
});

gpuTest("gqa GPU: bad input throws before dispatch", async (gpu) => {
  const args = randomCase({ B: 1, H: 4, kvHeads: 2, L: 1, S: 3, D: 4 }, 9) as GqaArgs;
  await assertThrowsMessage(() => gqaGpu(gpu, { ...args, kvHeads: 3 }), "gqa: H must be a multiple of kvHeads");
  await assertThrowsMessage(
    () =>
      gqaGpu(gpu, { ...randomCase({ B: 1, H: 2, kvHeads: 1, L: 1, S: 3, D: 132 }, 1), kvHeads: 1 } as GqaArgs, {
        path: "decode",
      }),
    "gqa: the decode path takes D and Dv up to 128, got D = 132, Dv = 132",
  );
  await assertThrowsMessage(
    () => gqaGpu(gpu, args, { override: "scores" as never }),
    'gqa: override "scores" is not a variant of entry point "decode", "combine" or "combine_wide"',
  );
  // A path that is neither is refused, not taken as "decode".
  await assertThrowsMessage(
    () => gqaGpu(gpu, args, { path: "split" as "decode" }),
    'gqa: path must be one of "decode", "prefill", got "split"',
  );
});

gpuTest("gqa GPU: decode and combine workgroups past the per-dimension limit fold into y", async (gpu) => {
  // decode: 5 splits x 2 KV heads = 10 workgroups at a limit of 4, a 4 x 3 grid whose last 2 do nothing;
  // combine_wide: 4 rows x 2 groups of 8 quads (Dv = 64) = 8 workgroups, a 4 x 2 grid.
  const narrow = gpu.withLimits({ maxComputeWorkgroupsPerDimension: 4 });
  const args = randomCase({ B: 1, H: 4, kvHeads: 2, L: 1, S: 600, D: 64 }, 12) as GqaArgs;
  const [decode, combine] = gqaPlan(narrow, args, { override: "combine_wide" }).steps;
  deepStrictEqual(decode.workgroups, [4, 3, 1]);
  deepStrictEqual(combine.workgroups, [4, 2, 1]);
  assertClose(await gqaGpu(narrow, args, { override: "combine_wide" }), gqa(args), gpuTolerance(args), "folded");
  assertClose(await gqaGpu(narrow, args), gqa(args), gpuTolerance(args), "folded, combine");
});
