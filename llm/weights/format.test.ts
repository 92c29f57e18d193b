import { deepStrictEqual as assertEquals, ok as assert } from "node:assert/strict";
import { assertThrowsMessage, seededRandom } from "../../harness/testing.ts";
import { quantize } from "../../ops/quantize/reference.ts";
import { packQ4, packQ8, quantizeQ4G128 } from "../../ops/matvec/reference.ts";
import { SafetensorsFile } from "../safetensors.ts";
import { fileSource } from "../safetensors_file.ts";
import { permuteRopeChannels } from "../../ops/rope/reference.ts";
import { transformTensor } from "./format.ts";

const FIXTURES = new URL("../fixtures/", import.meta.url).pathname;

async function openFixture(path: string): Promise<SafetensorsFile> {
  return SafetensorsFile.open(await fileSource(`${FIXTURES}${path}`));
}

const int32 = (bytes: Uint8Array) => new Int32Array(bytes.slice().buffer);
const uint32 = (bytes: Uint8Array) => new Uint32Array(bytes.slice().buffer);

/** The heads transformTensor permutes by (a V tensor, as the tests below pass, is not permuted). */
const HEADS = { numAttentionHeads: 4, numKeyValueHeads: 2, headDim: 12 };

/** HF Llama's rotation: channel i pairs with i + d/2 (rotate_half). */
function ropeRotateHalf(q: number[], angles: number[]): number[] {
  const h = q.length / 2;
  const out = q.slice();
  for (let i = 0; i < h; i++) {
    out[i] = q[i] * Math.cos(angles[i]) - q[i + h] * Math.sin(angles[i]);
    out[i + h] = q[i + h] * Math.cos(angles[i]) + q[i] * Math.sin(angles[i]);
  }
  return out;
}

/** ops/rope's rotation: channel 2i pairs with 2i + 1. */
function ropeAdjacent(q: number[], angles: number[]): number[] {
  const out = q.slice();
  for (let i = 0; i < q.length / 2; i++) {
    out[2 * i] = q[2 * i] * Math.cos(angles[i]) - q[2 * i + 1] * Math.sin(angles[i]);
    out[2 * i + 1] = q[2 * i + 1] * Math.cos(angles[i]) + q[2 * i] * Math.sin(angles[i]);
  }
  return out;
}

Deno.test("permuteRopeChannels: adjacent-pair RoPE on permuted rows is rotate_half RoPE relabelled, and q.k is unchanged", () => {
  const random = seededRandom(3);
  const [heads, headDim, K] = [3, 8, 5];
  const wq = Float32Array.from({ length: heads * headDim * K }, () => random() * 2 - 1);
  const wk = Float32Array.from({ length: heads * headDim * K }, () => random() * 2 - 1);
  const x = Array.from({ length: K }, () => random() * 2 - 1);
  const matvec = (w: Float32Array, h: number) =>
    Array.from({ length: headDim }, (_, r) => x.reduce((s, xk, k) => s + w[(h * headDim + r) * K + k] * xk, 0));
  const anglesAt = (pos: number) => Array.from({ length: headDim / 2 }, (_, i) => pos * 10000 ** (-2 * i / headDim));
  const [pq, pk] = [permuteRopeChannels(wq, heads, headDim, K), permuteRopeChannels(wk, heads, headDim, K)];
  for (let h = 0; h < heads; h++) {
    const hf = ropeRotateHalf(matvec(wq, h), anglesAt(7));
    const ours = ropeAdjacent(matvec(pq, h), anglesAt(7));
    for (let i = 0; i < headDim / 2; i++) {
      assertEquals([ours[2 * i], ours[2 * i + 1]], [hf[i], hf[i + headDim / 2]], `head ${h} pair ${i}`);
    }
    const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i], 0);
    const hfScore = dot(hf, ropeRotateHalf(matvec(wk, h), anglesAt(3)));
    const ourScore = dot(ours, ropeAdjacent(matvec(pk, h), anglesAt(3)));
    assert(Math.abs(hfScore - ourScore) < 1e-12, `head ${h}: ${hfScore} vs ${ourScore}`);
    // Without the permutation the two rotations disagree (the test can fail).
    assert(ropeAdjacent(matvec(wq, h), anglesAt(7)).some((v, i) => Math.abs(v - hf[i]) > 1e-3));
  }
});

Deno.test("quantisers: ops' references agree with the fixtures' numpy quantiser at every tie (q8 and q4g128)", async () => {
  const file = await openFixture("quant-ties.safetensors");
  const x = await file.readFloat32("x");
  const [N, K] = file.info("x").shape;
  const q8 = quantize({ x, rows: N, cols: K });
  assertEquals(q8.codes, int32(await file.read("q8_codes")));
  assertEquals(q8.scales, await file.readFloat32("q8_scales"));
  assertEquals(packQ8(q8.codes, N, K), uint32(await file.read("q8_packed")));
  const q4 = quantizeQ4G128({ x, rows: N, cols: K });
  assertEquals(q4.codes, int32(await file.read("q4_codes")));
  assertEquals(q4.scales, await file.readFloat32("q4_scales"));
  assertEquals(packQ4(q4.codes, N, K), uint32(await file.read("q4_packed")));
  // The ties the fixture was built around: 2.5 -> 3, -2.5 -> -2, f32(0.5/127) at absmax 1 -> 0, f32(0.92857146) -> 7.
  assertEquals([...q8.codes.subarray(0, 6)], [127, 3, -2, 1, 0, 64]);
  assertEquals(q8.codes[K + 1], 0);
  assertEquals([...q4.codes.subarray(4 * K, 4 * K + 5)], [7, 3, -2, 1, 4]);
  assertEquals(q4.codes[4 * K + 129], 7);
  // bf16 weights at half their group's absmax: the exact ties 3.5 -> 4 and -3.5 -> -3, where w times
  // the rounded reciprocal 7 / absmax gives 3.4999999999999996 -> 3 and -3.5000000000000004 -> -4.
  assertEquals([q4.codes[6 * K + 1], q4.codes[6 * K + 129]], [4, -3]);
  assertEquals([x[6 * K + 1] * (7 / x[6 * K]), x[6 * K + 129] * (7 / x[6 * K + 128])], [
    3.4999999999999996,
    -3.5000000000000004,
  ]);
});

Deno.test("transformTensor: a tensor quantised in row blocks is the whole tensor quantised at once", async () => {
  // 2100 rows of 2048: blocks of 2048 rows, so the second block is 52 rows.
  const [N, K] = [2100, 2048];
  const spec = { name: "model.layers.0.self_attn.v_proj.weight", role: "v" as const, shape: [N, K] };
  const random = seededRandom(11);
  const w = Float32Array.from({ length: N * K }, () => random() * 2 - 1);
  const [q8, q8Scales] = transformTensor(spec, w, HEADS, "q8");
  const whole8 = quantize({ x: w, rows: N, cols: K });
  assertEquals(uint32(q8.data), packQ8(whole8.codes, N, K));
  assertEquals(new Float32Array(q8Scales.data.slice().buffer), whole8.scales);
  const [q4, q4Scales] = transformTensor(spec, w, HEADS, "q4g128");
  const whole4 = quantizeQ4G128({ x: w, rows: N, cols: K });
  assertEquals(uint32(q4.data), packQ4(whole4.codes, N, K));
  assertEquals(new Float32Array(q4Scales.data.slice().buffer), whole4.scales);
  w[2050 * K + 3] = Infinity;
  await assertThrowsMessage(
    () => transformTensor(spec, w, HEADS, "q4g128"),
    "quantizeQ4G128: x must be finite (an int4 code has no value for Inf or NaN), but x[4099] is Infinity (indices count from row 2048, the first of the block quantised)",
  );
});
