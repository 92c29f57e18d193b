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

/** DOUBLE_WGSL with its factor a pipeline-overridable constant (default 2). */
const SCALE_WGSL = DOUBLE_WGSL.replace("struct Params", "override FACTOR: f32 = 2.0;\nstruct Params")
  .replace("2.0 * x[id.x]", "FACTOR * x[id.x]");

gpuTest(
  "pipeline constants: one kernel with two sets of constants is two pipelines; bad ones are refused",
  async (gpu) => {
    const n = 5;
    const x = gpu.upload(ramp(n, 1), "x");
    const [y2, y3, y5] = [gpu.alloc("f32", n, "y2"), gpu.alloc("f32", n, "y3"), gpu.alloc("f32", n, "y5")];
    const plan = (constants?: Record<string, number>) => ({ ...doublePlan(n, SCALE_WGSL, "scale"), constants });
    const program = gpu.program("scales", [
      [plan(), [x, y2]],
      [plan({ FACTOR: 3 }), [x, y3]],
      [plan({ FACTOR: 5 }), [x, y5]],
    ]);
    try {
      await program.run();
      deepStrictEqual([...await gpu.read(y2)], [...ramp(n, 1)].map((v) => 2 * v));
      deepStrictEqual([...await gpu.read(y3)], [...ramp(n, 1)].map((v) => 3 * v));
      deepStrictEqual([...await gpu.read(y5)], [...ramp(n, 1)].map((v) => 5 * v));
      strictEqual(program.steps[1].pipeline === program.steps[2].pipeline, false);
      strictEqual(gpu.bind(plan({ FACTOR: 3 }), [x, y3]).pipeline, program.steps[1].pipeline); // cached by constants
      await assertThrowsMessage(
        () => gpu.bind(plan({ FACTOR: Infinity }), [x, y3]),
        "double/scale: constant FACTOR must be a finite number named as a WGSL identifier, got Infinity",
      );
    } finally {
      program.destroy();
      for (const t of [x, y2, y3, y5]) t.buffer.destroy();
    }
  },
);

gpuTest(
  "tensor views: a plan binds a range of a buffer, reads and clears only it; misaligned views are refused",
  async (gpu) => {
    const { tensorView } = await import("./device.ts");
    const align = gpu.device.limits.minStorageBufferOffsetAlignment / 4; // elements
    const n = 3;
    const x = gpu.upload(ramp(3 * align, 0), "x");
    const y = gpu.upload(new Float32Array(3 * align).fill(-1), "y");
    try {
      // x's second range doubled into y's third: nothing else of y is written.
      await gpu.submit([doublePlan(n), [tensorView(x, align, n), tensorView(y, 2 * align, n)]]);
      const got = await gpu.read(y);
      deepStrictEqual([...got.subarray(2 * align, 2 * align + n)], [0, 1, 2].map((i) => 2 * (align + i)));
      strictEqual(got.filter((v) => v === -1).length, 3 * align - n);
      deepStrictEqual([...await gpu.read(tensorView(y, 2 * align, n))], [0, 1, 2].map((i) => 2 * (align + i)));
      // A zeroed binding clears the view's range only.
      const zeroed = {
        ...doublePlan(n),
        bindings: doublePlan(n).bindings.map((b, i) => i === 1 ? { ...b, zeroed: true } : b),
      };
      await gpu.submit([zeroed, [tensorView(x, 0, n), tensorView(y, align, n)]]);
      strictEqual((await gpu.read(y)).filter((v) => v === -1).length, 3 * align - 2 * n);
      await assertThrowsMessage(
        () => gpu.submit([doublePlan(n), [tensorView(x, 1, n), y]]),
        "double/kernel: binding 0 (x): a view's offset (4 bytes) must be a multiple of",
      );
      await assertThrowsMessage(() => tensorView(x, 3 * align - 1, 2), "tensorView: elements");
    } finally {
      x.buffer.destroy();
      y.buffer.destroy();
    }
  },
);

gpuTest(
  "tensor views shorter than a vec4 bind to a kernel that reads vec4s, and only their own values count",
  async (gpu) => {
    const { tensorView } = await import("./device.ts");
    // x read as vec4s: a binding under 16 bytes would not satisfy the kernel's minimum binding size.
    const vec4Source = DOUBLE_WGSL.replace("x: array<f32>", "x: array<vec4f>").replace(
      "x[id.x]",
      "x[id.x / 4u][id.x % 4u]",
    );
    const align = gpu.device.limits.minStorageBufferOffsetAlignment / 4;
    const x = gpu.upload(ramp(2 * align, 1), "x");
    const y = gpu.upload(new Float32Array(2 * align).fill(-1), "y");
    try {
      await gpu.submit([doublePlan(1, vec4Source, "vec4"), [tensorView(x, align, 1), tensorView(y, align, 1)]]);
      const got = await gpu.read(y);
      strictEqual(got[align], 2 * (align + 1));
      // The binding's extra bytes are not written: only the view's one value changed.
      strictEqual(got.filter((v) => v === -1).length, 2 * align - 1);
    } finally {
      x.buffer.destroy();
      y.buffer.destroy();
    }
  },
);
