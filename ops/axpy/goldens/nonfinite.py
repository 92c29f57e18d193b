"""Non-finite goldens for ops/axpy from torch (python3 ops/axpy/goldens/nonfinite.py).

Writes nonfinite.json beside this file: torch.add(y, x, alpha=alpha) in float32 on the CPU with NaN,
+inf and -inf in x and in y (each against finite values, against each other and against 0), at
alpha 2, -0.5 and 0 (0 * inf is NaN: torch does not skip the product), and a finite product that
overflows to inf. alpha itself must be finite (refused otherwise, as every float scalar here).
Non-finite floats are written as Python's str() ("nan", "inf", "-inf"): JSON has no NaN.
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

x = torch.tensor([nan, inf, -inf, 1.0, 2.0, -3.0, inf, inf, -inf, 0.0, nan, 3e38, 4.0])
y = torch.tensor([1.0, 2.0, -1.0, nan, inf, -inf, -inf, inf, inf, inf, inf, 3e38, 0.5])
cases = [{"alpha": alpha, "x": golden(x), "y": golden(y), "out": golden(torch.add(y, x, alpha=alpha))}
         for alpha in (2.0, -0.5, 0.0)]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
