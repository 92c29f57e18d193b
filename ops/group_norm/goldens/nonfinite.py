"""Non-finite goldens for ops/group_norm from torch (python3 ops/group_norm/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.group_norm(x, groups, weight, bias, eps), optionally then
F.silu, on the CPU in float64 on float32 inputs (the reference's arithmetic), rounded to float32. x holds
a NaN, a +inf and a -inf in three of its (sample, group) rows (each makes its whole row NaN: the mean or
the variance is NaN) and leaves a fourth finite; the weight and the bias hold NaN, +inf and -inf in
their channels (each acting on its channel alone). `out` is F.group_norm's; `out_composite` is the same
normalisation written with torch's elementwise ops, (x - mean) / sqrt(var + eps) * weight + bias. They
differ only where the weight is infinite: F.group_norm's kernel forms x * (rstd * weight) + (bias -
mean * rstd * weight), which is inf - inf, NaN, wherever x and the mean have the same sign.
Non-finite floats are written as Python's str().
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

torch.manual_seed(0)
N, C, L, groups, eps = 2, 4, 5, 2, 1e-5
cases = []
for nonfinite in ("x", "weight", "bias"):
    x = torch.randn(N, C, L)
    weight, bias = torch.randn(C), torch.randn(C)
    if nonfinite == "x":
        x = with_specials(x, (3, 2 * L + 1, C * L + 4))  # (0, group 0), (0, group 1), (1, group 0)
    elif nonfinite == "weight":
        weight = with_specials(weight, (0, 1, 2))
    else:
        bias = with_specials(bias, (1, 2, 3))
    xd = x.double().view(N, groups, -1)
    mean, var = xd.mean(-1, keepdim=True), xd.var(-1, unbiased=False, keepdim=True)
    composite = ((xd - mean) / torch.sqrt(var + eps)).view(N, C, L) * weight.double()[:, None] + bias.double()[:, None]
    for activation in (None, "silu"):
        y = F.group_norm(x.double(), groups, weight.double(), bias.double(), eps)
        yc = composite
        if activation:
            y, yc = F.silu(y), F.silu(yc)
        cases.append({"nonfinite": nonfinite, "N": N, "C": C, "L": L, "groups": groups, "eps": eps,
                      **({"activation": activation} if activation else {}), "x": golden(x),
                      "weight": golden(weight), "bias": golden(bias), "out": golden(y),
                      "out_composite": golden(yc)})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
