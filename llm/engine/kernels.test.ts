import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { gpuTest, randomF32 } from "../../harness/testing.ts";
import { ARGMAX, ARGMAX_SLICE, NO_POSSIBLE_TOKEN, NONFINITE_LOGITS } from "./kernels.ts";

/**
 * The definition: the first index of the largest value (torch.argmax, +Infinity included); a row
 * holding NaN is flagged instead, and so is a row with no value above -Infinity.
 */
function firstArgmax(x: Float32Array): number {
  if (x.some(Number.isNaN)) return NONFINITE_LOGITS;
  let best = -1;
  for (let i = 0; i < x.length; i++) if (x[i] > -Infinity && (best < 0 || x[i] > x[best])) best = i;
  return best < 0 ? NO_POSSIBLE_TOKEN : best;
}

gpuTest(
  "argmax kernel: first index of the largest logit across slices, +Infinity chosen, NaN and all -Infinity flagged; state advanced",
  async (gpu) => {
    const device = gpu.device;
    const vocab = 3 * ARGMAX_SLICE + 123;
    const cases: [string, Float32Array][] = [];
    cases.push(["random", randomF32(vocab, 1)]);
    const tie = randomF32(vocab, 2);
    tie[ARGMAX_SLICE + 7] = tie[3 * ARGMAX_SLICE + 5] = 5; // tie across slices: the lower index
    cases.push(["tie across slices", tie]);
    const tieInSlice = randomF32(vocab, 3);
    tieInSlice[2 * ARGMAX_SLICE + 300] = tieInSlice[2 * ARGMAX_SLICE + 44] = 5; // tie within a slice
    cases.push(["tie within a slice", tieInSlice]);
    const nan = randomF32(vocab, 4);
    nan[10] = NaN;
    nan[ARGMAX_SLICE + 1] = 3;
    cases.push(["NaN present", nan]);
    const inf = randomF32(vocab, 5);
    inf[2 * ARGMAX_SLICE + 9] = Infinity;
    cases.push(["+Infinity present", inf]);
    cases.push(["every logit -Infinity", new Float32Array(vocab).fill(-Infinity)]);
    cases.push(["random after the flags (reset)", randomF32(vocab, 6)]);
    const module = device.createShaderModule({ code: ARGMAX });
    const pipeline = device.createComputePipeline({ layout: "auto", compute: { module, entryPoint: "main" } });
    const storage = (bytes: number) =>
      device.createBuffer({
        size: bytes,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      });
    const logits = storage(vocab * 4);
    const ids = storage(16);
    const tokens = storage(64);
    const state = storage(16);
    const partial = storage(8 * 4);
    const counter = storage(16); // [finished workgroups, NaN seen]
    const params = device.createBuffer({ size: 16, usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST });
    device.queue.writeBuffer(params, 0, new Uint32Array([vocab, 3, 0, 0]));
    device.queue.writeBuffer(state, 0, new Uint32Array([10, 0, 0, 0]));
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [logits, ids, tokens, state, partial, counter, params].map((buffer, binding) => ({
        binding,
        resource: { buffer },
      })),
    });
    for (const [, x] of cases) {
      device.queue.writeBuffer(logits, 0, x as Float32Array<ArrayBuffer>);
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, bindGroup);
      pass.dispatchWorkgroups(Math.ceil(vocab / ARGMAX_SLICE));
      pass.end();
      device.queue.submit([encoder.finish()]);
    }
    const read = async (
      buffer: GPUBuffer,
      words: number,
    ) => [...(await gpu.read({ buffer, dtype: "u32", length: words }))];
    assertEquals(await read(tokens, cases.length), cases.map(([, x]) => firstArgmax(x)));
    assertEquals(cases.map(([, x]) => firstArgmax(x)).slice(1, 6), [
      ARGMAX_SLICE + 7,
      2 * ARGMAX_SLICE + 44,
      NONFINITE_LOGITS,
      2 * ARGMAX_SLICE + 9,
      NO_POSSIBLE_TOKEN,
    ]);
    assertEquals(await read(ids, 1), [firstArgmax(cases.at(-1)![1])]);
    assertEquals(await read(state, 2), [10 + 3 * cases.length, cases.length]);
    assertEquals(await read(counter, 2), [0, 0]);
    for (const b of [logits, ids, tokens, state, partial, counter, params]) b.destroy();
  },
);
