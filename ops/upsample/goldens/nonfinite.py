"""Non-finite goldens for ops/upsample from torch (python3 ops/upsample/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.interpolate(x, size=(outH, outW), mode="nearest") of float32
x [1, 2, 2, 3] holding NaN, +inf and -inf, on the CPU, to 3 x 5 and 4 x 7: a copy of the nearest
source, so every value keeps its bits. Non-finite floats are written as Python's str().
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


x = with_specials(torch.arange(12.0).reshape(1, 2, 2, 3), (0, 4, 8))
cases = [{"N": 1, "C": 2, "H": 2, "W": 3, "outH": h, "outW": w, "x": golden(x),
          "out": golden(F.interpolate(x, size=(h, w), mode="nearest"))} for h, w in ((3, 5), (4, 7))]
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
