"""Non-finite goldens for ops/ctc_decode from torch (python3 ops/ctc_decode/goldens/nonfinite.py).

Writes nonfinite.json beside this file: greedy CTC decoding in torch on the CPU, torch.argmax over the
classes of each frame (a NaN is above every number: the first NaN of a frame is its class, even beside
+inf; +inf above every finite logit), torch.unique_consecutive, then the blank (0) dropped, over
float32 logits [B, T, C] holding NaN, +inf and -inf, at C 4 (vec4 rows) and 3.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

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
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
