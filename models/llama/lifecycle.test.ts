// The engine's device, misused: none, a bare GPUDevice, or one its owner destroys while an engine holds
// it (a macrotask before device.lost settles): a named refusal or a DeviceLostError, never a TypeError
// or WebGPU's bare "validation error occurred".
import { ok, strictEqual } from "node:assert/strict";
import { acquireDevice, DeviceLostError } from "../../harness/device.ts";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { LlamaEngine } from "./engine.ts";
import { openFixture } from "./fixtures_test_util.ts";

async function errorOf(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (e) {
    return e;
  }
  throw new Error("did not throw");
}

gpuTest(
  "LlamaEngine.load without a ResidentDevice names gpu; on a caller-destroyed device, DeviceLostError",
  async () => {
    const { config, store, close } = await openFixture("tiny-gqa");
    const bare = await (await navigator.gpu.requestAdapter())!.requestDevice();
    try {
      for (
        const [gpu, given] of [[undefined, "undefined"], [{}, "an object without"], [bare, "a GPUDevice"]] as const
      ) {
        await assertThrowsMessage(
          () => LlamaEngine.load(gpu as never, store, config, { maxSeq: 16 }),
          `LlamaEngine: gpu must be a ResidentDevice (from acquireDevice()), got ${given}`,
        );
      }
      const gpu = await acquireDevice({ device: bare });
      const engine = await LlamaEngine.load(gpu, store, config, { format: "q8", maxSeq: 16 });
      bare.destroy(); // the caller's own device, destroyed by the caller while the engine holds it
      for (
        const [what, call] of [
          ["generate", () => Array.fromAsync(engine.generate([5, 6, 7], { maxTokens: 4 }))],
          ["forward", () => engine.forward([5])],
          ["load", () => LlamaEngine.load(gpu, store, config, { maxSeq: 16 })],
        ] as const
      ) {
        const error = await errorOf(call);
        ok(error instanceof DeviceLostError, `${what}: ${String(error)}`);
        strictEqual(error.reason, "destroyed (GPUDevice.destroy())", what);
      }
      engine.destroy();
    } finally {
      close();
    }
  },
);
