/**
 * Where Anima's parameters live in its checkpoints, and the exact layout each component expects.
 *
 * Names are the ComfyUI / sd-scripts ones: the DiT file holds the DiT as `net.*` and the LLM
 * adapter inside it as `net.llm_adapter.*` (sd-scripts' `save_anima_model` writes them so, and
 * diffusers' conversion script splits on the same prefix); a file whose names lack `net.` (what
 * sd-scripts' loader sees after stripping it) is read as well. The VAE is Wan 2.1's
 * (`qwen_image_vae.safetensors`): `conv2.*` and `decoder.*`, its 3-D convolution weights 5-D as
 * stored (`[Cout, Cin, kt, kh, kw]`); at one frame only the last temporal tap meets data, which the
 * decoder slices at load. The encoder (`encoder.*`, `conv1.*`), the `time_conv` of the temporal
 * upsamplers (never run on a first frame) and the DiT's derived RoPE buffers (`pos_embedder.*`)
 * are ignored, not required.
 *
 * {@link ditLayout}, {@link adapterLayout} and {@link vaeLayout} list every tensor a component
 * reads, with its shape; the loaders check a checkpoint against them with `checkTensorLayout`
 * before reading a byte of data, so a wrong or truncated file is named tensor by tensor.
 *
 * @module
 */

import { checkTensorLayout, type ExpectedTensor, scopedStore } from "../../llm/weights/checkpoint.ts";
import type { TensorStore } from "../../llm/safetensors.ts";
import type { AdapterConfig, DitConfig, VaeConfig } from "./config.ts";

/**
 * The DiT's and the adapter's views of a DiT checkpoint: names without `net.` and without
 * `net.llm_adapter.`.
 *
 * @param store the DiT checkpoint (ComfyUI names `net.*`, or the same without the prefix)
 * @returns the two views
 *
 * @example
 * ```ts
 * import { ditStores } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const { dit, adapter } = ditStores(await open("weights_dit"));
 * console.log(dit.info("t_embedding_norm.weight").shape, adapter.info("norm.weight").shape); // [48] [32]
 * ```
 */
export function ditStores(store: TensorStore): { dit: TensorStore; adapter: TensorStore } {
  const prefixed = store.tensors.some((t) => t.name.startsWith("net."));
  const dit = prefixed ? scopedStore(store, "net.") : store;
  return { dit, adapter: scopedStore(dit, "llm_adapter.") };
}

/**
 * Every tensor the DiT reads (names without `net.`), in checkpoint order.
 *
 * @param c the configuration
 * @returns names and shapes
 *
 * @example
 * ```ts
 * import { ditConfigFromStore, ditLayout, ditStores } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const store = ditStores(await open("weights_dit")).dit;
 * console.log(ditLayout(ditConfigFromStore(store)).length);
 * ```
 */
export function ditLayout(c: DitConfig): ExpectedTensor[] {
  const { dim: D, headDim, contextDim, adalnLoraDim: r, mlpDim, channels, patch } = c;
  const pp = patch * patch;
  const out: ExpectedTensor[] = [
    { name: "x_embedder.proj.1.weight", shape: [D, (channels + 1) * pp] },
    { name: "t_embedder.1.linear_1.weight", shape: [D, D] },
    { name: "t_embedder.1.linear_2.weight", shape: [3 * D, D] },
  ];
  for (let i = 0; i < c.blocks; i++) {
    const b = `blocks.${i}.`;
    for (const [attn, kv] of [["self_attn", D], ["cross_attn", contextDim]] as const) {
      out.push(
        { name: `${b}${attn}.q_proj.weight`, shape: [D, D] },
        { name: `${b}${attn}.q_norm.weight`, shape: [headDim] },
        { name: `${b}${attn}.k_proj.weight`, shape: [D, kv] },
        { name: `${b}${attn}.k_norm.weight`, shape: [headDim] },
        { name: `${b}${attn}.v_proj.weight`, shape: [D, kv] },
        { name: `${b}${attn}.output_proj.weight`, shape: [D, D] },
      );
    }
    out.push({ name: `${b}mlp.layer1.weight`, shape: [mlpDim, D] }, {
      name: `${b}mlp.layer2.weight`,
      shape: [D, mlpDim],
    });
    for (const m of ["self_attn", "cross_attn", "mlp"]) {
      out.push(
        { name: `${b}adaln_modulation_${m}.1.weight`, shape: [r, D] },
        { name: `${b}adaln_modulation_${m}.2.weight`, shape: [3 * D, r] },
      );
    }
  }
  out.push(
    { name: "final_layer.linear.weight", shape: [channels * pp, D] },
    { name: "final_layer.adaln_modulation.1.weight", shape: [r, D] },
    { name: "final_layer.adaln_modulation.2.weight", shape: [2 * D, r] },
    { name: "t_embedding_norm.weight", shape: [D] },
  );
  return out;
}

/**
 * Every tensor the LLM adapter reads (names without `net.llm_adapter.`).
 *
 * @param c the configuration
 * @returns names and shapes
 *
 * @example
 * ```ts
 * import { adapterConfigFromStore, adapterLayout, ditStores } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const store = ditStores(await open("weights_dit")).adapter;
 * console.log(adapterLayout(adapterConfigFromStore(store)).length);
 * ```
 */
export function adapterLayout(c: AdapterConfig): ExpectedTensor[] {
  const { modelDim: M, sourceDim, targetDim, headDim, mlpDim } = c;
  const out: ExpectedTensor[] = [{ name: "embed.weight", shape: [c.vocab, targetDim] }];
  if (c.inProj) out.push({ name: "in_proj.weight", shape: [M, targetDim] }, { name: "in_proj.bias", shape: [M] });
  for (let i = 0; i < c.layers; i++) {
    const b = `blocks.${i}.`;
    for (const [attn, kv] of [["self_attn", M], ["cross_attn", sourceDim]] as const) {
      out.push(
        { name: `${b}norm_${attn}.weight`, shape: [M] },
        { name: `${b}${attn}.q_proj.weight`, shape: [M, M] },
        { name: `${b}${attn}.q_norm.weight`, shape: [headDim] },
        { name: `${b}${attn}.k_proj.weight`, shape: [M, kv] },
        { name: `${b}${attn}.k_norm.weight`, shape: [headDim] },
        { name: `${b}${attn}.v_proj.weight`, shape: [M, kv] },
        { name: `${b}${attn}.o_proj.weight`, shape: [M, M] },
      );
    }
    out.push(
      { name: `${b}norm_mlp.weight`, shape: [M] },
      { name: `${b}mlp.0.weight`, shape: [mlpDim, M] },
      { name: `${b}mlp.0.bias`, shape: [mlpDim] },
      { name: `${b}mlp.2.weight`, shape: [M, mlpDim] },
      { name: `${b}mlp.2.bias`, shape: [M] },
    );
  }
  out.push(
    { name: "out_proj.weight", shape: [targetDim, M] },
    { name: "out_proj.bias", shape: [targetDim] },
    { name: "norm.weight", shape: [targetDim] },
  );
  return out;
}

/** One module of the VAE decoder, in the order the decoder runs them. */
export type VaeModule =
  | { kind: "conv"; prefix: string; cin: number; cout: number; kernel: 1 | 3 }
  | { kind: "residual"; prefix: string; cin: number; cout: number }
  | { kind: "attention"; prefix: string; channels: number }
  | { kind: "upsample"; prefix: string; channels: number }
  | { kind: "head"; prefix: string; channels: number };

/**
 * The Wan 2.1 decoder's modules in order (`Decoder3d`): conv2 (1 x 1 x 1), conv1, the middle
 * (residual, attention, residual), per stage three residual blocks and (but after the last) a
 * 2x upsampler whose 3 x 3 conv halves the width, then the head (norm, SiLU, conv to RGB).
 *
 * @param c the configuration
 * @returns the modules with their checkpoint prefixes and widths
 *
 * @example
 * ```ts
 * import { vaeModules, WAN_LATENTS_MEAN, WAN_LATENTS_STD } from "@xpu/ops/models/anima";
 * const real = { dim: 96, zDim: 16, dimMult: [1, 2, 4, 4], numResBlocks: 2, latentsMean: WAN_LATENTS_MEAN, latentsStd: WAN_LATENTS_STD };
 * console.log(vaeModules(real).length); // conv2, conv1, 3 middle, 15 upsampling, head: 21
 * ```
 */
export function vaeModules(c: VaeConfig): VaeModule[] {
  const mult = c.dimMult;
  const dims = [mult[mult.length - 1], ...[...mult].reverse()].map((u) => c.dim * u);
  const out: VaeModule[] = [
    { kind: "conv", prefix: "conv2.", cin: c.zDim, cout: c.zDim, kernel: 1 },
    { kind: "conv", prefix: "decoder.conv1.", cin: c.zDim, cout: dims[0], kernel: 3 },
    { kind: "residual", prefix: "decoder.middle.0.", cin: dims[0], cout: dims[0] },
    { kind: "attention", prefix: "decoder.middle.1.", channels: dims[0] },
    { kind: "residual", prefix: "decoder.middle.2.", cin: dims[0], cout: dims[0] },
  ];
  let index = 0;
  for (let i = 0; i < mult.length; i++) {
    let cin = i === 0 ? dims[0] : dims[i] / 2;
    const cout = dims[i + 1];
    for (let j = 0; j <= c.numResBlocks; j++) {
      out.push({ kind: "residual", prefix: `decoder.upsamples.${index++}.`, cin, cout });
      cin = cout;
    }
    if (i !== mult.length - 1) out.push({ kind: "upsample", prefix: `decoder.upsamples.${index++}.`, channels: cout });
  }
  out.push({ kind: "head", prefix: "decoder.head.", channels: dims[mult.length] });
  return out;
}

/**
 * Every tensor the VAE decoder reads, 5-D convolution weights as stored.
 *
 * @param c the configuration
 * @returns names and shapes
 *
 * @example
 * ```ts
 * import { vaeConfigFromStore, vaeLayout } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const store = await open("weights_vae");
 * console.log(vaeLayout(vaeConfigFromStore(store)).length);
 * ```
 */
export function vaeLayout(c: VaeConfig): ExpectedTensor[] {
  const out: ExpectedTensor[] = [];
  const conv3 = (name: string, cout: number, cin: number, k: number) =>
    out.push({ name: `${name}.weight`, shape: [cout, cin, k, k, k] }, { name: `${name}.bias`, shape: [cout] });
  for (const m of vaeModules(c)) {
    const p = m.prefix;
    if (m.kind === "conv") conv3(p.slice(0, -1), m.cout, m.cin, m.kernel);
    else if (m.kind === "residual") {
      out.push({ name: `${p}residual.0.gamma`, shape: [m.cin, 1, 1, 1] });
      conv3(`${p}residual.2`, m.cout, m.cin, 3);
      out.push({ name: `${p}residual.3.gamma`, shape: [m.cout, 1, 1, 1] });
      conv3(`${p}residual.6`, m.cout, m.cout, 3);
      if (m.cin !== m.cout) conv3(`${p}shortcut`, m.cout, m.cin, 1);
    } else if (m.kind === "attention") {
      const C = m.channels;
      out.push(
        { name: `${p}norm.gamma`, shape: [C, 1, 1] },
        { name: `${p}to_qkv.weight`, shape: [3 * C, C, 1, 1] },
        { name: `${p}to_qkv.bias`, shape: [3 * C] },
        { name: `${p}proj.weight`, shape: [C, C, 1, 1] },
        { name: `${p}proj.bias`, shape: [C] },
      );
    } else if (m.kind === "upsample") {
      out.push(
        { name: `${p}resample.1.weight`, shape: [m.channels / 2, m.channels, 3, 3] },
        { name: `${p}resample.1.bias`, shape: [m.channels / 2] },
      );
    } else {
      out.push({ name: `${p}0.gamma`, shape: [m.channels, 1, 1, 1] });
      conv3(`${p}2`, 3, m.channels, 3);
    }
  }
  return out;
}

/** Stored tensors the DiT's loader leaves alone: the adapter (checked on its own) and derived buffers. */
const DIT_IGNORED = (name: string) => name.startsWith("llm_adapter.") || name.startsWith("pos_embedder.");
/** Stored tensors the VAE decoder leaves alone: the encoder half and the temporal upsamplers. */
const VAE_IGNORED = (name: string) =>
  name.startsWith("encoder.") || name.startsWith("conv1.") || /^decoder\.upsamples\.\d+\.time_conv\./.test(name);

/**
 * Checks a DiT view (from {@link ditStores}) against {@link ditLayout}.
 *
 * @param dit the DiT's tensors
 * @param c the configuration
 * @throws Error naming every missing, mis-shaped or unexpected tensor
 *
 * @example
 * ```ts
 * import { ditConfigFromStore, checkDitLayout, ditStores } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const store = ditStores(await open("weights_dit")).dit;
 * checkDitLayout(store, ditConfigFromStore(store)); // passes; a missing tensor would be named
 * ```
 */
export function checkDitLayout(dit: TensorStore, c: DitConfig): void {
  checkTensorLayout(dit, ditLayout(c), `anima DiT (${c.blocks} blocks)`, { ignore: DIT_IGNORED });
}

/**
 * Checks an adapter view (from {@link ditStores}) against {@link adapterLayout}.
 *
 * @param adapter the adapter's tensors
 * @param c the configuration
 * @throws Error naming every missing, mis-shaped or unexpected tensor
 *
 * @example
 * ```ts
 * import { adapterConfigFromStore, checkAdapterLayout, ditStores } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const store = ditStores(await open("weights_dit")).adapter;
 * checkAdapterLayout(store, adapterConfigFromStore(store)); // passes; a missing tensor would be named
 * ```
 */
export function checkAdapterLayout(adapter: TensorStore, c: AdapterConfig): void {
  checkTensorLayout(adapter, adapterLayout(c), "anima LLM adapter");
}

/**
 * Checks a VAE checkpoint against {@link vaeLayout}.
 *
 * @param vae the VAE's tensors
 * @param c the configuration
 * @throws Error naming every missing, mis-shaped or unexpected tensor
 *
 * @example
 * ```ts
 * import { vaeConfigFromStore, checkVaeLayout } from "@xpu/ops/models/anima";
 * import { bytesSource, SafetensorsFile } from "@xpu/ops/llm";
 * const open = async (name: string) =>
 *   SafetensorsFile.open(bytesSource(await Deno.readFile(`models/anima/fixtures/${name}.safetensors`)));
 * const store = await open("weights_vae");
 * checkVaeLayout(store, vaeConfigFromStore(store)); // passes; a missing tensor would be named
 * ```
 */
export function checkVaeLayout(vae: TensorStore, c: VaeConfig): void {
  checkTensorLayout(vae, vaeLayout(c), "anima VAE decoder", { ignore: VAE_IGNORED });
}
