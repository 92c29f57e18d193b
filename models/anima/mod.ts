/**
 * Anima text-to-image (circlestone-labs' Anima: a Cosmos-Predict2-2B MiniTrainDIT fine-tune, 28
 * blocks; Anima-3.8B is its 52-block depth expansion), as programs of the library's ops.
 *
 * Matches, stage by stage, the oracle pack `shared/oracle/anima` built from sd-scripts
 * (`library/anima_models.py` at 48d368f: the DiT and the LLM adapter; `hunyuan_image_utils`: the
 * schedule and the Euler step) and Wan2.1 (`wan/modules/vae.py` at 9737cba: the VAE decoder), with
 * torch 2.11 in fp32: every golden of its two tiny sets within 1e-4 relative (max|a − b| / max|b|;
 * `tiny`, and `tiny2` with an uneven RoPE split t12|h10|w10 like the real t44|h42|w42, 3 blocks, 3
 * adapter heads, a VAE of base width 8), most within 1e-6, the worst 1.1e-5 (the tests print each
 * figure). Two further samplers follow ComfyUI's definitions for Anima (`comfy/k_diffusion/
 * sampling.py`, a flow model): `res_multistep` and `er_sde` (sampler.ts), held to hand-computed
 * steps, the flow ODE's exact solution on Gaussian data (second order for res_multistep), er_sde's
 * sample statistics there and, on the device, their host references run with the tiny DiT.
 *
 * - {@link Anima}: `Anima.load(source, { device, format, maxResidentBytes, onProgress })` and
 *   `generate({ prompt, negativePrompt, width, height, steps, cfg, shift, sampler, seed, noise, signal,
 *   onStep })`, `sampler` one of {@link ANIMA_SAMPLERS} (`euler`, `res_multistep`, `er_sde`).
 *   The Qwen3-0.6B encoder and the two tokenizers are given to it ({@link AnimaTextEncoder},
 *   {@link AnimaT5Tokenizer}): {@link qwen3TextEncoder} (an encoder already loaded),
 *   {@link onDemandTextEncoder} (loaded on the first prompt and freed before the DiT loads, as the CLI
 *   runs it) and {@link t5AdapterTokenizer} make them from models/qwen3's `Qwen3Encoder` and
 *   llm/tokenizer's Qwen and T5 tokenizers.
 * - The components, usable alone: {@link LlmAdapter}, {@link AnimaDit}, {@link AnimaVae}.
 * - Checkpoints: the DiT file with ComfyUI names (`net.*`, the adapter as `net.llm_adapter.*`),
 *   the Wan 2.1 VAE (`qwen_image_vae.safetensors`); bf16, f16 or f32 storage, loaded as f32. The
 *   configuration comes from the tensors' shapes (28 or 52 blocks alike) and every tensor is checked
 *   against the expected layout before any data is read.
 *
 * Refused, with an error naming the argument: a checkpoint with a missing, mis-shaped or
 * unexpected tensor; a weight format other than f32 or q8 (the DiT's block products); an image size
 * that is not a multiple of 16; steps < 1; a sampler other than euler, res_multistep and er_sde
 * (and for er_sde, no seed or more steps than its noise sequence holds); more than 512 T5 tokens; a
 * stage larger than the residency budget (the DiT: with its blocks streamed through two slots).
 *
 * Figures: `bench.ts` (Deno CLI) times the text side (Qwen3-0.6B and the adapter), the DiT step (both
 * CFG passes, and one), the VAE decode and a whole image at real sizes on seeded weights, 28 or 52
 * blocks, with each stage's peak device memory, and merges the rows into `baselines/<card>.json` (its
 * module doc says how each is taken).
 *
 * @module
 */

export {
  Anima,
  ANIMA_FORMATS,
  type AnimaGenerateOptions,
  type AnimaImage,
  type AnimaLoadOptions,
  type AnimaProgress,
  type AnimaSource,
  type AnimaT5Tokenizer,
  type AnimaTextEncoder,
  DEFAULT_MAX_RESIDENT_BYTES,
  QWEN_ENDOFTEXT,
  T5_EOS,
} from "./pipeline.ts";
export { type AdapterInputs, type AdapterMasks, LlmAdapter } from "./adapter.ts";
export { AnimaDit, type DitGeometry, type DitInputs, patchIndex } from "./dit.ts";
export type { Tap } from "./dit_block.ts";
export { Graph } from "./graph.ts";
export { AnimaVae, clampImage } from "./vae.ts";
export {
  ADAPTER_ROPE_THETA,
  type AdapterConfig,
  adapterConfigFromStore,
  CONTEXT_ROWS,
  type DitConfig,
  ditConfigFromStore,
  ditRopeSplit,
  NORM_EPS,
  PIXEL_UNIT,
  ROPE_RATIOS,
  VAE_SCALE,
  type VaeConfig,
  vaeConfigFromStore,
  WAN_LATENTS_MEAN,
  WAN_LATENTS_STD,
} from "./config.ts";
export {
  adapterLayout,
  checkAdapterLayout,
  checkDitLayout,
  checkVaeLayout,
  ditLayout,
  ditStores,
  vaeLayout,
  type VaeModule,
  vaeModules,
} from "./weights.ts";
export {
  ANIMA_SAMPLERS,
  type AnimaSampler,
  DEFAULT_SHIFT,
  denoisedLatent,
  type Denoiser,
  ER_SDE_INTEGRATION_POINTS,
  erSdeNoiseScaler,
  type ErSdeOptions,
  erSdeSigmas,
  eulerStep,
  guide,
  guidedEulerCoefficients,
  resMultistepStep,
  sampleErSde,
  sampleEuler,
  sampleResMultistep,
  type SamplerStep,
  samplerSteps,
  sigmaSchedule,
} from "./sampler.ts";
export { timestepSinusoid } from "./timestep.ts";
export { onDemandTextEncoder, qwen3TextEncoder, t5AdapterTokenizer } from "./text.ts";
export { ditPositions, sequencePositions } from "./rope.ts";
// Types of other entry points that this API names (for deno doc).
export type { TensorInfo, TensorStore } from "../../llm/safetensors.ts";
export type { ExpectedTensor } from "../../llm/weights/checkpoint.ts";
export type { GpuTensor, TensorDtype } from "../../harness/device.ts";
