// The fortune model (models/fortune) generating in this page, through the package bundled for the
// browser (/bundle/harness.js, /bundle/llm.js and /bundle/models/llama.js, as esm.sh serves
// @xpu/ops/harness, @xpu/ops/llm and @xpu/ops/models/llama).
//
// Loading: the model's files come through the weight cache (`WeightCache` over `browserStore()`:
// the Cache API, else IndexedDB) from the manifest beside them, so a second visit reads them from this
// browser; the safetensors bytes are opened in memory and `LlamaEngine.load` quantises them to the
// chosen format on their way to the GPU. Both stages drive the progress bar; a change of format loads
// the engine again from the bytes held.
//
// Generating: the prompt gets the tokenizer's BOS id in front (as `deno task generate` does); ids are
// streamed as the engine reads them back (`readEvery` ids a readback, `inFlight` readbacks queued:
// 16 and 4, the engine's defaults, or 1 and 1 on a fallback adapter, where a step takes seconds) and
// decoded with `decodeStream()` (the prompt's ids pushed first, so the first piece decodes as it
// follows them); generation stops at end-of-sequence (the id is kept in the run's ids, not in its
// text), at max tokens, or at the Stop button (an AbortSignal: the engine throws the signal's reason
// when the next readback lands). Tokens/s is the decode rate by wall clock: ids after the first over
// the time from the first id's arrival to the last's.
//
// Device loss: when a run fails with `DeviceLostError` (a GPU reset, a browser reclaiming the device),
// the page acquires a new device and `engine.rebind`s the model to it from the bytes it holds, with
// progress, and says so; the next run generates as before, with no reload of the page.
// `globalThis.__chat.loseDevice()` destroys the device the way a reset would, for the browser test.
//
// The optional constraint is a `LineFormatConstraint` over a SentencePiece codec built from the same
// model with its dummy prefix off (the constraint needs tokens as they occur mid-text).
//
// URL parameters preset the form and `autorun` generates once loaded, e.g.
// `?prompt=A%20computer%20is&format=q8&mode=sample&temperature=0.7&seed=3&maxTokens=32&readEvery=4&constraint&autorun`;
// `manifest=<url>` loads another Llama checkpoint published the same way (config.json, tokenizer.model,
// model.safetensors and a manifest naming them). For scripts and the browser test: `globalThis.__chat`
// holds the adapter, each load, each run (ids, text, outcome: eos, max-tokens, stopped, device-lost or
// error; speed) and the state that `#status[data-state]` also shows (loading, ready, generating, error).
import { acquireDevice } from "/bundle/harness.js";
import {
  browserStore,
  bytesSource,
  LineFormatConstraint,
  SafetensorsFile,
  SentencePieceTokenizer,
  WeightCache,
} from "/bundle/llm.js";
import { LlamaEngine, parseLlamaConfig } from "/bundle/models/llama.js";

const params = new URL(location.href).searchParams;
const $ = (id) => document.getElementById(id);
const manifestUrl = new URL(params.get("manifest") ?? "../../models/fortune/manifest.json", location.href);

/** The constraint demo: one of a few subjects, " who", then the model's own words to the end of the line. */
const LINE_SEGMENTS = [
  { kind: "enum", choices: [" cat", " dog", " computer", " programmer"] },
  { kind: "literal", text: " who" },
  { kind: "freeText", forbiddenChars: ["\n"], maxLength: 40 },
];

const chat = {
  state: "starting",
  adapter: null,
  manifest: manifestUrl.href,
  lineSegments: LINE_SEGMENTS,
  loads: [],
  runs: [],
};
globalThis.__chat = chat;
chat.loseDevice = () => gpu.device.destroy();

const status = $("status");
function setState(state, text) {
  chat.state = status.dataset.state = state;
  status.textContent = text;
  status.className = state === "error" ? "failed" : "";
}
const message = (e) => (e instanceof Error ? e.message : String(e));
const mb = (bytes) => (bytes / 1e6).toFixed(1);
const rate = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toPrecision(2));
$("line-format").textContent = LINE_SEGMENTS.map((s) =>
  s.kind === "enum"
    ? `‹${s.choices.join("|")}›`
    : s.kind === "literal"
    ? s.text
    : `‹free text: at most ${s.maxLength} bytes, none of ${JSON.stringify(s.forbiddenChars.join(""))}›`
).join("");

const FORM = [
  "prompt",
  "format",
  "mode",
  "maxTokens",
  "temperature",
  "topK",
  "topP",
  "minP",
  "seed",
  "readEvery",
  "inFlight",
];
for (const id of FORM) {
  if (params.has(id)) $(id).value = params.get(id);
}
$("constraint").checked = params.has("constraint");
const samplingInputs = ["temperature", "topK", "topP", "minP", "seed"].map($);
const showMode = () => samplingInputs.forEach((input) => input.disabled = $("mode").value === "greedy");
$("mode").addEventListener("change", showMode);
showMode();

let gpu, model, engine, controller;

/** The model's files through the weight cache, then its config, tokenizer, constraint and tensors. */
async function loadModel() {
  const started = performance.now();
  const cache = new WeightCache(await browserStore());
  let fromNetwork = 0;
  const { key, files } = await cache.load(manifestUrl, {
    onProgress: (p) => {
      fromNetwork = p.fromNetwork;
      $("progress").value = p.done / p.total;
      $("load").textContent = `weights: ${mb(p.done)} of ${mb(p.total)} MB (${mb(p.fromNetwork)} from the network), ` +
        p.file;
    },
  });
  const bytes = [...files.values()].reduce((sum, b) => sum + b.length, 0);
  chat.loads.push({ stage: "files", key, bytes, fromNetwork, ms: performance.now() - started });
  const text = (name) => new TextDecoder().decode(files.get(name));
  const config = parseLlamaConfig(text("config.json"));
  const tokenizer = new SentencePieceTokenizer(files.get("tokenizer.model"));
  // Literals and choices as they occur mid-text: the same pieces without the dummy prefix.
  const codec = new SentencePieceTokenizer({
    ...tokenizer.model,
    normalizer: { ...tokenizer.model.normalizer, addDummyPrefix: false },
  });
  const line = new LineFormatConstraint(codec, { segments: LINE_SEGMENTS, eosTokenId: tokenizer.eosId });
  const store = await SafetensorsFile.open(bytesSource(files.get("model.safetensors"), "model.safetensors"));
  model = { config, tokenizer, line, store, cachedBytes: bytes - fromNetwork };
}

/** The engine in the chosen format, from the bytes held. */
async function loadEngine() {
  const format = $("format").value;
  engine?.destroy();
  engine = null;
  $("generate").disabled = true;
  $("format").disabled = true;
  setState("loading", `loading ${format}…`);
  const started = performance.now();
  try {
    if (!model) await loadModel();
    engine = await LlamaEngine.load(gpu, model.store, model.config, {
      format,
      maxSeq: model.config.maxPositionEmbeddings,
      onProgress: (done, total) => {
        $("progress").value = done / total;
        $("load").textContent = `to the GPU as ${format}: ${mb(done)} of ${mb(total)} MB of tensors`;
      },
    });
    const ms = performance.now() - started;
    chat.loads.push({ stage: "engine", format, ms });
    const from = model.cachedBytes > 0 ? "this browser's weight cache" : "the network, now kept in the weight cache";
    $("load").textContent = `${format} on the GPU in ${(ms / 1000).toFixed(1)} s; files from ${from}`;
    setState("ready", "ready");
  } catch (e) {
    setState("error", `error loading the model: ${message(e)}`);
    console.error(e);
  } finally {
    $("generate").disabled = engine === null;
    $("format").disabled = false;
  }
}

function readSampler() {
  if ($("mode").value === "greedy") return { mode: "greedy" };
  const number = (id) => ($(id).value.trim() === "" ? undefined : Number($(id).value));
  const topK = number("topK");
  return {
    mode: "sample",
    temperature: number("temperature"),
    topK: topK === 0 ? undefined : topK,
    topP: number("topP"),
    minP: number("minP"),
    seed: number("seed") ?? 0,
  };
}

function describeSampler(s) {
  if (s.mode === "greedy") return "greedy";
  const parts = [`temperature ${s.temperature}`, `seed ${s.seed}`];
  if (s.topK !== undefined) parts.push(`top-k ${s.topK}`);
  if (s.topP !== undefined) parts.push(`top-p ${s.topP}`);
  if (s.minP) parts.push(`min-p ${s.minP}`);
  return `sampled (${parts.join(", ")})`;
}

/** A transcript entry: what was asked, the text as it streams, the figures. */
function addEntry(run) {
  const entry = document.createElement("div");
  const about = Object.assign(document.createElement("div"), { className: "about" });
  about.textContent = `${run.format}, ${describeSampler(run.sampler)}, at most ${run.maxTokens} tokens` +
    (run.constrained ? ", constrained to the line format" : "");
  const text = Object.assign(document.createElement("div"), { className: "text" });
  const generated = Object.assign(document.createElement("span"), { className: "generated" });
  text.append(run.prompt, generated);
  const stats = Object.assign(document.createElement("div"), { className: "stats" });
  entry.append(about, text, stats);
  $("transcript").append(entry);
  return { entry, generated, stats };
}

function showStats(run, view) {
  const speed = run.tokensPerSecond === null ? "–" : rate(run.tokensPerSecond);
  view.stats.innerHTML = "";
  const figures = Object.assign(document.createElement("span"), {
    textContent: `${run.ids.length} tokens; first after ${run.firstTokenMs.toFixed(0)} ms; `,
  });
  const tps = Object.assign(document.createElement("span"), { className: "tps", textContent: speed });
  view.stats.append(figures, tps, " tokens/s");
}

async function generate() {
  const { tokenizer, config, line } = model;
  const prompt = $("prompt").value;
  const promptIds = [...(tokenizer.bosId === null ? [] : [tokenizer.bosId]), ...tokenizer.encode(prompt)];
  const constrained = $("constraint").checked;
  const run = {
    prompt,
    promptIds,
    format: $("format").value,
    sampler: readSampler(),
    maxTokens: Number($("maxTokens").value),
    // With a constraint the engine reads each id back before the next step, whatever these say.
    readEvery: constrained ? 1 : Number($("readEvery").value),
    inFlight: constrained ? 1 : Number($("inFlight").value),
    constrained,
    ids: [],
    text: "",
    outcome: "running",
    firstTokenMs: 0,
    tokensPerSecond: null,
  };
  chat.runs.push(run);
  const view = addEntry(run);
  view.entry.scrollIntoView({ block: "nearest" });
  controller = new AbortController();
  $("generate").disabled = true;
  $("format").disabled = true;
  $("stop").disabled = false;
  setState("generating", "generating…");
  const eos = new Set(config.eosTokenIds);
  const stream = tokenizer.decodeStream();
  for (const id of promptIds) stream.push(id);
  const start = performance.now();
  let first = 0;
  try {
    const ids = engine.generate(promptIds, {
      maxTokens: run.maxTokens,
      sampler: run.sampler,
      constraint: constrained ? line : undefined,
      readEvery: run.readEvery,
      inFlight: run.inFlight,
      signal: controller.signal,
    });
    for await (const id of ids) {
      const now = performance.now();
      if (run.ids.length === 0) {
        first = now;
        run.firstTokenMs = now - start;
      }
      run.ids.push(id);
      if (!eos.has(id)) run.text += stream.push(id);
      view.generated.textContent = run.text;
      run.tokensPerSecond = run.ids.length > 1 && now > first ? ((run.ids.length - 1) * 1000) / (now - first) : null;
      showStats(run, view);
    }
    run.outcome = eos.has(run.ids.at(-1)) ? "eos" : "max-tokens";
  } catch (e) {
    if (controller.signal.aborted && e === controller.signal.reason) run.outcome = "stopped";
    else if (e?.name === "DeviceLostError") {
      run.outcome = "device-lost";
      run.error = message(e);
    } else {
      run.outcome = "error";
      run.error = message(e);
      console.error(e);
    }
  }
  run.text += stream.flush();
  view.generated.textContent = run.text;
  const ended = {
    "eos": "ended at end-of-sequence",
    "max-tokens": "reached max tokens",
    "stopped": `stopped after ${run.ids.length} tokens`,
    "device-lost": `the GPU was lost (${run.error})`,
    "error": `error: ${run.error}`,
  }[run.outcome];
  let verdict = "";
  if (constrained && run.outcome !== "error") {
    run.lineComplete = run.outcome === "eos" && run.ids.every((id, i) => line.nextAllowed(run.ids.slice(0, i)).has(id));
    verdict = run.lineComplete ? "; the line has the format" : "; the line is not complete";
  }
  view.stats.append(`; ${ended}${verdict}`);
  $("stop").disabled = true;
  if (run.outcome === "device-lost") return await recover(ended);
  $("generate").disabled = false;
  $("format").disabled = false;
  setState(run.outcome === "error" ? "error" : "ready", `${ended}${verdict}`);
}

/** After a device loss: a new device, and the model on it again from the bytes held (no page reload). */
async function recover(why) {
  setState("loading", `${why}: loading the model on a new device…`);
  const started = performance.now();
  try {
    gpu = await acquireDevice();
    engine = await engine.rebind(gpu, {
      onProgress: (done, total) => {
        $("progress").value = done / total;
        $("load").textContent = `to the new device: ${mb(done)} of ${mb(total)} MB of tensors`;
      },
    });
    const ms = performance.now() - started;
    chat.loads.push({ stage: "rebind", format: engine.format, ms });
    setState("ready", `${why}; the model is on a new device after ${(ms / 1000).toFixed(1)} s`);
  } catch (e) {
    setState("error", `${why}, and the model could not be loaded again: ${message(e)}`);
    console.error(e);
  } finally {
    $("generate").disabled = false;
    $("format").disabled = false;
  }
}

$("stop").addEventListener("click", () => controller?.abort(new DOMException("stopped by the user", "AbortError")));
$("format").addEventListener("change", () => loadEngine());
$("settings").addEventListener("submit", (event) => {
  event.preventDefault();
  if (engine && $("stop").disabled) generate();
});

try {
  gpu = await acquireDevice();
  const a = gpu.adapter;
  chat.adapter = `${a.vendor} ${a.architecture} ${a.description}`.replace(/\s+/g, " ").trim() +
    (a.isFallbackAdapter ? " (fallback adapter)" : "");
  $("adapter").textContent = `Adapter: ${chat.adapter}`;
  // A software adapter takes seconds a step: ids one at a time, so text appears as it comes and Stop
  // acts after the step under way. Elsewhere the engine's defaults (16 ids a readback, 4 in flight).
  if (!params.has("readEvery")) $("readEvery").value = a.isFallbackAdapter ? 1 : 16;
  if (!params.has("inFlight")) $("inFlight").value = a.isFallbackAdapter ? 1 : 4;
} catch (e) {
  $("adapter").textContent = `No WebGPU device: ${message(e)}`;
  setState("error", "no WebGPU device");
  console.error(e);
}
if (gpu) {
  await loadEngine();
  if (engine && params.has("autorun")) await generate();
}
