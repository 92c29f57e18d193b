import { deepStrictEqual, ok } from "node:assert/strict";
import {
  assertClose,
  assertThrowsMessage,
  checkAgainstReference,
  gpuTest,
  loadGolden,
  randomF32,
} from "../../harness/testing.ts";
import type { ResidentDevice } from "../../harness/device.ts";
import { KERNELS, pad, type PadArgs, padGpu, type PadMode } from "./mod.ts";
import type { PadVariant } from "./kernels.gen.ts";

/** What goldens/gen.py writes. */
interface Golden {
  meta: { torch: string };
  cases: {
    label: string;
    shape: number[];
    mode: PadMode;
    value: number;
    /** [axis, before, after], applied in this order, one call each. */
    pads: [number, number, number][];
    x: number[];
    out_shape: number[];
    out: number[];
  }[];
  errors: { label: string; size: number; before: number; after: number; raised: boolean; message: string }[];
}
const loadPadGolden = () => loadGolden<Golden>(new URL("./goldens/pad.json", import.meta.url));
const f32 = (xs: number[]) => new Float32Array(xs);
const row = (
  xs: number[],
  before: number,
  after: number,
  mode: PadMode,
  value = 0,
) => [...pad({ x: f32(xs), outer: 1, size: xs.length, inner: 1, before, after, mode, value })];

/** Applies a golden case's pads one axis per call, through `fn` (the reference or the GPU). */
async function padAxes(
  c: Golden["cases"][number],
  fn: (args: PadArgs) => Float32Array | Promise<Float32Array>,
): Promise<{ out: Float32Array; shape: number[] }> {
  let shape = [...c.shape];
  let out: Float32Array = f32(c.x);
  for (const [axis, before, after] of c.pads) {
    const outer = shape.slice(0, axis).reduce((p, d) => p * d, 1);
    const inner = shape.slice(axis + 1).reduce((p, d) => p * d, 1);
    const mode = c.mode;
    out = await fn({ x: out, outer, size: shape[axis], inner, before, after, mode, value: c.value });
    shape = shape.map((d, i) => i === axis ? before + d + after : d);
  }
  return { out, shape };
}

Deno.test("pad reference: hand-derived rows; reflect does not repeat the edge, replicate does", () => {
  deepStrictEqual(row([1, 2, 3], 2, 1, "reflect"), [3, 2, 1, 2, 3, 2]);
  deepStrictEqual(row([1, 2, 3], 2, 1, "replicate"), [1, 1, 1, 2, 3, 3]);
  deepStrictEqual(row([1, 2, 3], 2, 1, "constant", 7), [7, 7, 1, 2, 3, 7]);
  deepStrictEqual(row([1, 2, 3], 0, 0, "reflect"), [1, 2, 3]);
  // Causal: before only.
  deepStrictEqual(row([4, 5], 3, 0, "replicate"), [4, 4, 4, 4, 5]);
  // A middle axis: [2, 2, 2] padded on axis 1 by 1 before, reflect: rows [c, d] [a, b] [c, d] per outer.
  const x = f32([1, 2, 3, 4, 5, 6, 7, 8]);
  deepStrictEqual(
    [...pad({ x, outer: 2, size: 2, inner: 2, before: 1, after: 0, mode: "reflect" })],
    [3, 4, 1, 2, 3, 4, 7, 8, 5, 6, 7, 8],
  );
  // Constant padding of an empty axis is all value.
  deepStrictEqual([...pad({ x: f32([]), outer: 2, size: 0, inner: 1, before: 1, after: 1, value: 3 })], [3, 3, 3, 3]);
});

Deno.test("pad reference: bad input throws naming the argument", async () => {
  const x = f32([1, 2, 3]);
  const base = { x, outer: 1, size: 3, inner: 1, before: 1, after: 1 };
  await assertThrowsMessage(
    () => pad({ ...base, before: 3, mode: "reflect" }),
    "pad: reflect needs before and after < size",
  );
  await assertThrowsMessage(() => pad({ ...base, after: 5, mode: "reflect" }), "got before 1, after 5, size 3");
  await assertThrowsMessage(() => pad({ ...base, before: -1 }), "pad: before must be an integer >= 0, got -1");
  await assertThrowsMessage(() => pad({ ...base, mode: "circular" as PadMode }), 'mode must be one of "constant"');
  await assertThrowsMessage(() => pad({ ...base, value: 1e39 }), "value must be a finite f32");
  await assertThrowsMessage(() => pad({ ...base, value: 2, mode: "reflect" }), 'value applies only to mode "constant"');
  await assertThrowsMessage(() => pad({ ...base, size: 4 }), "x must have length outer * size * inner = 4, got 3");
  await assertThrowsMessage(() => pad({ ...base, inner: 0 }), "inner must be an integer >= 1, got 0");
  await assertThrowsMessage(
    () => pad({ x: f32([]), outer: 1, size: 0, inner: 1, before: 1, after: 0, mode: "replicate" }),
    "replicate needs size >= 1",
  );
});

Deno.test("pad reference: reflect with a pad >= size is refused where torch refuses it", async () => {
  const golden = await loadPadGolden();
  ok(golden.errors.length === 3, "the golden file records torch's reflect limits");
  for (const e of golden.errors) {
    const args = { x: new Float32Array(e.size), outer: 1, size: e.size, inner: 1, before: e.before, after: e.after };
    let raised = false;
    try {
      pad({ ...args, mode: "reflect" });
    } catch {
      raised = true;
    }
    deepStrictEqual(raised, e.raised, `${e.label}: torch ${e.raised ? "raised" : "did not raise"} (${e.message})`);
  }
});

Deno.test("pad reference matches torch, one axis per call against torch's single multi-axis call", async () => {
  const golden = await loadPadGolden();
  ok(golden.cases.length > 0 && golden.meta.torch, "the golden file has cases and a torch version");
  for (const c of golden.cases) {
    const { out, shape } = await padAxes(c, pad);
    deepStrictEqual(shape, c.out_shape, `${c.label}: shape`);
    assertClose(out, c.out, { atol: 0, rtol: 0 }, `torch ${c.label}`); // copies: exact
  }
  // The alternative the distinction guards against: reflect and replicate swapped give the right
  // shape but not torch's values.
  const reflect = golden.cases.find((c) => c.label.startsWith("reflect, three axes"))!;
  const swapped = await padAxes({ ...reflect, mode: "replicate" }, pad);
  ok(swapped.out.some((v, i) => v !== reflect.out[i]), "replicate in place of reflect differs from torch");
});

gpuTest("pad GPU matches torch, one axis per call against torch's single multi-axis call", async (gpu) => {
  const golden = await loadPadGolden();
  ok(golden.cases.length > 0, "the golden file has cases");
  for (const c of golden.cases) {
    const { out } = await padAxes(c, (args) => padGpu(gpu, args));
    assertClose(out, c.out, { atol: 0, rtol: 0 }, `torch ${c.label}`);
  }
});

gpuTest("pad GPU: bad input throws before dispatch", async (gpu: ResidentDevice) => {
  const x = f32([1, 2, 3]);
  const base = { x, outer: 1, size: 3, inner: 1, before: 1, after: 1 };
  await assertThrowsMessage(
    () => padGpu(gpu, { ...base, before: 3, mode: "reflect" }),
    "reflect needs before and after",
  );
  await assertThrowsMessage(() => padGpu(gpu, { ...base, size: 2 }), "x must have length outer * size * inner = 2");
  await assertThrowsMessage(
    () => padGpu(gpu, { ...base }, { override: "kernel.amd" as never }),
    'override "kernel.amd"',
  );
});

// Copies: the GPU must give the reference's values exactly. [6, 37, 1] +2/3 has rows of 42, so a
// vec4 of out wholly inside a row's copied span starts its source at s % 4 = 2, 1, 0, 3 in rows 0 to
// 3: every shift of the inner == 1 path. The last two shapes span several workgroups (1,024 output
// elements each).
const cases = (["constant", "reflect", "replicate"] as const).flatMap((mode) =>
  (
    [
      [1, 1, 1, 0, 0],
      [3, 7, 1, 3, 2],
      [5, 1001, 1, 6, 1],
      [2, 5, 3, 4, 0],
      [4, 9, 4, 2, 5],
      [3, 6, 8, 0, 3],
      [2, 2, 1, 1, 1],
      [6, 37, 1, 2, 3],
      [1, 2051, 1, 0, 9],
      [8, 700, 1, 3, 2],
      [3, 40, 64, 2, 1],
    ] as const
  ).map(([outer, size, inner, before, after]) => {
    const fit = (p: number) => (mode === "reflect" ? Math.min(p, size - 1) : p);
    return {
      label: `${mode} [${outer}, ${size}, ${inner}] +${fit(before)}/${fit(after)}`,
      args: {
        x: randomF32(outer * size * inner, outer * 1000 + size + inner),
        outer,
        size,
        inner,
        before: fit(before),
        after: fit(after),
        mode,
        value: mode === "constant" ? -0.75 : 0,
      } as PadArgs,
    };
  })
);
checkAgainstReference<PadArgs, PadVariant>("pad", KERNELS, "kernel", cases, pad, padGpu, { atol: 0, rtol: 0 });
