"""Non-finite goldens for ops/channel_norm from torch (python3 ops/channel_norm/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.normalize(x, dim=1, eps=eps) * C ** 0.5 * weight + bias
(weight and bias per channel), optionally then F.silu, on the CPU in float64 on float32 inputs (the
reference's arithmetic), rounded to float32. x holds a NaN, a +inf and a -inf at three positions (a
NaN makes its position's norm NaN and so the whole position NaN, clamp_min keeping the NaN; an infinity
makes the norm inf, so the other channels there give 0 and the infinity NaN); the weight and the bias
hold NaN, +inf and -inf in their channels. At L 4 (aligned quads) and 5. Non-finite floats are written as Python's str().
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

torch.manual_seed(0)
N, C, eps = 2, 3, 1e-12
cases = []
for L, nonfinite in ((L, nonfinite) for L in (4, 5) for nonfinite in ("x", "weight", "bias")):
    x = torch.randn(N, C, L)
    weight, bias = torch.randn(C), torch.randn(C)
    if nonfinite == "x":
        x = with_specials(x, (1, L + 2, C * L + 3))  # positions (0, 1), (0, 2), (1, 3)
    elif nonfinite == "weight":
        weight = with_specials(weight, (0, 1, 2))
    else:
        bias = with_specials(bias, (0, 1, 2))
    for activation in (None, "silu"):
        y = F.normalize(x.double(), dim=1, eps=eps) * C ** 0.5 * weight.double()[:, None] + bias.double()[:, None]
        if activation:
            y = F.silu(y)
        cases.append({"nonfinite": nonfinite, "N": N, "C": C, "L": L, "eps": eps,
                      **({"activation": activation} if activation else {}), "x": golden(x),
                      "weight": golden(weight), "bias": golden(bias), "out": golden(y)})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
