"""Goldens for ops/conv from torch (run on the GPU machine: python3 ops/conv/goldens/gen.py).

Writes conv.json beside this file. Inputs are float32 with a fixed seed; each output is
torch.nn.functional.conv1d / conv2d / conv3d(x, weight, bias, stride, padding, dilation, groups)
computed in float64 on the float32 inputs and rounded to float32 once, which is the definition the
reference implements. Spatial arguments are passed to torch exactly as recorded (a number or a tuple
in torch's order). Awkward sizes: odd lengths, groups and depthwise, dilation > 1, stride > 1 with
padding, an even kernel, 1-element spatial dimensions, a tuple per axis with every entry different
(so that any other axis order gives a different result), more than 128 output channels, and a 1 x 1
convolution.
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


FUNCTIONS = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
AXES = {1: ["L"], 2: ["H", "W"], 3: ["D", "H", "W"]}


def case(label, N, Cin, Cout, spatial, kernel, stride=1, padding=0, dilation=1, groups=1, bias=True):
    rank = len(spatial)
    ks = [kernel] * rank if isinstance(kernel, int) else list(kernel)
    x = torch.randn(N, Cin, *spatial)
    w = torch.randn(Cout, Cin // groups, *ks)
    b = torch.randn(Cout) if bias else None
    out = FUNCTIONS[rank](x.double(), w.double(), None if b is None else b.double(), stride, padding, dilation, groups)
    record = {"label": label, "rank": rank, "N": N, "Cin": Cin, "Cout": Cout, "kernelSize": kernel,
              "stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
              "x": f32_json(x), "weight": f32_json(w), "bias": None if b is None else f32_json(b),
              "out_shape": list(out.shape), "out": f32_json(out.float())}
    record.update(dict(zip(AXES[rank], spatial)))
    return record


torch.manual_seed(0)
cases = [
    case("1d N=2 Cin=3 Cout=4 L=11 k3 pad 1", 2, 3, 4, [11], 3, padding=1),
    case("1d L=17 k4 stride 3 pad 2 dilation 2 groups 3", 1, 6, 9, [17], 4, stride=3, padding=2, dilation=2,
         groups=3),
    case("1d depthwise C=5 L=9 k3 pad 1", 2, 5, 5, [9], 3, padding=1, groups=5),
    case("1d L=1 k3 pad 1 no bias", 1, 2, 3, [1], 3, padding=1, bias=False),
    case("1d even kernel k2 L=8", 1, 3, 2, [8], 2),
    case("2d k[3,2] stride[2,1] pad[1,0] dilation[1,2] groups 2", 2, 4, 6, [7, 9], [3, 2], stride=[2, 1],
         padding=[1, 0], dilation=[1, 2], groups=2),
    case("2d 1x1 no bias", 1, 5, 3, [4, 6], 1, bias=False),
    case("2d H=1 k[1,3]", 1, 3, 2, [1, 8], [1, 3], padding=[0, 1]),
    case("2d depthwise C=4 5x5 k3 stride 2 pad 1", 1, 4, 4, [5, 5], 3, stride=2, padding=1, groups=4),
    case("2d Cout=130 Cin=1 2x3 k[1,2]", 1, 1, 130, [2, 3], [1, 2]),
    case("3d D=3 H=5 W=4 k[2,3,1] stride[2,1,1] pad[1,0,2]", 1, 2, 3, [3, 5, 4], [2, 3, 1], stride=[2, 1, 1],
         padding=[1, 0, 2]),
    case("3d D=5 H=3 W=3 k2 dilation[2,1,1] groups 2", 2, 4, 4, [5, 3, 3], 2, dilation=[2, 1, 1], groups=2),
    case("3d D=1 H=4 W=4 k[1,3,3] pad[0,1,1]", 1, 3, 2, [1, 4, 4], [1, 3, 3], padding=[0, 1, 1]),
]
out = pathlib.Path(__file__).with_name("conv.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, allow_nan=False,
                          separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__}, {out.stat().st_size} bytes)")
