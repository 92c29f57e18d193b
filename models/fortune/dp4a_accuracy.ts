/**
 * Deno only (a CLI): what prefill on integer dot products (ops/matmul's `matmulQ8Dp4a` and
 * `matmulQ4G128Dp4a`) costs in accuracy, measured with the reference Llama forward
 * (models/llama/reference.ts) rather than a GPU, so the figures hold on any machine:
 *
 *     deno run -A models/fortune/dp4a_accuracy.ts [--windows N] [--runs LIST] [--no-fixtures] [--out FILE]
 *
 * `--runs` picks the perplexity runs, `<format>` or `<format>:dp4a` each (default
 * `f32,q8,q8:dp4a,q4g128,q4g128:dp4a`); every row carries torch's figure for the same weights and
 * windows, which the runs without `:dp4a` reproduce. `--no-fixtures` skips the fixture logits.
 *
 * For each quantised weight format (q8, q4g128) the reference runs twice: as the engine computes
 * today (each product `W x` on the f32 activations, the weight dequantised), and with `x` replaced,
 * in every product whose weight is quantised (the head included, the embedding gather not), by its
 * per-row int8 quantise-dequantise: `quantize` of ops/quantize on the row rounded to f32 (scale
 * absmax / 127, codes round(x * 127 / absmax), ties toward +Infinity), then `code * scale`. That is
 * the value the dp4a kernels multiply: their integer sum of code products times both scales equals
 * `sum_k (code_a[k] scale_a) (code_w[k] scale_w)` exactly, up to the final f32 rounding (ops/matmul
 * dp4a.test.ts holds the kernels to that). Every row is a token (each window is one prefill), so
 * "per row" is per token, as in a prefill GEMM.
 *
 * Reported: the held-out perplexity of models/fortune (heldout.json's `docIds`, BOS + ids + EOS,
 * windows of 256, llm/perplexity.ts) for f32 and each format with and without the activation
 * quantisation, beside torch's figures for the same windows; and, on the models/llama/fixtures checkpoints'
 * prompts, the largest prefill-logit difference of each against transformers' logits for the same
 * quantised weights and against the reference without activation quantisation.
 *
 * @module
 */

import { parseLlamaConfig } from "../llama/config.ts";
import { dequantizeWeight, LlamaReference } from "../llama/reference.ts";
import { fixtureReference, maxAbsDiff, openFixture, VARIANTS } from "../llama/fixtures_test_util.ts";
import { perplexity } from "../../llm/perplexity.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import type { LlamaConfig } from "../llama/config.ts";
import type { WeightFormat } from "../../llm/weights/format.ts";
import { loadWeights } from "../llama/weights.ts";
import { quantize } from "../../ops/quantize/reference.ts";
import { heldoutWindows, readHeldout } from "./evaluate.ts";
import { parseArgs } from "node:util";

const DIR = new URL(".", import.meta.url).pathname;
const QUANTISED: readonly WeightFormat[] = ["q8", "q4g128"];

/** A row as the dp4a kernels read it: quantised per row to int8 (ops/quantize), then `code * scale`. */
export function int8Row(x: Float64Array): Float64Array {
  const { codes, scales } = quantize({ x: Float32Array.from(x), rows: 1, cols: x.length });
  return Float64Array.from(codes, (c) => c * scales[0]);
}

/**
 * The reference model in a format; with `dp4a`, every product whose weight is quantised reads its
 * input through {@link int8Row}.
 */
async function reference(
  store: TensorStore,
  config: LlamaConfig,
  format: WeightFormat,
  dp4a: boolean,
): Promise<LlamaReference> {
  const weights = new Map<string, Float64Array>();
  const quantised = new Set<string>();
  for await (const w of loadWeights(store, config, { format })) {
    weights.set(w.spec.name, dequantizeWeight(w));
    if (w.parts.length > 1) quantised.add(w.spec.name); // codes and scales
  }
  if (dp4a && quantised.size === 0) throw new Error(`${format}: no quantised weight to apply dp4a to`);
  const linearInput = (name: string, x: Float64Array) => (quantised.has(name) ? int8Row(x) : x);
  return new LlamaReference(config, weights, dp4a ? { linearInput } : undefined);
}

const USAGE =
  `usage: deno run -A models/fortune/dp4a_accuracy.ts [--windows N] [--runs LIST] [--no-fixtures] [--out FILE]
  What prefill on int8 activations (the dp4a GEMMs) costs in accuracy, by the reference forward on the
  CPU. Progress goes to stderr.
  --windows N      the first N held-out windows of 256 tokens only (default all 220)
  --runs LIST      perplexity runs, <format> or <format>:dp4a each
                   (default f32,q8,q8:dp4a,q4g128,q4g128:dp4a)
  --no-fixtures    skip the fixture checkpoints' prefill logits
  --out FILE       write the result there as JSON (default: stdout)
  --help           this text`;

/** The command line, refusing an unknown option or a bad value by name. */
function parseAccuracyArgs(
  args: string[],
): { windows?: number; runs: (readonly [WeightFormat, boolean])[]; fixtures: boolean; out?: string } | "help" {
  const { values, positionals } = parseArgs({
    args,
    options: {
      windows: { type: "string" },
      runs: { type: "string" },
      "no-fixtures": { type: "boolean" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
  });
  if (values.help) return "help";
  if (positionals.length > 0) throw new Error(`unexpected argument "${positionals[0]}"`);
  const windows = values.windows === undefined ? undefined : Number(values.windows);
  if (windows !== undefined && !(Number.isSafeInteger(windows) && windows >= 1)) {
    throw new Error(`--windows must be an integer >= 1, got "${values.windows}"`);
  }
  const runs = (values.runs ?? "f32,q8,q8:dp4a,q4g128,q4g128:dp4a").split(",").map((run) => {
    const [format, dp4a] = run.split(":");
    if (!(["f32", ...QUANTISED] as string[]).includes(format) || (dp4a !== undefined && dp4a !== "dp4a")) {
      throw new Error(`--runs: "${run}" is not <format> or <format>:dp4a for a format of f32, ${QUANTISED.join(", ")}`);
    }
    return [format as WeightFormat, dp4a !== undefined] as const;
  });
  return { windows, runs, fixtures: !values["no-fixtures"], out: values.out };
}

if (import.meta.main) {
  let parsed: ReturnType<typeof parseAccuracyArgs>;
  try {
    parsed = parseAccuracyArgs(Deno.args);
  } catch (e) {
    console.error(`dp4a_accuracy: ${(e as Error).message}\n${USAGE}`);
    Deno.exit(2);
  }
  if (parsed === "help") {
    console.log(USAGE);
    Deno.exit(0);
  }
  const { heldout } = await readHeldout();
  let windows = heldoutWindows(heldout, heldout.docIds);
  if (parsed.windows !== undefined) windows = windows.slice(0, parsed.windows);
  const config = parseLlamaConfig(await Deno.readTextFile(`${DIR}config.json`));
  const torchPerplexity = (format: WeightFormat, tokens: number) =>
    Math.exp(heldout.torch[format].windowNll.slice(0, windows.length).reduce((a, b) => a + b, 0) / tokens);

  const perplexityRows = [];
  const { runs } = parsed;
  for (const [format, dp4a] of runs) {
    const { store, close } = await openCheckpointDir(DIR);
    const model = await reference(store, config, format, dp4a);
    close();
    const start = performance.now();
    const r = await perplexity(model, windows, (done, total) => {
      if (done % 10 === 0 || done === total) console.error(`${format}${dp4a ? " dp4a" : ""}: ${done}/${total} windows`);
    });
    const row = {
      format,
      activations: dp4a ? "int8 per row (dp4a)" : "f32",
      perplexity: r.perplexity,
      torchPerplexity: torchPerplexity(format, r.tokens),
      tokens: r.tokens,
      seconds: (performance.now() - start) / 1000,
    };
    console.error(JSON.stringify(row));
    perplexityRows.push(row);
  }

  const logitRows = [];
  const variants = !parsed.fixtures ? [] : Object.keys(VARIANTS) as (keyof typeof VARIANTS)[];
  for (const variant of variants) {
    for (const format of QUANTISED) {
      const ref = await fixtureReference(variant, format);
      const logits = [];
      for (const dp4a of [false, true]) {
        const { config, store, close } = await openFixture(variant);
        const model = await reference(store, config, format, dp4a);
        close();
        logits.push(model.forward(ref.prompt));
      }
      const [plain, dp4a] = logits;
      const row = {
        variant,
        format,
        promptTokens: ref.prompt.length,
        maxAbsLogit: Math.max(...ref.prefillLogits.map(Math.abs)),
        withoutDp4aVsTransformers: maxAbsDiff(plain, ref.prefillLogits),
        dp4aVsTransformers: maxAbsDiff(dp4a, ref.prefillLogits),
        dp4aVsWithout: maxAbsDiff(dp4a, plain),
      };
      console.error(JSON.stringify(row));
      logitRows.push(row);
    }
  }

  const result = {
    evaluation: "prefill on int8 activations (ops/matmul dp4a): accuracy against the f32-activation path",
    method: "reference Llama forward (models/llama/reference.ts, f64) with each quantised product's input " +
      "quantised per row to int8 (ops/quantize reference) and dequantised; models/fortune/dp4a_accuracy.ts",
    date: new Date().toISOString(),
    runtime: `Deno ${Deno.version.deno}`,
    windows: windows.length,
    windowTokens: heldout.window,
    perplexity: perplexityRows,
    fixturePrefillLogits: logitRows,
  };
  const out = parsed.out;
  if (out) await Deno.writeTextFile(out, JSON.stringify(result, null, 1) + "\n");
  else console.log(JSON.stringify(result, null, 1));
}
