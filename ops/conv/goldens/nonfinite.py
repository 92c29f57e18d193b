"""Non-finite goldens for ops/conv from torch (python3 ops/conv/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.conv1d / conv2d / conv3d on the CPU in float64 on float32
inputs (the reference's arithmetic), rounded to float32, with NaN, +inf and -inf in x (each reaches
only the outputs whose window covers it), in the weight (torch multiplies the zero padding too, so an
infinite tap gives NaN, 0 * inf, wherever its window reaches the padding, and a NaN tap makes its
output channel NaN throughout) and in the bias; with padding, stride, dilation and groups.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

torch.manual_seed(0)
FNS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
SIZES = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}
cases = []


def case(rank, spatial, N, Cin, Cout, k, nonfinite, stride=1, padding=1, dilation=1, groups=1):
    x = torch.randn(N, Cin, *spatial)
    weight = torch.randn(Cout, Cin // groups, *([k] * rank))
    bias = torch.randn(Cout)
    if nonfinite == "x":  # three channels' worth of specials, away from each other
        x = with_specials(x, (x.numel() // 7, x.numel() // 2 + 1, x.numel() - 2))
    elif nonfinite == "weight":  # one tap of each of three output channels
        per = weight.numel() // Cout
        weight = with_specials(weight, (0, per + per // 2, 2 * per + per - 1))
    else:
        bias = with_specials(bias, (0, 1, 2))
    out = FNS[rank](x.double(), weight.double(), bias.double(), stride=stride, padding=padding, dilation=dilation,
                    groups=groups)
    cases.append({"rank": rank, "nonfinite": nonfinite, "N": N, "Cin": Cin, "Cout": Cout,
                  **dict(zip(SIZES[rank], spatial)), "kernelSize": k, "stride": stride, "padding": padding,
                  "dilation": dilation, "groups": groups, "x": golden(x), "weight": golden(weight),
                  "bias": golden(bias), "out": golden(out)})


for nonfinite in ("x", "weight", "bias"):
    case(1, (11,), 2, 2, 4, 3, nonfinite)
    case(2, (5, 6), 1, 2, 4, 3, nonfinite, groups=2)
    case(2, (7, 7), 1, 3, 3, 3, nonfinite, stride=2, padding=2, dilation=2)
    case(3, (3, 4, 4), 1, 1, 3, 3, nonfinite)
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
