import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import type { GpuTensor, ResidentDevice } from "../harness/device.ts";
import { assertThrowsMessage, gpuTest } from "../harness/testing.ts";
import { argmaxTokenPlan } from "../ops/sample/mod.ts";
import { TokenRing, tokenRingGrouping, type TokenRingOptions } from "./token_ring.ts";

const VOCAB = 64;

/**
 * A loop of `maxTokens` steps as a model's would run on the GPU: each step is ops/sample's argmax over
 * logits whose largest entry is `want[k]` (written into the queue before step k is submitted, so
 * every step reads its own), submitted while the ring has room, the ids read as they land.
 */
async function loop(gpu: ResidentDevice, want: number[], options: TokenRingOptions) {
  const plan = argmaxTokenPlan(gpu, { vocab: VOCAB, steps: want.length });
  const tensors = plan.bindings.map((b) => gpu.alloc(b.dtype, b.length, b.name));
  const [logits, , tokens] = tensors;
  const program = gpu.program("argmax", [[plan, tensors]]);
  const ring = new TokenRing(gpu.device, tokens, want.length, options);
  const groups: [number, number[]][] = [];
  let ahead = 0, mostPending = 0;
  try {
    while (ring.pending > 0 || ring.room) {
      while (ring.room) {
        const row = new Float32Array(VOCAB).fill(-1);
        row[want[ring.submitted]] = 1;
        gpu.device.queue.writeBuffer(logits.buffer, 0, row);
        const encoder = gpu.device.createCommandEncoder();
        program.encode(encoder);
        ring.submit(encoder);
        mostPending = Math.max(mostPending, ring.pending);
      }
      const { first, ids } = await ring.read();
      ahead = Math.max(ahead, ring.submitted - (first + ids.length));
      groups.push([first, [...ids]]);
    }
  } finally {
    await ring.destroy();
    program.destroy();
    for (const t of tensors) t.buffer.destroy();
  }
  return { groups, ahead, mostPending };
}

gpuTest(
  "TokenRing: ids come back in order, the first alone, then readEvery at a time, steps queued ahead",
  async (gpu) => {
    const want = [5, 17, 3, 63, 0, 9, 9, 41, 2, 30];
    const { groups, ahead, mostPending } = await loop(gpu, want, { readEvery: 3, inFlight: 2 });
    deepStrictEqual(groups, [[0, [5]], [1, [17, 3, 63]], [4, [0, 9, 9]], [7, [41, 2, 30]]]);
    strictEqual(mostPending, 2, "two readbacks outstanding at once");
    ok(ahead >= 3, `steps were queued past the ids in hand (at most ${ahead} ahead)`);
    // A last group shorter than readEvery; readEvery past the tokens; one token; one at a time.
    deepStrictEqual((await loop(gpu, want.slice(0, 6), { readEvery: 4 })).groups, [[0, [5]], [1, [17, 3, 63, 0]], [
      5,
      [9],
    ]]);
    deepStrictEqual((await loop(gpu, want.slice(0, 4), { readEvery: 16 })).groups, [[0, [5]], [1, [17, 3, 63]]]);
    deepStrictEqual((await loop(gpu, [7], {})).groups, [[0, [7]]]);
    const single = await loop(gpu, want.slice(0, 3), { readEvery: 1, inFlight: 1 });
    deepStrictEqual(single.groups, [[0, [5]], [1, [17]], [2, [3]]]);
    strictEqual(single.ahead, 0, "with one readback in flight, no step runs ahead of the ids read");
  },
);

gpuTest(
  "TokenRing: destroy with readbacks outstanding (a stop before the end) settles their maps and leaves no buffer",
  async (gpu) => {
    const plan = argmaxTokenPlan(gpu, { vocab: VOCAB, steps: 10 });
    const tensors = plan.bindings.map((b) => gpu.alloc(b.dtype, b.length, b.name));
    const program = gpu.program("argmax", [[plan, tensors]]);
    try {
      const before = gpu.memory;
      const ring = new TokenRing(gpu.device, tensors[2], 10, { readEvery: 2, inFlight: 3 });
      strictEqual(gpu.memory.buffers - before.buffers, 3, "a staging buffer per readback in flight");
      strictEqual(gpu.memory.bytes - before.bytes, 3 * 4 * 2, "each of readEvery ids");
      while (ring.room) {
        const encoder = gpu.device.createCommandEncoder();
        program.encode(encoder);
        ring.submit(encoder);
      }
      deepStrictEqual([ring.submitted, ring.pending], [5, 3], "tokens 0, 1-2, 3-4 queued");
      strictEqual((await ring.read()).first, 0); // the caller stops after the first group
      await ring.destroy();
      strictEqual(ring.room, false);
      deepStrictEqual([gpu.memory.bytes, gpu.memory.buffers], [before.bytes, before.buffers]);
      await ring.destroy(); // twice is harmless
      // Fewer tokens than readEvery and inFlight: the ring holds no more than the loop can use.
      const small = new TokenRing(gpu.device, tensors[2], 2, {});
      deepStrictEqual([gpu.memory.buffers - before.buffers, gpu.memory.bytes - before.bytes], [2, 2 * 4 * 2]);
      await small.destroy();
      // destroy() while a read() waits for its map: the read gets its ids, then the buffers go.
      const racing = new TokenRing(gpu.device, tensors[2], 10, { readEvery: 2, inFlight: 3 });
      const encoder = gpu.device.createCommandEncoder();
      program.encode(encoder);
      racing.submit(encoder);
      const reading = racing.read();
      await racing.destroy();
      deepStrictEqual([(await reading).first, (await reading).ids.length], [0, 1]);
      deepStrictEqual([gpu.memory.bytes, gpu.memory.buffers], [before.bytes, before.buffers]);
    } finally {
      program.destroy();
      for (const t of tensors) t.buffer.destroy();
    }
  },
);

gpuTest("TokenRing: bad sizes and options are refused by name before anything is allocated", async (gpu) => {
  const tokens = gpu.alloc("u32", 4);
  const make = (t: GpuTensor, max: number, options?: TokenRingOptions) => () =>
    new TokenRing(gpu.device, t, max, options);
  try {
    await assertThrowsMessage(make(tokens, 0), "maxTokens must be an integer >= 1, got 0");
    await assertThrowsMessage(make(tokens, 2, { readEvery: 0 }), "readEvery must be an integer >= 1, got 0");
    await assertThrowsMessage(make(tokens, 2, { inFlight: 1.5 }), "inFlight must be an integer >= 1, got 1.5");
    await assertThrowsMessage(make(tokens, 2, { readevery: 2 } as never), 'unknown option "readevery"');
    await assertThrowsMessage(make(tokens, 2, 3 as never), "options must be an object");
    await assertThrowsMessage(make(tokens, 5), "tokens must be a u32 tensor of at least maxTokens (5) ids, got 4 u32");
    await assertThrowsMessage(make(gpu.alloc("f32", 8), 2), "got 8 f32");
    const ring = new TokenRing(gpu.device, tokens, 2, { inFlight: 1 });
    await assertThrowsMessage(() => ring.read(), "read() with no readback pending");
    ring.submit(gpu.device.createCommandEncoder()); // token 0: a readback
    strictEqual(ring.room, false);
    await assertThrowsMessage(() => ring.submit(gpu.device.createCommandEncoder()), "no room for another step");
    await ring.destroy(); // the outstanding map settled, the buffers freed
    await assertThrowsMessage(() => ring.submit(gpu.device.createCommandEncoder()), "submit after destroy()");
  } finally {
    tokens.buffer.destroy();
  }
});

Deno.test("tokenRingGrouping: the ring's defaults, the caller's values checked by its name, one at a time", async () => {
  deepStrictEqual(tokenRingGrouping("g", {}), { readEvery: 16, inFlight: 4 });
  deepStrictEqual(tokenRingGrouping("g", { readEvery: 3, inFlight: 2 }), { readEvery: 3, inFlight: 2 });
  deepStrictEqual(tokenRingGrouping("g", { inFlight: 1 }), { readEvery: 16, inFlight: 1 });
  // A loop that needs each id before its next step: one readback per token, whatever was asked; a bad
  // value is refused all the same.
  deepStrictEqual(tokenRingGrouping("g", { readEvery: 8, inFlight: 3 }, true), { readEvery: 1, inFlight: 1 });
  await assertThrowsMessage(
    () => tokenRingGrouping("g", { readEvery: 0 }, true),
    "g: readEvery must be an integer >= 1, got 0",
  );
  await assertThrowsMessage(
    () => tokenRingGrouping("my.generate", { readEvery: 0 }),
    /^my\.generate: readEvery must be an integer >= 1, got 0$/,
  );
  await assertThrowsMessage(
    () => tokenRingGrouping("g", { inFlight: 2.5 }),
    "g: inFlight must be an integer >= 1, got 2.5",
  );
  await assertThrowsMessage(
    () => tokenRingGrouping("g", { readEvery: "4" as never }),
    "readEvery must be an integer >= 1, got 4",
  );
});
