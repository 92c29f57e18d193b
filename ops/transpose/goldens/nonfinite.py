"""Non-finite goldens for ops/transpose from torch (python3 ops/transpose/goldens/nonfinite.py).

Writes nonfinite.json beside this file: x.t().contiguous() of float32 x holding NaN, +inf and -inf, on
the CPU: a copy, so every value keeps its place and its bits. Non-finite floats are written as
Python's str() ("nan", "inf", "-inf"): JSON has no NaN.
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

x = with_specials(torch.arange(35.0).reshape(5, 7), (3, 17, 34))
cases = [{"rows": 5, "cols": 7, "x": golden(x), "out": golden(x.t().contiguous())}]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
