/**
 * The hostile-caller battery over models/' public entry points (the counterpart of `ops/battery.test.ts` and
 * `llm/battery.test.ts`, sorted by `harness/battery_test_util.ts` alike): Qwen3's encoder and causal LM
 * loaded and called with what is not a device, a store, a config, ids or options; the image and noise
 * helpers with bad arrays and sizes. The suite fails on any crash, hang, silent answer or refused valid
 * call, and on any vague refusal. `BATTERY_SUMMARY=<file>` writes the counts.
 */
import { ok } from "node:assert/strict";
import { Tally, type Trial, writeSummary } from "../harness/battery_test_util.ts";
import { DeviceLostError } from "../harness/device.ts";
import { gpuTest } from "../harness/testing.ts";
import { bytesSource, SafetensorsFile } from "../llm/mod.ts";
import { crc32, decodedToRgba, encodePng } from "./image.ts";
import { gaussianNoise } from "./noise.ts";
import { parseQwen3Config, qwen3ChatPrompt, Qwen3Encoder, Qwen3ForCausalLM } from "./qwen3/mod.ts";

const TALLY = new Tally();
const fixtures = new URL("./qwen3/fixtures/", import.meta.url);

gpuTest("battery: qwen3 — loads and calls given what is not a device, store, config, ids or options", async (gpu) => {
  const store = await SafetensorsFile.open(
    bytesSource(await Deno.readFile(new URL("anima-tiny-qwen3.safetensors", fixtures))),
  );
  const config = parseQwen3Config(await Deno.readTextFile(new URL("anima-tiny-config.json", fixtures)));
  const trials: Trial[] = [];
  const refuse = (label: string, run: () => unknown, names: string[]) =>
    trials.push({ family: "qwen3", label, expect: "refuse", names, clearAs: [DeviceLostError], run });
  for (
    const [what, options, names] of [
      ['format "q3"', { format: "q3" }, ["format"]],
      ["hiddenState 99", { hiddenState: 99 }, ["hiddenState"]],
      ["hiddenState 1.5", { hiddenState: 1.5 }, ["hiddenState"]],
      ['embedding "nope"', { embedding: "nope" }, ["embedding"]],
      ["a misspelt key", { fromat: "q8" }, ["fromat"]],
      ["options 42", 42, ["options"]],
    ] as const
  ) {
    refuse(`Qwen3Encoder.load(${what})`, () => Qwen3Encoder.load(gpu, store, config, options as never), [...names]);
    refuse(`Qwen3ForCausalLM.load(${what})`, () => Qwen3ForCausalLM.load(gpu, store, config, options as never), [
      ...names,
      "hiddenState",
      "embedding",
    ]);
  }
  for (const [what, bad] of [["undefined", undefined], ["{}", {}], ["42", 42]] as const) {
    for (
      const [cls, load] of [["Qwen3Encoder", Qwen3Encoder.load], ["Qwen3ForCausalLM", Qwen3ForCausalLM.load]] as const
    ) {
      refuse(`${cls}.load(gpu = ${what})`, () => load(bad as never, store, config), ["gpu"]);
      refuse(`${cls}.load(store = ${what})`, () => load(gpu, bad as never, config), ["store"]);
      refuse(`${cls}.load(config = ${what})`, () => load(gpu, store, bad as never), ["config"]);
    }
  }
  for (const [what, json] of [["undefined", undefined], ["not JSON", "{"], ["{}", "{}"], ["42", 42]] as const) {
    refuse(`parseQwen3Config(${what})`, () => parseQwen3Config(json as never), ["config", "num_hidden_layers", "JSON"]);
  }
  const encoder = await Qwen3Encoder.load(gpu, store, config);
  const lm = await Qwen3ForCausalLM.load(gpu, store, config);
  const generate = async (ids: unknown, options: unknown) => {
    const out: number[] = [];
    for await (const id of lm.generate(ids as never, options as never)) out.push(id);
    return out;
  };
  const V = config.vocabSize;
  for (
    const [what, ids] of [
      ["undefined", undefined],
      ['"ab"', "ab"],
      ["[]", []],
      ["[-1]", [-1]],
      ["[1.5]", [1.5]],
      ["[vocabSize]", [V]],
      ["[NaN]", [NaN]],
    ] as const
  ) {
    refuse(`encoder.encode(${what})`, () => encoder.encode(ids as never), ["ids", "ids[0]"]);
    refuse(`lm.generate(${what})`, () => generate(ids, { maxTokens: 1 }), ["ids", "ids[0]", "prompt"]);
  }
  for (
    const [what, options, names] of [
      ["maxTokens 0", { maxTokens: 0 }, ["maxTokens"]],
      ["maxTokens 2.5", { maxTokens: 2.5 }, ["maxTokens"]],
      ["a misspelt key", { maxtokens: 2 }, ["maxtokens"]],
      ["options 42", 42, ["options"]],
    ] as const
  ) {
    refuse(`lm.generate([1], ${what})`, () => generate([1], options), [...names]);
  }
  trials.push({
    family: "qwen3",
    label: "encoder.encode(Int32Array) equals encode(array)",
    expect: "accept",
    run: () => encoder.encode(new Int32Array([3, 5])),
    check: async (v) => {
      const plain = await encoder.encode([3, 5]);
      const typed = v as Float32Array;
      return typed.length === plain.length && typed.every((x, i) => x === plain[i]) ? undefined : "differs";
    },
  });
  refuse("qwen3ChatPrompt(undefined)", () => qwen3ChatPrompt(undefined as never), ["message"]);
  await TALLY.run(trials);
  encoder.destroy();
  lm.destroy();
  await TALLY.run([{
    family: "qwen3",
    label: "encoder.encode after destroy()",
    expect: "refuse",
    names: ["destroy"],
    run: () => encoder.encode([1]),
  }]);
});

Deno.test("battery: image and noise — arrays and sizes that are not what they take", async () => {
  const trials: Trial[] = [];
  const refuse = (label: string, run: () => unknown, names: string[]) =>
    trials.push({ family: "image", label, expect: "refuse", names, run });
  for (const [what, v] of [["0", 0], ["-1", -1], ["2.5", 2.5], ["NaN", NaN], ['"2"', "2"], ["undefined", undefined]]) {
    refuse(`decodedToRgba(f32(12), width = ${what}, 2)`, () => decodedToRgba(new Float32Array(12), v as never, 2), [
      "width",
    ]);
    refuse(`encodePng(u8(16), 2, height = ${what})`, () => encodePng(new Uint8ClampedArray(16), 2, v as never), [
      "height",
    ]);
    if (what !== "0") refuse(`gaussianNoise(seed = ${what}, 4)`, () => gaussianNoise(v as never, 4), ["seed"]);
    refuse(
      `gaussianNoise(1, length = ${what === "0" ? "-1" : what})`,
      () => gaussianNoise(1, (v === 0 ? -1 : v) as never),
      [
        "length",
      ],
    );
  }
  for (const [what, v] of [["undefined", undefined], ["a string", "abc"], ["a plain array", [1, 2, 3]]] as const) {
    refuse(`decodedToRgba(${what}, 1, 1)`, () => decodedToRgba(v as never, 1, 1), ["decoded"]);
    refuse(`encodePng(${what}, 1, 1)`, () => encodePng(v as never, 1, 1), ["rgba"]);
    refuse(`crc32(${what})`, () => crc32(v as never), ["bytes"]);
  }
  refuse("encodePng(u8(15), 2, 2)", () => encodePng(new Uint8ClampedArray(15), 2, 2), ["rgba"]);
  await TALLY.run(trials);
});

Deno.test("battery: the counts — no crash, hang, silent answer, refused valid call or vague refusal", async () => {
  const total = TALLY.total();
  const path = Deno.env.get("BATTERY_SUMMARY");
  if (path) await writeSummary(path, "models", TALLY);
  const findings = Deno.env.get("BATTERY_FINDINGS");
  if (findings) await Deno.writeTextFile(findings, TALLY.report(Infinity) + "\n");
  console.log(`models battery: ${JSON.stringify(total)}`);
  const bad = total.crash + total.hang + total.silent + total.refused + total.vague;
  ok(bad === 0, `${JSON.stringify(total)}\n${TALLY.report()}`);
  ok(total.calls > 80, `${total.calls} calls`);
});
