// gqa's KV-cache path: the reference against torch (goldens/gen_cache.py), then the kernels against the
// reference: decode split into slices (more slices than positions included), prefill after cached
// positions, and the online softmax across chunks of a few positions.
import { deepStrictEqual, ok } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  eachVariant,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import { gqaCache, type GqaCacheArgs, gqaCacheDecodePlan, gqaCacheGpu, gqaCachePrefillPlan, KERNELS } from "./mod.ts";

interface CacheGolden {
  cases: (Omit<GqaCacheArgs, "qkv" | "table" | "keys" | "values"> & {
    label: string;
    qkv: number[];
    table: number[];
    keys: number[];
    values: number[];
    out: number[];
    keysAfter: number[];
    valuesAfter: number[];
  })[];
}

const f32 = (v: number[]) => Float32Array.from(v);

Deno.test("gqaCache reference matches torch: adjacent-pair RoPE, the cache written at pos0.., causal over the cache, contiguous groups", async () => {
  const { cases } = await loadGolden<CacheGolden>(new URL("./goldens/cache.json", import.meta.url));
  ok(cases.some((c) => c.L > 1 && c.pos0 > 0) && cases.some((c) => c.H / c.kvHeads === 3));
  for (const c of cases) {
    const { H, kvHeads, D, maxSeq, L, pos0 } = c;
    const args = {
      H,
      kvHeads,
      D,
      maxSeq,
      L,
      pos0,
      qkv: f32(c.qkv),
      table: f32(c.table),
      keys: f32(c.keys),
      values: f32(c.values),
    };
    const got = gqaCache(args);
    assertClose(got.out, c.out, { atol: 1e-6, rtol: 1e-5 }, `${c.label}: out`);
    assertClose(got.keys, f32(c.keysAfter), { atol: 1e-6, rtol: 1e-6 }, `${c.label}: keys`);
    assertClose(got.values, f32(c.valuesAfter), { atol: 0, rtol: 0 }, `${c.label}: values`);
  }
});

Deno.test("gqaCache: bad sizes are refused by name, before any GPU work", async () => {
  const args = (over: Partial<GqaCacheArgs>): GqaCacheArgs => ({
    H: 2,
    kvHeads: 1,
    D: 4,
    maxSeq: 3,
    L: 1,
    pos0: 0,
    qkv: new Float32Array(16),
    table: new Float32Array(12),
    keys: new Float32Array(12),
    values: new Float32Array(12),
    ...over,
  });
  await assertThrowsMessage(
    () => gqaCache(args({ H: 3, kvHeads: 2 })),
    "gqaCache: H (3) must be a multiple of kvHeads (2)",
  );
  await assertThrowsMessage(() => gqaCache(args({ D: 6 })), "gqaCache: D must be a multiple of 4");
  await assertThrowsMessage(() => gqaCache(args({ D: 260 })), "gqaCache: D must be an integer in [4, 256], got 260");
  await assertThrowsMessage(() => gqaCache(args({ pos0: 3 })), "gqaCache: pos0 must be an integer in [0, 2], got 3");
  await assertThrowsMessage(() => gqaCache(args({ qkv: new Float32Array(15) })), "gqaCache: qkv must have length");
});

/** A random call: cached positions before pos0 filled, a RoPE table of real angles. */
function randomCall(H: number, kvHeads: number, D: number, maxSeq: number, L: number, pos0: number, seed: number) {
  const half = D / 2;
  const table = new Float32Array(maxSeq * D);
  for (let p = 0; p < maxSeq; p++) {
    for (let j = 0; j < half; j++) {
      const angle = p / 10000 ** (2 * j / D);
      table[2 * (p * half + j)] = Math.cos(angle);
      table[2 * (p * half + j) + 1] = Math.sin(angle);
    }
  }
  const keys = randomF32(kvHeads * maxSeq * D, seed, -1, 1);
  const values = randomF32(kvHeads * maxSeq * D, seed + 1, -1, 1);
  return {
    H,
    kvHeads,
    D,
    maxSeq,
    L,
    pos0,
    table,
    keys,
    values,
    qkv: randomF32(L * (H + 2 * kvHeads) * D, seed + 2, -1, 1),
  };
}

/** Scores summed in f32 over up to 768 positions in a different order: 1e-5 relative. */
const TOLERANCE = { atol: 2e-6, rtol: 1e-5 };

/** The kernel's result (out, then the caches) beside the reference's, for one call. */
async function compare(
  gpu: Parameters<typeof gqaCacheGpu>[0],
  args: Parameters<typeof gqaCacheGpu>[1],
  options: Parameters<typeof gqaCacheGpu>[2],
  label: string,
) {
  const want = gqaCache(args);
  const got = await gqaCacheGpu(gpu, args, options);
  assertClose(got.out, want.out, TOLERANCE, `${label}: out`);
  assertClose(got.keys, want.keys, { atol: 1e-6, rtol: 1e-6 }, `${label}: keys`);
  assertClose(got.values, want.values, { atol: 0, rtol: 0 }, `${label}: values`);
}

eachVariant(KERNELS, "cache_decode", (variant) => {
  gpuTest(
    `gqa/${variant}: one row over the cache, in 1 to 8 slices (more than positions included), chunks of 1,024 or 8`,
    async (gpu) => {
      for (
        const [H, kvHeads, D, maxSeq, pos0] of [[2, 1, 4, 3, 0], [16, 8, 112, 40, 37], [6, 2, 16, 300, 250], [
          3,
          3,
          256,
          9,
          5,
        ]]
      ) {
        const args = randomCall(H, kvHeads, D, maxSeq, 1, pos0, H + D + pos0);
        for (const splits of [1, 3, 8]) {
          for (const chunk of [1024, 8]) {
            const label = `H ${H}/${kvHeads} D ${D} at ${pos0}, ${splits} slices, chunk ${chunk}`;
            await compare(gpu, { ...args, splits, chunk }, { override: variant }, label);
          }
        }
      }
    },
  );

  gpuTest(`gqa/${variant}: the counters are left at zero, so the next step's combine finds them so`, async (gpu) => {
    const args = randomCall(4, 2, 8, 20, 1, 10, 5);
    const plan = gqaCacheDecodePlan(gpu, { ...args, splits: 4 }, { override: variant });
    const tensors = [args.qkv, args.table, args.keys, args.values].map((a) => gpu.upload(a));
    tensors.push(gpu.alloc("f32", 32), gpu.upload(new Uint32Array([10, 0, 0, 0])));
    tensors.push(gpu.alloc("u32", plan.bindings[6].length), gpu.alloc("u32", 4));
    try {
      await gpu.submit([plan, tensors], [plan, tensors]);
      deepStrictEqual([...await gpu.read(tensors[7])], [0, 0, 0, 0]);
      assertClose(await gpu.read(tensors[4]), gqaCache(args).out, TOLERANCE, "after two steps");
    } finally {
      for (const t of tensors) t.buffer.destroy();
    }
  });
});

for (const entry of ["cache_write", "cache_prefill"]) {
  eachVariant(KERNELS, entry, (variant) => {
    gpuTest(`gqa/${variant}: several rows after cached positions, chunks of 1,024 or 8`, async (gpu) => {
      for (
        const [H, kvHeads, D, maxSeq, L, pos0] of [[2, 1, 4, 6, 6, 0], [16, 8, 112, 40, 5, 30], [6, 2, 16, 64, 33, 20]]
      ) {
        const args = randomCall(H, kvHeads, D, maxSeq, L, pos0, 7 * H + L);
        for (const chunk of [1024, 8]) {
          await compare(
            gpu,
            { ...args, chunk },
            { override: variant },
            `H ${H}/${kvHeads} D ${D}, ${L} rows from ${pos0}, chunk ${chunk}`,
          );
        }
      }
    });
  });
}

gpuTest("gqa cache plans: one workgroup per (head, slice) in decode, per (head, row) in prefill", (gpu) => {
  const shape = { H: 16, kvHeads: 8, D: 112, maxSeq: 768, L: 1 };
  deepStrictEqual(gqaCacheDecodePlan(gpu, { ...shape, splits: 16 }).workgroups, [16, 1, 16]);
  const { write, attend } = gqaCachePrefillPlan(gpu, { ...shape, L: 512 });
  deepStrictEqual([write.workgroups, attend.workgroups], [512, [16, 512, 1]]);
  deepStrictEqual(attend.constants, { CHUNK: 1024 });
});
