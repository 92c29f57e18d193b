import { deepStrictEqual, ok } from "node:assert/strict";
import { ropeAxes } from "../../../ops/rope/mod.ts";
import { parseDitConfig } from "../config.ts";
import { GOLDEN_SETS, goldenCases, goldenStore, goldenTensor, loadTinyIndex, maxRelative } from "../fixtures/recipe.ts";
import { captionPositions, imagePositions, paddedLength } from "./positions.ts";

/** (cos, sin) of each pair, from ropeAxes turning unit vectors (1, 0): `[tokens, pairs, 2]`. */
function cosSin(positions: Int32Array, axesDims: number[]): Float32Array {
  const tokens = positions.length / 3, headDim = axesDims.reduce((a, b) => a + b, 0);
  const x = new Float32Array(tokens * headDim);
  for (let i = 0; i < x.length; i += 2) x[i] = 1;
  return ropeAxes({ x, positions, tokens, heads: 1, headDim, axesDims, theta: 256 });
}

for (const set of GOLDEN_SETS) {
  const index = await loadTinyIndex(set);
  const { axesDims } = parseDitConfig(index.config.dit as Record<string, unknown>);
  const cases = goldenCases(index).dit;
  Deno.test(`positions: caption (i+1, 0, 0), image (capPadded+1, h, w), padding (0, 0, 0): ${set}'s DiT cases`, async () => {
    const dit = await goldenStore("dit", set);
    for (const { name: c, latentH, latentW, capLen } of cases) {
      const capPadded = paddedLength(capLen);
      const img = imagePositions(latentH / 2, latentW / 2, capPadded);
      const cap = captionPositions(capPadded);
      deepStrictEqual(img, await goldenTensor(dit, `${c}.image_pos_ids`), `${c}.image_pos_ids`);
      deepStrictEqual(cap, await goldenTensor(dit, `${c}.cap_pos_ids`), `${c}.cap_pos_ids`);
      // ropeAxes (adjacent pairs, theta 256, per-axis exponent) at these positions gives the golden (cos, sin).
      for (const [pos, name] of [[img, "rope_image"], [cap, "rope_cap"]] as const) {
        const rel = maxRelative(cosSin(pos, axesDims), await goldenTensor(dit, `${c}.${name}`));
        ok(rel < 1e-5, `${c}.${name}: max rel ${rel}`);
      }
    }
  });
}

Deno.test("positions: the real model's (512-token caption, 64 x 64 patches, axes [32, 48, 48]) as real.safetensors", async () => {
  const real = await goldenStore("real");
  const cap = captionPositions(512), img = imagePositions(64, 64, 512), padded = imagePositions(1, 1, 512);
  const row = (p: Int32Array, i: number) => [...p.slice(3 * i, 3 * i + 3)];
  const picked = [row(cap, 0), row(cap, 1), row(cap, 511), row(img, 0), row(img, 5 * 64 + 7), row(img, 63 * 64 + 63)];
  picked.push(row(padded, 1));
  const want = await goldenTensor(real, "rope.pos_ids");
  deepStrictEqual(picked.flat(), [...want]);
  const rel = maxRelative(
    cosSin(Int32Array.from(picked.flat()), [32, 48, 48]),
    await goldenTensor(real, "rope.cos_sin"),
  );
  // Angles up to 513 rad: the op rounds invFreq to f32 first, upstream rounds the f64 angle (~3e-5 rad apart).
  ok(rel < 1e-4, `rope.cos_sin: max rel ${rel}`);
});
