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
// `width`, `height`, `steps`, `seed`) and `autorun` generates once loaded. For scripts and the browser
// test: `globalThis.__zimage` (../image_page.js says what it holds; the image record adds the caption's
// token count).
import { urlFiles, ZImage } from "/bundle/models/zimage.js";
import { $, imagePage, params, tensorAt, url } from "../image_page.js";

await imagePage({
  name: "__zimage",
  fields: ["prompt", "model", "embeds", "format", "budget", "width", "height", "steps", "seed"],
  modelKey: () => `${$("model").value} ${$("format").value} ${$("budget").value}`,
  loadingText: "loading the checkpoint",
  stages: { text_encoder: "text encoder", dit: "DiT", vae: "VAE" },
  load: async (gpu, { onProgress }) =>
    await ZImage.load(urlFiles(url($("model").value)), {
      device: gpu,
      format: $("format").value,
      maxResidentBytes: Number($("budget").value) * 2 ** 30,
      onProgress,
    }),
  prepare: async (z) => {
    const embeds = $("embeds").value.trim();
    const promptEmbeds = embeds ? await tensorAt(embeds, "prompt_embeds") : undefined;
    const noise = params.has("noise") ? await tensorAt(params.get("noise"), "noise") : undefined;
    const steps = Number($("steps").value);
    return {
      status: ["generating", `step 0 / ${steps}`],
      run: async (signal, onStep) => {
        const image = await z.generate({
          prompt: $("prompt").value,
          promptEmbeds,
          noise,
          seed: noise ? undefined : Number($("seed").value),
          width: Number($("width").value),
          height: Number($("height").value),
          steps,
          signal,
          onStep: ({ step }) => onStep(step, steps),
        });
        return {
          width: image.width,
          height: image.height,
          rgba: image.data,
          about: { captionTokens: image.captionTokens },
        };
      },
    };
  },
});
