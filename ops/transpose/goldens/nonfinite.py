"""Non-finite goldens for ops/transpose from torch (python3 ops/transpose/goldens/nonfinite.py).

Writes nonfinite.json beside this file: x.t().contiguous() of float32 x holding NaN, +inf and -inf, on
the CPU: a copy, so every value keeps its place and its bits. Non-finite floats are written as
Python's str() ("nan", "inf", "-inf"): JSON has no NaN.
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


x = with_specials(torch.arange(35.0).reshape(5, 7), (3, 17, 34))
cases = [{"rows": 5, "cols": 7, "x": golden(x), "out": golden(x.t().contiguous())}]
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
