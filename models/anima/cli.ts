/**
 * Deno only (a CLI): `deno task anima` generates an image with Anima on whatever WebGPU adapter is
 * present and writes it as a PNG.
 *
 *     deno task anima --dit FILE --vae FILE --qwen3 DIR --t5 FILE --prompt TEXT --out image.png
 *                     [--negative TEXT] [--width W] [--height H] [--steps N] [--cfg S] [--shift S]
 *                     [--seed S] [--format f32|q8] [--text-encoder-format f32|q8] [--max-resident BYTES]
 *
 * `--dit` is Anima's DiT file (ComfyUI names, the LLM adapter inside), `--vae` the Wan 2.1 VAE
 * (`qwen_image_vae.safetensors`), `--qwen3` a Qwen3-0.6B directory (`config.json`, its safetensors,
 * `tokenizer_config.json` and `tokenizer.json` or `vocab.json` + `merges.txt`), `--t5` T5's
 * `spiece.model`. Defaults: 1024 x 1024, 50 steps, cfg 3.5, shift 3, negative prompt "", a random
 * seed (printed), f32, `--max-resident` 4 GiB (a DiT over it streams its blocks). The Qwen3 encoder
 * loads to encode the prompts and is freed before the DiT loads. Progress goes to stderr.
 *
 * @module
 */

import { acquireDevice, type ResidentDevice } from "../../harness/device.ts";
import { SafetensorsFile } from "../../llm/safetensors.ts";
import { fileSource, openCheckpointDir } from "../../llm/safetensors_file.ts";
import { loadQwenTokenizer } from "../../llm/tokenizer/qwen.ts";
import { SentencePieceTokenizer } from "../../llm/tokenizer/sentencepiece.ts";
import { numberFlag, parseBytes, parseCliFlags } from "../cli.ts";
import { encodePng } from "../image.ts";
import { parseQwen3Config } from "../qwen3/config.ts";
import { Qwen3Encoder } from "../qwen3/encoder.ts";
import type { Qwen3Format } from "../qwen3/linear.ts";
import { Anima, type AnimaTextEncoder } from "./pipeline.ts";
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
  --out FILE                   the PNG to write
  --negative TEXT              the negative prompt (default "")
  --width W, --height H        pixels, multiples of 16 (default 1024 x 1024)
  --steps N                    sampling steps (default 50)
  --cfg S                      guidance scale (default 3.5; 1: no negative pass)
  --shift S                    flow shift of the schedule (default 3; sd-scripts' script defaults to 5)
  --seed S                     the noise's seed (default random, printed)
  --format f32|q8              the DiT's block products (default f32)
  --text-encoder-format f32|q8 the Qwen3 encoder's matrices (default f32)
  --max-resident BYTES         GPU memory budget, e.g. 6GiB (default 4 GiB; stages load in turn, the DiT streams)
  --help                       this text`;

/**
 * The command line's `--name value` pairs, refusing anything else by name.
 *
 * @param args the arguments
 * @returns each option's value, or "help" when `--help` is among them
 * @throws Error naming an unknown option, a missing value, a missing required option or a
 *   positional argument
 */
export function parseCliArgs(args: readonly string[]): Map<string, string> | "help" {
  return parseCliFlags(args, {
    valued: VALUED,
    required: ["dit", "vae", "qwen3", "t5", "prompt", "out"],
    usage: USAGE,
  });
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Qwen3's tokenizer and an encoder that loads on the first prompt and is freed by `release`. */
async function qwen3Text(gpu: ResidentDevice, dir: string, format: Qwen3Format | undefined): Promise<AnimaTextEncoder> {
  const config = parseQwen3Config(await Deno.readTextFile(`${dir}/config.json`));
  const tokenizerConfig = await Deno.readTextFile(`${dir}/tokenizer_config.json`);
  const tokenizer = await exists(`${dir}/tokenizer.json`)
    ? loadQwenTokenizer({ tokenizerJson: await Deno.readTextFile(`${dir}/tokenizer.json`), tokenizerConfig })
    : loadQwenTokenizer({
      vocab: await Deno.readTextFile(`${dir}/vocab.json`),
      merges: await Deno.readTextFile(`${dir}/merges.txt`),
      tokenizerConfig,
    });
  return onDemandTextEncoder(tokenizer, async () => {
    const { store, close } = await openCheckpointDir(dir);
    return { encoder: await Qwen3Encoder.load(gpu, store, config, { format }), close };
  });
}

if (import.meta.main) {
  try {
    const flags = parseCliArgs(Deno.args);
    if (flags === "help") {
      console.log(USAGE);
      Deno.exit(0);
    }
    const maxResident = flags.has("max-resident") ? parseBytes(flags.get("max-resident")!) : undefined;
    // Every number read before anything loads: a typo is told at once, not after the model is on the GPU.
    const width = numberFlag(flags, "width", true) ?? 1024, height = numberFlag(flags, "height", true) ?? 1024;
    const steps = numberFlag(flags, "steps", true), cfg = numberFlag(flags, "cfg", false);
    const shift = numberFlag(flags, "shift", false), seed = numberFlag(flags, "seed", true);
    const start = performance.now();
    const since = () => `${((performance.now() - start) / 1000).toFixed(2)} s`;
    const gpu = await acquireDevice();
    console.error(`adapter: ${gpu.adapter.description || gpu.adapter.vendor || "unknown"}`);
    const ditFile = await fileSource(flags.get("dit")!), vaeFile = await fileSource(flags.get("vae")!);
    const textEncoder = await qwen3Text(
      gpu,
      flags.get("qwen3")!.replace(/\/$/, ""),
      flags.get("text-encoder-format") as Qwen3Format | undefined,
    );
    const model = await Anima.load({
      dit: await SafetensorsFile.open(ditFile),
      vae: await SafetensorsFile.open(vaeFile),
      textEncoder,
      t5Tokenizer: t5AdapterTokenizer(new SentencePieceTokenizer(await Deno.readFile(flags.get("t5")!))),
    }, {
      device: gpu,
      format: flags.get("format") as "f32" | "q8" | undefined,
      maxResidentBytes: maxResident,
      onProgress: ({ stage, done, total }) => console.error(`load ${stage} ${done}/${total} (${since()})`),
    });
    const { keepsAllStages, streamsDitBlocks } = model.residency;
    console.error(
      `${model.config.blocks} blocks, ${keepsAllStages ? "all stages resident" : "stages loaded in turn"}` +
        `${streamsDitBlocks ? ", DiT blocks streamed" : ""} (${since()})`,
    );
    const image = await model.generate({
      prompt: flags.get("prompt")!,
      negativePrompt: flags.get("negative") ?? "",
      width,
      height,
      steps,
      cfg,
      shift,
      seed,
      onStep: (done, total) => console.error(`step ${done}/${total} (${since()})`),
    });
    await Deno.writeFile(flags.get("out")!, await encodePng(image.rgba, width, height));
    console.error(`wrote ${flags.get("out")} (${width} x ${height}, seed ${image.seed}) in ${since()}`);
    model.destroy();
    ditFile.close();
    vaeFile.close();
    gpu.destroy();
  } catch (e) {
    console.error((e as Error).message);
    Deno.exit(1);
  }
}
