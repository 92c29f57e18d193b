"""Goldens for ops/layernorm from torch (run on the GPU machine: python3 ops/layernorm/goldens/gen.py).

Writes layernorm.json beside this file. Inputs are float32, drawn with a fixed seed (the longer rows
as small integers or a grid of eighths, so they print short). Each output is
torch.nn.functional.layer_norm(x, (D,), weight, bias, eps) computed in float64 on the float32 inputs
and rounded to float32 once, which is the definition the reference implements. Awkward sizes: a
single element, weight only, bias only, neither, rows not a multiple of 256, a 4099-long row (output
kept at every 16th element, to keep the file small), a row of 1000 + small noise, a constant row,
and rows whose variance is small next to eps.

"modulated" holds adaLN cases: x [B, T, D] (B items of T rows, as a batch of CFG passes), weight and
bias each optional (Anima's and Z-Image's LayerNorms have neither, eps 1e-6), scale [B, D] and an
optional shift [B, D]; out = layer_norm(x) * (1 + scale[:, None]) + shift[:, None].
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def case(label, x, weight, bias, eps, out_stride=1):
    rows, cols = x.shape
    out = F.layer_norm(x.double(), (cols,), None if weight is None else weight.double(),
                       None if bias is None else bias.double(), eps)
    return {"label": label, "rows": rows, "cols": cols, "eps": eps, "x": f32_json(x),
            "weight": None if weight is None else f32_json(weight),
            "bias": None if bias is None else f32_json(bias),
            "out": f32_json(out.float().flatten()[::out_stride]), "out_stride": out_stride}


torch.manual_seed(0)
constant_row = torch.randn(2, 6)
constant_row[0] = 3.5
cases = [
    case("N=1 D=1", torch.randn(1, 1), torch.randn(1), torch.randn(1), 1e-5),
    case("N=3 D=7 weight and bias", torch.randn(3, 7), torch.randn(7), torch.randn(7), 1e-5),
    case("N=4 D=33 weight only", 3 * torch.randn(4, 33), torch.randn(33), None, 1e-5),
    case("N=2 D=257 bias only", torch.randint(-8, 9, (2, 257)).float(), None, torch.randint(-4, 5, (257,)).float(),
         1e-5),
    case("N=1 D=4099 neither", torch.randint(-8, 9, (1, 4099)).float(), None, None, 1e-5, out_stride=16),
    case("D=513 row of 1000 + noise", 1000 + torch.randint(-8, 9, (1, 513)).float() / 8, None, None, 1e-5),
    case("constant row", constant_row, torch.randn(6), torch.randn(6), 1e-5),
    case("variance small next to eps", 1e-3 * torch.randn(3, 5), None, None, 1e-5),
    case("D=2, eps=0.1", torch.tensor([[1.0, 3.0], [-2.0, 0.5]]), None, None, 0.1),
]


def modulated(label, x, weight, bias, scale, shift, eps):
    """adaLN: x [B, T, D] is B items of T rows; scale and shift [B, D] broadcast over each item's rows."""
    B, T, D = x.shape
    out = F.layer_norm(x.double(), (D,), None if weight is None else weight.double(),
                       None if bias is None else bias.double(), eps)
    out = out * (1 + scale.double()[:, None, :])
    if shift is not None:
        out = out + shift.double()[:, None, :]
    return {"label": label, "B": B, "T": T, "D": D, "eps": eps, "x": f32_json(x),
            "weight": None if weight is None else f32_json(weight),
            "bias": None if bias is None else f32_json(bias), "scale": f32_json(scale),
            "shift": None if shift is None else f32_json(shift), "out": f32_json(out.float())}


torch.manual_seed(1)
modulated_cases = [
    modulated("B=2 T=3 D=8, no affine, scale and shift, eps 1e-6 (Anima)", torch.randn(2, 3, 8), None, None,
              0.5 * torch.randn(2, 8), torch.randn(2, 8), 1e-6),
    modulated("B=2 T=2 D=5, no affine, scale only, eps 1e-6 (Z-Image final layer)", torch.randn(2, 2, 5), None, None,
              0.5 * torch.randn(2, 5), None, 1e-6),
    modulated("B=3 T=2 D=6, weight and bias, scale and shift", torch.randn(3, 2, 6), torch.randn(6), torch.randn(6),
              torch.randn(3, 6), torch.randn(3, 6), 1e-5),
]

out = pathlib.Path(__file__).with_name("layernorm.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases, "modulated": modulated_cases},
                          allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} + {len(modulated_cases)} cases, torch {torch.__version__})")
