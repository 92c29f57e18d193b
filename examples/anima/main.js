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
// once ready. For scripts and the browser test: `globalThis.__anima` holds the adapter, the state
// (also `#status[data-state]`: ready, loading, encoding, generating, done, error), the load progress,
// the steps done and the last image's bytes.
import { acquireDevice } from "/bundle/harness.js";
import { loadQwenTokenizer, SafetensorsFile, SentencePieceTokenizer, urlSource } from "/bundle/llm.js";
import { Anima, t5AdapterTokenizer } from "/bundle/models/anima.js";
import { encodePng } from "/bundle/models/image.js";
import { parseQwen3Config, Qwen3Encoder } from "/bundle/models/qwen3.js";

const params = new URL(location.href).searchParams;
const $ = (id) => document.getElementById(id);
const page = { state: "starting", adapter: null, loads: [], steps: [], image: null, error: null, seconds: null };
globalThis.__anima = page;

function setState(state, text) {
  page.state = $("status").dataset.state = state;
  $("status").textContent = text;
  $("status").className = state === "error" ? "failed" : "";
}
const message = (e) => (e instanceof Error ? e.message : String(e));
const FIELDS = ["prompt", "negative", "dit", "vae", "qwen3", "t5", "format", "budget", "width", "height", "steps"];
for (const name of [...FIELDS, "cfg", "shift", "seed"]) {
  if (params.has(name)) $(name).value = params.get(name);
}

const url = (text) => new URL(text, location.href);
async function fetchOk(address) {
  const response = await fetch(address);
  if (!response.ok) throw new Error(`${address}: HTTP ${response.status}`);
  return response;
}
async function openFile(address) {
  return await SafetensorsFile.open(await urlSource(url(address)));
}

/** Qwen3's tokenizer from the directory, and an encoder that loads on the first prompt and is freed by `release`. */
async function qwen3Text(dir) {
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

/** One tensor of a safetensors file at a URL, as f32. */
async function tensorAt(address, name) {
  return await (await openFile(address)).readFloat32(name);
}

let gpu;
let model;
let loadedKey;
let abort;

async function load() {
  const key = ["dit", "vae", "qwen3", "t5", "format", "budget"].map((n) => $(n).value).join(" ");
  if (model && loadedKey === key) return model;
  model?.destroy();
  model = undefined;
  setState("loading", "reading the checkpoints' headers");
  $("progress").value = 0;
  const t5 = new SentencePieceTokenizer(new Uint8Array(await (await fetchOk(url($("t5").value))).arrayBuffer()));
  model = await Anima.load({
    dit: await openFile($("dit").value),
    vae: await openFile($("vae").value),
    textEncoder: await qwen3Text($("qwen3").value),
    t5Tokenizer: t5AdapterTokenizer(t5),
  }, {
    device: gpu,
    format: $("format").value,
    maxResidentBytes: Number($("budget").value) * 2 ** 30,
    onProgress: ({ stage, done, total }) => {
      page.loads.push({ stage, done, total });
      $("progress").value = done / total;
      const name = { adapter: "LLM adapter", dit: "DiT", vae: "VAE" }[stage];
      setState("loading", `loading the ${name}: ${Math.round((100 * done) / total)}%`);
    },
  });
  loadedKey = key;
  return model;
}

async function generate() {
  const started = performance.now();
  try {
    $("generate").disabled = true;
    const anima = await load();
    const noise = params.has("noise") ? await tensorAt(params.get("noise"), "noise") : undefined;
    const steps = Number($("steps").value);
    abort = new AbortController();
    $("stop").disabled = false;
    page.steps = [];
    setState("encoding", "encoding the prompts");
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
      signal: abort.signal,
      onStep: (done, total) => {
        page.steps.push(done);
        $("progress").value = done / total;
        setState("generating", `step ${done} / ${total}`);
      },
    });
    const canvas = $("canvas");
    canvas.width = image.width;
    canvas.height = image.height;
    canvas.style.width = `${Math.max(256, image.width)}px`;
    canvas.getContext("2d").putImageData(new ImageData(image.rgba, image.width, image.height), 0, 0);
    const png = await encodePng(image.rgba, image.width, image.height);
    const link = $("download");
    if (link.href) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([png], { type: "image/png" }));
    link.hidden = false;
    page.image = { width: image.width, height: image.height, data: [...image.rgba], seed: image.seed ?? null };
    page.seconds = (performance.now() - started) / 1000;
    setState("done", `${image.width} x ${image.height} in ${page.seconds.toFixed(1)} s`);
  } catch (e) {
    page.error = message(e);
    setState("error", page.error);
  } finally {
    $("generate").disabled = false;
    $("stop").disabled = true;
  }
}

$("form").addEventListener("submit", (event) => {
  event.preventDefault();
  generate();
});
$("stop").addEventListener("click", () => abort?.abort(new Error("stopped")));

try {
  gpu = await acquireDevice();
  page.adapter = gpu.adapter.description || gpu.adapter.vendor || "unknown";
  setState("ready", `ready (${page.adapter})`);
  if (params.has("autorun")) await generate();
} catch (e) {
  page.error = message(e);
  setState("error", page.error);
}
