"""Goldens for ops/ctc_decode from torch (run on the GPU machine: python3 ops/ctc_decode/goldens/gen.py).

Writes ctc_decode.json beside this file. Greedy decoding as torch users write it: argmax over the
classes (torch.argmax, the first of equal maxima), torch.unique_consecutive to collapse repeats,
then the blank removed, per sequence of input_lengths[b] frames; padded with -1. Cases: B = 3 with
unequal lengths, T = 300 (runs crossing 256-frame blocks), C = 29 (wav2vec2's character set, not a
multiple of 4) and C = 32, a blank other than 0, tied logits (small integers), and a frame pattern
"a blank a" that must decode to two a's.
"""
import json, pathlib, struct, torch


def f32_json(t):
    out = []
    for v in t.flatten().tolist():
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == struct.unpack("f", struct.pack("f", v))[0])
        out.append(int(s) if s.is_integer() and s != 0 else s)
    return out


def greedy(logits, lengths, blank):
    B, T, _ = logits.shape
    tokens = torch.full((B, T), -1, dtype=torch.int32)
    counts = []
    for b in range(B):
        best = torch.argmax(logits[b, : lengths[b]], dim=-1)
        labels = torch.unique_consecutive(best)
        labels = labels[labels != blank]
        tokens[b, : labels.numel()] = labels.to(torch.int32)
        counts.append(labels.numel())
    return tokens, counts


def case(label, logits, lengths, blank):
    tokens, counts = greedy(logits, lengths, blank)
    B, T, C = logits.shape
    return {"label": label, "B": B, "T": T, "C": C, "blank": blank, "inputLengths": lengths,
            "logits": f32_json(logits), "tokens": tokens.flatten().tolist(), "lengths": counts}


torch.manual_seed(0)
# Small integer logits make runs and ties likely; a bias toward the blank makes blanks common.
def draw(B, T, C, blank, spread=3):
    x = torch.randint(0, spread, (B, T, C)).float()
    x[..., blank] += 1
    return x


pattern = torch.zeros(1, 7, 3)
for t, c in enumerate([1, 1, 0, 1, 2, 2, 0]):  # a a blank a b b blank -> a a b
    pattern[0, t, c] = 1
cases = [
    case("a a blank a b b blank", pattern, [7], 0),
    case("B=3 T=300 C=29 unequal lengths", draw(3, 300, 29, 0), [300, 257, 0], 0),
    case("B=2 T=300 C=32 blank=31", draw(2, 300, 32, 31, 2), [300, 299], 31),
    case("B=1 T=1 C=1", torch.zeros(1, 1, 1), [1], 0),
    case("B=4 T=37 C=5 float logits", torch.randn(4, 37, 5), [37, 36, 1, 20], 0),
]
path = pathlib.Path(__file__).with_name("ctc_decode.json")
path.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {path} (torch {torch.__version__})")
