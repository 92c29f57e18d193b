"""Goldens for ops/softmax from torch (run on the GPU machine: python3 ops/softmax/goldens/gen.py).

Writes softmax.json beside this file. Inputs are float32, drawn with a fixed seed (the long row as small
integers, so it prints short); torch.softmax(x, -1) is computed in float64 on those inputs
and rounded to float32 once, which is the definition the reference implements, so the reference is
held to one rounding rather than to torch's own float32 summation order. Awkward sizes: a single
element, rows not a multiple of 256, a 4099-long row (its output kept at every 16th element, to keep
the file small), logits of +-1000, and -inf masking including a row of nothing but -inf.
Non-finite values are written as the strings "Infinity", "-Infinity" and "NaN" (JSON has none).
"""
import json, pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def case(label, x, out_stride=1):
    rows, cols = x.shape
    out = torch.softmax(x.double(), -1).float().flatten()[::out_stride]
    return {"label": label, "rows": rows, "cols": cols, "x": f32_json(x), "out": f32_json(out),
            "out_stride": out_stride}


torch.manual_seed(0)
inf = float("inf")
cases = [
    case("rows=1 cols=1", torch.randn(1, 1)),
    case("rows=3 cols=7", 3 * torch.randn(3, 7)),
    case("rows=2 cols=257", 3 * torch.randn(2, 257)),
    case("rows=1 cols=4099", torch.randint(-8, 9, (1, 4099)).float(), out_stride=16),
    case("logits of +-1000", torch.tensor([[1000.0, 1001.0, 999.0, 1000.5], [-1000.0, -999.0, -1001.0, -1000.5],
                                           [1000.0, -1000.0, 0.0, 999.0]])),
    case("-inf masking", torch.tensor([[-inf, 0.0, 1.0, -inf], [-inf, -inf, -inf, -inf]])),
]
out = pathlib.Path(__file__).with_name("softmax.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
