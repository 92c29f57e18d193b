"""Non-finite goldens for ops/reduce from torch (python3 ops/reduce/goldens/nonfinite.py).

Writes nonfinite.json beside this file: torch.sum / amax / amin / mean of a [4, 5] float32 tensor
along each dim, on the CPU. Row 0 holds a NaN, row 1 a +inf, row 2 a -inf, row 3 both infinities, so
every reduction meets each alone and inf + -inf (NaN for sum and mean; amax and amin keep the
infinities and propagate NaN). Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

x = torch.tensor([[1.0, nan, 3.0, -2.0, 0.5], [inf, 2.0, -1.0, 0.0, 4.0], [1.5, -3.0, -inf, 2.0, 1.0],
                  [-inf, 1.0, 2.0, inf, -0.5]])
ops = {"sum": torch.sum, "max": torch.amax, "min": torch.amin, "mean": torch.mean}
cases = [{"op": op, "shape": list(x.shape), "dim": dim, "x": golden(x), "out": golden(fn(x, dim))}
         for op, fn in ops.items() for dim in (0, 1)]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
