"""Trains the fortune model: a small Llama and its SentencePiece tokenizer, on the fortune cookies of
Debian's `fortunes` package (BSD licence; see README.md). Runs on the GPU machine (torch,
transformers, sentencepiece, safetensors), in a few minutes on one H200:

    python3 train.py <fortunes-dir> <out-dir>

<fortunes-dir> is `usr/share/games/fortunes` of the extracted package. Writes to <out-dir>:

- tokenizer.model: SentencePiece unigram, 4,096 pieces, byte fallback, identity normalisation, no
  whitespace folding, "\\n" a user-defined piece (line breaks are part of a fortune);
- config.json, generation_config.json, model.safetensors: the HF checkpoint (bf16, as HF ships them);
- heldout.txt: the held-out fortunes (every 20th), separated by lines of "%", as the package writes them;
- heldout.json: their ids as the Python sentencepiece package encodes them, the evaluation windows, and
  the perplexity torch computes on them (f32 math over the saved bf16 weights), also for the model with
  its weights replaced by their q8 and q4g128 quantise-dequantise (llm/fixtures/quant.py);
- greedy.json: for a few prompts, the prompt ids and 32 greedy tokens of torch's f32 model, with the
  smallest top-1 minus top-2 logit gap among them.
"""
import inspect
import json
import math
import os
import re
import sys
import time

import numpy as np
import sentencepiece as spm
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "llm", "fixtures"))
import quant  # noqa: E402

SRC, OUT = sys.argv[1], sys.argv[2]
SEED = 1234
VOCAB = 4096
SEQ = 256  # training and evaluation window
BATCH = 64
STEPS = int(os.environ.get("STEPS", "1000"))  # about 16 passes over the training tokens
EVAL_EVERY = 100
LR = 2e-3
WARMUP = 200
HELDOUT_EVERY = 20  # fortune i is held out when i % 20 == 19
PROMPTS = ["The best way to", "Q: What do you call", "Never trust a", "A computer is"]

# The data files of the package: every file without a suffix (the .dat indexes and .u8 links are
# skipped), except ascii-art, whose pictures are not text.
files = sorted(f for f in os.listdir(SRC)
               if "." not in f and f != "ascii-art" and os.path.isfile(os.path.join(SRC, f)))
fortunes = []
for name in files:
    text = open(os.path.join(SRC, name), encoding="utf-8", errors="strict").read()
    # Overstrike (x BACKSPACE x, _ BACKSPACE x) becomes the plain character; tabs become spaces, as a
    # terminal shows them.
    text = re.sub(r".\x08", "", text).replace("\x08", "").expandtabs(8)
    for block in re.split(r"^%\n", text, flags=re.M):
        block = "\n".join(line.rstrip() for line in block.split("\n")).strip("\n")
        if block.strip():
            fortunes.append(block)
train = [f for i, f in enumerate(fortunes) if i % HELDOUT_EVERY != HELDOUT_EVERY - 1]
heldout = [f for i, f in enumerate(fortunes) if i % HELDOUT_EVERY == HELDOUT_EVERY - 1]
print(f"corpus: {len(files)} files, {len(fortunes)} fortunes, {sum(map(len, fortunes))} characters; "
      f"train {len(train)}, held out {len(heldout)}", flush=True)

os.makedirs(OUT, exist_ok=True)
spm.SentencePieceTrainer.train(
    sentence_iterator=iter(train), model_prefix=os.path.join(OUT, "tokenizer"), model_type="unigram",
    vocab_size=VOCAB, character_coverage=1.0, byte_fallback=True, normalization_rule_name="identity",
    remove_extra_whitespaces=False, user_defined_symbols=["\n"], max_sentence_length=1 << 16,
    unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=16, minloglevel=2)
os.remove(os.path.join(OUT, "tokenizer.vocab"))
sp = spm.SentencePieceProcessor(model_file=os.path.join(OUT, "tokenizer.model"))
BOS, EOS = sp.bos_id(), sp.eos_id()
assert sp.decode(sp.encode(heldout[0])) == heldout[0], "the tokenizer must round-trip the text"


def stream(docs):
    out = []
    for ids in sp.encode(docs):
        out += [BOS] + ids + [EOS]
    return out


train_ids = torch.tensor(stream(train), dtype=torch.long)
heldout_doc_ids = sp.encode(heldout)
heldout_ids = [t for ids in heldout_doc_ids for t in [BOS] + ids + [EOS]]
windows = [heldout_ids[i:i + SEQ] for i in range(0, len(heldout_ids), SEQ)]
windows = [w for w in windows if len(w) >= 2]
print(f"tokens: train {len(train_ids)}, held out {len(heldout_ids)} in {len(windows)} windows of {SEQ}", flush=True)

shape = dict(vocab_size=VOCAB, hidden_size=256, intermediate_size=768, num_hidden_layers=6, num_attention_heads=4,
             num_key_value_heads=2, max_position_embeddings=512, rms_norm_eps=1e-5, bos_token_id=BOS,
             eos_token_id=EOS, tie_word_embeddings=False)
if "rope_parameters" in inspect.signature(LlamaConfig.__init__).parameters:
    shape["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0}
else:
    shape["rope_theta"] = 10000.0
config = LlamaConfig(**shape, attention_dropout=0.1)  # training only: set to 0 before saving
config._attn_implementation = "sdpa"
torch.manual_seed(SEED)
dev = "cuda"
model = LlamaForCausalLM(config).to(dev)
print(f"parameters: {sum(p.numel() for p in model.parameters())}", flush=True)
decay = [p for n, p in model.named_parameters() if p.ndim == 2]
no_decay = [p for n, p in model.named_parameters() if p.ndim != 2]
opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=LR, betas=(0.9, 0.95), fused=True)


def lr_at(step):
    if step < WARMUP:
        return LR * (step + 1) / WARMUP
    return LR * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - WARMUP) / max(1, STEPS - WARMUP))))


@torch.no_grad()
def heldout_nll(m, autocast=True):
    """Summed negative log-likelihood (nats) and predicted-token count over the windows, each window
    evaluated from an empty context."""
    m.eval()
    total, count, per_window = 0.0, 0, []
    for w in windows:
        x = torch.tensor(w, device=dev)[None]
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            logits = m(input_ids=x).logits.float()
        nll = F.cross_entropy(logits[0, :-1].double(), x[0, 1:], reduction="sum").item()
        per_window.append(nll)
        total += nll
        count += len(w) - 1
    m.train()
    return total, count, per_window


gen = torch.Generator().manual_seed(SEED)
best = (float("inf"), None, -1)
t0 = time.time()
model.train()
for step in range(STEPS):
    for g in opt.param_groups:
        g["lr"] = lr_at(step)
    starts = torch.randint(0, len(train_ids) - SEQ - 1, (BATCH,), generator=gen)
    batch = torch.stack([train_ids[s:s + SEQ + 1] for s in starts.tolist()]).to(dev)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        logits = model(input_ids=batch[:, :-1]).logits
    loss = F.cross_entropy(logits.float().reshape(-1, VOCAB), batch[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if (step + 1) % EVAL_EVERY == 0 or step + 1 == STEPS:
        total, count, _ = heldout_nll(model)
        ppl = math.exp(total / count)
        print(f"step {step + 1}: train loss {loss.item():.3f}, held-out ppl {ppl:.2f} ({time.time() - t0:.0f} s)",
              flush=True)
        if ppl < best[0]:
            best = (ppl, {k: v.detach().clone() for k, v in model.state_dict().items()}, step + 1)
print(f"best held-out ppl {best[0]:.2f} at step {best[2]}; training took {time.time() - t0:.0f} s", flush=True)
model.load_state_dict(best[1])
config.attention_dropout = 0.0
model.to(torch.bfloat16).save_pretrained(OUT, safe_serialization=True)

# torch's figures, from the saved file: bf16 weights, f32 math, eager attention, no autocast.
state = {k: v.float() for k, v in load_file(os.path.join(OUT, "model.safetensors")).items()}
config._attn_implementation = "eager"
ref = LlamaForCausalLM(config).to(dev).float().eval()
missing, unexpected = ref.load_state_dict(state, strict=False)
assert not unexpected and all("rotary" in k for k in missing), (missing, unexpected)

results = {}
QUANTISED = ("embed_tokens", "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head")
for fmt in ("f32", "q8", "q4g128"):
    sd = {}
    for k, v in state.items():
        if fmt != "f32" and v.ndim == 2 and any(q in k for q in QUANTISED):
            w = v.numpy()
            if fmt == "q8":
                d = quant.dequant_q8(*quant.quantize_q8(w))
            else:
                d = quant.dequant_q4g128(*quant.quantize_q4g128(w))
            v = torch.from_numpy(np.asarray(d, dtype=np.float32))
        sd[k] = v
    ref.load_state_dict(sd, strict=False)
    total, count, per_window = heldout_nll(ref, autocast=False)
    results[fmt] = {"nll": total, "tokens": count, "perplexity": math.exp(total / count), "windowNll": per_window}
    print(f"torch {fmt}: held-out perplexity {math.exp(total / count):.4f} over {count} predicted tokens", flush=True)
    if fmt == "f32":
        greedy = []
        for prompt in PROMPTS:
            ids = [BOS] + sp.encode(prompt)
            x = torch.tensor(ids, device=dev)[None]
            out, margin = [], float("inf")
            with torch.no_grad():
                for _ in range(32):
                    logits = ref(input_ids=x).logits[0, -1].double()
                    top = torch.topk(logits, 2)
                    margin = min(margin, (top.values[0] - top.values[1]).item())
                    t = int(top.indices[0])
                    out.append(t)
                    x = torch.cat([x, torch.tensor([[t]], device=dev)], dim=1)
            greedy.append({"prompt": prompt, "ids": ids, "greedy": out, "minMargin": margin,
                           "text": sp.decode(out)})
            print(f"  {prompt!r} -> {sp.decode(out)!r} (min margin {margin:.3f})", flush=True)

with open(os.path.join(OUT, "heldout.txt"), "w", encoding="utf-8") as f:
    f.write("".join(h + "\n%\n" for h in heldout))
with open(os.path.join(OUT, "heldout.json"), "w") as f:
    json.dump({"bos": BOS, "eos": EOS, "window": SEQ, "docIds": heldout_doc_ids, "torch": results,
               "trainedSteps": best[2], "parameters": sum(p.numel() for p in ref.parameters())}, f)
with open(os.path.join(OUT, "greedy.json"), "w") as f:
    json.dump(greedy, f, indent=1)
print("versions: torch", torch.__version__, "transformers", __import__("transformers").__version__,
      "sentencepiece", spm.__version__, flush=True)
