"""Non-finite goldens for ops/layernorm from torch (python3 ops/layernorm/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.layer_norm(x, (cols,), weight, bias, eps), then (modulated)
* (1 + scale[item]) + shift[item], in float32 on the CPU, at cols 8 (aligned rows) and 7 (rows off
vec4 boundaries). Rows 0-2 of x hold a NaN, a +inf and a -inf (any of them makes its row's mean or
variance NaN, so the whole row is NaN); rows 3-5 are finite, so the NaN, +inf and -inf of the weight
(columns 0-2), the bias (3-5) and the modulation's scale and shift (columns 0, 2, 4 and 1, 3, 5 of
an item each) show there. Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

torch.manual_seed(0)
rows, eps, rows_per_item = 6, 1e-5, 3
cases = []
for cols in (8, 7):
    x = with_specials(torch.randn(rows, cols), (1, cols + 2, 2 * cols)).reshape(rows, cols)
    weight = with_specials(torch.randn(cols), (0, 1, 2))
    bias = with_specials(torch.randn(cols), (3, 4, 5))
    scale = with_specials(torch.randn(2, cols), (0, cols + 2, 4)).reshape(2, cols)
    shift = with_specials(torch.randn(2, cols), (cols + 1, 3, cols + 5)).reshape(2, cols)
    y = F.layer_norm(x, (cols,), eps=eps)
    affine = F.layer_norm(x, (cols,), weight, bias, eps=eps)
    modulated = (affine.reshape(2, rows_per_item, cols) * (1 + scale[:, None]) + shift[:, None]).reshape(rows, cols)
    base = {"rows": rows, "cols": cols, "eps": eps, "x": golden(x)}
    cases.append({**base, "out": golden(y)})
    cases.append({**base, "weight": golden(weight), "bias": golden(bias), "out": golden(affine)})
    cases.append({**base, "weight": golden(weight), "bias": golden(bias), "rowsPerItem": rows_per_item,
                  "scale": golden(scale), "shift": golden(shift), "out": golden(modulated)})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
