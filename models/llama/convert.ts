/**
 * CLI (Deno only): converts a Hugging Face Llama checkpoint directory into one of our weight
 * formats, written as `<out-dir>/model.safetensors` with `__metadata__` {format, version,
 * permutation}, beside copies of `config.json` and of the tokenizer and generation files the
 * checkpoint has ({@link COPIED_FILES}), so the output is a complete checkpoint: `deno task
 * generate --model <out-dir>` loads it in its recorded format with its own tokenizer.
 *
 *     deno task convert <hf-dir> <out-dir> --format q8|q4g128|f32
 *     deno task convert --help
 *
 * It streams: the output header is laid out from the input headers alone, then each tensor is
 * read, transformed (`transformTensor`, the function quantise-on-load calls too, so the bytes are
 * the same) and written before the next is read; the checkpoint is never held whole. Progress
 * (bytes of input tensor data read / total) goes to a callback, and to stderr on the command line.
 * The output is written to a temporary name and renamed into place once complete.
 *
 * @module
 */

import { parseLlamaConfig } from "./config.ts";
import { openCheckpointDir } from "../../llm/safetensors_file.ts";
import { SafetensorsWriter } from "../../llm/safetensors_write.ts";
import { outputSpecs, WEIGHT_FORMATS, type WeightFormat } from "../../llm/weights/format.ts";
import { convertedMetadata, type LoadProgress } from "../../llm/weights/load.ts";
import { loadWeights, planLoad } from "./weights.ts";

/**
 * The files besides the weights that a conversion copies when the checkpoint has them: the
 * tokenizer (SentencePiece's `tokenizer.model`, Hugging Face's `tokenizer.json` and its config and
 * special tokens) and the generation defaults.
 */
export const COPIED_FILES: readonly string[] = [
  "tokenizer.model",
  "tokenizer.json",
  "tokenizer_config.json",
  "special_tokens_map.json",
  "generation_config.json",
];

/**
 * Converts a checkpoint directory.
 *
 * @param hfDir the HF checkpoint (config.json + model.safetensors or a sharded index)
 * @param outDir where config.json, model.safetensors and the tokenizer's files are written (created if needed)
 * @param format the weight format
 * @param onProgress called after each tensor with input bytes read and in all
 * @returns the size of the written model.safetensors
 * @throws Error naming what is wrong with the input, before anything is written
 */
export async function convertCheckpoint(
  hfDir: string,
  outDir: string,
  format: WeightFormat,
  onProgress?: LoadProgress,
): Promise<number> {
  if (!WEIGHT_FORMATS.includes(format)) {
    throw new Error(`convert: --format must be one of ${WEIGHT_FORMATS.join(", ")}, got ${format}`);
  }
  const configText = await Deno.readTextFile(`${hfDir}/config.json`);
  const config = parseLlamaConfig(configText);
  const { store, close } = await openCheckpointDir(hfDir);
  try {
    const plan = planLoad(store, config, format);
    if (plan.converted) throw new Error(`convert: ${hfDir} is already converted (${plan.format})`);
    await Deno.mkdir(outDir, { recursive: true });
    const partial = `${outDir}/model.safetensors.partial`;
    const file = await Deno.open(partial, { write: true, create: true, truncate: true });
    let writer: SafetensorsWriter;
    try {
      writer = new SafetensorsWriter(
        plan.specs.flatMap((spec) => outputSpecs(spec, format)),
        convertedMetadata(format),
        async (chunk) => {
          for (let done = 0; done < chunk.length;) done += await file.write(chunk.subarray(done));
        },
      );
      for await (const { parts } of loadWeights(store, config, { format, onProgress })) {
        for (const part of parts) await writer.write(part.name, part.data);
      }
      await writer.close();
    } finally {
      file.close();
    }
    await Deno.rename(partial, `${outDir}/model.safetensors`);
    await Deno.writeTextFile(`${outDir}/config.json`, configText);
    for (const name of COPIED_FILES) {
      try {
        await Deno.copyFile(`${hfDir}/${name}`, `${outDir}/${name}`);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    }
    return writer.fileBytes;
  } finally {
    close();
  }
}

const USAGE = `usage: deno task convert <hf-dir> <out-dir> --format q8|q4g128|f32
  Converts a Hugging Face Llama checkpoint to one of the engine's weight formats: <out-dir> gets
  model.safetensors (the format recorded in its metadata), config.json and the tokenizer's files,
  and loads with \`deno task generate "..." --model <out-dir>\` (no --format needed).
  --help   this text`;

/**
 * The command line: parses `<hf-dir> <out-dir> --format <f>` and prints progress to stderr.
 *
 * @param args the arguments after the script
 * @returns the exit code
 */
export async function main(args: string[]): Promise<number> {
  const refuse = (why: string) => {
    console.error(`convert: ${why}\n${USAGE}`);
    return 2;
  };
  const positional: string[] = [];
  let format: string | undefined;
  if (args.includes("--help") || args.includes("-h")) {
    console.log(USAGE);
    return 0;
  }
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--format") format = args[++i];
    else if (args[i].startsWith("--format=")) format = args[i].slice("--format=".length);
    else if (args[i].startsWith("-")) return refuse(`unknown option ${args[i]}`);
    else positional.push(args[i]);
  }
  if (positional.length !== 2) return refuse(`expected <hf-dir> <out-dir>, got ${positional.length} path(s)`);
  if (format === undefined) return refuse("--format is required");
  const mb = (b: number) => (b / 1e6).toFixed(1);
  const encoder = new TextEncoder();
  const bytes = await convertCheckpoint(positional[0], positional[1], format as WeightFormat, (done, total) => {
    Deno.stderr.writeSync(encoder.encode(`\rconverting: ${mb(done)} / ${mb(total)} MB`));
  });
  console.error(`\nwrote ${positional[1]}/model.safetensors (${format}, ${mb(bytes)} MB)`);
  return 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (e) {
    // convertCheckpoint's own refusals already begin with "convert:"; a file system error does not.
    const message = (e as Error).message;
    console.error(message.startsWith("convert: ") ? message : `convert: ${message}`);
    Deno.exit(1);
  }
}
