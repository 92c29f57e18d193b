/**
 * Deno only (a CLI): `deno task zimage` generates an image with Z-Image Turbo on whatever WebGPU
 * adapter is present and writes it as a PNG.
 *
 *     deno task zimage --model DIR (--prompt TEXT | --prompt-embeds FILE) --out image.png [--width W]
 *                      [--height H] [--steps N] [--seed S] [--format f32|q8|q4g128]
 *                      [--text-encoder-format f32|q8] [--activations f32|int8] [--max-resident BYTES]
 *
 * DIR is a diffusers snapshot of Tongyi-MAI/Z-Image-Turbo (transformer/, vae/, text_encoder/,
 * tokenizer/) or a folder with ComfyUI's files (and a `tokenizer/` folder for `--prompt`).
 * `--prompt-embeds FILE` gives the caption features instead of a prompt: a safetensors file whose
 * tensor `prompt_embeds` (or its only tensor) is `[tokens, 2560]`, Qwen3-4B's `hidden_states[-2]` for
 * the chat-templated prompt. Defaults: 1024 x 1024, 8 steps, a random seed (printed), an f32 DiT
 * with an f32 text encoder (q8 with a q8 or q4g128 DiT), and `--max-resident` 4 GiB (a number of bytes,
 * or with a KiB/MiB/GiB suffix). At Turbo's size `--format q4g128` (DiT 3.1 GiB, text encoder q8 3.3 GiB,
 * its embedding rows read from the checkpoint per prompt) fits the default budget a stage at a time; the
 * f32 text encoder takes 13.2 GiB; a DiT over the budget streams its blocks. Progress per stage and per
 * step, with times, goes to stderr.
 *
 * Every option is checked before any weight is read: numbers, ranges and formats first, then the paths
 * (DIR, the embeddings file, the PNG's directory), then the checkpoint's configs and safetensors
 * headers (no tensor data) for what depends on the checkpoint: the size's unit ({@link pixelUnit}: 16
 * for Turbo, from the VAE's config), a text encoder and a tokenizer for `--prompt`, the caption width of
 * `--prompt-embeds`.
 *
 * @module
 */

import { acquireDevice } from "../../harness/device.ts";
import { SafetensorsFile } from "../../llm/safetensors.ts";
import { fileSource } from "../../llm/safetensors_file.ts";
import { checkPath, choiceFlag, numberFlag, parseBytes, parseCliFlags } from "../cli.ts";
import { encodePng } from "../image.ts";
import { QWEN3_FORMATS, type Qwen3Format } from "../qwen3/linear.ts";
import { pixelUnit, vaeScaleFactor } from "./config.ts";
import { directoryFiles } from "./file.ts";
import { ACTIVATIONS, type Activations, LINEAR_FORMATS, type LinearFormat } from "../linear.ts";
import { ZImage } from "./pipeline.ts";
import { TURBO_MAX_STEPS } from "./scheduler.ts";
import { type ModelFiles, openZImage, type ZImageCheckpoint } from "./source.ts";

const VALUED = [
  "model",
  "prompt",
  "prompt-embeds",
  "out",
  "width",
  "height",
  "steps",
  "seed",
  "format",
  "text-encoder-format",
  "activations",
  "max-resident",
];
const USAGE = `usage: deno task zimage --model DIR (--prompt TEXT | --prompt-embeds FILE) --out image.png [options]
  --model DIR                  a diffusers Z-Image-Turbo snapshot, or a folder of ComfyUI's files (+ tokenizer/)
  --prompt TEXT                the prompt (chat-templated and encoded by the checkpoint's Qwen3-4B)
  --prompt-embeds FILE         caption features instead: a safetensors file with prompt_embeds [tokens, 2560]
  --out FILE                   the PNG to write (its directory must exist)
  --width W, --height H        pixels, multiples of 16 for Turbo (default 1024 x 1024)
  --steps N                    sampling steps, 1 to ${TURBO_MAX_STEPS} (default 8)
  --seed S                     the noise's seed, an integer in [0, 2^32) (default random, printed)
  --format f32|q8|q4g128       the DiT's blocks (default f32)
  --text-encoder-format f32|q8 the text encoder's matrices (default f32 with an f32 DiT, else q8)
  --activations f32|int8       the DiT blocks' products on f32 activations (default) or on int8 ones
                               quantized per row (q8 and q4g128 only; needs dot4I8Packed)
  --max-resident BYTES         GPU memory budget, e.g. 6GiB (default 4 GiB; stages load in turn, the DiT streams)
  --help                       this text`;

/** What `deno task zimage` was asked for, checked as far as it can be without the checkpoint. */
export interface ZImageCliOptions {
  /** `--model`: the checkpoint's directory. */
  model: string;
  /** `--prompt` (exactly one of it and `promptEmbeds`). */
  prompt?: string;
  /** `--prompt-embeds`: the caption features' safetensors file. */
  promptEmbeds?: string;
  /** `--out`: the PNG. */
  out: string;
  /** Pixels, an integer >= 1 (default 1024). */
  width: number;
  /** Pixels, an integer >= 1 (default 1024). */
  height: number;
  /** Euler steps, in [1, 1000] (default: the pipeline's). */
  steps?: number;
  /** The noise's seed, in [0, 2^32). */
  seed?: number;
  /** The DiT's format. */
  format?: LinearFormat;
  /** The text encoder's format. */
  textEncoderFormat?: Qwen3Format;
  /** What the DiT blocks' products multiply. */
  activations?: Activations;
  /** The residency budget in bytes, >= 1. */
  maxResidentBytes?: number;
}

/**
 * The command line, checked without reading anything: options known by name and given a value, the
 * required ones there, one of `--prompt` and `--prompt-embeds`, numbers in their ranges, formats
 * among the known ones.
 *
 * @param args the arguments
 * @returns the options, or "help" when `--help` or `-h` is among them
 * @throws Error naming the option and what was expected (an unknown option, a missing value or
 *   option, a positional argument, a number out of range, an unknown format)
 */
export function parseCliArgs(args: readonly string[]): ZImageCliOptions | "help" {
  const flags = parseCliFlags(args, { valued: VALUED, required: ["model", "out"], usage: USAGE });
  if (flags === "help") return "help";
  const prompt = flags.get("prompt"), promptEmbeds = flags.get("prompt-embeds");
  if ((prompt === undefined) === (promptEmbeds === undefined)) {
    throw new Error(`give one of --prompt and --prompt-embeds\n${USAGE}`);
  }
  return {
    model: flags.get("model")!,
    prompt,
    promptEmbeds,
    out: flags.get("out")!,
    width: numberFlag(flags, "width", true, { min: 1 }) ?? 1024,
    height: numberFlag(flags, "height", true, { min: 1 }) ?? 1024,
    steps: numberFlag(flags, "steps", true, { min: 1, max: TURBO_MAX_STEPS }),
    seed: numberFlag(flags, "seed", true, { min: 0, max: 2 ** 32 - 1 }),
    format: choiceFlag(flags, "format", LINEAR_FORMATS),
    textEncoderFormat: choiceFlag(flags, "text-encoder-format", QWEN3_FORMATS),
    activations: choiceFlag(flags, "activations", ACTIVATIONS),
    maxResidentBytes: flags.has("max-resident") ? parseBytes(flags.get("max-resident")!) : undefined,
  };
}

/**
 * Deno only: the paths exist: `--model` a directory, `--prompt-embeds` a file, `--out`'s directory.
 *
 * @param options the parsed options
 * @throws Error naming the option and the path
 */
export async function checkCliPaths(options: ZImageCliOptions): Promise<void> {
  await checkPath("model", options.model, "directory");
  if (options.promptEmbeds !== undefined) await checkPath("prompt-embeds", options.promptEmbeds, "file");
  await checkPath("out", options.out, "output");
}

/** A run's checkpoint, opened and checked against the options, and the caption features it was given. */
export interface ZImageCliRun {
  /** The checkpoint: configs and safetensors headers, no tensor data read. */
  checkpoint: ZImageCheckpoint;
  /** `--prompt-embeds`' tensor, `[tokens, capFeatDim]`. */
  promptEmbeds?: Float32Array;
}

/**
 * Deno only (it reads `--prompt-embeds`): opens the checkpoint's configs and safetensors headers (no
 * tensor data) and checks what depends on it: width and height multiples of its {@link pixelUnit}, a
 * text encoder and a tokenizer for `--prompt`, caption features `[tokens, capFeatDim]`.
 *
 * @param options the parsed options
 * @param files the checkpoint's files (`directoryFiles(options.model)`)
 * @returns the opened checkpoint and the caption features
 * @throws Error naming the option and what this checkpoint expects
 */
export async function openCliRun(options: ZImageCliOptions, files: ModelFiles): Promise<ZImageCliRun> {
  const checkpoint = await openZImage(files).catch((e: Error) => {
    throw new Error(`--model: ${e.message}`, { cause: e });
  });
  const unit = pixelUnit(checkpoint.config), scale = vaeScaleFactor(checkpoint.config.vae);
  for (const name of ["width", "height"] as const) {
    if (options[name] % unit !== 0) {
      throw new Error(
        `--${name} must be a multiple of ${unit} for this checkpoint (a DiT patch of 2 x 2 latent cells of ` +
          `${scale} x ${scale} pixels), got ${options[name]}`,
      );
    }
  }
  if (options.prompt !== undefined && !(checkpoint.textEncoder && checkpoint.tokenizer)) {
    const missing = [
      checkpoint.textEncoder ? "" : "no text encoder (text_encoder/, or ComfyUI's qwen_3_4b.safetensors)",
      checkpoint.tokenizer ? "" : "no tokenizer (tokenizer/)",
    ].filter((m) => m);
    throw new Error(
      `--prompt needs ${files.name} to have a text encoder and a tokenizer; it has ${
        missing.join(" and ")
      }: give --prompt-embeds instead`,
    );
  }
  const capFeatDim = checkpoint.config.dit.capFeatDim;
  return {
    checkpoint,
    promptEmbeds: options.promptEmbeds === undefined
      ? undefined
      : await readPromptEmbeds(options.promptEmbeds, capFeatDim),
  };
}

async function readPromptEmbeds(path: string, capFeatDim: number): Promise<Float32Array> {
  const source = await fileSource(path);
  try {
    const file = await SafetensorsFile.open(source);
    const name = file.tensors.some((t) => t.name === "prompt_embeds")
      ? "prompt_embeds"
      : file.tensors.length === 1
      ? file.tensors[0].name
      : undefined;
    if (!name) throw new Error(`--prompt-embeds: ${path} has no tensor "prompt_embeds", and more than one tensor`);
    const shape = file.info(name).shape;
    if (shape.length !== 2 || shape[0] < 1 || shape[1] !== capFeatDim) {
      throw new Error(
        `--prompt-embeds: ${path}'s "${name}" must be [tokens >= 1, ${capFeatDim}] for this checkpoint, got [${shape}]`,
      );
    }
    return await file.readFloat32(name);
  } finally {
    source.close();
  }
}

if (import.meta.main) {
  try {
    const options = parseCliArgs(Deno.args);
    if (options === "help") {
      console.log(USAGE);
      Deno.exit(0);
    }
    // Every option checked before any weight is read: a typo is told at once, not after gigabytes.
    await checkCliPaths(options);
    const files = directoryFiles(options.model);
    const { checkpoint, promptEmbeds } = await openCliRun(options, files);
    const start = performance.now();
    const since = () => `${((performance.now() - start) / 1000).toFixed(2)} s`;
    const gpu = await acquireDevice();
    console.error(`adapter: ${gpu.adapter.description || gpu.adapter.vendor || "unknown"}`);
    const model = await ZImage.load(checkpoint, {
      device: gpu,
      format: options.format,
      textEncoderFormat: options.textEncoderFormat,
      activations: options.activations,
      maxResidentBytes: options.maxResidentBytes,
      onProgress: ({ stage, done, total }) => console.error(`load ${stage} ${done}/${total} (${since()})`),
    });
    const kept = model.resident.dit ? "all stages resident" : "stages loaded in turn";
    console.error(`layout ${model.checkpoint.layout}, ${kept} (${since()})`);
    const image = await model.generate({
      prompt: options.prompt,
      promptEmbeds,
      width: options.width,
      height: options.height,
      steps: options.steps,
      seed: options.seed,
      onStep: ({ step, steps }) => console.error(`step ${step}/${steps} (${since()})`),
    });
    await Deno.writeFile(options.out, await encodePng(image.data, image.width, image.height));
    console.error(`wrote ${options.out} (${image.width} x ${image.height}, seed ${image.seed}) in ${since()}`);
    model.destroy();
    files.close();
    gpu.destroy();
  } catch (e) {
    console.error((e as Error).message);
    Deno.exit(1);
  }
}
