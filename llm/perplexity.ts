/**
 * Perplexity of a causal language model over token windows, computed as a torch evaluation loop
 * computes it: each window runs from an empty cache, every position but the last predicts the next
 * id, and the perplexity is exp(summed negative log-likelihood / predicted tokens), natural log.
 * The log-softmax is taken in f64 over the model's f32 logits.
 *
 * @module
 */

/** What {@link perplexity} needs of a model: {@link LlamaEngine} and {@link LlamaReference} have it. */
export interface LogitModel {
  /** The model's vocabulary size (the width of a logits row). */
  readonly config: { readonly vocabSize: number };
  /** Empties the cache. */
  reset(): void;
  /** Runs ids after those cached and returns every row's logits, `[ids.length, vocabSize]`. */
  forward(ids: readonly number[]): Promise<Float32Array> | Float32Array;
}

/** What {@link perplexity} measured. */
export interface PerplexityResult {
  /** Summed negative log-likelihood over every predicted token, in nats. */
  nll: number;
  /** Predicted tokens: the windows' lengths minus one each. */
  tokens: number;
  /** exp(nll / tokens). */
  perplexity: number;
  /** Each window's summed negative log-likelihood, in window order. */
  windowNll: number[];
}

/**
 * Splits a token stream into consecutive windows of `size` ids (the last may be shorter); a last
 * window of a single id predicts nothing and is dropped.
 *
 * @param ids the stream
 * @param size ids per window, an integer >= 2
 * @returns the windows
 * @throws Error naming `size` when it is not an integer >= 2
 *
 * @example
 * ```ts
 * import { tokenWindows } from "@xpu/ops/llm";
 * tokenWindows([1, 2, 3, 4, 5, 6, 7], 3); // [[1, 2, 3], [4, 5, 6]] (the lone 7 predicts nothing)
 * ```
 */
export function tokenWindows(ids: readonly number[], size: number): number[][] {
  if (!Number.isInteger(size) || size < 2) {
    throw new Error(`tokenWindows: size must be an integer >= 2, got ${size}`);
  }
  const windows: number[][] = [];
  for (let i = 0; i < ids.length; i += size) {
    const w = ids.slice(i, i + size);
    if (w.length >= 2) windows.push(w);
  }
  return windows;
}

/**
 * The negative log-likelihood of each next id under a window's logits, summed.
 *
 * @param logits `[window.length, vocab]` row-major
 * @param window the ids that produced them
 * @param vocab the row width
 */
function windowNll(logits: Float32Array, window: readonly number[], vocab: number): number {
  let sum = 0;
  for (let row = 0; row + 1 < window.length; row++) {
    const base = row * vocab;
    let max = -Infinity;
    for (let v = 0; v < vocab; v++) max = Math.max(max, logits[base + v]);
    let z = 0;
    for (let v = 0; v < vocab; v++) z += Math.exp(logits[base + v] - max);
    sum += max + Math.log(z) - logits[base + window[row + 1]];
  }
  return sum;
}

/**
 * Evaluates a model's perplexity over windows of token ids (see the module doc for the method).
 *
 * @param model the model (its cache is reset before each window and left holding the last one)
 * @param windows windows of ids, each at least two long and within the model's cache
 * @param onProgress called after each window with windows done and in all
 * @returns the summed NLL, the token count, the perplexity and each window's NLL
 * @throws Error naming the window that is shorter than two ids, before any model work
 *
 * @example
 * ```ts
 * import { perplexity, tokenWindows } from "@xpu/ops/llm";
 * import { LlamaReference, parseLlamaConfig } from "@xpu/ops/models/llama";
 * import { openCheckpointDir } from "@xpu/ops/llm/file";
 * const dir = "models/llama/fixtures/tiny-gqa/f32";
 * const config = parseLlamaConfig(await Deno.readTextFile(`${dir}/config.json`));
 * const { store, close } = await openCheckpointDir(dir);
 * const model = await LlamaReference.load(store, config);
 * close();
 * const { perplexity: ppl } = await perplexity(model, tokenWindows([1, 5, 9, 3, 7, 11, 2], 4));
 * ```
 */
export async function perplexity(
  model: LogitModel,
  windows: readonly (readonly number[])[],
  onProgress?: (done: number, total: number) => void,
): Promise<PerplexityResult> {
  if (model === null || typeof model !== "object" || typeof model.forward !== "function") {
    throw new Error(`perplexity: model must have forward(ids), reset() and config.vocabSize, got ${String(model)}`);
  }
  if (!Array.isArray(windows)) {
    throw new Error(`perplexity: windows must be an array of id arrays, got ${String(windows)}`);
  }
  windows.forEach((w, i) => {
    if (!Array.isArray(w)) throw new Error(`perplexity: windows[${i}] must be an array of ids, got ${String(w)}`);
    if (w.length < 2) throw new Error(`perplexity: windows[${i}] has ${w.length} ids; a window needs at least 2`);
  });
  const vocab = model.config.vocabSize;
  const result: PerplexityResult = { nll: 0, tokens: 0, perplexity: NaN, windowNll: [] };
  for (const [i, w] of windows.entries()) {
    model.reset();
    const nll = windowNll(await model.forward(w), w, vocab);
    result.windowNll.push(nll);
    result.nll += nll;
    result.tokens += w.length - 1;
    onProgress?.(i + 1, windows.length);
  }
  result.perplexity = Math.exp(result.nll / result.tokens);
  return result;
}
