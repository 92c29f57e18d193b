import { deepStrictEqual as assertEquals, throws } from "node:assert/strict";
import { foldWorkgroups } from "../../harness/limits.ts";
import { assertClose, gpuTest, randomF32, randomInt32 } from "../../harness/testing.ts";
import { packQ4, packQ8 } from "../../ops/matvec/reference.ts";
import type { WeightFormat } from "../weights/format.ts";
import {
  FUSED_GEMV_LAYOUTS,
  fusedGemvLayout,
  fusedGemvRows,
  fusedGemvSource,
  type GemvInput,
  type GemvOutput,
} from "./fused_gemv.ts";

const EPS = 1e-5;

/** A weight as the engine stores it and as the definition reads it (dequantised, f64). */
interface Weight {
  words: Uint32Array | Float32Array;
  scales?: Float32Array;
  value(n: number, k: number): number;
}

function weightOf(format: WeightFormat, N: number, K: number, seed: number): Weight {
  if (format === "f32") {
    const w = randomF32(N * K, seed);
    return { words: w, value: (n, k) => w[n * K + k] };
  }
  if (format === "q8") {
    const codes = randomInt32(N * K, seed, -127, 128);
    const scales = randomF32(N, seed + 1, 0.001, 0.01);
    return { words: packQ8(codes, N, K), scales, value: (n, k) => codes[n * K + k] * scales[n] };
  }
  const codes = randomInt32(N * K, seed, -7, 8);
  const groups = Math.ceil(K / 128);
  const scales = randomF32(N * groups, seed + 1, 0.01, 0.2);
  return {
    words: packQ4(codes, N, K),
    scales,
    value: (n, k) => codes[n * K + k] * scales[n * groups + Math.floor(k / 128)],
  };
}

/**
 * The definition, in f64: `y = W · in(x)` with `in(x) = x` or RMSNorm(x) (`x / sqrt(mean(x^2) + eps) * g`),
 * then `out[out0 + n] = y[n]`, `+= y[n]`, or `out[out0 + j] = silu(y[2j]) * y[2j + 1]`.
 */
function expected(
  w: Weight,
  N: number,
  K: number,
  x: Float32Array,
  g: Float32Array,
  input: GemvInput,
  output: GemvOutput,
  out: Float32Array,
  out0: number,
): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const inv = 1 / Math.sqrt(ss / K + EPS);
  const xin = Array.from(x, (v, k) => input === "norm" ? v * inv * g[k] : v);
  const y = new Float64Array(N);
  for (let n = 0; n < N; n++) for (let k = 0; k < K; k++) y[n] += w.value(n, k) * xin[k];
  const want = Float64Array.from(out);
  if (output === "swiglu") {
    for (let j = 0; j < N / 2; j++) want[out0 + j] = y[2 * j] / (1 + Math.exp(-y[2 * j])) * y[2 * j + 1];
  } else {
    for (let n = 0; n < N; n++) want[out0 + n] = (output === "add" ? want[out0 + n] : 0) + y[n];
  }
  return want;
}

/** Shapes: both paths of each quantised format (aligned rows and word by word, q4g128's half-padded last word), several tiles, rows not a multiple of a workgroup's. */
const SHAPES: Record<WeightFormat, [number, number][]> = {
  f32: [[38, 36], [22, 1040]],
  q8: [[38, 48], [22, 36], [10, 4160]],
  q4g128: [[38, 64], [22, 48], [18, 36], [10, 4352]],
};

const MODES: [GemvInput, GemvOutput][] = [["norm", "store"], ["plain", "add"], ["norm", "swiglu"], ["plain", "swiglu"]];

gpuTest(
  "fused GEMV: every format, RMSNorm input and store / residual add / SwiGLU output, at an offset, match the definition",
  async (gpu) => {
    const device = gpu.device;
    const buffer = (data: Float32Array | Uint32Array, usage: number = GPUBufferUsage.STORAGE) => {
      const b = device.createBuffer({ size: Math.max(16, data.byteLength), usage: usage | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(b, 0, data as Float32Array<ArrayBuffer>);
      return b;
    };
    let seed = 1;
    for (const format of ["f32", "q8", "q4g128"] as const) {
      for (const [N, K] of SHAPES[format]) {
        for (const { layout } of FUSED_GEMV_LAYOUTS[format]) {
          for (const [input, output] of MODES) {
            const label = `${format} ${JSON.stringify(layout)} ${N}x${K} ${input}>${output}`;
            const w = weightOf(format, N, K, seed++);
            const x = randomF32(K, seed++, -2, 2);
            const g = randomF32(K, seed++, 0.5, 1.5);
            const out0 = 3;
            const outLength = out0 + N + 5;
            const before = randomF32(outLength, seed++);
            const want = expected(w, N, K, x, g, input, output, before, out0);
            const source = fusedGemvSource(format, input, output, layout);
            const module = device.createShaderModule({ code: source });
            const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
            const out = buffer(before, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
            const params = new ArrayBuffer(16);
            new Uint32Array(params).set([N, K, out0]);
            new Float32Array(params)[3] = EPS;
            const storage = [buffer(w.words), ...(w.scales ? [buffer(w.scales)] : []), buffer(x)];
            if (input === "norm") storage.push(buffer(g));
            storage.push(out, buffer(new Float32Array(params), GPUBufferUsage.UNIFORM));
            const bindGroup = device.createBindGroup({
              layout: pipeline.getBindGroupLayout(0),
              entries: storage.map((b, binding) => ({ binding, resource: { buffer: b } })),
            });
            // The grid folded into two dimensions (3 workgroups across), as past 65,535 workgroups.
            const grid = foldWorkgroups(Math.ceil(N / fusedGemvRows(layout)), 3);
            const encoder = device.createCommandEncoder();
            const pass = encoder.beginComputePass();
            pass.setPipeline(pipeline);
            pass.setBindGroup(0, bindGroup);
            pass.dispatchWorkgroups(...grid);
            pass.end();
            device.queue.submit([encoder.finish()]);
            const got = await gpu.read({ buffer: out, dtype: "f32", length: outLength });
            // f32 sums of K terms of order 1 in another order: a few ulps of the row's magnitude.
            assertClose(got, want, { atol: 4e-7 * K, rtol: 1e-5 }, label);
            // Outside its rows (or pairs) the output keeps what it held, bit for bit.
            const written = output === "swiglu" ? N / 2 : N;
            assertEquals(
              [...got.subarray(0, out0), ...got.subarray(out0 + written)],
              [...before.subarray(0, out0), ...before.subarray(out0 + written)],
              label,
            );
            for (const b of storage) b.destroy();
          }
        }
      }
    }
  },
);

Deno.test("fused GEMV: a weight takes its format's first layout whose minRows it reaches", () => {
  for (const format of ["f32", "q8", "q4g128"] as const) {
    const entries = FUSED_GEMV_LAYOUTS[format];
    assertEquals(entries.at(-1)!.minRows, 0, `${format}: every weight has a layout`);
    for (const [i, e] of entries.entries()) {
      assertEquals(fusedGemvLayout(format, e.minRows), e.layout, `${format} at ${e.minRows} rows`);
      if (i > 0) {
        assertEquals(
          fusedGemvLayout(format, entries[i - 1].minRows - 1),
          e.layout,
          `${format} below ${entries[i - 1].minRows} rows`,
        );
      }
    }
  }
});

Deno.test("fused GEMV: a layout of another format, or lanes that do not reduce to one, are refused", () => {
  throws(
    () => fusedGemvSource("q8", "plain", "store", { kind: "q4-tiled" }),
    /layout q4-tiled is not one of format q8's/,
  );
  throws(() => fusedGemvSource("f32", "plain", "store", { kind: "q4-tiled" }), /not one of format f32's/);
  throws(
    () => fusedGemvSource("q4g128", "plain", "store", { kind: "lanes", lanes: 32, groups: 2, unroll: 2, reduce: [32] }),
    /layout lanes is not one of format q4g128's/,
  );
  const bad = { kind: "lanes", lanes: 16, groups: 4, unroll: 2, reduce: [8] } as const;
  throws(
    () => fusedGemvSource("q8", "plain", "store", bad),
    /layout.reduce must be powers of two multiplying to lanes/,
  );
  throws(() => fusedGemvSource("q8", "plain", "store", { ...bad, lanes: 12, reduce: [12] }), /powers of two lanes/);
  throws(
    () => fusedGemvSource("q8", "plain", "store", { ...bad, groups: 32, reduce: [16] }),
    /at most 256 invocations/,
  );
});
