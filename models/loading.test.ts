import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../harness/testing.ts";
import { freeOnFailure } from "./loading.ts";

gpuTest(
  "freeOnFailure: a failed load destroys what it kept, at any depth; a load that returns keeps it all",
  async (gpu) => {
    const live = () => [gpu.memory.bytes, gpu.memory.buffers];
    const before = live();
    class Owner {
      constructor(readonly t = gpu.alloc("f32", 4, "a class's own")) {}
    }
    let owner: Owner | undefined, unkept: ReturnType<typeof gpu.alloc> | undefined;
    await assertThrowsMessage(
      () =>
        freeOnFailure(async (keep) => {
          keep(gpu.alloc("f32", 16, "a tensor"));
          keep({ weight: gpu.alloc("u32", 8, "weight"), scales: gpu.alloc("f32", 2, "scales"), bias: undefined });
          keep([[gpu.alloc("f32", 1, "deep")], { rows: 3 }]);
          // A class instance is not looked into (its class frees what it holds), nor a tensor not kept.
          owner = keep(new Owner());
          unkept = gpu.alloc("f32", 32, "not kept");
          await Promise.resolve();
          throw new Error("the next read failed");
        }),
      "the next read failed",
    );
    // What is left: the class's tensor and the one not kept.
    deepStrictEqual(live(), [before[0] + owner!.t.buffer.size + unkept!.buffer.size, before[1] + 2]);
    owner!.t.buffer.destroy();
    unkept!.buffer.destroy();
    deepStrictEqual(live(), before);

    const loaded = await freeOnFailure((keep) => Promise.resolve(keep({ w: gpu.alloc("f32", 64, "w") })));
    strictEqual(gpu.memory.buffers, before[1] + 1, "a load that returns keeps its tensors");
    loaded.w.buffer.destroy();
    deepStrictEqual(live(), before);
  },
);
