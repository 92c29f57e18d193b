"""Goldens for ops/axpy from torch (run on the GPU machine: python3 ops/axpy/goldens/gen.py).

Writes axpy.json beside this file. Inputs are float32 drawn with a fixed seed (sizes 1, 7, 257, and
a case where y nearly cancels a * x); each case's `out` is y + a * x computed by torch in float64
(which holds a * x exactly) and then rounded to float32. That is the once-rounded result unless the
float64 sum lands exactly on a float32 midpoint, which random inputs all but never do.

meta.rounds_once records what torch.add(y, x, alpha=a) itself returns in float32 at two inputs
where rounding once and rounding twice disagree. Each is repeated 64 times so that torch's
vectorised loop computes every element rather than its scalar loop for a short remainder.
"""
import json, pathlib, numpy, torch


def f32list(t):
    """The values rounded to float32, each written in the shortest form that reads back to that float32."""
    return [float(str(numpy.float32(v))) for v in t.to(torch.float32).flatten().tolist()]


def once_rounded(a, x, y):
    return y.double() + torch.tensor(a, dtype=torch.float64) * x.double()


torch.manual_seed(0)
cases = []
for n in (1, 7, 257, 64):
    a = torch.randn((), dtype=torch.float32).item()  # a float32 value, held as a Python float
    x = torch.randn(n)
    if n == 64:  # y nearly cancels a * x, so the rounding of the product decides the answer
        y = -(torch.tensor(a, dtype=torch.float32) * x) * (1 + 1e-6 * torch.randn(n))
    else:
        y = torch.randn(n)
    cases.append({"alpha": a, "x": f32list(x), "y": f32list(y), "out": f32list(once_rounded(a, x, y))})


def f32(v):
    return torch.tensor(v, dtype=torch.float32).item()


rounds_once = []
# f32(0.1) * 3 - f32(0.3): -2^-27 rounded once, exactly 0 when the product is rounded first.
# 11865889 * 2^-24 * 11860678 * 2^-47 + 1: 1 + 2^-23 rounded once, 1 when the sum is first
# rounded to float64 (it lands on the float32 midpoint 1 + 2^-24).
for a, x, y in ((f32(0.1), 3.0, -f32(0.3)), (11865889 * 2.0**-24, 11860678 * 2.0**-47, 1.0)):
    X = torch.full((64,), x, dtype=torch.float32)
    Y = torch.full((64,), y, dtype=torch.float32)
    rounds_once.append({"alpha": a, "x": f32list(X), "y": f32list(Y), "out": f32list(torch.add(Y, X, alpha=a))})

meta = {"torch": torch.__version__, "rounds_once": rounds_once}
out = pathlib.Path(__file__).with_name("axpy.json")
out.write_text(json.dumps({"meta": meta, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
