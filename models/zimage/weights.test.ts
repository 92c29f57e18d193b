import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage, gpuTest } from "../../harness/testing.ts";
import { SafetensorsFile, type TensorInfo, type TensorStore } from "../../llm/safetensors.ts";
import { bytesSource } from "../../llm/safetensors_sources.ts";
import { encodeSafetensors } from "../../llm/safetensors_write.ts";
import { parseDitConfig, parseVaeConfig, Z_IMAGE_TURBO } from "./config.ts";
import { loadTinyIndex, recipeStore } from "./fixtures/recipe.ts";
import { openQwen3Checkpoint } from "../qwen3/weights.ts";
import { QWEN3_4B } from "./config.ts";
import { textEncoderWeightBytes, ZImage } from "./pipeline.ts";
import { openDit, openVaeDecoder } from "./weights.ts";

interface LayoutEntry {
  name: string;
  shape: number[];
  dtype: "F32" | "BF16";
}
const layout: { tensors: Record<"dit" | "vae" | "text_encoder", LayoutEntry[]> } = JSON.parse(
  await Deno.readTextFile(new URL("./fixtures/layout.json", import.meta.url)),
);

/** A store of headers only: names, shapes and dtypes, no data (reading fails). */
function headers(entries: LayoutEntry[]): TensorStore {
  let offset = 0;
  const tensors: TensorInfo[] = entries.map(({ name, shape, dtype }) => {
    const begin = offset;
    offset += shape.reduce((a, b) => a * b, 1) * (dtype === "F32" ? 4 : 2);
    return { name, dtype, shape, begin, end: offset };
  });
  const byName = new Map(tensors.map((t) => [t.name, t]));
  const info = (name: string) => {
    const t = byName.get(name);
    if (!t) throw new Error(`no tensor named ${name}`);
    return t;
  };
  const read = (name: string): Promise<Uint8Array> => Promise.reject(new Error(`headers only: ${info(name).name}`));
  return {
    tensors,
    metadata: {},
    info,
    read,
    readRows: read,
    readFloat32: read as unknown as TensorStore["readFloat32"],
  };
}

const drop = (entries: LayoutEntry[], name: string) => entries.filter((t) => t.name !== name);
const reshape = (entries: LayoutEntry[], name: string, shape: number[]) =>
  entries.map((t) => (t.name === name ? { ...t, shape } : t));

Deno.test("weights: the real checkpoints' names and shapes (layout.json) are accepted, official layouts", () => {
  strictEqual(layout.tensors.dit.length, 521);
  const dit = openDit(headers(layout.tensors.dit), Z_IMAGE_TURBO.dit);
  strictEqual(dit.tensors.length, 521);
  const vae = openVaeDecoder(headers(layout.tensors.vae), Z_IMAGE_TURBO.vae);
  strictEqual(vae.tensors.length, 138); // the decoder's, without the encoder's 106
  deepStrictEqual(vae.info("mid_block.attentions.0.to_q.weight").shape, [512, 512]);
  // The text encoder's names are Qwen3Model's: models/qwen3 checks them against Turbo's Qwen3-4B config.
  strictEqual(openQwen3Checkpoint(headers(layout.tensors.text_encoder), QWEN3_4B).layout, "Qwen3Model");
});

Deno.test("weights: a missing, an extra or a mis-shaped tensor is refused by name, before any read", async () => {
  const dit = layout.tensors.dit, cfg = Z_IMAGE_TURBO.dit;
  await assertThrowsMessage(
    () => openDit(headers(drop(dit, "layers.7.feed_forward.w3.weight")), cfg),
    "Z-Image DiT checkpoint: 1 tensor missing: layers.7.feed_forward.w3.weight",
  );
  await assertThrowsMessage(
    () =>
      openDit(headers([...dit, { name: "layers.30.attention.to_q.weight", shape: [3840, 3840], dtype: "F32" }]), cfg),
    "1 tensor not expected: layers.30.attention.to_q.weight",
  );
  await assertThrowsMessage(
    () => openDit(headers(reshape(dit, "cap_embedder.1.weight", [3840, 2048])), cfg),
    "1 tensor mis-shaped: cap_embedder.1.weight is [3840, 2048], expected [3840, 2560]",
  );
  const vae = layout.tensors.vae;
  await assertThrowsMessage(
    () => openVaeDecoder(headers(drop(vae, "decoder.up_blocks.3.resnets.2.conv2.bias")), Z_IMAGE_TURBO.vae),
    "Z-Image VAE checkpoint: 1 tensor missing: decoder.up_blocks.3.resnets.2.conv2.bias",
  );
  await assertThrowsMessage(
    () => openVaeDecoder(headers(reshape(vae, "decoder.conv_out.weight", [3, 128, 1, 1])), Z_IMAGE_TURBO.vae),
    "decoder.conv_out.weight is [3, 128, 1, 1], expected [3, 128, 3, 3]",
  );
  await assertThrowsMessage(
    () => openQwen3Checkpoint(headers(drop(layout.tensors.text_encoder, "layers.35.input_layernorm.weight")), QWEN3_4B),
    "1 tensor missing: layers.35.input_layernorm.weight",
  );
});

/** ComfyUI's single-file names for an official DiT name (written out here, apart from weights.ts's table). */
function comfyName(name: string): string {
  return name.replace("all_x_embedder.2-1.", "x_embedder.").replace("all_final_layer.2-1.", "final_layer.")
    .replace(/attention\.to_[qkv]\.weight$/, "attention.qkv.weight").replace("attention.to_out.0.", "attention.out.")
    .replace("attention.norm_q.", "attention.q_norm.").replace("attention.norm_k.", "attention.k_norm.");
}

/** Black Forest Labs' name for an official VAE decoder name (up blocks reversed; written out here). */
function bflName(name: string, blocks: number): string {
  return name.replace("mid_block.resnets.0.", "mid.block_1.").replace("mid_block.resnets.1.", "mid.block_2.")
    .replace("mid_block.attentions.0.group_norm.", "mid.attn_1.norm.").replace(
      "mid_block.attentions.0.to_q.",
      "mid.attn_1.q.",
    )
    .replace("mid_block.attentions.0.to_k.", "mid.attn_1.k.").replace("mid_block.attentions.0.to_v.", "mid.attn_1.v.")
    .replace("mid_block.attentions.0.to_out.0.", "mid.attn_1.proj_out.").replace("conv_norm_out.", "norm_out.")
    .replace("conv_shortcut.", "nin_shortcut.")
    .replace(/up_blocks\.(\d+)\.resnets\./, (_, i) => `up.${blocks - 1 - Number(i)}.block.`)
    .replace(/up_blocks\.(\d+)\.upsamplers\.0\./, (_, i) => `up.${blocks - 1 - Number(i)}.upsample.`);
}

Deno.test("weights: ComfyUI's DiT (fused qkv) and FLUX.1's ae.safetensors read back as the official tensors", async () => {
  const index = await loadTinyIndex();
  const official = await recipeStore(index, "dit");
  // The tiny DiT rewritten with ComfyUI's names, q, k and v fused along the first axis, under the prefix.
  const fused = new Map<string, { shape: number[]; parts: Float32Array[] }>();
  for (const t of official.tensors) {
    const name = "model.diffusion_model." + comfyName(t.name), values = await official.readFloat32(t.name);
    const entry = fused.get(name) ?? { shape: t.shape, parts: [] };
    fused.set(name, entry);
    const qkv = /attention\.to_([qkv])\.weight$/.exec(t.name); // stored sorted by name: k, q, v
    entry.parts[qkv ? "qkv".indexOf(qkv[1]) : 0] = values;
  }
  const data = [...fused].map(([name, { shape, parts }]) => {
    const all = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) all.set(p, (at += p.length) - p.length);
    return {
      name,
      dtype: "F32" as const,
      shape: [shape[0] * parts.length, ...shape.slice(1)],
      data: new Uint8Array(all.buffer),
    };
  });
  ok(data.some((t) => t.name === "model.diffusion_model.layers.1.attention.qkv.weight" && t.shape[0] === 192));
  const comfy = await SafetensorsFile.open(bytesSource(encodeSafetensors(data)));
  const mapped = openDit(comfy, parseDitConfig(index.config.dit as Record<string, unknown>));
  for (const t of official.tensors) {
    deepStrictEqual(mapped.info(t.name).shape, t.shape, t.name);
    deepStrictEqual(await mapped.readFloat32(t.name), await official.readFloat32(t.name), t.name);
  }
  // Rows of one part of a fused tensor are that part's rows (k is the second third of qkv).
  const k = "layers.1.attention.to_k.weight";
  deepStrictEqual(await mapped.readRows(k, 62, 2), (await official.read(k)).subarray(62 * 256, 64 * 256));
  await assertThrowsMessage(
    () => mapped.readRows(k, 63, 2),
    `rows [63, 63 + 2) of ${k} must be integers within its 64 rows`,
  );
  // The VAE under BFL's names (1x1 convolutions for the attention), its encoder kept.
  const vaeConfig = parseVaeConfig(index.config.vae as Record<string, unknown>);
  const vae = await recipeStore(index, "vae");
  const blocks = vaeConfig.blockOutChannels.length;
  const bfl = await SafetensorsFile.open(bytesSource(encodeSafetensors(
    await Promise.all(vae.tensors.map(async (t) => {
      const decoder = t.name.startsWith("decoder."),
        name = decoder ? "decoder." + bflName(t.name.slice(8), blocks) : t.name;
      const conv = /^decoder\.mid\.attn_1\.(q|k|v|proj_out)\.weight$/.test(name);
      const values = await vae.readFloat32(t.name);
      return {
        name,
        dtype: "F32" as const,
        shape: conv ? [...t.shape, 1, 1] : t.shape,
        data: new Uint8Array(values.buffer),
      };
    })),
  )));
  const decoder = openVaeDecoder(bfl, vaeConfig);
  const decoderNames = vae.tensors.filter((t) => t.name.startsWith("decoder."));
  strictEqual(decoder.tensors.length, decoderNames.length);
  for (const t of decoderNames) {
    deepStrictEqual(decoder.info(t.name.slice(8)).shape, t.shape, t.name);
    deepStrictEqual(await decoder.readFloat32(t.name.slice(8)), await vae.readFloat32(t.name), t.name);
  }
});

gpuTest(
  "ZImage.load at Turbo's size (layout.json's headers, nothing read): a q4g128 DiT and the q8 text encoder fit 4 GiB a stage at a time",
  async (gpu) => {
    const checkpoint = () => ({
      config: Z_IMAGE_TURBO,
      dit: openDit(headers(layout.tensors.dit), Z_IMAGE_TURBO.dit),
      vae: openVaeDecoder(headers(layout.tensors.vae), Z_IMAGE_TURBO.vae),
      textEncoder: { store: headers(layout.tensors.text_encoder), config: QWEN3_4B },
      layout: "diffusers" as const,
    });
    // Stages loaded in turn are loaded when they run: load() reads nothing (the stores would refuse).
    const model = await ZImage.load(checkpoint(), { device: gpu, format: "q4g128" });
    deepStrictEqual(model.resident, { textEncoder: false, dit: false, vae: false, ditStreamed: false });
    model.destroy();
    // Without the embedding table on the GPU the q8 encoder is 3.3 GiB; f32 is 13.2 GiB, over the default.
    ok(textEncoderWeightBytes(QWEN3_4B, "q8") < 3.3 * 2 ** 30, `${textEncoderWeightBytes(QWEN3_4B, "q8")}`);
    await assertThrowsMessage(
      () => ZImage.load(checkpoint(), { device: gpu, format: "q4g128", textEncoderFormat: "f32" }),
      /the text encoder needs 14\d{9} bytes of weights, over maxResidentBytes 4294967296/,
    );
  },
);
