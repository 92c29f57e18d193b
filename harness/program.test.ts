// Programs: plans bound once and replayed. Each run encodes the same dispatches on whatever the
// tensors hold; a program's uniforms are its own; errors land on the run that caused them.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, DOUBLE_WGSL, doublePlan, gpuTest } from "./testing.ts";

const ramp = (n: number, from: number) => Float32Array.from({ length: n }, (_, i) => from + i);

gpuTest("a program replays its dispatches on the tensors' current contents", async (gpu) => {
  const n = 37;
  const x = gpu.upload(ramp(n, 1), "x");
  const y = gpu.alloc("f32", n, "y");
  const program = gpu.program("double twice", [[doublePlan(n), [x, y]], [doublePlan(n), [y, x]]]);
  try {
    strictEqual(program.steps.length, 2);
    await program.run();
    deepStrictEqual([...await gpu.read(x)], [...ramp(n, 1)].map((v) => 4 * v));
    await program.run(); // x was overwritten by the first run: the second starts from there
    deepStrictEqual([...await gpu.read(x)], [...ramp(n, 1)].map((v) => 16 * v));
    gpu.device.queue.writeBuffer(x.buffer, 0, ramp(n, -5));
    await program.run();
    deepStrictEqual([...await gpu.read(x)], [...ramp(n, -5)].map((v) => 4 * v));
  } finally {
    program.destroy();
    x.buffer.destroy();
    y.buffer.destroy();
  }
});

gpuTest("bound dispatches and unbound steps mix; params are bound per step, not shared", async (gpu) => {
  // Two plans of the same kernel with different n (a uniform each): a shared uniform would give
  // the second the first's n.
  const x = gpu.upload(ramp(8, 1), "x");
  const y = gpu.upload(new Float32Array(8).fill(-1), "y");
  const bound = gpu.bind(doublePlan(8), [x, y]);
  const program = gpu.program("mixed", [bound, [doublePlan(3), [y, x]]]);
  try {
    await program.run();
    deepStrictEqual([...await gpu.read(y)], [2, 4, 6, 8, 10, 12, 14, 16]);
    deepStrictEqual([...await gpu.read(x)], [4, 8, 12, 4, 5, 6, 7, 8]);
    strictEqual(program.cost.bytes, doublePlan(8).cost.bytes + doublePlan(3).cost.bytes);
  } finally {
    program.destroy();
    x.buffer.destroy();
    y.buffer.destroy();
  }
});

gpuTest("program: bad steps are refused before anything is bound, naming the step", async (gpu) => {
  const x = gpu.upload(ramp(4, 0), "x");
  const short = gpu.alloc("f32", 3, "short");
  try {
    await assertThrowsMessage(
      () => gpu.program("bad", [[doublePlan(4), [x, x]], [doublePlan(4), [x, short]]]),
      "double/kernel: binding 1 (out) expects 4 f32, got 3 f32",
    );
    await assertThrowsMessage(() => gpu.bind(doublePlan(4), [x]), "double/kernel: expected 2 tensors, got 1");
  } finally {
    x.buffer.destroy();
    short.buffer.destroy();
  }
});

gpuTest("program: a WebGPU error lands on its run, naming the program; a destroyed program refuses", async (gpu) => {
  const n = 4;
  const x = gpu.upload(ramp(n, 0), "x");
  const y = gpu.alloc("f32", n, "y");
  const program = gpu.program("doomed", [[doublePlan(n), [x, y]]]);
  try {
    y.buffer.destroy(); // after the bind: only the submit can notice
    await assertThrowsMessage(() => program.run(), 'WebGPU rejected program "doomed" (1 dispatches: double/kernel)');
    program.destroy();
    await assertThrowsMessage(() => program.run(), 'program "doomed" was destroyed');
  } finally {
    x.buffer.destroy();
  }
});

gpuTest(
  "one pipeline cache per GPUDevice: a second ResidentDevice over it refuses another source for a key",
  async (gpu) => {
    const { acquireDevice } = await import("./device.ts");
    const other = await acquireDevice({ device: gpu.device });
    const x = gpu.upload(ramp(4, 0), "x");
    const y = gpu.alloc("f32", 4, "y");
    try {
      await gpu.submit([doublePlan(4), [x, y]]);
      const changed = DOUBLE_WGSL.replace("2.0", "3.0");
      strictEqual(changed !== DOUBLE_WGSL, true);
      await assertThrowsMessage(
        () => other.submit([doublePlan(4, changed), [x, y]]),
        "pipeline cache: double/kernel was already compiled from a different source",
      );
    } finally {
      x.buffer.destroy();
      y.buffer.destroy();
    }
  },
);
