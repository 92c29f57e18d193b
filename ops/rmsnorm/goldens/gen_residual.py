"""Goldens for rmsnorm's `residual` entry point from torch (python3 ops/rmsnorm/goldens/gen_residual.py; CPU).

Writes residual.json beside this file: a transformer layer's residual add and RMSNorm, as transformers'
LlamaDecoderLayer runs them on rows [row0, total): h = x + delta there (rounded to float32, as the
residual stream is held; the rows before row0 kept), then F.rms_norm(h[row0:], (cols,), weight, eps) in
float64 rounded to float32 once. Cases: the add on and
off, row0 > 0 (the last row alone), rows of 1, 40 and 300 columns (300: two elements of a row per
invocation, the second past the row for most).
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def case(label, total_rows, row0, cols, add, eps):
    x = torch.randn(total_rows, cols)
    delta = torch.randn(total_rows, cols)
    weight = 1 + 0.1 * torch.randn(cols)
    h = x.clone()
    if add:
        h[row0:] = x[row0:] + delta[row0:]  # the rows before row0 are not this call's
    out = F.rms_norm(h[row0:].double(), (cols,), weight.double(), eps).float()
    return {"label": label, "rows": total_rows - row0, "row0": row0, "cols": cols, "add": add, "eps": eps,
            "x": f32_json(x), "delta": f32_json(delta), "weight": f32_json(weight),
            "x_out": f32_json(h), "out": f32_json(out)}


torch.manual_seed(0)
cases = [
    case("3 rows of 1, added", 3, 0, 1, True, 1e-6),
    case("2 rows of 40, added", 2, 0, 40, True, 1e-5),
    case("the last of 3 rows of 40, not added", 3, 2, 40, False, 1e-6),
    case("the last of 2 rows of 300, added", 2, 1, 300, True, 1e-5),
]
out = pathlib.Path(__file__).with_name("residual.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
