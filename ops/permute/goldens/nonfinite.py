"""Non-finite goldens for ops/permute from torch (python3 ops/permute/goldens/nonfinite.py).

Writes nonfinite.json beside this file: x.permute(*dims).contiguous() of float32 x [2, 3, 4] holding
NaN, +inf and -inf, on the CPU, for dims that move the last axis and dims that keep it (the rows
path): a copy, so every value keeps its bits. Non-finite floats are written as Python's str().
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


x = with_specials(torch.arange(24.0).reshape(2, 3, 4), (1, 14, 23))
cases = [{"shape": [2, 3, 4], "dims": dims, "x": golden(x), "out": golden(x.permute(*dims).contiguous())}
         for dims in ([2, 0, 1], [1, 0, 2])]
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
