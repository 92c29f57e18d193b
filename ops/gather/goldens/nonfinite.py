"""Non-finite goldens for ops/gather from torch (python3 ops/gather/goldens/nonfinite.py).

Writes nonfinite.json beside this file: torch.index_select(table, 0, index) of a float32 table [5, 3]
holding NaN, +inf and -inf, on the CPU, each such row selected (one twice): a copy, so every value
keeps its bits. Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import json, math, pathlib, torch
import torch.nn.functional as F

nan, inf = float("nan"), float("inf")


def golden(t):
    return [v if math.isfinite(v) else str(v) for v in t.to(torch.float32).flatten().tolist()]


def with_specials(t, at):
    """t (float32) with NaN, +inf and -inf at the flat indices `at`."""
    t = t.to(torch.float32).clone()
    flat = t.view(-1)
    for i, v in zip(at, (nan, inf, -inf)):
        flat[i] = v
    return t


table = with_specials(torch.arange(15.0).reshape(5, 3), (1, 6, 14))
index = torch.tensor([4, 0, 2, 2, 1, 3])
cases = [{"rows": 5, "cols": 3, "table": golden(table), "index": index.tolist(),
          "out": golden(torch.index_select(table, 0, index))}]
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
