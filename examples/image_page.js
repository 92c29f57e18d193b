// What the image-model pages (anima/, zimage/) share: the page's state for scripts and the browser
// tests (`globalThis[name]`: the adapter, the state, the load progress, the steps done, the last
// image's bytes; the state is also `#status[data-state]`: ready, loading, encoding, generating, done,
// error), the form preset from URL parameters, a model loaded once per model key with a progress bar
// per stage, a generation with a progress bar per step and Stop (an AbortSignal, checked between
// steps), the image drawn on `#canvas` and offered as a PNG (`#download`), and `autorun`. Each page
// says how to load its model, what its key is and how to run one generation.
import { acquireDevice } from "/bundle/harness.js";
import { SafetensorsFile, urlSource } from "/bundle/llm.js";
import { encodePng } from "/bundle/models/image.js";

/** The page's URL parameters. */
export const params = new URL(location.href).searchParams;
/** An element by id. */
export const $ = (id) => document.getElementById(id);
const message = (e) => (e instanceof Error ? e.message : String(e));

/** A URL relative to the page. */
export const url = (text) => new URL(text, location.href);

/** A safetensors file at a URL (relative to the page), read with range requests. */
export async function openFile(address) {
  return await SafetensorsFile.open(await urlSource(url(address)));
}

/** One tensor of a safetensors file at a URL, as f32. */
export async function tensorAt(address, name) {
  return await (await openFile(address)).readFloat32(name);
}

/**
 * Runs an image page until its device is acquired (and, with `autorun`, one generation is done).
 *
 * - `name`: the global that holds the page's state (`__anima`);
 * - `fields`: the form's ids preset from URL parameters of the same names;
 * - `modelKey()`: the form values that decide the model (a change loads it again);
 * - `loadingText`: the status while loading starts;
 * - `stages`: each load stage's name in the status (`{ dit: "DiT", ... }`);
 * - `load(gpu, { onProgress, setState })`: the model (with `destroy()`), `onProgress` given to its loader;
 * - `prepare(model)`: reads the form (and fetches its inputs); returns `status`, the state and text
 *   to show as the generation starts, and `run(signal, onStep)`, which generates with Stop's signal,
 *   calls `onStep(done, total)` after each step and returns `{ width, height, rgba, about }` (`about`:
 *   fields added to the page's image record).
 */
export async function imagePage({ name, fields, modelKey, loadingText, stages, load, prepare }) {
  const page = { state: "starting", adapter: null, loads: [], steps: [], image: null, error: null, seconds: null };
  globalThis[name] = page;

  function setState(state, text) {
    page.state = $("status").dataset.state = state;
    $("status").textContent = text;
    $("status").className = state === "error" ? "failed" : "";
  }
  for (const field of fields) {
    if (params.has(field)) $(field).value = params.get(field);
  }

  let gpu;
  let model;
  let loadedKey;
  let abort;

  async function loadModel() {
    const key = modelKey();
    if (model && loadedKey === key) return model;
    model?.destroy();
    model = undefined;
    setState("loading", loadingText);
    $("progress").value = 0;
    model = await load(gpu, {
      setState,
      onProgress: ({ stage, done, total }) => {
        page.loads.push({ stage, done, total });
        $("progress").value = done / total;
        setState("loading", `loading the ${stages[stage]}: ${Math.round((100 * done) / total)}%`);
      },
    });
    loadedKey = key;
    return model;
  }

  async function generate() {
    const started = performance.now();
    try {
      $("generate").disabled = true;
      const { status, run } = await prepare(await loadModel());
      abort = new AbortController();
      $("stop").disabled = false;
      page.steps = [];
      setState(...status);
      const image = await run(abort.signal, (done, total) => {
        page.steps.push(done);
        $("progress").value = done / total;
        setState("generating", `step ${done} / ${total}`);
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
      page.image = { width: image.width, height: image.height, data: [...image.rgba], ...image.about };
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
}
