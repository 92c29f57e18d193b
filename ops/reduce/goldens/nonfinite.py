"""Non-finite goldens for ops/reduce from torch (python3 ops/reduce/goldens/nonfinite.py).

Writes nonfinite.json beside this file: torch.sum / amax / amin / mean of a [4, 5] float32 tensor
along each dim, on the CPU. Row 0 holds a NaN, row 1 a +inf, row 2 a -inf, row 3 both infinities, so
every reduction meets each alone and inf + -inf (NaN for sum and mean; amax and amin keep the
infinities and propagate NaN). Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import json, math, pathlib, torch

nan, inf = float("nan"), float("inf")


def golden(t):
    return [v if math.isfinite(v) else str(v) for v in t.to(torch.float32).flatten().tolist()]


x = torch.tensor([[1.0, nan, 3.0, -2.0, 0.5], [inf, 2.0, -1.0, 0.0, 4.0], [1.5, -3.0, -inf, 2.0, 1.0],
                  [-inf, 1.0, 2.0, inf, -0.5]])
ops = {"sum": torch.sum, "max": torch.amax, "min": torch.amin, "mean": torch.mean}
cases = [{"op": op, "shape": list(x.shape), "dim": dim, "x": golden(x), "out": golden(fn(x, dim))}
         for op, fn in ops.items() for dim in (0, 1)]
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
