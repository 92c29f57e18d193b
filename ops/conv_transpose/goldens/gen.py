"""Goldens for ops/conv_transpose from torch (run on the GPU machine:
python3 ops/conv_transpose/goldens/gen.py).

Writes conv_transpose.json beside this file. Inputs are float32 with a fixed seed; each output is
torch.nn.functional.conv_transpose1d(x, weight, bias, stride, padding, output_padding, groups,
dilation) computed in float64 on the float32 inputs and rounded to float32 once, which is the
definition the reference implements. Awkward sizes: odd lengths, L = 1, groups, dilation > 1, a
stride larger than the kernel (phases no tap reaches), padding that crops, output_padding (with
stride and, once, with dilation larger than the stride), more than 128 output channels, and a
vocoder-like stage (K = 2 * stride, padding = stride / 2).
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def case(label, N, Cin, Cout, L, K, stride=1, padding=0, output_padding=0, dilation=1, groups=1, bias=True):
    x = torch.randn(N, Cin, L)
    w = torch.randn(Cin, Cout // groups, K)
    b = torch.randn(Cout) if bias else None
    out = F.conv_transpose1d(x.double(), w.double(), None if b is None else b.double(), stride, padding,
                             output_padding, groups, dilation)
    return {"label": label, "N": N, "Cin": Cin, "Cout": Cout, "L": L, "kernelSize": K, "stride": stride,
            "padding": padding, "outputPadding": output_padding, "dilation": dilation, "groups": groups,
            "x": f32_json(x), "weight": f32_json(w), "bias": None if b is None else f32_json(b),
            "out_shape": list(out.shape), "out": f32_json(out.float())}


torch.manual_seed(0)
cases = [
    case("stride 2 K3 L5", 1, 2, 3, 5, 3, stride=2),
    case("stride 3 K5 pad 2 output_padding 1 groups 2", 2, 4, 6, 7, 5, stride=3, padding=2, output_padding=1,
         groups=2),
    case("vocoder-like stride 4 K8 pad 2", 1, 3, 2, 6, 8, stride=4, padding=2),
    case("dilation 3 stride 2 output_padding 2 (allowed by dilation)", 1, 2, 2, 4, 3, stride=2, output_padding=2,
         dilation=3),
    case("stride 5 > K2, L=1, depthwise", 1, 3, 3, 1, 2, stride=5, groups=3, bias=False),
    case("Cout 130 K4 stride 2 pad 1", 1, 1, 130, 3, 4, stride=2, padding=1),
    case("stride 1 K3 pad 1 (a plain transposed correlation)", 2, 3, 2, 6, 3, padding=1),
]
out = pathlib.Path(__file__).with_name("conv_transpose.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, allow_nan=False,
                          separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__}, {out.stat().st_size} bytes)")
