// The weight cache in this page, through the package bundled for the browser (/bundle/llm.js, as
// esm.sh serves @xpu/ops/llm). For each store (the Cache API, then IndexedDB, forced in turn) it
// loads a model four times:
//   first        an empty cache: the manifest and every file come from the network;
//   second       with the manifest's hash pinned: nothing comes from the network;
//   corrupted    a byte of a stored part of the model flipped: that file alone is fetched again;
//   interrupted  an empty cache, aborted once 100,000 bytes have arrived, then loaded again: the
//                file cut short is asked for from where it stopped (Range: bytes=<held>-).
// Every request goes through this page's fetch wrapper, which records it; the raw records (and each
// loaded file's sha256) are in `globalThis.cacheResults` for the browser test, which holds them to
// the files it serves. The model is ?manifest=<url> (default: the fortune model's manifest,
// models/fortune/manifest.json; the test serves its own files at ./fixture/manifest.json).
import { browserStore, sha256Hex, WeightCache } from "/bundle/llm.js";

const manifestUrl = new URL(
  new URLSearchParams(location.search).get("manifest") ?? "../../models/fortune/manifest.json",
  location.href,
);
const ABORT_AFTER = 100_000;
const CHUNK = 8 * 1024;
document.getElementById("manifest").textContent = manifestUrl.href;
const progressBar = document.getElementById("progress");
const bytesText = document.getElementById("bytes");
const table = document.getElementById("results");
const status = document.getElementById("status");

/**
 * A fetch that records each request and hands the body on in pieces of at most CHUNK bytes; once
 * the request's signal is aborted it delivers nothing more, as a network cut at that moment would.
 */
function recordingFetch(requests) {
  return async (input, init = {}) => {
    const range = new Headers(init.headers).get("range");
    requests.push({ path: new URL(input, location.href).pathname, range });
    const response = await fetch(input, init);
    if (!response.body) return response;
    const reader = response.body.getReader();
    let pending = new Uint8Array(0);
    const body = new ReadableStream({
      async pull(controller) {
        if (init.signal?.aborted) {
          await reader.cancel().catch(() => {});
          controller.error(init.signal.reason);
          return;
        }
        if (pending.length === 0) {
          const { done, value } = await reader.read();
          if (done) return controller.close();
          pending = value;
        }
        controller.enqueue(pending.slice(0, CHUNK));
        pending = pending.subarray(CHUNK);
      },
      cancel: (reason) => reader.cancel(reason),
    }, { highWaterMark: 0 }); // no read ahead: a piece is taken only when the cache asks for one
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

const showProgress = ({ file, done, total, fromNetwork }) => {
  progressBar.value = done / total;
  bytesText.textContent = `${done} / ${total} bytes (${fromNetwork} from the network), ${file}`;
};

async function hashes(files) {
  const out = {};
  for (const [name, bytes] of files) out[name] = await sha256Hex(bytes);
  return out;
}

function show(store, load, requests, expected, ok) {
  const row = table.insertRow();
  const listed = requests.map((r) => r.range ? `${r.path} (${r.range})` : r.path).join(", ") || "none";
  for (const text of [store, load, listed, expected]) row.insertCell().textContent = text;
  const cell = row.insertCell();
  cell.textContent = ok ? "pass" : "FAIL";
  cell.className = ok ? "pass" : "fail";
}

async function runStore(kind) {
  const store = await browserStore(kind, `xpu-weights-test-${kind}`);
  const cache = new WeightCache(store);
  await cache.clear();
  const result = { store: store.kind };

  let requests = [];
  const first = await cache.load(manifestUrl, {
    fetch: recordingFetch(requests),
    onProgress: showProgress,
    partBytes: 64 * 1024,
  });
  result.first = { key: first.key, requests, sha256: await hashes(first.files) };
  show(kind, "first", requests, "the manifest and every file", requests.length === 1 + first.manifest.files.length);

  requests = [];
  const second = await cache.load(manifestUrl, {
    manifestSha256: first.key,
    fetch: recordingFetch(requests),
    onProgress: showProgress,
  });
  result.second = { requests, sha256: await hashes(second.files) };
  show(kind, "second (hash pinned)", requests, "none", requests.length === 0);

  // This page knows the cache's layout: a part's key ends with its file's name, a state record is short.
  const corruptedFile = first.manifest.files.reduce((a, b) => (b.size > a.size ? b : a)).name;
  let part;
  for (const key of await store.keys()) {
    if (key.endsWith(`/${corruptedFile}`) && (await store.get(key)).length > 1000) part = key;
  }
  const bytes = await store.get(part);
  bytes[bytes.length >> 1] ^= 0x55;
  await store.put(part, bytes);
  requests = [];
  const repaired = await cache.load(manifestUrl, {
    manifestSha256: first.key,
    fetch: recordingFetch(requests),
    onProgress: showProgress,
  });
  result.corrupted = { file: corruptedFile, requests, sha256: await hashes(repaired.files) };
  show(
    kind,
    `corrupted (${corruptedFile})`,
    requests,
    `${corruptedFile}, whole`,
    requests.length === 1 && requests[0].range === null,
  );

  await cache.clear();
  requests = [];
  const controller = new AbortController();
  let abortedAt = -1;
  const aborted = await cache.load(manifestUrl, {
    fetch: recordingFetch(requests),
    signal: controller.signal,
    partBytes: 16 * 1024,
    onProgress: (p) => {
      showProgress(p);
      if (p.fromNetwork >= ABORT_AFTER && abortedAt < 0) {
        abortedAt = p.fromNetwork;
        controller.abort(new DOMException("stopped by the page", "AbortError"));
      }
    },
  }).then(() => "completed", (e) => `${e.name}: ${e.message}`);
  const held = (await cache.list())[0].files.map((f) => ({ name: f.name, held: f.held, size: f.size }));
  const abortRequests = requests;
  requests = [];
  const resumed = await cache.load(manifestUrl, { fetch: recordingFetch(requests), onProgress: showProgress });
  result.interrupted = { abortedAt, aborted, held, abortRequests, requests, sha256: await hashes(resumed.files) };
  const cut = held.find((f) => f.held > 0 && f.held < f.size);
  show(
    kind,
    `interrupted at ${abortedAt} bytes, then again`,
    requests,
    cut ? `${cut.name} from byte ${cut.held}` : "a file cut short",
    !!cut && requests.some((r) => r.path.endsWith(`/${cut.name}`) && r.range === `bytes=${cut.held}-`),
  );

  result.listed = (await cache.list()).map((m) => ({ key: m.key, held: m.held }));
  await cache.clear();
  result.afterClear = await store.keys();
  return result;
}

const results = [];
try {
  for (const kind of ["cache-api", "indexeddb"]) results.push(await runStore(kind));
  const failed = table.querySelectorAll(".fail").length;
  status.textContent = failed === 0 ? "every load read what it should" : `${failed} loads did not`;
} catch (e) {
  status.textContent = `error: ${e instanceof Error ? e.message : String(e)}`;
  console.error(e);
}
globalThis.cacheResults = results;
status.dataset.done = "true";
