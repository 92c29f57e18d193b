import { deepStrictEqual as assertEquals } from "node:assert/strict";
import { assertThrowsMessage } from "../../harness/testing.ts";
import { convertCheckpoint, main } from "./convert.ts";
import { SafetensorsFile } from "../../llm/safetensors.ts";
import { fileSource } from "../../llm/safetensors_file.ts";
import { convertedMetadata } from "../../llm/weights/load.ts";
import { fixturePath } from "./fixtures_test_util.ts";

async function open(path: string): Promise<SafetensorsFile> {
  return SafetensorsFile.open(await fileSource(path));
}

Deno.test("convert: the tiny checkpoint converts, from bf16 and f32, to the numpy converter's bytes", async () => {
  const out = await Deno.makeTempDir();
  try {
    for (const format of ["q8", "q4g128"] as const) {
      for (const dtype of ["bf16", "f32"]) {
        const progress: number[][] = [];
        const dir = `${out}/${format}-${dtype}`;
        const bytes = await convertCheckpoint(
          fixturePath(`tiny-gqa/${dtype}`),
          dir,
          format,
          (d, t) => progress.push([d, t]),
        );
        const written = await open(`${dir}/model.safetensors`);
        const expected = await open(fixturePath(`tiny-gqa/expected-${format}.safetensors`));
        assertEquals((await Deno.stat(`${dir}/model.safetensors`)).size, bytes);
        assertEquals(written.metadata, convertedMetadata(format));
        assertEquals(written.tensors.map((t) => t.name).sort(), expected.tensors.map((t) => t.name).sort());
        for (const t of expected.tensors) {
          assertEquals([written.info(t.name).dtype, written.info(t.name).shape], [t.dtype, t.shape], t.name);
          assertEquals(await written.read(t.name), await expected.read(t.name), `${format} from ${dtype}: ${t.name}`);
        }
        for (const name of ["config.json", "generation_config.json"]) {
          assertEquals(
            await Deno.readTextFile(`${dir}/${name}`),
            await Deno.readTextFile(fixturePath(`tiny-gqa/${dtype}/${name}`)),
            name,
          );
        }
        // The fixture has no tokenizer, so none is written.
        assertEquals((await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).sort(), [
          "config.json",
          "generation_config.json",
          "model.safetensors",
        ]);
        const inputBytes = dtype === "bf16" ? 137_792 : 273_440;
        assertEquals(progress.length, 21);
        assertEquals(progress.at(-1)![0], progress.at(-1)![1]);
        // Tensor data is the file less its header: the total counts input tensor bytes.
        const input = await open(fixturePath(`tiny-gqa/${dtype}/model.safetensors`));
        assertEquals(progress.at(-1)![1], inputBytes - input.dataStart);
      }
    }
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("convert: refuses a converted input, an unknown format and bad arguments", async () => {
  const out = await Deno.makeTempDir();
  try {
    await convertCheckpoint(fixturePath("tiny-tied/bf16-sharded"), `${out}/f32`, "f32");
    await assertThrowsMessage(() => convertCheckpoint(`${out}/f32`, `${out}/again`, "q8"), "converted to f32");
    await assertThrowsMessage(
      () => convertCheckpoint(`${out}/f32`, `${out}/again`, "f32"),
      "is already converted (f32)",
    );
    await assertThrowsMessage(
      () => convertCheckpoint(fixturePath("tiny-gqa/bf16"), `${out}/x`, "q5" as "q8"),
      "convert: --format must be one of f32, q8, q4g128, got q5",
    );
    assertEquals(await main([fixturePath("tiny-gqa/bf16")]), 2);
    assertEquals(await main(["--help"]), 0);
    assertEquals(await main([fixturePath("tiny-gqa/bf16"), `${out}/cli`, "--format=q8"]), 0);
    assertEquals((await open(`${out}/cli/model.safetensors`)).metadata.format, "q8");
  } finally {
    await Deno.remove(out, { recursive: true });
  }
});

Deno.test("convert CLI: a missing --format, a wrong path count and an unknown option are each named", async () => {
  const said: string[] = [];
  const error = console.error;
  console.error = (...parts: unknown[]) => said.push(parts.join(" "));
  try {
    for (
      const [args, why] of [
        [["in", "out"], "convert: --format is required"],
        [["in", "--format", "q8"], "convert: expected <hf-dir> <out-dir>, got 1 path(s)"],
        [["in", "out", "--fromat", "q8"], "convert: unknown option --fromat"],
      ] as const
    ) {
      said.length = 0;
      assertEquals(await main([...args]), 2);
      assertEquals(said[0].split("\n")[0], why);
    }
  } finally {
    console.error = error;
  }
});
