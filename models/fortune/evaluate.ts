/**
 * Deno only (a CLI): the fortune model's held-out perplexity on this machine's adapter, per weight
 * format, beside the figures torch computed when the model was trained (heldout.json).
 *
 *     deno run -A models/fortune/evaluate.ts [--formats f32,q8,q4g128] [--windows N] [--out result.json]
 *
 * Method: the held-out fortunes are encoded by our SentencePiece tokenizer, which must give exactly
 * the ids Python's sentencepiece gave (heldout.json `docIds`; the run stops if one differs); each
 * becomes BOS, its ids, EOS; the stream is cut into windows of 256 and `perplexity` (llm/perplexity.ts)
 * runs them through LlamaEngine, which loads the bf16 checkpoint as f32 or quantises it on load.
 * torch's figures for q8 and q4g128 are the model with each linear weight, the embedding and the head
 * replaced by their quantise-dequantise (llm/fixtures/quant.py). `--windows N` evaluates the first N
 * windows only (torch's figures are then summed over the same windows).
 *
 * @module
 */

import { acquireDevice } from "../../harness/device.ts";
import { parseLlamaConfig } from "../llama/config.ts";
import { LlamaEngine } from "../llama/engine.ts";
import { perplexity, tokenWindows } from "../../llm/perplexity.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import { SentencePieceTokenizer } from "../../llm/tokenizer/sentencepiece.ts";
import { WEIGHT_FORMATS, type WeightFormat } from "../../llm/weights/format.ts";
import { parseArgs } from "node:util";

const DIR = new URL(".", import.meta.url).pathname;

/** The torch figures heldout.json holds per format. */
interface TorchFigure {
  nll: number;
  tokens: number;
  perplexity: number;
  windowNll: number[];
}

/** heldout.json, as train.py writes it. */
export interface Heldout {
  bos: number;
  eos: number;
  window: number;
  docIds: number[][];
  torch: Record<WeightFormat, TorchFigure>;
  trainedSteps: number;
  parameters: number;
}

/** Reads heldout.json and heldout.txt; returns the file's figures and the held-out documents' text. */
export async function readHeldout(): Promise<{ heldout: Heldout; docs: string[] }> {
  const heldout = JSON.parse(await Deno.readTextFile(`${DIR}heldout.json`)) as Heldout;
  const text = await Deno.readTextFile(`${DIR}heldout.txt`);
  const docs = text.split("\n%\n");
  if (docs.pop() !== "") throw new Error("heldout.txt must end with a line of %");
  return { heldout, docs };
}

/** The evaluation windows: each document as BOS, its ids, EOS, concatenated, cut every `window` ids. */
export function heldoutWindows(heldout: Heldout, docIds: readonly number[][]): number[][] {
  return tokenWindows(docIds.flatMap((ids) => [heldout.bos, ...ids, heldout.eos]), heldout.window);
}

const USAGE = `usage: deno run -A models/fortune/evaluate.ts [--formats f32,q8,q4g128] [--windows N] [--out FILE]
  The fortune model's held-out perplexity through LlamaEngine on this machine's adapter, per weight
  format, beside torch's figures for the same weights (heldout.json). Progress goes to stderr.
  --formats LIST   weight formats to evaluate (default f32,q8,q4g128)
  --windows N      the first N windows of 256 tokens only (default all 220)
  --out FILE       write the result there as JSON (default: stdout)
  --help           this text`;

/** The command line, refusing an unknown option or a bad value by name. */
function parseEvaluateArgs(
  args: string[],
): { formats: WeightFormat[]; windows?: number; out?: string } | "help" {
  const { values, positionals } = parseArgs({
    args,
    options: {
      formats: { type: "string" },
      windows: { type: "string" },
      out: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
    allowPositionals: true,
  });
  if (values.help) return "help";
  if (positionals.length > 0) throw new Error(`unexpected argument "${positionals[0]}"`);
  const formats = (values.formats ?? WEIGHT_FORMATS.join(",")).split(",") as WeightFormat[];
  for (const f of formats) {
    if (!WEIGHT_FORMATS.includes(f)) throw new Error(`--formats: "${f}" is not one of ${WEIGHT_FORMATS.join(", ")}`);
  }
  const windows = values.windows === undefined ? undefined : Number(values.windows);
  if (windows !== undefined && !(Number.isSafeInteger(windows) && windows >= 1)) {
    throw new Error(`--windows must be an integer >= 1, got "${values.windows}"`);
  }
  return { formats, windows, out: values.out };
}

if (import.meta.main) {
  let parsed: ReturnType<typeof parseEvaluateArgs>;
  try {
    parsed = parseEvaluateArgs(Deno.args);
  } catch (e) {
    console.error(`evaluate: ${(e as Error).message}\n${USAGE}`);
    Deno.exit(2);
  }
  if (parsed === "help") {
    console.log(USAGE);
    Deno.exit(0);
  }
  const { formats } = parsed;
  const { heldout, docs } = await readHeldout();
  const tokenizer = new SentencePieceTokenizer(await Deno.readFile(`${DIR}tokenizer.model`));
  const t0 = performance.now();
  const docIds = docs.map((d) => tokenizer.encode(d));
  const encodeMs = performance.now() - t0;
  docIds.forEach((ids, i) => {
    if (JSON.stringify(ids) !== JSON.stringify(heldout.docIds[i])) {
      throw new Error(`held-out document ${i}: our tokenizer's ids differ from sentencepiece's`);
    }
  });
  let windows = heldoutWindows(heldout, docIds);
  if (parsed.windows !== undefined) windows = windows.slice(0, parsed.windows);
  const config = parseLlamaConfig(await Deno.readTextFile(`${DIR}config.json`));
  const gpu = await acquireDevice();
  console.error(`adapter: ${gpu.adapter.description}; ${docs.length} documents encoded as sentencepiece does`);
  const rows = [];
  for (const format of formats) {
    const { store, close } = await openCheckpointDir(DIR);
    const engine = await LlamaEngine.load(gpu, store, config, { format, maxSeq: heldout.window });
    close();
    const start = performance.now();
    const ours = await perplexity(engine, windows, (done, total) => {
      if (done % 20 === 0 || done === total) console.error(`${format}: ${done}/${total} windows`);
    });
    const seconds = (performance.now() - start) / 1000;
    engine.destroy();
    const torchNll = heldout.torch[format].windowNll.slice(0, windows.length).reduce((a, b) => a + b, 0);
    const torchF32Nll = heldout.torch.f32.windowNll.slice(0, windows.length).reduce((a, b) => a + b, 0);
    const row = {
      format,
      perplexity: ours.perplexity,
      torchPerplexity: Math.exp(torchNll / ours.tokens),
      torchF32Perplexity: Math.exp(torchF32Nll / ours.tokens),
      tokens: ours.tokens,
      seconds,
      maxWindowNllDifference: Math.max(
        ...ours.windowNll.map((n, i) => Math.abs(n - heldout.torch[format].windowNll[i])),
      ),
    };
    rows.push(row);
    console.error(
      `${format}: perplexity ${row.perplexity.toFixed(4)} (torch, same weights: ${row.torchPerplexity.toFixed(4)}; ` +
        `torch f32: ${row.torchF32Perplexity.toFixed(4)}) over ${row.tokens} tokens in ${seconds.toFixed(1)} s`,
    );
  }
  const result = {
    evaluation: "fortune model, held-out perplexity",
    date: new Date().toISOString(),
    adapter: gpu.adapter,
    runtime: `Deno ${Deno.version.deno}`,
    windows: windows.length,
    windowTokens: heldout.window,
    tokenizerEncodeMs: encodeMs,
    heldoutBytes: new TextEncoder().encode(docs.join("\n%\n")).length,
    rows,
  };
  gpu.destroy();
  const out = parsed.out;
  if (out) await Deno.writeTextFile(out, JSON.stringify(result, null, 1) + "\n");
  else console.log(JSON.stringify(result, null, 1));
}
