/**
 * Deno only (a CLI): `deno task zimage` generates an image with Z-Image Turbo on whatever WebGPU
 * adapter is present and writes it as a PNG.
 *
 *     deno task zimage --model DIR (--prompt TEXT | --prompt-embeds FILE) --out image.png [--width W]
 *                      [--height H] [--steps N] [--seed S] [--format f32|q8|q4g128]
 *                      [--text-encoder-format f32|q8] [--max-resident BYTES]
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
 * @module
 */

import { acquireDevice } from "../../harness/device.ts";
import { SafetensorsFile } from "../../llm/safetensors.ts";
import { fileSource } from "../../llm/safetensors_file.ts";
import { numberFlag, parseBytes, parseCliFlags } from "../cli.ts";
import { encodePng } from "../image.ts";
import type { Qwen3Format } from "../qwen3/linear.ts";
import { directoryFiles } from "./file.ts";
import type { LinearFormat } from "./linear.ts";
import { ZImage } from "./pipeline.ts";

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
  "max-resident",
];
const USAGE = `usage: deno task zimage --model DIR (--prompt TEXT | --prompt-embeds FILE) --out image.png [options]
  --model DIR                  a diffusers Z-Image-Turbo snapshot, or a folder of ComfyUI's files (+ tokenizer/)
  --prompt TEXT                the prompt (chat-templated and encoded by the checkpoint's Qwen3-4B)
  --prompt-embeds FILE         caption features instead: a safetensors file with prompt_embeds [tokens, 2560]
  --out FILE                   the PNG to write
  --width W, --height H        pixels, multiples of 16 (default 1024 x 1024)
  --steps N                    sampling steps (default 8)
  --seed S                     the noise's seed (default random, printed)
  --format f32|q8|q4g128       the DiT's blocks (default f32)
  --text-encoder-format f32|q8 the text encoder's matrices (default f32 with an f32 DiT, else q8)
  --max-resident BYTES         GPU memory budget, e.g. 6GiB (default 4 GiB; stages load in turn, the DiT streams)
  --help                       this text`;

/**
 * The command line's `--name value` pairs, refusing anything else by name.
 *
 * @param args the arguments
 * @returns each option's value, or "help" when `--help` is among them
 * @throws Error naming an unknown option, a missing value or a positional argument
 */
export function parseCliArgs(args: readonly string[]): Map<string, string> | "help" {
  return parseCliFlags(args, { valued: VALUED, required: ["model", "out"], usage: USAGE });
}

async function readPromptEmbeds(path: string): Promise<Float32Array> {
  const source = await fileSource(path);
  try {
    const file = await SafetensorsFile.open(source);
    const name = file.tensors.some((t) => t.name === "prompt_embeds")
      ? "prompt_embeds"
      : file.tensors.length === 1
      ? file.tensors[0].name
      : undefined;
    if (!name) throw new Error(`${path}: no tensor "prompt_embeds", and more than one tensor`);
    return await file.readFloat32(name);
  } finally {
    source.close();
  }
}

if (import.meta.main) {
  try {
    const flags = parseCliArgs(Deno.args);
    if (flags === "help") {
      console.log(USAGE);
      Deno.exit(0);
    }
    const embedsPath = flags.get("prompt-embeds"), prompt = flags.get("prompt");
    if ((embedsPath === undefined) === (prompt === undefined)) {
      throw new Error(`give one of --prompt and --prompt-embeds\n${USAGE}`);
    }
    const maxResident = flags.has("max-resident") ? parseBytes(flags.get("max-resident")!) : undefined;
    // Every number read before anything loads: a typo is told at once, not after the model is on the GPU.
    const width = numberFlag(flags, "width", true), height = numberFlag(flags, "height", true);
    const steps = numberFlag(flags, "steps", true), seed = numberFlag(flags, "seed", true);
    const start = performance.now();
    const since = () => `${((performance.now() - start) / 1000).toFixed(2)} s`;
    const gpu = await acquireDevice();
    console.error(`adapter: ${gpu.adapter.description || gpu.adapter.vendor || "unknown"}`);
    const files = directoryFiles(flags.get("model")!);
    const model = await ZImage.load(files, {
      device: gpu,
      format: flags.get("format") as LinearFormat | undefined,
      textEncoderFormat: flags.get("text-encoder-format") as Qwen3Format | undefined,
      maxResidentBytes: maxResident,
      onProgress: ({ stage, done, total }) => console.error(`load ${stage} ${done}/${total} (${since()})`),
    });
    const kept = model.resident.dit ? "all stages resident" : "stages loaded in turn";
    console.error(`layout ${model.checkpoint.layout}, ${kept} (${since()})`);
    const image = await model.generate({
      prompt,
      promptEmbeds: embedsPath === undefined ? undefined : await readPromptEmbeds(embedsPath),
      width,
      height,
      steps,
      seed,
      onStep: ({ step, steps }) => console.error(`step ${step}/${steps} (${since()})`),
    });
    await Deno.writeFile(flags.get("out")!, await encodePng(image.data, image.width, image.height));
    console.error(`wrote ${flags.get("out")} (${image.width} x ${image.height}, seed ${image.seed}) in ${since()}`);
    model.destroy();
    files.close();
    gpu.destroy();
  } catch (e) {
    console.error((e as Error).message);
    Deno.exit(1);
  }
}
