/**
 * Anima's text side from the library's parts: models/qwen3's encoder (Qwen3-0.6B,
 * `last_hidden_state` after the final norm) with Qwen's byte-level BPE tokenizer, and T5's
 * SentencePiece tokenizer for the LLM adapter's ids (llm/tokenizer).
 *
 * - Qwen3: the plain tokenizer, no BOS/EOS, no chat template (sd-scripts and diffusers alike).
 *   The empty prompt's empty id list becomes one `<|endoftext|>` in the pipeline (ComfyUI's rule).
 * - T5: `tokenizer(text)` with its `</s>` appended, truncated to the DiT's 512 context rows keeping
 *   the `</s>` (sd-scripts tokenises with `max_length=512`).
 *
 * @module
 */

import type { Qwen3Encoder } from "../qwen3/encoder.ts";
import type { HostCopy } from "../../harness/host_copy.ts";
import { CONTEXT_ROWS } from "./config.ts";
import type { AnimaT5Tokenizer, AnimaTextEncoder } from "./pipeline.ts";

/**
 * The pipeline's text encoder from a loaded Qwen3 encoder and Qwen's tokenizer.
 *
 * @param encoder models/qwen3's encoder, loaded with `hiddenState: -1` (the default)
 * @param tokenizer Qwen's tokenizer (`loadQwenTokenizer` of llm/tokenizer)
 * @returns what {@link AnimaSource} takes as `textEncoder`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * import { qwen3TextEncoder } from "@xpu/ops/models/anima";
 * import { parseQwen3Config, Qwen3Encoder } from "@xpu/ops/models/qwen3";
 * const dir = "models/qwen3/fixtures"; // Anima's tiny Qwen3 (vocabulary 128)
 * const store = await SafetensorsFile.open(bytesSource(await Deno.readFile(`${dir}/anima-tiny-qwen3.safetensors`)));
 * const config = parseQwen3Config(await Deno.readTextFile(`${dir}/anima-tiny-config.json`));
 * const gpu = await acquireDevice();
 * const encoder = await Qwen3Encoder.load(gpu, store, config);
 * // In practice loadQwenTokenizer(files); a stand-in with ids inside the tiny vocabulary here.
 * const text = qwen3TextEncoder(encoder, { encode: (s) => [...s].map((c) => c.charCodeAt(0) % 128) });
 * const states = await text.encode(Int32Array.from(text.tokenize("a cat"))); // [5 * 40]
 * encoder.destroy();
 * gpu.destroy();
 * ```
 */
export function qwen3TextEncoder(
  encoder: Qwen3Encoder,
  tokenizer: { encode(text: string): number[] },
): AnimaTextEncoder {
  return {
    tokenize: (text) => tokenizer.encode(text),
    encode: (ids) => encoder.encode(ids),
  };
}

/**
 * The pipeline's text encoder as the CLI runs it: Qwen's tokenizer now, the encoder loaded on the first
 * prompt (by `load`) and freed when the pipeline calls `release` (once a generation's prompts are
 * encoded, before the DiT loads), so it is never on the device beside the DiT; the next prompt loads it
 * again: from a host copy of its weights taken at the first load, by uploads alone, unless
 * `keepHostCopy` is false (then by `load` each time). What `load` gives to close is closed at the
 * first release, so an encoder that reads its checkpoint after loading (`embedding: "host"`) needs
 * `keepHostCopy: false`.
 *
 * @param tokenizer Qwen's tokenizer (`loadQwenTokenizer` of llm/tokenizer)
 * @param load loads the encoder (`Qwen3Encoder.load`, hidden state -1) and gives what to close with it
 *   (a checkpoint's files), if anything
 * @param options `keepHostCopy` (default true): hold the weights in host memory between prompts
 *   (Qwen3-0.6B in f32: 2.4 GB)
 * @returns what {@link AnimaSource} takes as `textEncoder`
 *
 * @example
 * ```ts
 * import { acquireDevice } from "@xpu/ops/harness";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * import { onDemandTextEncoder } from "@xpu/ops/models/anima";
 * import { parseQwen3Config, Qwen3Encoder } from "@xpu/ops/models/qwen3";
 * const dir = "models/qwen3/fixtures"; // Anima's tiny Qwen3 (vocabulary 128)
 * const config = parseQwen3Config(await Deno.readTextFile(`${dir}/anima-tiny-config.json`));
 * const gpu = await acquireDevice();
 * const text = onDemandTextEncoder({ encode: (s) => [...s].map((c) => c.charCodeAt(0) % 128) }, async () => {
 *   const bytes = await Deno.readFile(`${dir}/anima-tiny-qwen3.safetensors`);
 *   return { encoder: await Qwen3Encoder.load(gpu, await SafetensorsFile.open(bytesSource(bytes)), config) };
 * });
 * const states = await text.encode(Int32Array.from(text.tokenize("a cat"))); // loads, then encodes: [5 * 40]
 * text.release?.(); // frees the encoder's weights
 * gpu.destroy();
 * ```
 */
export function onDemandTextEncoder(
  tokenizer: { encode(text: string): number[] },
  load: () => Promise<{ encoder: Qwen3Encoder; close?(): void }>,
  options: { keepHostCopy?: boolean } = {},
): AnimaTextEncoder {
  let loaded: { encoder: Qwen3Encoder; close?(): void } | undefined;
  let copy: HostCopy<Qwen3Encoder> | undefined;
  return {
    tokenize: (text) => tokenizer.encode(text),
    encode: async (ids) => {
      if (!loaded && copy) loaded = { encoder: copy.restore() };
      if (!loaded) {
        loaded = await load();
        if (options.keepHostCopy ?? true) copy = await loaded.encoder.hostCopy();
      }
      return await loaded.encoder.encode(ids);
    },
    release: () => {
      loaded?.encoder.destroy();
      loaded?.close?.();
      loaded = undefined;
    },
  };
}

/**
 * The pipeline's T5 tokenizer from T5's SentencePiece tokenizer.
 *
 * @param t5 a tokenizer whose `encode(text, { addEos, maxLength })` is T5's (`SentencePieceTokenizer`
 *   over `spiece.model`)
 * @returns what {@link AnimaSource} takes as `t5Tokenizer`
 *
 * @example
 * ```ts
 * import { SentencePieceTokenizer } from "@xpu/ops/llm";
 * import { t5AdapterTokenizer } from "@xpu/ops/models/anima";
 * const t5 = t5AdapterTokenizer(new SentencePieceTokenizer(await Deno.readFile("llm/fixtures/t5-tokenizer/spiece.model")));
 * t5.encode("a cat"); // [3, 9, 1712, 1]
 * t5.encode(""); // [1]
 * ```
 */
export function t5AdapterTokenizer(
  t5: { encode(text: string, options: { addEos: boolean; maxLength: number }): number[] },
): AnimaT5Tokenizer {
  return { encode: (text) => t5.encode(text, { addEos: true, maxLength: CONTEXT_ROWS }) };
}
