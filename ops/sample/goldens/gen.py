"""Goldens for ops/sample from torch (python3 ops/sample/goldens/gen.py; CPU torch is enough).

Writes sample.json beside this file: rows of logits with torch.argmax of each (the greedy choice's
convention: the first index of the largest value, +Infinity chosen like any other largest value) and
torch.softmax(logits / T) in float64 rounded to float32 (the probabilities every filter of the draw
works on). NaN rows are left out: torch.argmax treats NaN as the largest value, where the kernels
flag the row instead (reference.ts's NONFINITE_LOGITS), a convention the tests pin on their own.
Non-finite values are written as the strings "Infinity" and "-Infinity".
"""
import json, pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def case(label, logits, temperature):
    """temperature None: no probabilities (softmax of +Infinity is NaN: sampling refuses such a row)."""
    x = logits.float()
    probs = None if temperature is None else f32_json(torch.softmax(x.double() / temperature, -1).float())
    return {"label": label, "logits": f32_json(x), "argmax": int(torch.argmax(x).item()),
            "temperature": temperature, "probs": probs}


torch.manual_seed(0)
inf = float("inf")
cases = [
    case("ties go to the first index", torch.tensor([1.0, 3.0, 2.0, 3.0, 3.0]), 1.0),
    case("+Infinity is the largest", torch.tensor([1.0, inf, 2.0, inf]), None),
    case("-Infinity is never largest when anything is finite", torch.tensor([-inf, -2.0, -inf, -3.0]), 0.5),
    case("random row of 300 at T = 0.7", 4 * torch.randn(300), 0.7),
    case("random row of 1031 at T = 1.3", 3 * torch.randn(1031), 1.3),
]
out = pathlib.Path(__file__).with_name("sample.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, allow_nan=False,
                          separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
