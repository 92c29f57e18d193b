import { strictEqual } from "node:assert/strict";
import type { ResidentDevice } from "../harness/device.ts";
import { assertThrowsMessage, gpuTest } from "../harness/testing.ts";
import { ErrorScopeBatch } from "./error_scopes.ts";

/** Work WebGPU rejects with a validation error: MAP_READ combines with COPY_DST only. */
const invalid = (gpu: ResidentDevice) => () => {
  gpu.device.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.STORAGE });
};

/** Valid work: an upload and a submission. */
const valid = (gpu: ResidentDevice) => () => {
  const t = gpu.alloc("f32", 4, "scratch");
  gpu.device.queue.writeBuffer(t.buffer, 0, new Float32Array([1, 2, 3, 4]));
  gpu.device.queue.submit([gpu.device.createCommandEncoder().finish()]);
  t.buffer.destroy();
};

gpuTest(
  "ErrorScopeBatch: a rejected command fails the next check, naming the work; the batch is empty after",
  async (gpu) => {
    const batch = new ErrorScopeBatch(gpu, "a test loop");
    batch.run(valid(gpu));
    batch.run(invalid(gpu));
    batch.run(valid(gpu));
    await assertThrowsMessage(() => batch.check(), /^WebGPU rejected a test loop: /);
    strictEqual(await batch.check(), undefined);
  },
);

gpuTest("ErrorScopeBatch: clean work gives nothing", async (gpu) => {
  const batch = new ErrorScopeBatch(gpu, "a test loop");
  strictEqual(await batch.check(), undefined); // empty
  for (let i = 0; i < 3; i++) batch.run(valid(gpu));
  strictEqual(await batch.check(), undefined);
});

gpuTest("ErrorScopeBatch: the first failure in the order the work ran is the one thrown", async (gpu) => {
  const thrown = () => {
    throw new Error("thrown by the work");
  };
  const batch = new ErrorScopeBatch(gpu, "a test loop");
  batch.run(valid(gpu));
  batch.run(thrown);
  batch.run(invalid(gpu));
  await assertThrowsMessage(() => batch.check(), "thrown by the work");
  batch.run(invalid(gpu));
  batch.run(thrown);
  await assertThrowsMessage(() => batch.check(), /^WebGPU rejected a test loop: /);
  strictEqual(await batch.check(), undefined); // the outcomes after the first failure were dropped
  // Every scope was popped: work outside the batch afterwards catches nothing.
  strictEqual(await gpu.withErrorScopes(() => "after the batches", () => 7), 7);
});

gpuTest("ErrorScopeBatch.run: the work runs and its scopes are pushed and popped before run returns", (gpu) => {
  const device = gpu.device;
  const { pushErrorScope, popErrorScope } = device;
  let depth = 0, pushes = 0, ran = false;
  device.pushErrorScope = (filter) => (depth++, pushes++, pushErrorScope.call(device, filter));
  device.popErrorScope = () => (depth--, popErrorScope.call(device));
  try {
    const batch = new ErrorScopeBatch(gpu, "a test loop");
    batch.run(() => {
      strictEqual(depth, 2); // inside the validation and out-of-memory scopes
      ran = true;
    });
    strictEqual(ran, true);
    strictEqual(pushes, 2);
    strictEqual(depth, 0);
  } finally {
    device.pushErrorScope = pushErrorScope;
    device.popErrorScope = popErrorScope;
  }
});

gpuTest("ErrorScopeBatch refuses a gpu, name or work of the wrong kind", async (gpu) => {
  await assertThrowsMessage(
    () => new ErrorScopeBatch({} as never, "x"),
    "ErrorScopeBatch: gpu must be a ResidentDevice",
  );
  await assertThrowsMessage(
    () => new ErrorScopeBatch(gpu, 1 as never),
    "ErrorScopeBatch: what must be a string, got 1",
  );
  await assertThrowsMessage(
    () => new ErrorScopeBatch(gpu, "x").run("go" as never),
    "ErrorScopeBatch.run: work must be a function, got go",
  );
});
