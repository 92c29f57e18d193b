"""Goldens for ops/reduce from torch (run on the GPU machine: python3 ops/reduce/goldens/gen.py).

Writes reduce.json beside this file: torch.sum / amax / amin / mean(x, dim) on CPU in float32.
Inputs are not stored: x is pattern(n) reshaped, a formula reduce.test.ts repeats. Its values are
multiples of 1/64 in [-2, 2), exact in float32, and so is every partial sum of up to 4099 of them,
whatever the order. JSON has no NaN or infinities: they are written as "NaN", "Infinity", "-Infinity".
"""
import json, math, pathlib, torch

FUNCTIONS = {"sum": torch.sum, "max": torch.amax, "min": torch.amin, "mean": torch.mean}
# Lengths 1, 255, 257 and 4099 along the reduced axis; axes 0 and 1 of a non-square matrix; dim -1
# beside dim rank - 1; earlier axes of rank 3 and 4.
SHAPES = [([1], 0), ([255], 0), ([257], -1), ([3, 4099], 1), ([4099, 3], 0), ([5, 7], 0), ([5, 7], 1),
          ([2, 3, 4], -1), ([2, 3, 4], 2), ([2, 3, 4], 1), ([2, 3, 4], -3), ([3, 1, 2, 5], 3)]


def pattern(n):
    return torch.tensor([((i * 37 + 11) % 256 - 128) / 64 for i in range(n)], dtype=torch.float32)


def encode(t):
    return [v if math.isfinite(v) else "NaN" if math.isnan(v) else "Infinity" if v > 0 else "-Infinity"
            for v in t.flatten().tolist()]


def refused(fn, x, dim):
    try:
        fn(x, dim=dim)
    except (RuntimeError, IndexError):
        return True
    return False


cases = []
for shape, dim in SHAPES:
    x = pattern(math.prod(shape)).reshape(shape)
    for op, fn in FUNCTIONS.items():
        cases.append({"op": op, "shape": shape, "dim": dim, "out": encode(fn(x, dim=dim))})
# An empty reduced axis: sum and mean have answers, amax and amin refuse.
empty = torch.zeros(2, 0, 3)
for op in ("sum", "mean"):
    cases.append({"op": op, "shape": [2, 0, 3], "dim": 1, "out": encode(FUNCTIONS[op](empty, dim=1))})
nan_x = torch.tensor([[1.0, math.nan, 3.0, 2.0], [-math.inf, 2.0, 0.0, 5.0], [4.0, 1.0, math.nan, -math.inf]])
meta = {
    "torch": torch.__version__,
    "nan": {"shape": [3, 4], "dim": 1, "x": encode(nan_x),
            "max": encode(torch.amax(nan_x, dim=1)), "min": encode(torch.amin(nan_x, dim=1))},
    "empty": {"shape": [2, 0, 3], "dim": 1,
              "max_refused": refused(torch.amax, empty, 1), "min_refused": refused(torch.amin, empty, 1)},
}
out = pathlib.Path(__file__).with_name("reduce.json")
out.write_text(json.dumps({"meta": meta, "cases": cases}, allow_nan=False))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
