/**
 * Z-Image Turbo (Tongyi-MAI) text-to-image as programs of the library's ops: the Qwen3-4B text encoder
 * (models/qwen3, `hidden_states[-2]` of the chat-templated prompt), the DiT
 * (`ZImageTransformer2DModel`, 6.15 B parameters at Turbo's size) and the FLUX.1 VAE decoder, with
 * upstream's Turbo sampler (Tongyi-MAI/Z-Image @ c7ec135: flow-matching Euler, shift 3, 8 steps, no
 * guidance).
 *
 * ```ts ignore
 * import { ZImage } from "@xpu/ops/models/zimage";
 * import { directoryFiles } from "@xpu/ops/models/zimage/file";
 * import { encodePng } from "@xpu/ops/models/image";
 * const model = await ZImage.load(directoryFiles("Z-Image-Turbo"), {
 *   format: "q4g128",
 *   maxResidentBytes: 6 * 2 ** 30,
 *   onProgress: console.log,
 * });
 * const image = await model.generate({ prompt: "a red fox in fresh snow", width: 1024, height: 1024, seed: 1 });
 * await Deno.writeFile("fox.png", await encodePng(image.data, image.width, image.height));
 * ```
 *
 * What it matches, stage by stage, held to the oracle's goldens of two tiny random configs
 * (`fixtures/`: `tiny`, and `tiny2` with Turbo's uneven shapes: 3 heads, two refiner blocks of each
 * kind, three VAE up blocks, a 300-token vocabulary): the schedule bit for bit; every DiT intermediate
 * within 5e-6 relative; every VAE intermediate within 1.4e-6; the text encoder's `hidden_states[-2]`;
 * the 3- and 4-step pipelines' image bytes identical to upstream's, from caption features and from the
 * prompt. The conventions (velocity is minus the output, t = 1 − σ in float32, cos-first timestep
 * sinusoid in f64 on the host, adaLN order scale | gate | scale | gate with tanh gates and no shift,
 * sandwich RMSNorms, QK-norm before adjacent-pair 3-axis RoPE, pads not masked, image tokens first) are
 * the oracle README's, each cited where it is implemented.
 *
 * Loads the official diffusers directory and ComfyUI's split files (weights.ts, source.ts), checking
 * every tensor's name and shape before reading data. The DiT's blocks are held as f32, q8 or q4g128
 * (quantized on the GPU while loading), the text encoder's layers as f32 or q8 (its embedding table
 * stays in the checkpoint, each prompt's rows read from it), everything else as f32; stages stay
 * resident when the budget holds them all, else run one at a time, and a DiT that does not fit whole
 * streams its blocks from host memory through two resident slots. Not implemented: CFG (Base/Edit),
 * batches, a text encoder or VAE larger than the budget.
 *
 * Figures: `bench.ts` (Deno CLI) times the text encoder, the DiT step, the VAE decode and a whole image
 * at real sizes on synthetic weights, with each stage's peak device memory, and merges the rows into
 * `baselines/<card>.json` (its module doc says how each is taken).
 *
 * @module
 */

export * from "./config.ts";
export * from "./scheduler.ts";
export * from "./weights.ts";
export * from "./source.ts";
export * from "./pipeline.ts";
export { type Copy, type Dispatch, Recording, type Step, Steps } from "./program.ts";
export { timestepSinusoid } from "./transformer/sinusoid.ts";
export { captionPositions, imagePositions, paddedLength } from "./transformer/positions.ts";
export {
  type DitCaptures,
  type DitLoadOptions,
  DitRun,
  type DitShape,
  ditWeightBytes,
  ZImageDit,
} from "./transformer/dit.ts";
export { ACTIVATIONS, type Activations, LINEAR_FORMATS, type LinearFormat } from "../linear.ts";
export { type DecoderCaptures, DecoderRun, VaeDecoder } from "./vae/decoder.ts";
