// flashAttention on NaN and ±Infinity, held to torch (goldens/nonfinite.py through
// ../attention/goldens/sdpa_nonfinite.py): attention's conventions (ops/attention/reference.ts): NaN or
// +inf scores make their rows NaN, a row of -inf is zeros, a key masked by -inf has its v multiplied by
// 0 (NaN for a NaN v, as torch), and a key hidden by `causal` is no part of the row (no score, v not
// read). Every kernel gives the reference's values on the goldens' small shapes, on a causal case of
// several row tiles and key blocks, and on two causal cases with NaN and ±inf in v at keys hidden from
// some rows of a tile (and from all of them, inside the last block or chunk a tile reads), where those
// rows are finite. `tiled` and `buffered`, which need more workgroup memory than the software adapter
// grants, are reported as ignored there, with the reason.
import {
  flashAttention,
  type FlashAttentionArgs,
  flashAttentionGpu,
  type FlashAttentionVariant,
  KERNELS,
  workgroupBytes,
} from "./mod.ts";
import { assertNonfiniteSdpa, gpuTolerance, loadNonfiniteSdpa, mha } from "../attention/testing_helpers.ts";
import {
  assertClose,
  assertNonFiniteOperands,
  gpuTest,
  hasAdapter,
  randomF32,
  type ReferenceCase,
} from "../../harness/testing.ts";

const golden = await loadNonfiniteSdpa(new URL("./goldens/nonfinite.json", import.meta.url));

Deno.test(`flashAttention reference: NaN and ±Infinity in q, k, v and the mask as torch ${golden.torch}`, () => {
  for (const c of golden.cases) {
    const { q, k, v, mask } = c.args;
    const held = [q, k, v, mask].filter((x): x is Float32Array =>
      x !== undefined && x.some((e) => !Number.isFinite(e))
    );
    assertNonFiniteOperands({ [c.label]: held.flatMap((x) => [...x]) });
    assertNonfiniteSdpa(flashAttention(mha(c.args)), c);
  }
});

/**
 * L = S = 150, causal: two row tiles of 128 and several key blocks; NaN and ±inf in q and k, and in v at
 * key 0, which every row sees.
 */
function blocks(): ReferenceCase<FlashAttentionArgs> {
  const [L, S, D] = [150, 150, 8];
  const q = randomF32(L * D, 61), k = randomF32(S * D, 62), v = randomF32(S * D, 63);
  [q[140 * D + 3], q[20 * D], k[70 * D + 1], k[149 * D + 2]] = [NaN, -Infinity, Infinity, NaN];
  [v[2], v[5], v[7]] = [NaN, Infinity, -Infinity];
  return { label: "L = S = 150 causal, non-finite q, k and v", args: { B: 1, H: 1, L, S, D, causal: true, q, k, v } };
}

/**
 * Causal, finite q and k, NaN and ±inf in v (one column each) at keys on the diagonal of the row tiles:
 * keys some rows of a tile see and others do not, and keys no row sees below the end of the block (or
 * chunk of v) the tile reads. `at` lists (key, column, value); queryOffset 0 at L = 100, S = 150 (tiles
 * of 128 and 32 rows stop at key 100 of a 64-key block and an 8- or 16-key chunk of v), S - L at
 * L = 40 (lower-right).
 */
function hiddenV(): ReferenceCase<FlashAttentionArgs>[] {
  const D = 8;
  const make = (L: number, S: number, queryOffset: number, at: [number, number, number][], seed: number) => {
    const v = randomF32(S * D, seed + 2);
    for (const [key, column, value] of at) v[key * D + column] = value;
    return {
      label: `L = ${L}, S = ${S}, queryOffset ${queryOffset}, causal: NaN and ±inf in v at hidden keys`,
      args: {
        B: 1,
        H: 1,
        L,
        S,
        D,
        causal: true,
        queryOffset,
        q: randomF32(L * D, seed),
        k: randomF32(S * D, seed + 1),
        v,
      },
    };
  };
  const nan = NaN, inf = Infinity;
  const upperLeft: [number, number, number][] = [
    [1, 0, nan],
    [37, 1, inf],
    [64, 2, -inf],
    [99, 3, nan],
    [100, 4, nan],
    [110, 5, inf],
    [149, 6, nan],
  ];
  const lowerRight: [number, number, number][] = [[111, 0, nan], [130, 1, inf], [140, 7, nan], [149, 2, -inf]];
  return [make(100, 150, 0, upperLeft, 64), make(40, 150, 110, lowerRight, 67)];
}

Deno.test("flashAttention reference: NaN and ±inf in v at keys hidden by causal leave the rows that do not see them finite", () => {
  for (const { label, args } of hiddenV()) {
    const out = flashAttention(args);
    const offset = args.queryOffset ?? 0;
    for (let key = 0; key < args.S; key++) {
      for (let column = 0; column < args.D; column++) {
        if (Number.isFinite(args.v[key * args.D + column])) continue;
        for (let i = 0; i < args.L; i++) {
          const seen = key <= i + offset;
          if (Number.isFinite(out[i * args.D + column]) === seen) {
            throw new Error(`${label}: row ${i}, column ${column} is ${out[i * args.D + column]} (key ${key})`);
          }
        }
      }
    }
  }
});

const adapter = hasAdapter ? await navigator.gpu.requestAdapter({ powerPreference: "high-performance" }) : null;
const granted = adapter?.limits.maxComputeWorkgroupStorageSize ?? 0;
const cases = [...golden.cases.map((c) => ({ label: c.label, args: mha(c.args) })), blocks(), ...hiddenV()];

for (const entry of ["tiled", "wide", "staged", "kernel", "buffered"] as const satisfies FlashAttentionVariant[]) {
  const name = `flashAttention (non-finite): ${entry} matches the reference`;
  const needed = workgroupBytes(KERNELS[entry]);
  if (adapter !== null && granted < needed) {
    Deno.test({
      name: `${name} (ignored: the adapter grants ${granted} bytes of workgroup memory, ${entry} needs ${needed})`,
      ignore: true,
      fn: () => {},
    });
    continue;
  }
  gpuTest(name, async (gpu) => {
    for (const { label, args } of cases) {
      const out = await flashAttentionGpu(gpu, args, { override: entry });
      assertClose(out, flashAttention(args), gpuTolerance(args), `${entry} ${label}`);
    }
  });
}
