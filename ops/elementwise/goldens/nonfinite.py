"""Non-finite goldens for ops/elementwise from torch (python3 ops/elementwise/goldens/nonfinite.py).

Writes nonfinite.json beside this file: torch.add and torch.mul in float32 on the CPU, each operand
holding NaN, +inf and -inf (each against a finite value, against each other and against 0), for both
entry points (`rows`: b broadcast along the last axis, so each of b's non-finite values meets every row).
Non-finite floats are written as Python's str() ("nan", "inf", "-inf"): JSON has no NaN.
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

a = torch.tensor([nan, inf, -inf, 1.5, 2.0, -3.0, inf, inf, -inf, 0.0, nan, 4.0])
b = torch.tensor([1.0, 2.0, -1.0, nan, inf, -inf, -inf, 0.0, 0.0, inf, inf, -0.5])
ra = torch.tensor([[nan, 1.0, inf, -inf], [2.0, -inf, 0.0, 3.0], [0.0, 1.0, -2.0, 5.0]])
rb = torch.tensor([inf, nan, -inf, 0.0])
sa = torch.tensor([[1.0, nan, inf], [-inf, 2.0, 0.0]])  # cols % 4 != 0: rows' other path
sb = torch.tensor([-inf, inf, nan])
cases = []
for op, fn in (("add", torch.add), ("multiply", torch.mul)):
    cases.append({"entry": "kernel", "op": op, "a": golden(a), "b": golden(b), "out": golden(fn(a, b))})
    cases.append({"entry": "rows", "op": op, "rows": 3, "cols": 4, "a": golden(ra), "b": golden(rb),
                  "out": golden(fn(ra, rb))})
    cases.append({"entry": "rows", "op": op, "rows": 2, "cols": 3, "a": golden(sa), "b": golden(sb),
                  "out": golden(fn(sa, sb))})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
