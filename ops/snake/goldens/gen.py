"""Goldens for ops/snake from torch (run on the GPU machine: python3 ops/snake/goldens/gen.py).

Writes snake.json beside this file. The two activations are written exactly as upstream writes them:
DAC's Snake1d, `x + (alpha + 1e-9).reciprocal() * torch.sin(alpha * x).pow(2)`, and BigVGAN's
SnakeBeta, `x + 1.0 / (beta + 0.000000001) * pow(sin(x * alpha), 2)` (with alpha_logscale=False, i.e.
the stored values used as they are), each evaluated in float64 on float32 inputs and rounded to
float32 once, which is the definition the reference implements. Parameters are per channel over
[N, C, L] (upstream's alpha has shape [1, C, 1]). Awkward sizes: L = 1, odd L, C = 3; a beta = 0
channel (finite: 1e9 * sin^2), a beta of 1e-6 where the epsilon's place shows (inside the reciprocal
gives 1 / 1.001e-6, outside gives 1 / 1e-6 + 1e-9), and a negative alpha.
"""
import json, pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def snake1d(x, alpha):
    """DAC's snake (dac/nn/layers.py), alpha shaped [1, C, 1]."""
    return x + (alpha + 1e-9).reciprocal() * torch.sin(alpha * x).pow(2)


def snake_beta(x, alpha, beta):
    """BigVGAN's SnakeBeta.forward with alpha_logscale=False."""
    return x + 1.0 / (beta + 0.000000001) * pow(torch.sin(x * alpha), 2)


def case(label, x, alpha, beta):
    N, C, L = x.shape
    a = alpha.double().view(1, C, 1)
    b = beta.double().view(1, C, 1)
    return {"label": label, "N": N, "C": C, "L": L, "x": f32_json(x), "alpha": f32_json(alpha),
            "beta": f32_json(beta),
            "snake": f32_json(snake1d(x.double(), a).float()),
            "snake_beta": f32_json(snake_beta(x.double(), a, b).float())}


torch.manual_seed(0)
cases = [
    case("N=1 C=1 L=1", torch.randn(1, 1, 1), torch.tensor([0.7]), torch.tensor([1.3])),
    case("N=2 C=3 L=7, negative alpha", 2 * torch.randn(2, 3, 7), torch.tensor([0.5, -1.5, 3.0]),
         torch.tensor([0.25, 2.0, 1.0])),
    case("N=1 C=3 L=13, beta 0 and 1e-6", torch.randn(1, 3, 13), torch.tensor([1.0, 0.8, 1.2]),
         torch.tensor([0.0, 1e-6, 0.9])),
    case("N=1 C=2 L=515", torch.randn(1, 2, 515), torch.rand(2) * 2 + 0.1, torch.rand(2) * 2 + 0.1),
]

out = pathlib.Path(__file__).with_name("snake.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, allow_nan=False,
                          separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
