import { deepStrictEqual, strictEqual } from "node:assert/strict";
import type { ResidentDevice } from "../harness/device.ts";
import { assertClose, assertThrowsMessage, gpuTest, randomF32 } from "../harness/testing.ts";
import { type MatmulEpilogueArgs, matmulLinear, matmulQ4G128, matmulQ8 } from "../ops/matmul/reference.ts";
import { matmulQ4G128Dp4a, matmulQ8Dp4a } from "../ops/matmul/reference_dp4a.ts";
import { quantizePacked, quantizePackedQ4 } from "../ops/quantize/reference.ts";
import {
  allocInt8Scratch,
  destroyInt8Scratch,
  destroyLinear,
  layerBytes,
  type Linear,
  linearBytes,
  linearDispatch,
  type LinearEpilogue,
  type LinearFormat,
  linearTensors,
  quantizeRowsDispatch,
  uploadLinear,
} from "./linear.ts";

// The ops' references on the codes and scales the CPU quantizer makes: the GPU quantization at
// upload must give the same, and the product must be the op's.
function reference(
  format: LinearFormat,
  x: Float32Array,
  w: Float32Array,
  M: number,
  N: number,
  K: number,
  epilogue: MatmulEpilogueArgs,
): Float32Array {
  if (format === "f32") return matmulLinear({ a: x, weight: w, M, N, K, ...epilogue });
  if (format === "q8") {
    const { packed, scales } = quantizePacked({ x: w, rows: N, cols: K });
    return matmulQ8({ a: x, weight: packed, scales, M, N, K, ...epilogue });
  }
  const { packed, scales } = quantizePackedQ4({ x: w, rows: N, cols: K });
  return matmulQ4G128({ a: x, weight: packed, scales, M, N, K, ...epilogue });
}

async function product(
  gpu: ResidentDevice,
  layer: Linear,
  M: number,
  x: Float32Array,
  prior: Float32Array | undefined,
  epilogue: LinearEpilogue,
): Promise<{ out: Float32Array; op: string }> {
  const xt = gpu.upload(x), out = prior ? gpu.upload(prior) : gpu.alloc("f32", M * layer.N);
  try {
    const { plan, tensors, label } = linearDispatch(gpu, layer, M, xt, out, epilogue);
    strictEqual(label, layer.label);
    await gpu.submit([plan, tensors]);
    return { out: (await gpu.read(out)) as Float32Array, op: plan.op };
  } finally {
    xt.buffer.destroy();
    out.buffer.destroy();
  }
}

gpuTest(
  "linear: every format, with and without bias and epilogue, is its op's reference (GEMM and GEMV)",
  async (gpu) => {
    const N = 20, K = 150; // K past one q4g128 group and not a multiple of 4 or 8
    const w = randomF32(N * K, 1), bias = randomF32(N, 2);
    for (const format of ["f32", "q8", "q4g128"] as const) {
      const layer = await uploadLinear(gpu, w, N, K, { bias, label: `layer.${format}`, format });
      const bare = await uploadLinear(gpu, w, N, K, { label: `bare.${format}`, format });
      try {
        strictEqual(layerBytes(layer), linearBytes(N, K, format) + 4 * N);
        strictEqual(layerBytes(bare), linearBytes(N, K, format));
        deepStrictEqual(linearTensors(bare).length, format === "f32" ? 1 : 2);
        for (const M of [1, 6]) {
          const gateRows = M === 6 ? 3 : 1;
          const x = randomF32(M * K, 3 + M), gate = randomF32((M / gateRows) * N, 4), prior = randomF32(M * N, 5);
          const cases: [string, Linear, LinearEpilogue, MatmulEpilogueArgs, Float32Array | undefined, string][] = [
            ["bare", bare, {}, {}, undefined, M === 1 ? "matvec" : "matmul"],
            ["bias", layer, {}, { bias }, undefined, "matmul"],
            [
              "bias silu gate accumulate",
              layer,
              { activation: "silu", gateRows, accumulate: true },
              { bias, activation: "silu", gateRows, accumulate: true, c: prior },
              prior,
              "matmul",
            ],
          ];
          for (const [what, l, epi, refEpi, before, opFamily] of cases) {
            const gateTensor = what.includes("gate") ? gpu.upload(gate) : undefined;
            try {
              const e = gateTensor ? { ...epi, gate: gateTensor } : epi;
              const r = gateTensor ? { ...refEpi, gate } : refEpi;
              const { out, op } = await product(gpu, l, M, x, before, e);
              strictEqual(op.startsWith(opFamily), true, `${format} M=${M} ${what}: ${op}`);
              assertClose(
                out,
                reference(format, x, w, M, N, K, r),
                { rtol: 1e-5, atol: 1e-5 },
                `${format} M=${M} ${what}`,
              );
            } finally {
              gateTensor?.buffer.destroy();
            }
          }
        }
        // A bias in the epilogue replaces the layer's own.
        const other = randomF32(N, 6), x = randomF32(2 * K, 7);
        const otherTensor = gpu.upload(other);
        try {
          const { out } = await product(gpu, layer, 2, x, undefined, { bias: otherTensor });
          assertClose(
            out,
            reference(format, x, w, 2, N, K, { bias: other }),
            { rtol: 1e-5, atol: 1e-5 },
            `${format} bias`,
          );
        } finally {
          otherTensor.buffer.destroy();
        }
      } finally {
        destroyLinear(layer);
        destroyLinear(bare);
      }
    }
  },
);

gpuTest(
  "linear: int8 rows, quantized on the GPU, through q8 and q4g128 layers are the dp4a ops' references, epilogue and all",
  async (gpu) => {
    const N = 20, K = 150; // K past one q4g128 group and not a multiple of 4 or 8
    const w = randomF32(N * K, 11), bias = randomF32(N, 12);
    for (const format of ["q8", "q4g128"] as const) {
      const layer = await uploadLinear(gpu, w, N, K, { bias, label: `layer.${format}`, format });
      const bare = await uploadLinear(gpu, w, N, K, { label: `bare.${format}`, format });
      const weight = format === "q8"
        ? quantizePacked({ x: w, rows: N, cols: K })
        : quantizePackedQ4({ x: w, rows: N, cols: K });
      const scratch = allocInt8Scratch(gpu, 6, K, "test rows");
      try {
        for (const M of [1, 6]) {
          const gateRows = M === 6 ? 3 : 1;
          const x = randomF32(M * K, 13 + M), gate = randomF32((M / gateRows) * N, 14), prior = randomF32(M * N, 15);
          // The activations' codes and scales as ops/quantize's reference makes them.
          const a = quantizePacked({ x, rows: M, cols: K });
          const cases: [string, Linear, LinearEpilogue, MatmulEpilogueArgs][] = [
            ["bare", bare, {}, {}],
            ["bias", layer, {}, { bias }],
            [
              "bias silu gate accumulate",
              layer,
              { activation: "silu", gateRows, accumulate: true },
              { bias, activation: "silu", gate, gateRows, accumulate: true, c: prior },
            ],
          ];
          for (const [what, l, epi, refEpi] of cases) {
            const xt = gpu.upload(x), out = gpu.upload(prior), gateTensor = gpu.upload(gate);
            try {
              const e = what.includes("gate") ? { ...epi, gate: gateTensor } : epi;
              const { dispatch: quantize, rows } = quantizeRowsDispatch(gpu, M, K, xt, scratch, l.label);
              const product = linearDispatch(gpu, l, M, rows, out, e);
              strictEqual(product.plan.op, format === "q8" ? "matmulQ8Dp4a" : "matmulQ4G128Dp4a", `${format} M=${M}`);
              await gpu.submit([quantize.plan, quantize.tensors], [product.plan, product.tensors]);
              const args = { a: a.packed, aScales: a.scales, weight: weight.packed, scales: weight.scales, M, N, K };
              const expected = format === "q8"
                ? matmulQ8Dp4a({ ...args, ...refEpi })
                : matmulQ4G128Dp4a({ ...args, ...refEpi });
              assertClose(await gpu.read(out), expected, { rtol: 1e-5, atol: 1e-5 }, `${format} M=${M} ${what}`);
            } finally {
              for (const t of [xt, out, gateTensor]) t.buffer.destroy();
            }
          }
        }
      } finally {
        destroyLinear(layer);
        destroyLinear(bare);
        destroyInt8Scratch(scratch);
      }
    }
    const f32 = await uploadLinear(gpu, w, N, K, { label: "blocks.0.w1" });
    const q8 = await uploadLinear(gpu, w, N, K, { label: "blocks.0.w2", format: "q8" });
    const scratch = allocInt8Scratch(gpu, 2, K, "scratch");
    const x = gpu.alloc("f32", 2 * K);
    try {
      const { rows } = quantizeRowsDispatch(gpu, 2, K, x, scratch, "w1");
      await assertThrowsMessage(
        () => linearDispatch(gpu, f32, 2, rows, x),
        "blocks.0.w1: int8 rows need a q8 or q4g128 weight, got an f32 one",
      );
      // Rows of another width, or another count, than the product reads are refused by the layer's name.
      const narrow = quantizeRowsDispatch(gpu, 2, K - 4, x, scratch, "w2").rows;
      await assertThrowsMessage(
        () => linearDispatch(gpu, q8, 2, narrow, x),
        `blocks.0.w2: int8 rows must be [2, ${K}], got [2, ${K - 4}]`,
      );
      await assertThrowsMessage(() => linearDispatch(gpu, q8, 1, rows, x), `blocks.0.w2: int8 rows must be [1, ${K}]`);
      await assertThrowsMessage(
        () => quantizeRowsDispatch(gpu, 3, K, x, scratch, "w2"),
        `int8 rows of w2: [3, ${K}] is over the scratch's 2 rows of ${K} columns`,
      );
    } finally {
      destroyLinear(f32);
      destroyLinear(q8);
      destroyInt8Scratch(scratch);
      x.buffer.destroy();
    }
  },
);

gpuTest("linear: bad layers are refused by label before anything stays on the device", async (gpu) => {
  const before = gpu.memory.bytes;
  await assertThrowsMessage(
    () => uploadLinear(gpu, new Float32Array(5), 2, 3, { label: "blocks.0.w1" }),
    "blocks.0.w1: weight has 5 values, expected 2 x 3 = 6",
  );
  await assertThrowsMessage(
    () => uploadLinear(gpu, new Float32Array(6), 2, 3, { bias: new Float32Array(3), label: "proj" }),
    "proj: bias has 3 values, expected 2",
  );
  await assertThrowsMessage(
    () => uploadLinear(gpu, new Float32Array(6), 2, 3, { format: "q5" as LinearFormat, label: "proj" }),
    "proj: format must be one of f32, q8, q4g128, got q5",
  );
  const nan = new Float32Array(6);
  nan[4] = NaN;
  for (const format of ["q8", "q4g128"] as const) {
    await assertThrowsMessage(
      () => uploadLinear(gpu, nan, 2, 3, { bias: new Float32Array(2), format, label: "proj" }),
      `proj cannot be stored as ${format}: quantize: x must be finite (an int8 code has no value for Inf or NaN), but x[4] is NaN`,
    );
  }
  // One binding holds the whole stored weight: 64 f32 rows of 64 are 16 KiB, over a 4 KiB limit;
  // the same in q4g128 is 2 KiB of codes and fits.
  const low = gpu.withLimits({ maxStorageBufferBindingSize: 4096 });
  const w = randomF32(64 * 64, 8);
  await assertThrowsMessage(
    () => uploadLinear(low, w, 64, 64, { label: "layers.3.mlp" }),
    "layers.3.mlp: the weight [64, 64] is 16384 bytes in f32, over this device's binding limit of 4096",
  );
  const small = await uploadLinear(low, w, 64, 64, { label: "layers.3.mlp", format: "q4g128" });
  strictEqual(small.weight.length, 64 * 8);
  destroyLinear(small);
  strictEqual(gpu.memory.bytes, before);
});
