// istft against torch.istft where windows and hops meet NOLA's edge (goldens/gen_nola.py, torch 2.13):
// the reference, istftGpu and istftPlan (for the window its shape names) refuse exactly where torch
// raises "window overlap add min", and where torch accepts, all give torch's signal, the imaginary
// parts of DC and Nyquist ignored as torch's one-sided inverse ignores them.
import { ok, strictEqual } from "node:assert/strict";
import { assertClose, gpuTest, randomF32 } from "../../harness/testing.ts";
import { hannWindow, istft, type IstftArgs, istftGpu, istftPlan, istftSpan, validateIstftWindow } from "./mod.ts";
import { istftBasis } from "./basis.ts";

interface NolaCase {
  window: string;
  values: number[];
  nFft: number;
  hopLength: number;
  frames: number;
  length: number | null;
  x: number[];
  raised: boolean;
  message: string;
  out: number[] | null;
  out_real_edges: number[] | null;
}

const golden: { meta: { torch: string }; cases: NolaCase[] } = JSON.parse(
  await Deno.readTextFile(new URL("./goldens/nola.json", import.meta.url)),
);

const argsOf = (c: NolaCase, x = c.x): IstftArgs => ({
  x: new Float32Array(x),
  window: new Float32Array(c.values),
  batch: 1,
  frames: c.frames,
  nFft: c.nFft,
  hopLength: c.hopLength,
  length: c.length ?? undefined,
});
const labelOf = (c: NolaCase) => `${c.window} nFft ${c.nFft} hop ${c.hopLength} frames ${c.frames} length ${c.length}`;

/** The same spectrum with the imaginary parts of DC and (even nFft) Nyquist zeroed. */
function realEdges(c: NolaCase): number[] {
  const bins = Math.floor(c.nFft / 2) + 1;
  return c.x.map((v, i) => {
    const k = Math.floor(i / 2) % bins;
    return i % 2 === 1 && (k === 0 || 2 * k === c.nFft) ? 0 : v;
  });
}

const maxAbs = (a: ArrayLike<number>) => Array.from(a).reduce((m, v) => Math.max(m, Math.abs(v)), 0);
// In f64 with the window rounded to f32 (the reference) each product and the envelope move by 2^-24
// relative; the kernel sums reach * 2 * bins f32 products scaled by 1 / nFft and divides by the
// envelope (as stft.test's istft tolerance): a few ULPs of the largest output either way.
const U = 2 ** -24;

async function refused(fn: () => unknown): Promise<string | undefined> {
  try {
    await fn();
  } catch (e) {
    return (e as Error).message;
  }
  return undefined;
}

Deno.test("istft reference: refuses exactly where torch.istft raises; elsewhere torch's signal, DC and Nyquist imaginary parts ignored", async () => {
  ok(golden.cases.some((c) => c.raised) && golden.cases.some((c) => !c.raised));
  for (const c of golden.cases) {
    const label = labelOf(c);
    const message = await refused(() => istft(argsOf(c)));
    strictEqual(
      message !== undefined,
      c.raised,
      `${label}: torch ${c.raised ? "raised" : "accepted"}; ours ${message}`,
    );
    if (c.raised) {
      ok(
        message!.startsWith(`istft: window must satisfy NOLA`) && message!.includes(`hopLength ${c.hopLength}`),
        message,
      );
      continue;
    }
    const tol = { atol: 8 * U * Math.max(1, maxAbs(c.out!)), rtol: 0 };
    assertClose(istft(argsOf(c)), c.out!, tol, `${label} (torch)`);
    // torch gives the same signal without those imaginary parts, and so do we: they are ignored.
    assertClose(
      c.out_real_edges!,
      c.out!,
      { atol: 0, rtol: 0 },
      `${label}: torch ignores the edge bins' imaginary parts`,
    );
    assertClose(istft(argsOf(c, realEdges(c))), c.out!, tol, `${label} (real edges)`);
  }
});

gpuTest("istftGpu and istftPlan refuse where torch raises; istftGpu gives torch's signal elsewhere", async (gpu) => {
  for (const c of golden.cases) {
    const label = labelOf(c);
    const args = argsOf(c);
    const fromGpu = await refused(() => istftGpu(gpu, args));
    const { x: _, ...shape } = args;
    const fromPlan = await refused(() => istftPlan(gpu, shape));
    strictEqual(fromGpu !== undefined, c.raised, `${label} istftGpu: ${fromGpu}`);
    strictEqual(fromPlan, fromGpu, `${label}: the plan refuses as the GPU call does`);
    if (c.raised) continue;
    const tol = { atol: 2 * c.nFft * U * Math.max(1, maxAbs(c.out!)), rtol: 0 };
    assertClose(await istftGpu(gpu, args), c.out!, tol, `${label} (GPU vs torch)`);
    assertClose(await istftGpu(gpu, argsOf(c, realEdges(c))), c.out!, tol, `${label} (GPU, real edges)`);
    // Resident: the plan for this window, bound to it and its basis, gives the same signal.
    const plan = istftPlan(gpu, shape);
    const tensors = [
      gpu.upload(args.x),
      gpu.upload(istftBasis(c.nFft, c.hopLength, args.window)),
      gpu.upload(args.window!),
      gpu.alloc("f32", plan.bindings[3].length),
    ];
    await gpu.submit([plan, tensors]);
    assertClose(await gpu.read(tensors[3]), c.out!, tol, `${label} (resident plan vs torch)`);
    for (const t of tensors) t.buffer.destroy();
  }
  // A shape without a window is checked for the periodic Hann window, the one istft defaults to.
  const hann = { batch: 1, frames: 5, nFft: 16, hopLength: 16 };
  ok((await refused(() => istftPlan(gpu, hann)))?.startsWith("istft: window must satisfy NOLA"));
});

Deno.test("validateIstftWindow: the lowest envelope over the returned samples, as the whole envelope gives it", () => {
  // The check evaluates one period of the envelope's interior and its ends sample by sample; the
  // whole envelope, summed frame by frame, must agree on every refusal.
  let checked = 0, refusedCount = 0;
  for (let seed = 1; seed <= 300; seed++) {
    const rand = randomF32(8, seed, 0, 1);
    const nFft = 2 + Math.floor(rand[0] * 30);
    const hopLength = 1 + Math.floor(rand[1] * (nFft + 4));
    const frames = 1 + Math.floor(rand[2] * 12);
    const padding = rand[3] < 0.3 && (nFft - hopLength) % 2 === 0 && hopLength <= nFft
      ? "same" as const
      : "center" as const;
    const window = rand[4] < 0.3 ? hannWindow(nFft) : randomF32(nFft, seed + 1000, 0, 1).map((v) => (v < 0.25 ? 0 : v));
    const shape = { batch: 1, frames, nFft, hopLength, padding };
    const span = istftSpan(shape);
    if (span.length < 1) continue;
    const length = rand[5] < 0.5 ? undefined : 1 + Math.floor(rand[6] * span.reach);
    const envelope = new Float64Array(nFft + hopLength * (frames - 1));
    for (let f = 0; f < frames; f++) for (let n = 0; n < nFft; n++) envelope[f * hopLength + n] += window[n] ** 2;
    const returned = envelope.subarray(span.start, span.start + (length ?? span.length));
    const fails = !(returned.reduce((m, v) => Math.min(m, v), Infinity) > 1e-11);
    let thrown = false;
    try {
      validateIstftWindow({ ...shape, length }, window);
    } catch {
      thrown = true;
    }
    strictEqual(thrown, fails, `nFft ${nFft} hop ${hopLength} frames ${frames} ${padding} length ${length}`);
    checked++;
    if (fails) refusedCount++;
  }
  ok(checked > 250 && refusedCount > 30 && checked - refusedCount > 30, `${checked} checked, ${refusedCount} refused`);
});
