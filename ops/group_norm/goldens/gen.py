"""Goldens for ops/group_norm from torch (run on the GPU machine: python3 ops/group_norm/goldens/gen.py).

Writes group_norm.json beside this file. Inputs are float32 with a fixed seed; each output is
torch.nn.functional.group_norm(x, groups, weight, bias, eps) computed in float64 on the float32
inputs and rounded to float32 once, which is the definition the reference implements. Awkward sizes:
odd L, one spatial element (L = 1), groups = 1 (the whole sample) and groups = C (instance norm),
weight and bias each present or absent, an eps large enough to matter, and a group of values around
100 +- 1, where a one-pass E[x^2] - E[x]^2 in float32 loses the variance; and F.silu after the
normalisation and the affine (the VAE decoders' GroupNorm -> SiLU), where "activation" says so. The sample axis is kept
as torch sees it: x is [N, C, L] (a [N, C, H, W] input flattens to this; the statistics are the same).
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def case(label, x, groups, weight=None, bias=None, eps=1e-5, activation=None):
    N, C, L = x.shape
    out = F.group_norm(x.double(), groups, None if weight is None else weight.double(),
                       None if bias is None else bias.double(), eps)
    if activation == "silu":
        out = F.silu(out)
    return {"label": label, "N": N, "C": C, "L": L, "groups": groups, "eps": eps, "activation": activation,
            "x": f32_json(x),
            "weight": None if weight is None else f32_json(weight),
            "bias": None if bias is None else f32_json(bias), "out": f32_json(out.float())}


torch.manual_seed(0)
# A [N, C, H, W] input, to record that group_norm of it equals group_norm of its [N, C, H * W] view.
x4 = torch.randn(2, 6, 3, 5)
w4, b4 = torch.randn(6), torch.randn(6)
nchw = F.group_norm(x4.double(), 3, w4.double(), b4.double(), 1e-5).float()
cases = [
    case("N=2 C=6 groups=3 L=15 (a 3 x 5 image)", x4.reshape(2, 6, 15), 3, w4, b4),
    case("N=1 C=4 groups=1 L=7, no affine", torch.randn(1, 4, 7), 1),
    case("N=2 C=4 groups=4 L=9 (instance norm), weight only", 3 * torch.randn(2, 4, 9) + 1, 4, torch.randn(4)),
    case("N=3 C=6 groups=2 L=1, bias only", torch.randn(3, 6, 1), 2, None, torch.randn(6)),
    case("N=1 C=4 groups=2 L=16", torch.randn(1, 4, 16), 2, torch.randn(4), torch.randn(4)),
    case("N=1 C=2 groups=1 L=6, eps=0.5", 0.3 * torch.randn(1, 2, 6), 1, torch.randn(2), torch.randn(2), 0.5),
    case("N=1 C=4 groups=1 L=128, values 100 +- 1", 100 + (2 * torch.rand(1, 4, 128) - 1), 1, torch.randn(4),
         torch.randn(4)),
    case("N=2 C=8 groups=4 L=12, silu", torch.randn(2, 8, 12), 4, 1 + 0.1 * torch.randn(8), 0.5 * torch.randn(8),
         1e-6, "silu"),
    case("N=1 C=6 groups=2 L=7, no affine, silu", 2 * torch.randn(1, 6, 7), 2, activation="silu"),
]
meta = {"torch": torch.__version__,
        "nchw_equals_flattened": bool(torch.equal(nchw.reshape(2, 6, 15).flatten(),
                                                   torch.tensor([float(v) for v in cases[0]["out"]]).float()))}
out = pathlib.Path(__file__).with_name("group_norm.json")
out.write_text(json.dumps({"meta": meta, "cases": cases}, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__}, meta {meta})")
