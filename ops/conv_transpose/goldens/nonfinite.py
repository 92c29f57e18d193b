"""Non-finite goldens for ops/conv_transpose from torch (python3 ops/conv_transpose/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.conv_transpose1d on the CPU in float64 on float32 inputs (the
reference's arithmetic), rounded to float32, with NaN, +inf and -inf in x (each reaches the outputs
its taps land on), in the weight (a tap reaches the outputs it lands on from every input position,
and an infinite tap times a zero x is NaN; outputs no tap reaches, between strides, stay bias) and in
the bias; with stride, padding (cropping), outputPadding, dilation and groups.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

torch.manual_seed(0)
cases = []


def case(N, Cin, Cout, L, K, nonfinite, stride=1, padding=0, output_padding=0, dilation=1, groups=1):
    x = torch.randn(N, Cin, L)
    x.view(-1)[3] = 0.0  # meets the weight's infinities
    weight = torch.randn(Cin, Cout // groups, K)
    bias = torch.randn(Cout)
    if nonfinite == "x":
        x = with_specials(x, (1, x.numel() // 2, x.numel() - 1))
    elif nonfinite == "weight":
        per = weight.numel() // Cin
        weight = with_specials(weight, (0, per + 1, weight.numel() - 1))
    else:
        bias = with_specials(bias, (0, 1, 2))
    out = F.conv_transpose1d(x.double(), weight.double(), bias.double(), stride=stride, padding=padding,
                             output_padding=output_padding, groups=groups, dilation=dilation)
    cases.append({"nonfinite": nonfinite, "N": N, "Cin": Cin, "Cout": Cout, "L": L, "kernelSize": K, "stride": stride,
                  "padding": padding, "outputPadding": output_padding, "dilation": dilation, "groups": groups,
                  "x": golden(x), "weight": golden(weight), "bias": golden(bias), "out": golden(out)})


for nonfinite in ("x", "weight", "bias"):
    case(2, 2, 3, 7, 3, nonfinite)
    case(1, 4, 4, 6, 4, nonfinite, stride=2, padding=1, output_padding=1, groups=2)
    case(1, 3, 3, 5, 1, nonfinite, stride=3)  # outputs between the strides get no tap: bias alone
    case(1, 3, 3, 6, 3, nonfinite, stride=2, dilation=2, padding=2)
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
