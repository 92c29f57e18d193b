"""Non-finite goldens for ops/ctc_decode from torch (python3 ops/ctc_decode/goldens/nonfinite.py).

Writes nonfinite.json beside this file: greedy CTC decoding in torch on the CPU, torch.argmax over the
classes of each frame (a NaN is above every number: the first NaN of a frame is its class, even beside
+inf; +inf above every finite logit), torch.unique_consecutive, then the blank (0) dropped, over
float32 logits [B, T, C] holding NaN, +inf and -inf, at C 4 (vec4 rows) and 3.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import json, math, pathlib, torch

nan, inf = float("nan"), float("inf")


def golden(t):
    return [v if math.isfinite(v) else str(v) for v in t.to(torch.float32).flatten().tolist()]


torch.manual_seed(0)
cases = []
for C in (4, 3):
    B, T = 2, 7
    logits = torch.randn(B, T, C)
    logits[0, 0, C - 1] = nan          # a NaN in the last class wins its frame
    logits[0, 1, 1], logits[0, 1, 2] = inf, nan  # NaN beats +inf
    logits[0, 2, 1] = inf              # +inf wins
    logits[0, 3, :] = -inf             # all -inf: the first class (the blank)
    logits[0, 4, 0], logits[0, 4, 1] = nan, nan  # the first NaN: the blank
    logits[1, 2, 2] = -inf
    logits[1, 5, 1], logits[1, 5, 2] = inf, inf  # equal infinities: the first
    tokens, lengths = [], []
    for b in range(B):
        best = torch.argmax(logits[b], dim=-1)
        labels = [int(v) for v in torch.unique_consecutive(best) if int(v) != 0]
        tokens.append(labels + [-1] * (T - len(labels)))
        lengths.append(len(labels))
    cases.append({"B": B, "T": T, "C": C, "logits": golden(logits), "tokens": sum(tokens, []), "lengths": lengths})
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
