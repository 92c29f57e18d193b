import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { encodeSafetensors } from "../../llm/safetensors_write.ts";
import { parseBytes, parseCliArgs } from "./cli.ts";
import { goldenStore, goldenTensor, loadTinyIndex, recipeFile } from "./fixtures/recipe.ts";
import { ZImage } from "./pipeline.ts";
import { memoryFiles } from "./source.ts";

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

Deno.test("cli: options parsed by name, byte counts with suffixes, anything else refused", async () => {
  deepStrictEqual(
    (parseCliArgs(["--model", "m", "--out", "o.png", "--steps", "3"]) as Map<string, string>).get("steps"),
    "3",
  );
  deepStrictEqual(
    (parseCliArgs(["--model", "m", "--out", "o", "--text-encoder-format", "q8"]) as Map<string, string>).get(
      "text-encoder-format",
    ),
    "q8",
  );
  deepStrictEqual(parseCliArgs(["--help"]), "help");
  strictEqual(parseBytes("4GiB"), 4 * 2 ** 30);
  strictEqual(parseBytes("1.5 MiB"), 1.5 * 2 ** 20);
  strictEqual(parseBytes("123"), 123);
  await assertThrowsMessage(
    () => parseBytes("4GB"),
    '--max-resident must be bytes, e.g. 4294967296 or 4GiB, got "4GB"',
  );
  await assertThrowsMessage(() => parseCliArgs(["--model", "m", "--out", "o", "--cfg", "2"]), "unknown option --cfg");
  await assertThrowsMessage(() => parseCliArgs(["--model", "m"]), "--out is required");
  await assertThrowsMessage(() => parseCliArgs(["--model", "m", "--out"]), "--out needs a value");
});

gpuTest("cli: writes the PNG of the image generate() makes for the same seed, with per-step progress", async (gpu) => {
  const index = await loadTinyIndex();
  const dir = await Deno.makeTempDir();
  try {
    const json = (v: unknown) => JSON.stringify(v);
    await Deno.mkdir(`${dir}/transformer`);
    await Deno.mkdir(`${dir}/vae`);
    await Deno.writeTextFile(`${dir}/transformer/config.json`, json(index.config.dit));
    await Deno.writeFile(`${dir}/transformer/diffusion_pytorch_model.safetensors`, recipeFile(index, "dit"));
    await Deno.writeTextFile(`${dir}/vae/config.json`, json(index.config.vae));
    await Deno.writeFile(`${dir}/vae/diffusion_pytorch_model.safetensors`, recipeFile(index, "vae"));
    const embeds = (await goldenTensor(await goldenStore("pipeline"), "prompt_embeds")) as Float32Array;
    await Deno.writeFile(
      `${dir}/embeds.safetensors`,
      encodeSafetensors([{
        name: "prompt_embeds",
        dtype: "F32",
        shape: [81, 32],
        data: new Uint8Array(embeds.buffer),
      }]),
    );
    const args = ["run", "-A", new URL("./cli.ts", import.meta.url).pathname, "--model", dir, "--prompt-embeds"];
    args.push(`${dir}/embeds.safetensors`, "--out", `${dir}/image.png`, "--width", "32", "--height", "16");
    args.push("--steps", "2", "--seed", "9");
    const { code, stderr } = await new Deno.Command(Deno.execPath(), { args, stdout: "null", stderr: "piped" })
      .output();
    const log = new TextDecoder().decode(stderr);
    strictEqual(code, 0, log);
    ok(/step 1\/2 .*\n.*step 2\/2/.test(log) && log.includes("load dit") && log.includes("seed 9"), log);
    const png = await pngPixels(await Deno.readFile(`${dir}/image.png`));
    const files = memoryFiles({
      "transformer/config.json": new TextEncoder().encode(json(index.config.dit)),
      "transformer/diffusion_pytorch_model.safetensors": recipeFile(index, "dit"),
      "vae/config.json": new TextEncoder().encode(json(index.config.vae)),
      "vae/diffusion_pytorch_model.safetensors": recipeFile(index, "vae"),
    });
    const model = await ZImage.load(files, { device: gpu });
    const want = await model.generate({ promptEmbeds: embeds, width: 32, height: 16, steps: 2, seed: 9 });
    model.destroy();
    deepStrictEqual([png.width, png.height], [32, 16]);
    deepStrictEqual(png.rgba, new Uint8Array(want.data.buffer));
    const refused = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        new URL("./cli.ts", import.meta.url).pathname,
        "--model",
        dir,
        "--out",
        "x.png",
        "--prompt",
        "a fox",
      ],
      stdout: "null",
      stderr: "piped",
    }).output();
    strictEqual(refused.code, 1);
    // A prompt needs a tokenizer and a text encoder, which this directory lacks.
    const message = new TextDecoder().decode(refused.stderr);
    ok(message.includes("no tokenizer (the checkpoint has no tokenizer/ and none was given)"), message);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
