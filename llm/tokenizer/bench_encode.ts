// Encode speed on goldens/corpus.txt, measured the way goldens/speed.py measures the Python
// packages (40-line chunks, one call per chunk, best of 5 passes, one thread); their figures are read
// from goldens/speed.json, which speed.py writes: run both on the same machine to compare. Qwen3's and
// T5's tokenizers (llm/fixtures/) are measured too; speed.json has no Python figure for them.
// On a shared machine the wall clock counts other processes' time too: the last column is the best
// pass measured by this process's CPU time (user + system, all its threads).
// Run: deno run -R llm/tokenizer/bench_encode.ts
import process from "node:process";
import { qwenTokenizer, t5Tokenizer } from "../fixtures/tokenizer_files.ts";
import { ByteLevelBpeTokenizer } from "./byte_level_bpe.ts";
import { SentencePieceTokenizer } from "./sentencepiece.ts";

const dir = new URL("./goldens/", import.meta.url);
const lines = Deno.readTextFileSync(new URL("corpus.txt", dir)).split("\n");
const chunks: string[] = [];
for (let i = 0; i < lines.length; i += 40) chunks.push(lines.slice(i, i + 40).join("\n"));
const bytes = chunks.reduce((n, c) => n + new TextEncoder().encode(c).length, 0);
const python = JSON.parse(Deno.readTextFileSync(new URL("speed.json", dir)));

const tokenizers: [string, { encode(text: string): number[] }][] = [
  ...["unigram_nfkc", "unigram_identity", "bpe_nfkc", "bpe_identity", "unigram_nmt_nfkc"].map((
    name,
  ): [string, SentencePieceTokenizer] => [
    `sp_${name}`,
    new SentencePieceTokenizer(Deno.readFileSync(new URL(`sp_${name}.model`, dir))),
  ]),
  ...["llama3_style", "gpt2_style"].map((name): [string, ByteLevelBpeTokenizer] => [
    `hf_${name}`,
    new ByteLevelBpeTokenizer(Deno.readTextFileSync(new URL(`hf_${name}.tokenizer.json`, dir))),
  ]),
  ["qwen3", await qwenTokenizer()],
  ["t5", t5Tokenizer()],
];
console.log(`${bytes} bytes in ${chunks.length} chunks; Deno ${Deno.version.deno}`);
console.log(`python packages: speed.json, measured on ${python.cpu}`);
console.log("MB/s                   ours: first pass  best of 5   python best of 5   ours, CPU time: best");
for (const [name, tokenizer] of tokenizers) {
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (let pass = 0; pass < 5; pass++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    for (const chunk of chunks) tokenizer.encode(chunk);
    times.push((performance.now() - start) / 1000);
    const used = process.cpuUsage(cpu);
    cpuTimes.push((used.user + used.system) / 1e6);
  }
  const rate = (seconds: number) => (bytes / seconds / 1e6).toFixed(1);
  const theirs = python.results[name]?.MB_per_s.toFixed(1) ?? "—";
  console.log(
    `${name.padEnd(22)} ${rate(times[0]).padStart(16)} ${rate(Math.min(...times)).padStart(10)} ${
      theirs.padStart(18)
    } ${rate(Math.min(...cpuTimes)).padStart(22)}`,
  );
}
