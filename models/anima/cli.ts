/**
 * Deno only (a CLI): `deno task anima` generates an image with Anima on whatever WebGPU adapter is
 * present and writes it as a PNG.
 *
 *     deno task anima --dit FILE --vae FILE --qwen3 DIR --t5 FILE --prompt TEXT --out image.png
 *                     [--negative TEXT] [--width W] [--height H] [--steps N] [--cfg S] [--shift S]
 *                     [--sampler euler|res_multistep|er_sde] [--seed S] [--format f32|q8]
 *                     [--text-encoder-format f32|q8] [--max-resident BYTES]
 *
 * `--dit` is Anima's DiT file (ComfyUI names, the LLM adapter inside), `--vae` the Wan 2.1 VAE
 * (`qwen_image_vae.safetensors`), `--qwen3` a Qwen3-0.6B directory (`config.json`, its safetensors,
 * `tokenizer_config.json` and `tokenizer.json` or `vocab.json` + `merges.txt`), `--t5` T5's
 * `spiece.model`. Defaults: 1024 x 1024, 50 steps, cfg 3.5, shift 3, the Euler sampler, negative
 * prompt "", a random seed (printed), f32, `--max-resident` 4 GiB (a DiT over it streams its blocks). The Qwen3 encoder
 * loads to encode the prompts and is freed before the DiT loads. Progress goes to stderr.
 *
 * Every option is checked before the device is taken and before any weight is read: numbers, ranges
 * (the size a multiple of {@link PIXEL_UNIT}, 16, which no Anima checkpoint changes) and formats first,
 * then the paths (the files, Qwen3's config and tokenizer files, the PNG's directory), then the
 * safetensors headers of `--dit` and `--vae`, Qwen3's config and tokenizer and T5's model.
 *
 * @module
 */

import { acquireDevice } from "../../harness/device.ts";
import { SafetensorsFile } from "../../llm/safetensors.ts";
import { fileSource, openCheckpointDir } from "../../llm/safetensors_file.ts";
import { loadQwenTokenizer } from "../../llm/tokenizer/qwen.ts";
import { SentencePieceTokenizer } from "../../llm/tokenizer/sentencepiece.ts";
import { checkPath, choiceFlag, numberFlag, parseBytes, parseCliFlags } from "../cli.ts";
import { encodePng } from "../image.ts";
import { parseQwen3Config, type Qwen3Config } from "../qwen3/config.ts";
import { Qwen3Encoder } from "../qwen3/encoder.ts";
import { QWEN3_FORMATS, type Qwen3Format } from "../qwen3/linear.ts";
import { PIXEL_UNIT, VAE_SCALE } from "./config.ts";
import { Anima, ANIMA_FORMATS } from "./pipeline.ts";
import { ANIMA_SAMPLERS, type AnimaSampler } from "./sampler.ts";
import { onDemandTextEncoder, t5AdapterTokenizer } from "./text.ts";

const VALUED = [
  "dit",
  "vae",
  "qwen3",
  "t5",
  "prompt",
  "negative",
  "out",
  "width",
  "height",
  "steps",
  "cfg",
  "shift",
  "sampler",
  "seed",
  "format",
  "text-encoder-format",
  "max-resident",
];
const USAGE =
  `usage: deno task anima --dit FILE --vae FILE --qwen3 DIR --t5 FILE --prompt TEXT --out image.png [options]
  --dit FILE                   Anima's DiT (ComfyUI names net.*, the LLM adapter inside; 28 or 52 blocks)
  --vae FILE                   the Wan 2.1 VAE (qwen_image_vae.safetensors)
  --qwen3 DIR                  Qwen3-0.6B: config.json, safetensors, tokenizer files
  --t5 FILE                    T5's spiece.model (the LLM adapter's ids)
  --prompt TEXT                the prompt
  --out FILE                   the PNG to write (its directory must exist)
  --negative TEXT              the negative prompt (default "")
  --width W, --height H        pixels, multiples of ${PIXEL_UNIT} (default 1024 x 1024)
  --steps N                    sampling steps, an integer >= 1 (default 50)
  --cfg S                      guidance scale, a finite number (default 3.5; 1: no negative pass)
  --shift S                    flow shift of the schedule, > 0 (default 3; sd-scripts' script defaults to 5)
  --sampler NAME               euler (default), or ComfyUI's res_multistep or er_sde (stochastic: its step
                               noise comes from the seed too)
  --seed S                     the noise's seed, an integer in [0, 2^32) (default random, printed)
  --format f32|q8              the DiT's block products (default f32)
  --text-encoder-format f32|q8 the Qwen3 encoder's matrices (default f32)
  --max-resident BYTES         GPU memory budget, e.g. 6GiB (default 4 GiB; stages load in turn, the DiT streams)
  --help                       this text`;

/** What `deno task anima` was asked for, every option checked that can be without reading a file. */
export interface AnimaCliOptions {
  /** `--dit`: the DiT's safetensors file. */
  dit: string;
  /** `--vae`: the VAE's safetensors file. */
  vae: string;
  /** `--qwen3`: Qwen3-0.6B's directory. */
  qwen3: string;
  /** `--t5`: T5's spiece.model. */
  t5: string;
  /** `--prompt`. */
  prompt: string;
  /** `--negative` (default ""). */
  negative: string;
  /** `--out`: the PNG. */
  out: string;
  /** Pixels, a multiple of 16 (default 1024). */
  width: number;
  /** Pixels, a multiple of 16 (default 1024). */
  height: number;
  /** Steps, an integer >= 1 (default: the pipeline's). */
  steps?: number;
  /** Guidance scale, finite. */
  cfg?: number;
  /** Flow shift, finite and > 0. */
  shift?: number;
  /** The sampler. */
  sampler?: AnimaSampler;
  /** The noise's seed, in [0, 2^32). */
  seed?: number;
  /** The DiT's format. */
  format?: "f32" | "q8";
  /** The Qwen3 encoder's format. */
  textEncoderFormat?: Qwen3Format;
  /** The residency budget in bytes, >= 1. */
  maxResidentBytes?: number;
}

/**
 * The command line, checked without reading anything: options known by name and given a value, the
 * required ones there, numbers in their ranges (width and height multiples of {@link PIXEL_UNIT}),
 * formats among the known ones.
 *
 * @param args the arguments
 * @returns the options, or "help" when `--help` or `-h` is among them
 * @throws Error naming the option and what was expected (an unknown option, a missing value or
 *   option, a positional argument, a number out of range, an unknown format)
 */
export function parseCliArgs(args: readonly string[]): AnimaCliOptions | "help" {
  const flags = parseCliFlags(args, {
    valued: VALUED,
    required: ["dit", "vae", "qwen3", "t5", "prompt", "out"],
    usage: USAGE,
  });
  if (flags === "help") return "help";
  const size = (name: "width" | "height") => {
    const v = numberFlag(flags, name, true, { min: 1 }) ?? 1024;
    if (v % PIXEL_UNIT !== 0) {
      throw new Error(
        `--${name} must be a multiple of ${PIXEL_UNIT} (a DiT patch of 2 x 2 latent cells of ${VAE_SCALE} x ` +
          `${VAE_SCALE} pixels), got ${v}`,
      );
    }
    return v;
  };
  return {
    dit: flags.get("dit")!,
    vae: flags.get("vae")!,
    qwen3: flags.get("qwen3")!.replace(/\/$/, ""),
    t5: flags.get("t5")!,
    prompt: flags.get("prompt")!,
    negative: flags.get("negative") ?? "",
    out: flags.get("out")!,
    width: size("width"),
    height: size("height"),
    steps: numberFlag(flags, "steps", true, { min: 1 }),
    cfg: numberFlag(flags, "cfg", false),
    shift: numberFlag(flags, "shift", false, { above: 0 }),
    sampler: choiceFlag(flags, "sampler", ANIMA_SAMPLERS),
    seed: numberFlag(flags, "seed", true, { min: 0, max: 2 ** 32 - 1 }),
    format: choiceFlag(flags, "format", ANIMA_FORMATS),
    textEncoderFormat: choiceFlag(flags, "text-encoder-format", QWEN3_FORMATS),
    maxResidentBytes: flags.has("max-resident") ? parseBytes(flags.get("max-resident")!) : undefined,
  };
}

async function isFile(path: string): Promise<boolean> {
  return (await Deno.stat(path).catch(() => undefined))?.isFile ?? false;
}

/**
 * Deno only: the paths exist: `--dit`, `--vae` and `--t5` files; `--qwen3` a directory with
 * `config.json`, `tokenizer_config.json` and `tokenizer.json` (or `vocab.json` and `merges.txt`);
 * `--out`'s directory.
 *
 * @param options the parsed options
 * @throws Error naming the option and the path
 */
export async function checkCliPaths(options: AnimaCliOptions): Promise<void> {
  for (const name of ["dit", "vae", "t5"] as const) await checkPath(name, options[name], "file");
  const dir = options.qwen3;
  await checkPath("qwen3", dir, "directory");
  for (const file of ["config.json", "tokenizer_config.json"]) await checkPath("qwen3", `${dir}/${file}`, "file");
  if (
    !(await isFile(`${dir}/tokenizer.json`)) &&
    !(await isFile(`${dir}/vocab.json`) && await isFile(`${dir}/merges.txt`))
  ) {
    throw new Error(`--qwen3: ${dir} has neither tokenizer.json nor vocab.json and merges.txt`);
  }
  await checkPath("out", options.out, "output");
}

/** Qwen3's config and tokenizer from its directory (the weights are opened when the encoder loads). */
async function qwen3Files(
  dir: string,
): Promise<{ config: Qwen3Config; tokenizer: { encode(text: string): number[] } }> {
  const config = parseQwen3Config(await Deno.readTextFile(`${dir}/config.json`));
  const tokenizerConfig = await Deno.readTextFile(`${dir}/tokenizer_config.json`);
  const tokenizer = await isFile(`${dir}/tokenizer.json`)
    ? loadQwenTokenizer({ tokenizerJson: await Deno.readTextFile(`${dir}/tokenizer.json`), tokenizerConfig })
    : loadQwenTokenizer({
      vocab: await Deno.readTextFile(`${dir}/vocab.json`),
      merges: await Deno.readTextFile(`${dir}/merges.txt`),
      tokenizerConfig,
    });
  return { config, tokenizer };
}

/** Runs `read`, naming the option in its error. */
async function reading<T>(name: string, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (e) {
    throw new Error(`--${name}: ${(e as Error).message}`, { cause: e });
  }
}

if (import.meta.main) {
  try {
    const options = parseCliArgs(Deno.args);
    if (options === "help") {
      console.log(USAGE);
      Deno.exit(0);
    }
    // Every option checked before the device and any weight: a typo is told at once, not after gigabytes.
    await checkCliPaths(options);
    const ditFile = await fileSource(options.dit), vaeFile = await fileSource(options.vae);
    const dit = await reading("dit", () => SafetensorsFile.open(ditFile));
    const vae = await reading("vae", () => SafetensorsFile.open(vaeFile));
    const qwen3 = await reading("qwen3", () => qwen3Files(options.qwen3));
    const t5 = await reading("t5", async () => new SentencePieceTokenizer(await Deno.readFile(options.t5)));
    const start = performance.now();
    const since = () => `${((performance.now() - start) / 1000).toFixed(2)} s`;
    const gpu = await acquireDevice();
    console.error(`adapter: ${gpu.adapter.description || gpu.adapter.vendor || "unknown"}`);
    // Qwen3's weights load on the first prompt and are freed before the DiT loads.
    const textEncoder = onDemandTextEncoder(qwen3.tokenizer, async () => {
      const { store, close } = await openCheckpointDir(options.qwen3);
      const format = options.textEncoderFormat;
      return { encoder: await Qwen3Encoder.load(gpu, store, qwen3.config, { format }), close };
    });
    const model = await Anima.load({ dit, vae, textEncoder, t5Tokenizer: t5AdapterTokenizer(t5) }, {
      device: gpu,
      format: options.format,
      maxResidentBytes: options.maxResidentBytes,
      onProgress: ({ stage, done, total }) => console.error(`load ${stage} ${done}/${total} (${since()})`),
    });
    const { keepsAllStages, streamsDitBlocks } = model.residency;
    console.error(
      `${model.config.blocks} blocks, ${keepsAllStages ? "all stages resident" : "stages loaded in turn"}` +
        `${streamsDitBlocks ? ", DiT blocks streamed" : ""} (${since()})`,
    );
    const { width, height } = options;
    const image = await model.generate({
      prompt: options.prompt,
      negativePrompt: options.negative,
      width,
      height,
      steps: options.steps,
      cfg: options.cfg,
      shift: options.shift,
      sampler: options.sampler,
      seed: options.seed,
      onStep: (done, total) => console.error(`step ${done}/${total} (${since()})`),
    });
    await Deno.writeFile(options.out, await encodePng(image.rgba, width, height));
    console.error(`wrote ${options.out} (${width} x ${height}, seed ${image.seed}) in ${since()}`);
    model.destroy();
    ditFile.close();
    vaeFile.close();
    gpu.destroy();
  } catch (e) {
    console.error((e as Error).message);
    Deno.exit(1);
  }
}
