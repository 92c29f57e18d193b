// Z-Image Turbo generating in this page, through the package bundled for the browser (/bundle/harness.js,
// /bundle/models/zimage.js, /bundle/models/image.js and /bundle/llm.js, as esm.sh serves the package's
// exports).
//
// The checkpoint is read from a URL prefix with range requests (`urlFiles`: a diffusers directory, or
// ComfyUI's files), every tensor's name and shape checked before any weight is read. The prompt is
// encoded by the checkpoint's tokenizer and text encoder, or caption features come from a safetensors
// file (tensor `prompt_embeds`, `[tokens, 2560]` for Turbo); an optional `noise` URL gives the starting
// latent (tensor `noise`) in place of the seed's. Loading and each step drive the progress bar; Stop
// aborts between steps. The image is drawn on the canvas and offered as a PNG.
//
// URL parameters preset the form (`prompt`, `model`, `embeds`, `noise`, `format`, `budget` in GiB,
// `width`, `height`, `steps`, `seed`) and `autorun` generates once loaded. For scripts and the browser test: `globalThis.__zimage`
// holds the adapter, the state (also `#status[data-state]`: loading, ready, generating, done, error),
// the load progress, the steps done and the last image's bytes.
import { acquireDevice } from "/bundle/harness.js";
import { SafetensorsFile, urlSource } from "/bundle/llm.js";
import { encodePng } from "/bundle/models/image.js";
import { urlFiles, ZImage } from "/bundle/models/zimage.js";

const params = new URL(location.href).searchParams;
const $ = (id) => document.getElementById(id);
const page = { state: "starting", adapter: null, loads: [], steps: [], image: null, error: null, seconds: null };
globalThis.__zimage = page;

function setState(state, text) {
  page.state = $("status").dataset.state = state;
  $("status").textContent = text;
  $("status").className = state === "error" ? "failed" : "";
}
const message = (e) => (e instanceof Error ? e.message : String(e));

for (const name of ["prompt", "model", "embeds", "format", "budget", "width", "height", "steps", "seed"]) {
  if (params.has(name)) $(name).value = params.get(name);
}

/** One tensor of a safetensors file at a URL, as f32. */
async function tensorAt(url, name) {
  const file = await SafetensorsFile.open(await urlSource(new URL(url, location.href)));
  return await file.readFloat32(name);
}

let gpu;
let model;
let loadedKey;
let abort;

async function load() {
  const key = `${$("model").value} ${$("format").value} ${$("budget").value}`;
  if (model && loadedKey === key) return model;
  model?.destroy();
  model = undefined;
  setState("loading", "loading the checkpoint");
  $("progress").value = 0;
  model = await ZImage.load(urlFiles(new URL($("model").value, location.href)), {
    device: gpu,
    format: $("format").value,
    maxResidentBytes: Number($("budget").value) * 2 ** 30,
    onProgress: ({ stage, done, total }) => {
      page.loads.push({ stage, done, total });
      $("progress").value = done / total;
      const name = { text_encoder: "text encoder", dit: "DiT", vae: "VAE" }[stage];
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
    const z = await load();
    const embeds = $("embeds").value.trim();
    const promptEmbeds = embeds ? await tensorAt(embeds, "prompt_embeds") : undefined;
    const noise = params.has("noise") ? await tensorAt(params.get("noise"), "noise") : undefined;
    const steps = Number($("steps").value);
    abort = new AbortController();
    $("stop").disabled = false;
    page.steps = [];
    setState("generating", `step 0 / ${steps}`);
    const image = await z.generate({
      prompt: $("prompt").value,
      promptEmbeds,
      noise,
      seed: noise ? undefined : Number($("seed").value),
      width: Number($("width").value),
      height: Number($("height").value),
      steps,
      signal: abort.signal,
      onStep: ({ step }) => {
        page.steps.push(step);
        $("progress").value = step / steps;
        setState("generating", `step ${step} / ${steps}`);
      },
    });
    const canvas = $("canvas");
    canvas.width = image.width;
    canvas.height = image.height;
    canvas.style.width = `${Math.max(256, image.width)}px`;
    canvas.getContext("2d").putImageData(new ImageData(image.data, image.width, image.height), 0, 0);
    const png = await encodePng(image.data, image.width, image.height);
    const link = $("download");
    if (link.href) URL.revokeObjectURL(link.href);
    link.href = URL.createObjectURL(new Blob([png], { type: "image/png" }));
    link.hidden = false;
    page.image = {
      width: image.width,
      height: image.height,
      data: [...image.data],
      captionTokens: image.captionTokens,
    };
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
