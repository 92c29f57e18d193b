import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { quantizeRowsGpu } from "./load.ts";

// What quantizeRowsGpu writes is held to the converter's bytes, bit for bit, in
// models/llama/weights.test.ts (over the Llama fixtures' matrices, also under a small binding limit).

gpuTest(
  "quantizeRowsGpu: refuses a row over the binding limit, bad sizes, short buffers and f32, naming them",
  async (gpu) => {
    const buffer = gpu.alloc("u32", 4, "weight").buffer;
    try {
      const small = gpu.withLimits({ maxStorageBufferBindingSize: 256 });
      await assertThrowsMessage(
        () => quantizeRowsGpu(small, "q4g128", new Float32Array(65), 1, 65, buffer, buffer),
        "quantizeRowsGpu: one f32 row of 65 columns (260 bytes) is over the binding limit 256",
      );
      await assertThrowsMessage(
        () => quantizeRowsGpu(gpu, "q8", new Float32Array(5), 2, 3, buffer, buffer),
        "quantizeRowsGpu: values must have length rows * K = 6, got 5",
      );
      await assertThrowsMessage(
        () => quantizeRowsGpu(gpu, "f32" as "q8", new Float32Array(6), 2, 3, buffer, buffer),
        "quantizeRowsGpu: format must be q8 or q4g128, got f32",
      );
      await assertThrowsMessage(
        () => quantizeRowsGpu(gpu, "q8", new Float32Array(0), 0, 3, buffer, buffer),
        "quantizeRowsGpu: rows must be a positive integer, got 0",
      );
      // 9 rows of 8 columns: 18 words of q8 (72 bytes) and 9 scales; the buffer holds 16 bytes.
      await assertThrowsMessage(
        () => quantizeRowsGpu(gpu, "q8", new Float32Array(72), 9, 8, buffer, buffer),
        `quantizeRowsGpu: weight must hold at least 72 bytes, got ${buffer.size}`,
      );
    } finally {
      buffer.destroy();
    }
  },
);
