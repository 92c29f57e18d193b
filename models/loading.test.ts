import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../harness/testing.ts";
import { PendingUploads } from "../harness/host_copy.ts";
import { freeOnFailure, StageCopies } from "./loading.ts";

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

Deno.test("StageCopies: the first load is copied, later ones restored; a failed copy frees the stage; disabled, every load reads", async () => {
  const events: string[] = [];
  class Stage {
    constructor(readonly name: string, readonly copyFails = false) {}
    hostCopy() {
      events.push(`copy ${this.name}`);
      if (this.copyFails) return Promise.reject(new Error("read failed"));
      const restore = () => new Stage(`${this.name}'`);
      return Promise.resolve({
        bytes: 16,
        restore,
        restoreDeferred: () => ({ value: restore(), uploads: new PendingUploads({} as GPUQueue, new Map()) }),
      });
    }
    destroy() {
      events.push(`destroy ${this.name}`);
    }
  }
  const copies = new StageCopies<{ a: Stage; b: Stage }>(true);
  const load =
    (name: string, copyFails = false) =>
    () => (events.push(`load ${name}`), Promise.resolve(new Stage(name, copyFails)));
  strictEqual((await copies.stage("a", load("a"), () => events.push("restored a"))).name, "a");
  strictEqual((await copies.stage("a", load("a"), () => events.push("restored a"))).name, "a'");
  await assertThrowsMessage(() => copies.stage("b", load("b", true)), "read failed");
  deepStrictEqual(events, ["load a", "copy a", "restored a", "load b", "copy b", "destroy b"]);
  strictEqual(copies.bytes, 16);
  copies.clear();
  strictEqual(copies.bytes, 0);
  events.length = 0;
  const off = new StageCopies<{ a: Stage }>(false);
  for (let i = 0; i < 2; i++) await off.stage("a", load("a"));
  deepStrictEqual(events, ["load a", "load a"]);
  strictEqual(off.bytes, 0);
});
