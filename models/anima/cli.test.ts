import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { assertThrowsMessage } from "../../harness/testing.ts";
import { type AnimaCliOptions, parseCliArgs } from "./cli.ts";

const required = ["--dit", "d", "--vae", "v", "--qwen3", "q/", "--t5", "t", "--prompt", "a cat", "--out", "o.png"];

Deno.test("anima cli: every option checked by name before anything is read", async () => {
  deepStrictEqual(
    parseCliArgs([...required, "--cfg", "4.5", "--negative", "", "--shift", "5", "--seed", "0"]),
    {
      dit: "d",
      vae: "v",
      qwen3: "q",
      t5: "t",
      prompt: "a cat",
      negative: "",
      out: "o.png",
      width: 1024,
      height: 1024,
      steps: undefined,
      cfg: 4.5,
      shift: 5,
      sampler: undefined,
      seed: 0,
      format: undefined,
      textEncoderFormat: undefined,
      maxResidentBytes: undefined,
    } satisfies AnimaCliOptions,
  );
  const sized = parseCliArgs([...required, "--width", "832", "--height", "1216", "--format", "q8"]) as AnimaCliOptions;
  deepStrictEqual([sized.width, sized.height, sized.format], [832, 1216, "q8"]);
  for (const sampler of ["euler", "res_multistep", "er_sde"]) {
    strictEqual((parseCliArgs([...required, "--sampler", sampler]) as AnimaCliOptions).sampler, sampler);
  }
  deepStrictEqual(parseCliArgs(["--help"]), "help");
  const refused: [string[], string][] = [
    [["--model", "m"], "unknown option --model"],
    [["--steps"], "--steps needs a value"],
    [["extra"], 'unexpected argument "extra"'],
    [
      ["--width", "1000"],
      "--width must be a multiple of 16 (a DiT patch of 2 x 2 latent cells of 8 x 8 pixels), got 1000",
    ],
    [["--height", "8"], "--height must be a multiple of 16"],
    [["--width", "0"], '--width must be an integer >= 1, got "0"'],
    [["--height", "1e400"], '--height must be an integer >= 1, got "1e400"'],
    [["--steps", "0"], '--steps must be an integer >= 1, got "0"'],
    [["--steps", "2.5"], '--steps must be an integer >= 1, got "2.5"'],
    [["--cfg", "inf"], '--cfg must be a finite number, got "inf"'],
    [["--cfg", "NaN"], '--cfg must be a finite number, got "NaN"'],
    [["--shift", "0"], '--shift must be a finite number > 0, got "0"'],
    [["--shift", "-3"], '--shift must be a finite number > 0, got "-3"'],
    [["--seed", "-1"], '--seed must be an integer in [0, 4294967295], got "-1"'],
    [["--seed", "x"], '--seed must be an integer in [0, 4294967295], got "x"'],
    [["--format", "q4g128"], '--format must be one of f32, q8, got "q4g128"'],
    [["--sampler", "heun"], '--sampler must be one of euler, res_multistep, er_sde, got "heun"'],
    [["--text-encoder-format", "f16"], '--text-encoder-format must be one of f32, q8, got "f16"'],
    [["--max-resident", "0"], "--max-resident must be bytes >= 1"],
  ];
  for (const [args, message] of refused) await assertThrowsMessage(() => parseCliArgs([...required, ...args]), message);
  for (let i = 0; i < required.length; i += 2) {
    const without = [...required.slice(0, i), ...required.slice(i + 2)];
    await assertThrowsMessage(() => parseCliArgs(without), `${required[i]} is required`);
  }
});

/** The CLI run in a process of its own: its exit code and stderr. */
async function runCli(args: string[]): Promise<{ code: number; stderr: string }> {
  const cli = new URL("./cli.ts", import.meta.url).pathname;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", cli, ...args],
    stdout: "null",
    stderr: "piped",
  })
    .output();
  return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
}

Deno.test("anima cli: a bad option, path or file fails before the device and any weight (no adapter line, no load progress); --help", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Files that exist but are no checkpoints: anything that read past the checks would fail on them differently.
    for (const f of ["dit.safetensors", "vae.safetensors", "spiece.model"]) {
      await Deno.writeTextFile(`${dir}/${f}`, "not a model");
    }
    await Deno.mkdir(`${dir}/qwen3`);
    for (const f of ["config.json", "tokenizer_config.json"]) await Deno.writeTextFile(`${dir}/qwen3/${f}`, "{}");
    const files = (qwen3 = `${dir}/qwen3`, out = `${dir}/a.png`) => [
      ...["--dit", `${dir}/dit.safetensors`, "--vae", `${dir}/vae.safetensors`, "--t5", `${dir}/spiece.model`],
      ...["--qwen3", qwen3, "--prompt", "a cat", "--out", out],
    ];
    const refused = async (args: string[], message: string) => {
      const { code, stderr } = await runCli(args);
      strictEqual(code, 1, stderr);
      ok(stderr.includes(message), `${message}\n${stderr}`);
      ok(!stderr.includes("adapter:") && !stderr.includes("load "), stderr);
    };
    // Numbers before paths: none of these files exist, and the shift is what is told.
    await refused([...required, "--shift", "0"], '--shift must be a finite number > 0, got "0"');
    await refused([...required, "--width", "1000"], "--width must be a multiple of 16");
    await refused(required, "--dit: no file d");
    await refused(files(`${dir}/none`), `--qwen3: no directory ${dir}/none`);
    await refused(files(), `--qwen3: ${dir}/qwen3 has neither tokenizer.json nor vocab.json and merges.txt`);
    await Deno.writeTextFile(`${dir}/qwen3/tokenizer.json`, "{}");
    await refused(
      files(`${dir}/qwen3`, `${dir}/none/a.png`),
      `--out: the directory ${dir}/none of ${dir}/none/a.png does not exist`,
    );
    // Every path there: the DiT's header is read (and is none) before the device is taken.
    await refused(files(), `--dit: safetensors ${dir}/dit.safetensors: `);
    const help = await new Deno.Command(Deno.execPath(), {
      args: ["task", "--quiet", "anima", "--help"],
      cwd: new URL("../../", import.meta.url).pathname,
      stdout: "piped",
      stderr: "piped",
    }).output();
    strictEqual(help.code, 0, new TextDecoder().decode(help.stderr));
    ok(new TextDecoder().decode(help.stdout).startsWith("usage: deno task anima --dit FILE"));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
