import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { encodeSafetensors } from "../../llm/safetensors_write.ts";
import { openCliRun, parseCliArgs, type ZImageCliOptions } from "./cli.ts";
import {
  byteTokenizerFiles,
  goldenStore,
  goldenTensor,
  loadTinyIndex,
  recipeFile,
  type TinyIndex,
} from "./fixtures/recipe.ts";
import { ZImage } from "./pipeline.ts";
import { memoryFiles, type ModelFiles } from "./source.ts";

async function inflate(data: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([data as Uint8Array<ArrayBuffer>]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The RGBA pixels of a PNG this port wrote (one IDAT, filter 0 on every row). */
async function pngPixels(png: Uint8Array): Promise<{ width: number; height: number; rgba: Uint8Array }> {
  const view = new DataView(png.buffer, png.byteOffset);
  const width = view.getUint32(16), height = view.getUint32(20);
  let idat: Uint8Array = new Uint8Array(0);
  for (let at = 8; at < png.length;) {
    const length = view.getUint32(at);
    if (new TextDecoder().decode(png.subarray(at + 4, at + 8)) === "IDAT") idat = png.subarray(at + 8, at + 8 + length);
    at += 12 + length;
  }
  const raw = await inflate(idat), rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    strictEqual(raw[y * (4 * width + 1)], 0);
    rgba.set(raw.subarray(y * (4 * width + 1) + 1, (y + 1) * (4 * width + 1)), 4 * width * y);
  }
  return { width, height, rgba };
}

/** The tiny recipe's checkpoint as a diffusers directory's files (no text encoder, no tokenizer). */
function tinyFiles(index: TinyIndex): Record<string, Uint8Array> {
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  return {
    "transformer/config.json": json(index.config.dit),
    "transformer/diffusion_pytorch_model.safetensors": recipeFile(index, "dit"),
    "vae/config.json": json(index.config.vae),
    "vae/diffusion_pytorch_model.safetensors": recipeFile(index, "vae"),
  };
}

async function writeFiles(dir: string, files: Record<string, Uint8Array>): Promise<void> {
  for (const [path, bytes] of Object.entries(files)) {
    await Deno.mkdir(`${dir}/${path.slice(0, path.lastIndexOf("/"))}`, { recursive: true });
    await Deno.writeFile(`${dir}/${path}`, bytes);
  }
}

/** A safetensors file of one F32 tensor. */
function tensorFile(name: string, shape: number[], values: Float32Array): Uint8Array {
  return encodeSafetensors([{ name, dtype: "F32", shape, data: new Uint8Array(values.buffer) }]);
}

/** The CLI run in a process of its own: its exit code, stdout and stderr. */
async function runCli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const cli = new URL("./cli.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", cli, ...args],
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, stdout: text(out.stdout), stderr: text(out.stderr) };
}

const REQUIRED = ["--model", "m", "--out", "o.png", "--prompt", "a fox"];

Deno.test("cli: every option checked by name before anything is read (byte counts, paths: models/cli.test.ts)", async () => {
  deepStrictEqual(parseCliArgs([...REQUIRED, "--steps", "3", "--text-encoder-format", "q8", "--activations", "int8"]), {
    model: "m",
    prompt: "a fox",
    promptEmbeds: undefined,
    out: "o.png",
    width: 1024,
    height: 1024,
    steps: 3,
    seed: undefined,
    format: undefined,
    textEncoderFormat: "q8",
    activations: "int8",
    maxResidentBytes: undefined,
  });
  const embeds = parseCliArgs(["--model", "m", "--out", "o", "--prompt-embeds", "e", "--seed", "4294967295"]);
  deepStrictEqual([(embeds as ZImageCliOptions).promptEmbeds, (embeds as ZImageCliOptions).seed], ["e", 2 ** 32 - 1]);
  deepStrictEqual(parseCliArgs(["--help"]), "help");
  deepStrictEqual(parseCliArgs(["--width", "x", "-h"]), "help");
  const refused: [string[], string][] = [
    [["--cfg", "2"], "unknown option --cfg"],
    [["--out"], "--out needs a value"],
    [["extra"], 'unexpected argument "extra"'],
    [["--prompt-embeds", "e"], "give one of --prompt and --prompt-embeds"],
    [["--width", "0"], '--width must be an integer >= 1, got "0"'],
    [["--height", "-16"], '--height must be an integer >= 1, got "-16"'],
    [["--width", "512.5"], '--width must be an integer >= 1, got "512.5"'],
    [["--height", "big"], '--height must be an integer >= 1, got "big"'],
    [["--steps", "0"], '--steps must be an integer in [1, 1000], got "0"'],
    [["--steps", "1001"], '--steps must be an integer in [1, 1000], got "1001"'],
    [["--steps", ""], '--steps must be an integer in [1, 1000], got ""'],
    [["--seed", "-1"], '--seed must be an integer in [0, 4294967295], got "-1"'],
    [["--seed", "4294967296"], '--seed must be an integer in [0, 4294967295], got "4294967296"'],
    [["--seed", "1.5"], '--seed must be an integer in [0, 4294967295], got "1.5"'],
    [["--format", "q5"], '--format must be one of f32, q8, q4g128, got "q5"'],
    [["--text-encoder-format", "q4g128"], '--text-encoder-format must be one of f32, q8, got "q4g128"'],
    [["--activations", "int4"], '--activations must be one of f32, int8, got "int4"'],
    [["--max-resident", "0"], '--max-resident must be bytes >= 1, e.g. 4294967296 or 4GiB, got "0"'],
    [["--max-resident", "4GB"], '--max-resident must be bytes >= 1, e.g. 4294967296 or 4GiB, got "4GB"'],
  ];
  for (const [args, message] of refused) await assertThrowsMessage(() => parseCliArgs([...REQUIRED, ...args]), message);
  await assertThrowsMessage(() => parseCliArgs(["--model", "m", "--prompt", "a"]), "--out is required");
  await assertThrowsMessage(
    () => parseCliArgs(["--model", "m", "--out", "o"]),
    "give one of --prompt and --prompt-embeds",
  );
});

Deno.test("cli: what depends on the checkpoint is checked from its configs and safetensors headers, no tensor data", async () => {
  const index = await loadTinyIndex();
  const files = tinyFiles(index);
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  const withText = {
    ...files,
    "text_encoder/config.json": json(index.config.text_encoder),
    "text_encoder/model.safetensors": recipeFile(index, "text_encoder"),
    ...byteTokenizerFiles(),
  };
  // Every read of a file, to hold the weights' files to their safetensors headers.
  const reads: { bytes: Uint8Array; path: string; end: number }[] = [];
  const recorded = (files: Record<string, Uint8Array>): ModelFiles => {
    const memory = memoryFiles(files);
    return {
      name: "tiny",
      open: async (path) => {
        const source = await memory.open(path);
        return source && {
          name: source.name,
          size: source.size,
          read: (offset, length) => {
            reads.push({ bytes: files[path], path, end: offset + length });
            return source.read(offset, length);
          },
        };
      },
    };
  };
  const dir = await Deno.makeTempDir();
  try {
    const embeds = new Float32Array(3 * 32).map((_, i) => i / 8);
    await Deno.writeFile(`${dir}/embeds.safetensors`, tensorFile("prompt_embeds", [3, 32], embeds));
    await Deno.writeFile(`${dir}/wide.safetensors`, tensorFile("prompt_embeds", [2, 48], new Float32Array(96)));
    const options = parseCliArgs(["--model", "m", "--out", "o", "--prompt-embeds", `${dir}/embeds.safetensors`]);
    const base = { ...(options as ZImageCliOptions), width: 32, height: 16 };
    // The tiny VAE has two blocks (a factor of 2), so its unit is 2 x 2 = 4 pixels, not Turbo's 16.
    await assertThrowsMessage(
      () => openCliRun({ ...base, width: 30 }, recorded(files)),
      "--width must be a multiple of 4 for this checkpoint (a DiT patch of 2 x 2 latent cells of 2 x 2 pixels), got 30",
    );
    await assertThrowsMessage(
      () => openCliRun({ ...base, height: 18 }, recorded(files)),
      "--height must be a multiple of 4 for this checkpoint",
    );
    await assertThrowsMessage(
      () => openCliRun({ ...base, promptEmbeds: undefined, prompt: "a fox" }, recorded(files)),
      "--prompt needs tiny to have a text encoder and a tokenizer; it has no text encoder (text_encoder/, or " +
        "ComfyUI's qwen_3_4b.safetensors) and no tokenizer (tokenizer/): give --prompt-embeds instead",
    );
    await assertThrowsMessage(
      () => openCliRun({ ...base, promptEmbeds: `${dir}/wide.safetensors` }, recorded(files)),
      `--prompt-embeds: ${dir}/wide.safetensors's "prompt_embeds" must be [tokens >= 1, 32] for this checkpoint, got [2,48]`,
    );
    await assertThrowsMessage(() => openCliRun(base, memoryFiles({}, "empty")), "--model: empty: neither a diffusers");
    const run = await openCliRun(base, recorded(files));
    deepStrictEqual([run.promptEmbeds, run.checkpoint.layout], [embeds, "diffusers"]);
    const text = await openCliRun({ ...base, promptEmbeds: undefined, prompt: "a fox" }, recorded(withText));
    ok(text.checkpoint.textEncoder && text.checkpoint.tokenizer && text.promptEmbeds === undefined);
    // The weights' files were read up to the end of their headers (8 bytes of length, then the JSON), never past.
    const headerEnd = (bytes: Uint8Array) =>
      8 + Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
    for (const { bytes, path, end } of reads.filter((r) => r.path.endsWith(".safetensors"))) {
      ok(end <= headerEnd(bytes), `${path} read to byte ${end} of ${bytes.length}`);
    }
    ok(reads.some((r) => r.path === "text_encoder/model.safetensors"), "the text encoder's header was read");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli: a bad option fails before the device and the weights (no adapter line, no load progress); --help", async () => {
  const index = await loadTinyIndex();
  const dir = await Deno.makeTempDir();
  try {
    await writeFiles(`${dir}/model`, tinyFiles(index));
    await Deno.writeFile(`${dir}/embeds.safetensors`, tensorFile("prompt_embeds", [3, 32], new Float32Array(96)));
    const given = ["--model", `${dir}/model`, "--prompt-embeds", `${dir}/embeds.safetensors`, "--out", `${dir}/a.png`];
    const cases: [string[], string][] = [
      // Numbers before paths: the model directory does not exist, and the steps are what is told.
      [
        ["--model", `${dir}/none`, "--prompt", "a fox", "--out", "a.png", "--steps", "0"],
        '--steps must be an integer in [1, 1000], got "0"',
      ],
      [["--model", `${dir}/none`, "--prompt", "a fox", "--out", "a.png"], `--model: no directory ${dir}/none`],
      [
        [...given.slice(0, 4), "--out", `${dir}/none/a.png`],
        `--out: the directory ${dir}/none of ${dir}/none/a.png does not exist`,
      ],
      [[...given, "--width", "30", "--height", "16"], "--width must be a multiple of 4 for this checkpoint"],
      [["--model", `${dir}/model`, "--prompt", "a fox", "--out", `${dir}/a.png`], "--prompt needs"],
    ];
    for (const [args, message] of cases) {
      const { code, stderr } = await runCli(args);
      strictEqual(code, 1, stderr);
      ok(stderr.includes(message), stderr);
      ok(!stderr.includes("adapter:") && !stderr.includes("load "), stderr);
    }
    const help = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "zimage", "--help"],
      cwd: new URL("../../", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    strictEqual(help.code, 0, new TextDecoder().decode(help.stderr));
    ok(new TextDecoder().decode(help.stdout).startsWith("usage: deno task zimage --model DIR"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

gpuTest("cli: writes the PNG of the image generate() makes for the same seed, with per-step progress", async (gpu) => {
  const index = await loadTinyIndex();
  const dir = await Deno.makeTempDir();
  try {
    await writeFiles(dir, tinyFiles(index));
    const embeds = (await goldenTensor(await goldenStore("pipeline"), "prompt_embeds")) as Float32Array;
    await Deno.writeFile(`${dir}/embeds.safetensors`, tensorFile("prompt_embeds", [81, 32], embeds));
    const { code, stderr: log } = await runCli([
      ...["--model", dir, "--prompt-embeds", `${dir}/embeds.safetensors`, "--out", `${dir}/image.png`],
      ...["--width", "32", "--height", "16", "--steps", "2", "--seed", "9"],
    ]);
    strictEqual(code, 0, log);
    ok(/step 1\/2 .*\n.*step 2\/2/.test(log) && log.includes("load dit") && log.includes("seed 9"), log);
    const png = await pngPixels(await Deno.readFile(`${dir}/image.png`));
    const model = await ZImage.load(memoryFiles(tinyFiles(index)), { device: gpu });
    const want = await model.generate({ promptEmbeds: embeds, width: 32, height: 16, steps: 2, seed: 9 });
    model.destroy();
    deepStrictEqual([png.width, png.height], [32, 16]);
    deepStrictEqual(png.rgba, new Uint8Array(want.data.buffer));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
