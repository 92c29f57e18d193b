// Anima generating in this page, through the package bundled for the browser (/bundle/harness.js,
// /bundle/llm.js, /bundle/models/anima.js, /bundle/models/qwen3.js and /bundle/models/image.js, as
// esm.sh serves the package's exports).
//
// Four files at URLs, read with range requests (every tensor's name and shape checked before any
// weight is read): Anima's DiT (ComfyUI names, the LLM adapter inside), the Wan 2.1 VAE, a Qwen3-0.6B
// directory (config.json, model.safetensors, tokenizer.json or vocab.json + merges.txt, and
// tokenizer_config.json) and T5's spiece.model. The Qwen3 encoder loads to encode the prompts and is
// freed before the DiT loads. Loading each stage and each step drive the progress bar; Stop aborts
// between steps. The image is drawn on the canvas and offered as a PNG.
//
// URL parameters preset the form (`prompt`, `negative`, `dit`, `vae`, `qwen3`, `t5`, `format`,
// `budget` in GiB, `width`, `height`, `steps`, `cfg`, `shift`, `seed`); `noise` gives the starting
// latent (a safetensors file with a tensor `noise`) in place of the seed's, and `autorun` generates
// once ready. For scripts and the browser test: `globalThis.__anima` (../image_page.js says what it
// holds; the image record adds the seed).
import { loadQwenTokenizer, SentencePieceTokenizer } from "/bundle/llm.js";
import { Anima, t5AdapterTokenizer } from "/bundle/models/anima.js";
import { parseQwen3Config, Qwen3Encoder } from "/bundle/models/qwen3.js";
import { $, imagePage, openFile, params, tensorAt, url } from "../image_page.js";

async function fetchOk(address) {
  const response = await fetch(address);
  if (!response.ok) throw new Error(`${address}: HTTP ${response.status}`);
  return response;
}

/** Qwen3's tokenizer from the directory, and an encoder that loads on the first prompt and is freed by `release`. */
async function qwen3Text(dir, gpu, setState) {
  const base = url(dir.endsWith("/") ? dir : `${dir}/`);
  const config = parseQwen3Config(await (await fetchOk(new URL("config.json", base))).text());
  const tokenizerConfig = await (await fetchOk(new URL("tokenizer_config.json", base))).text();
  const json = await fetch(new URL("tokenizer.json", base));
  const tokenizer = json.ok
    ? loadQwenTokenizer({ tokenizerJson: await json.text(), tokenizerConfig })
    : loadQwenTokenizer({
      vocab: await (await fetchOk(new URL("vocab.json", base))).text(),
      merges: await (await fetchOk(new URL("merges.txt", base))).text(),
      tokenizerConfig,
    });
  let encoder;
  return {
    tokenize: (prompt) => tokenizer.encode(prompt),
    encode: async (ids) => {
      if (!encoder) {
        setState("encoding", "loading the Qwen3 encoder");
        encoder = await Qwen3Encoder.load(gpu, await openFile(new URL("model.safetensors", base)), config);
        setState("encoding", "encoding the prompts");
      }
      return await encoder.encode(ids);
    },
    release: () => {
      encoder?.destroy();
      encoder = undefined;
    },
  };
}

await imagePage({
  name: "__anima",
  fields: [
    "prompt",
    "negative",
    "dit",
    "vae",
    "qwen3",
    "t5",
    "format",
    "budget",
    "width",
    "height",
    "steps",
    "cfg",
    "shift",
    "seed",
  ],
  modelKey: () => ["dit", "vae", "qwen3", "t5", "format", "budget"].map((n) => $(n).value).join(" "),
  loadingText: "reading the checkpoints' headers",
  stages: { adapter: "LLM adapter", dit: "DiT", vae: "VAE" },
  load: async (gpu, { onProgress, setState }) => {
    const t5 = new SentencePieceTokenizer(new Uint8Array(await (await fetchOk(url($("t5").value))).arrayBuffer()));
    return await Anima.load({
      dit: await openFile($("dit").value),
      vae: await openFile($("vae").value),
      textEncoder: await qwen3Text($("qwen3").value, gpu, setState),
      t5Tokenizer: t5AdapterTokenizer(t5),
    }, {
      device: gpu,
      format: $("format").value,
      maxResidentBytes: Number($("budget").value) * 2 ** 30,
      onProgress,
    });
  },
  prepare: async (anima) => {
    const noise = params.has("noise") ? await tensorAt(params.get("noise"), "noise") : undefined;
    const steps = Number($("steps").value);
    return {
      status: ["encoding", "encoding the prompts"],
      run: async (signal, onStep) => {
        const image = await anima.generate({
          prompt: $("prompt").value,
          negativePrompt: $("negative").value,
          width: Number($("width").value),
          height: Number($("height").value),
          steps,
          cfg: Number($("cfg").value),
          shift: Number($("shift").value),
          noise,
          seed: noise ? undefined : Number($("seed").value),
          signal,
          onStep,
        });
        return { width: image.width, height: image.height, rgba: image.rgba, about: { seed: image.seed ?? null } };
      },
    };
  },
});
