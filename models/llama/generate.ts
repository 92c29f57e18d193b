/**
 * Deno only (a CLI): `deno task generate "prompt"` prints a model's continuation of a prompt as it is
 * generated, on whatever WebGPU adapter is present (the software adapter included).
 *
 *     deno task generate "A computer is" [--model DIR] [--format f32|q8|q4g128] [--max-tokens N]
 *                        [--temperature T] [--top-k K] [--top-p P] [--min-p M] [--seed S]
 *     deno task generate --help
 *
 * DIR is a Hugging Face Llama checkpoint directory (config.json, safetensors, and tokenizer.model or
 * tokenizer.json) or one written by `deno task convert` (which copies the tokenizer and records its
 * format); the default is the project's own fortune model (models/fortune). `--format` chooses
 * how an HF checkpoint is quantised while loading (default f32); a converted directory loads in its
 * own format, and naming another is refused. Without `--temperature` the choice is greedy; with it,
 * seeded sampling (`--seed`, default 0). The prompt gets the tokenizer's BOS id in front; generation
 * stops at an end-of-sequence id or after `--max-tokens` (default 64).
 *
 * The text goes to stdout as it is generated: each token's id is read back as soon as its step is
 * done (`readEvery` 1, two steps queued), so a token appears when the GPU has made it rather than in
 * groups of 16 (what the engine's throughput default reads back at once; `deno task bench:llm`
 * measures that). Loading progress and the speed go to stderr: the time to the first token, and the
 * rate after it from when the tokens were printed, so the figure is the one the reader saw.
 *
 * @module
 */

import { acquireDevice } from "../../harness/device.ts";
import { numberFlag } from "../cli.ts";
import { parseLlamaConfig } from "./config.ts";
import { LlamaEngine } from "./engine.ts";
import type { SamplerOptions } from "../../llm/sampler.ts";
import { validateSampleOptions } from "../../ops/sample/reference.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import { ByteLevelBpeTokenizer } from "../../llm/tokenizer/byte_level_bpe.ts";
import { SentencePieceTokenizer } from "../../llm/tokenizer/sentencepiece.ts";
import type { Tokenizer } from "../../llm/tokenizer/tokenizer.ts";
import { WEIGHT_FORMATS, type WeightFormat } from "../../llm/weights/format.ts";

const VALUED = ["model", "format", "max-tokens", "temperature", "top-k", "top-p", "min-p", "seed"];
const USAGE = `usage: deno task generate "prompt" [options]
  --model DIR        a Llama checkpoint directory, Hugging Face or converted (default: models/fortune)
  --format F         f32, q8 or q4g128: how an HF checkpoint is quantised on load (default f32; a
                     converted directory loads in its own format)
  --max-tokens N     tokens to generate at most (default 64)
  --temperature T    sample at temperature T (default: greedy)
  --top-k K, --top-p P, --min-p M, --seed S
                     the sampler's filters and seed (default seed 0), with --temperature
  --help             this text`;

/** The command line: the prompt and each `--name value`, refusing anything else by name. */
function parseArgs(args: readonly string[]): { prompt: string; flags: Map<string, string> } | "help" {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--help" || arg === "-h") return "help";
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const name = arg.slice(2);
    if (!VALUED.includes(name)) throw new Error(`unknown option ${arg}\n${USAGE}`);
    if (i + 1 >= args.length) throw new Error(`${arg} needs a value\n${USAGE}`);
    flags.set(name, args[++i]);
  }
  if (positional.length !== 1) throw new Error(`expected one prompt, got ${positional.length}\n${USAGE}`);
  return { prompt: positional[0], flags };
}

/** The checkpoint's tokenizer: tokenizer.model (SentencePiece) if present, else tokenizer.json (byte-level BPE). */
async function readTokenizer(dir: string): Promise<Tokenizer> {
  try {
    return new SentencePieceTokenizer(await Deno.readFile(`${dir}/tokenizer.model`));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  try {
    return new ByteLevelBpeTokenizer(await Deno.readTextFile(`${dir}/tokenizer.json`));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Error(`${dir}: neither tokenizer.model nor tokenizer.json`);
    throw e;
  }
}

if (import.meta.main) {
  try {
    const parsed = parseArgs(Deno.args);
    if (parsed === "help") {
      console.log(USAGE);
      Deno.exit(0);
    }
    const { prompt, flags } = parsed;
    const dir = flags.get("model") ?? new URL("../fortune", import.meta.url).pathname;
    const format = flags.get("format") as WeightFormat | undefined;
    if (format !== undefined && !WEIGHT_FORMATS.includes(format)) {
      throw new Error(`--format must be one of ${WEIGHT_FORMATS.join(", ")}, got "${format}"`);
    }
    const maxTokens = numberFlag(flags, "max-tokens", true, { min: 1 }) ?? 64;
    const temperature = numberFlag(flags, "temperature", false);
    const filters = ["top-k", "top-p", "min-p", "seed"].filter((name) => flags.has(name));
    if (temperature === undefined && filters.length > 0) {
      throw new Error(`--${filters[0]} needs --temperature (without it the choice is greedy)`);
    }
    const sampler: SamplerOptions = temperature === undefined ? { mode: "greedy" } : {
      mode: "sample",
      temperature,
      topK: numberFlag(flags, "top-k", false),
      topP: numberFlag(flags, "top-p", false),
      minP: numberFlag(flags, "min-p", false),
      seed: numberFlag(flags, "seed", false) ?? 0,
    };
    // The engine checks these too, but only after the load; the options' own names here.
    if (sampler.mode === "sample") {
      try {
        validateSampleOptions("", sampler, true);
      } catch (e) {
        const field = /^(\w+)/.exec((e as Error).message)?.[1] ?? "";
        const option =
          { temperature: "--temperature", topK: "--top-k", topP: "--top-p", minP: "--min-p", seed: "--seed" }[field];
        throw new Error(option ? (e as Error).message.replace(field, option) : (e as Error).message);
      }
    }
    const tokenizer = await readTokenizer(dir);
    const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
    const promptIds = [...(tokenizer.bosId === null ? [] : [tokenizer.bosId]), ...tokenizer.encode(prompt)];
    const gpu = await acquireDevice();
    const { store, close } = await openCheckpointDir(dir);
    const loadStart = performance.now();
    let shown = -1;
    const engine = await LlamaEngine.load(gpu, store, config, {
      format,
      maxSeq: Math.min(config.maxPositionEmbeddings, promptIds.length + maxTokens),
      onProgress: (done, total) => {
        const percent = Math.floor((100 * done) / total);
        if (percent >= shown + 10 || done === total) {
          shown = percent;
          console.error(`loading: ${percent}% of ${(total / 1e6).toFixed(1)} MB`);
        }
      },
    });
    close();
    console.error(
      `adapter: ${gpu.adapter.description}; model ${dir}, ${engine.format}; loaded in ` +
        `${((performance.now() - loadStart) / 1000).toFixed(1)} s`,
    );
    const encoder = new TextEncoder();
    const write = (text: string) => Deno.stdout.writeSync(encoder.encode(text));
    write(prompt);
    const stream = tokenizer.decodeStream();
    // The prompt's ids go through the stream first, so the first generated piece decodes as it
    // follows them (a SentencePiece word boundary becomes a space) and only generated text is written.
    for (const id of promptIds) stream.push(id);
    const start = performance.now();
    const shownAt: number[] = [];
    // One readback per token, two steps queued: each token is printed when its step is done.
    for await (const id of engine.generate(promptIds, { maxTokens, sampler, readEvery: 1, inFlight: 2 })) {
      if (config.eosTokenIds.includes(id)) break;
      write(stream.push(id));
      shownAt.push(performance.now());
    }
    write(stream.flush() + "\n");
    const seconds = (ms: number) => (ms / 1000).toFixed(2);
    const count = shownAt.length;
    const first = count > 0 ? ` first after ${seconds(shownAt[0] - start)} s,` : "";
    const rest = count > 1
      ? ` then ${((count - 1) / ((shownAt[count - 1] - shownAt[0]) / 1000)).toFixed(1)} tokens/s as printed`
      : "";
    console.error(`${count} tokens in ${seconds(performance.now() - start)} s:${first}${rest}`);
    engine.destroy();
    gpu.destroy();
  } catch (e) {
    console.error(`generate: ${(e as Error).message}`);
    Deno.exit(2);
  }
}
