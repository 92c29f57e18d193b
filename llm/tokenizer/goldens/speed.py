"""Encode speed of the Python packages on corpus.txt, for comparison with ours
(llm/tokenizer/bench_encode.ts measures ours the same way; run both on one machine):

    python3 speed.py > speed.json        (from llm/tokenizer/goldens/, after gen.py wrote the models)

Best of 5 passes over corpus.txt in 40-line chunks, one encode call per chunk, one thread. The
SentencePiece models are read by the `sentencepiece` package and the tokenizer.json files by
`tokenizers`, the files committed here.
"""
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ["TOKENIZERS_PARALLELISM"] = "false"
os.environ["RAYON_NUM_THREADS"] = "1"

import sentencepiece as spm  # noqa: E402
import tokenizers  # noqa: E402

HERE = Path(__file__).parent
SP_MODELS = ["unigram_nfkc", "unigram_identity", "bpe_nfkc", "bpe_identity", "unigram_nmt_nfkc"]
HF_MODELS = ["llama3_style", "gpt2_style"]

lines = (HERE / "corpus.txt").read_text(encoding="utf-8").split("\n")
chunks = ["\n".join(lines[i:i + 40]) for i in range(0, len(lines), 40)]
size = sum(len(c.encode("utf-8")) for c in chunks)


def measure(encode):
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for chunk in chunks:
            encode(chunk)
        best = min(best, time.perf_counter() - start)
    return {"bytes": size, "seconds": best, "MB_per_s": size / best / 1e6}


speed = {"conditions": "best of 5 passes over corpus.txt in 40-line chunks, one call per chunk, "
                       "one thread (TOKENIZERS_PARALLELISM=false, RAYON_NUM_THREADS=1)",
         "python": sys.version, "machine": platform.processor() or platform.machine(),
         "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
         "sentencepiece": spm.__version__, "tokenizers": tokenizers.__version__, "results": {}}
for name in SP_MODELS:
    sp = spm.SentencePieceProcessor(model_file=str(HERE / f"sp_{name}.model"))
    speed["results"][f"sp_{name}"] = measure(lambda c: sp.encode(c))
for name in HF_MODELS:
    tok = tokenizers.Tokenizer.from_file(str(HERE / f"hf_{name}.tokenizer.json"))
    speed["results"][f"hf_{name}"] = measure(lambda c: tok.encode(c, add_special_tokens=False))
print(json.dumps(speed, indent=1))
