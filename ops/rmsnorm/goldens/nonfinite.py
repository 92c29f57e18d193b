"""Non-finite goldens for ops/rmsnorm from torch (python3 ops/rmsnorm/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.rms_norm(x, (cols,), eps) * weight[n % G], then (modulated)
* (1 + scale[item]) + shift[item], in float32 on the CPU, at cols 4 (aligned rows) and 3 (rows off
vec4 boundaries). Rows 0-2 of x hold a NaN, a +inf and a -inf (an infinite row's rms is inf: its
finite values become 0, the infinity NaN); rows 3-5 are finite, so the weight's and the modulation's
NaN, +inf and -inf (each in its own column) show there. Non-finite floats are written as Python's
str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write


def column_specials(values, rows, cols):
    """rows x cols of finite `values` with NaN at [0, 0], +inf at [1, 1] and -inf at [0, 2]: one column each."""
    t = torch.tensor(values, dtype=torch.float32).reshape(rows, cols).clone()
    t[0, 0], t[1, 1], t[0, 2] = nan, inf, -inf
    return t


torch.manual_seed(0)
rows, eps, groups, rows_per_item = 6, 1e-6, 2, 3
cases = []
for cols in (4, 3):
    x = torch.randn(rows, cols)
    x[0, 1], x[1, 2], x[2, 0] = nan, inf, -inf
    weight = column_specials(torch.randn(groups * cols).tolist(), groups, cols)
    scale = column_specials(torch.randn(2 * cols).tolist(), 2, cols)
    shift = column_specials(torch.randn(2 * cols).tolist(), 2, cols).flip(0)
    y = F.rms_norm(x, (cols,), eps=eps)
    weighted = (y.reshape(rows // groups, groups, cols) * weight).reshape(rows, cols)
    modulated = (weighted.reshape(2, rows_per_item, cols) * (1 + scale[:, None]) + shift[:, None]).reshape(rows, cols)
    base = {"rows": rows, "cols": cols, "eps": eps, "x": golden(x)}
    cases.append({**base, "out": golden(y)})
    cases.append({**base, "weight": golden(weight), "out": golden(weighted)})
    cases.append({**base, "weight": golden(weight), "rowsPerItem": rows_per_item, "scale": golden(scale),
                  "shift": golden(shift), "out": golden(modulated)})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
