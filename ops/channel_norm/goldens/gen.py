"""Goldens for ops/channel_norm from torch (python3 ops/channel_norm/goldens/gen.py; CPU is enough).

Writes channel_norm.json beside this file. Inputs are float32 with a fixed seed; each output is
torch.nn.functional.normalize(x, dim=1, eps=eps) * C ** 0.5 * weight + bias (the Wan 2.1 VAE's
RMS_norm with channel_first=True; its gamma is the weight), then F.silu where the case says so,
computed in float64 on the float32 inputs and rounded to float32 once, which is the definition the
reference implements. Cases: a [N, C, H, W] image viewed as [N, C, H * W] (meta records that the two
agree), C = 1, L = 1, odd L, weight and bias each present or absent, SiLU after the norm (the VAE's
residual blocks), an all-zero position, positions whose norm is below eps (where clamping the norm,
adding eps to it, or adding eps to the mean square inside a root give three different answers), and
an eps large enough to matter.
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def definition(x, weight=None, bias=None, eps=1e-12, activation=None):
    C = x.shape[1]
    shape = (C,) + (1,) * (x.dim() - 2)
    out = F.normalize(x.double(), dim=1, eps=eps) * C ** 0.5
    if weight is not None:
        out = out * weight.double().reshape(shape)
    if bias is not None:
        out = out + bias.double().reshape(shape)
    if activation == "silu":
        out = F.silu(out)
    return out.float()


def case(label, x, weight=None, bias=None, eps=1e-12, activation=None):
    N, C, L = x.shape
    return {"label": label, "N": N, "C": C, "L": L, "eps": eps, "activation": activation, "x": f32_json(x),
            "weight": None if weight is None else f32_json(weight),
            "bias": None if bias is None else f32_json(bias),
            "out": f32_json(definition(x, weight, bias, eps, activation))}


torch.manual_seed(0)
image = torch.randn(2, 6, 3, 5)
gamma, beta = 1 + 0.1 * torch.randn(6), torch.randn(6)
tiny = torch.randn(1, 4, 5)
tiny[0, :, 1] = 0          # an all-zero position
tiny[0, :, 2] *= 1e-13     # norms below 1e-12
tiny[0, :, 3] = 2.5e-13    # norm 5e-13: clamped to 1e-12
cases = [
    case("N=2 C=6 L=15 (a 3 x 5 image), weight and bias", image.reshape(2, 6, 15), gamma, beta),
    case("N=1 C=8 L=16, weight, silu", 3 * torch.randn(1, 8, 16), 1 + 0.1 * torch.randn(8), activation="silu"),
    case("N=2 C=5 L=7, no affine", torch.randn(2, 5, 7)),
    case("N=1 C=1 L=9, weight", torch.randn(1, 1, 9), torch.randn(1)),
    case("N=3 C=4 L=1, bias, silu", torch.randn(3, 4, 1), None, torch.randn(4), activation="silu"),
    case("N=1 C=4 L=5, a zero position and norms below eps", tiny, 1 + 0.1 * torch.randn(4)),
    case("N=1 C=3 L=6, eps=0.5 on small values", 0.2 * torch.randn(1, 3, 6), torch.randn(3), None, 0.5),
    case("N=1 C=96 L=12, weight and bias, silu", torch.randn(1, 96, 12), 1 + 0.1 * torch.randn(96),
         0.1 * torch.randn(96), activation="silu"),
]
meta = {"torch": torch.__version__,
        "nchw_equals_flattened": bool(torch.equal(definition(image, gamma, beta).reshape(2, 6, 15).flatten(),
                                                   torch.tensor([float(v) for v in cases[0]["out"]]).float()))}
out = pathlib.Path(__file__).with_name("channel_norm.json")
out.write_text(json.dumps({"meta": meta, "cases": cases}, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__}, meta {meta})")
