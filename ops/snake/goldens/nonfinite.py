"""Non-finite goldens for ops/snake from torch (python3 ops/snake/goldens/nonfinite.py).

Writes nonfinite.json beside this file: DAC's Snake1d, x + (alpha + 1e-9).reciprocal() * sin(alpha * x) ** 2,
and BigVGAN's SnakeBeta, x + 1 / (beta + 1e-9) * sin(x * alpha) ** 2, per channel over [N, C, L], on the
CPU in float64 on float32 inputs (the reference's arithmetic), rounded to float32, with NaN, +inf and
-inf in x (sin of an infinity is NaN), in alpha and in beta (1 / inf is 0, so an infinite beta leaves
x as it is), at L 5 and 4 (quads that straddle channels, and quads within one).
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

torch.manual_seed(0)
N, C = 2, 3
cases = []
for L in (5, 4):
    for nonfinite in ("x", "alpha", "beta"):
        x = torch.randn(N, C, L)
        alpha, beta = torch.rand(C) + 0.5, torch.rand(C) + 0.5
        if nonfinite == "x":
            x = with_specials(x, (1, L + 2, N * C * L - 1))
        elif nonfinite == "alpha":
            alpha = with_specials(alpha, (0, 1, 2))
        else:
            beta = with_specials(beta, (0, 1, 2))
        xd, ad, bd = x.double(), alpha.double()[:, None], beta.double()[:, None]
        base = {"nonfinite": nonfinite, "N": N, "C": C, "L": L, "x": golden(x), "alpha": golden(alpha)}
        if nonfinite != "beta":
            cases.append({**base, "entry": "kernel", "out": golden(xd + (ad + 1e-9).reciprocal() * torch.sin(ad * xd) ** 2)})
        cases.append({**base, "entry": "beta", "beta": golden(beta),
                      "out": golden(xd + 1.0 / (bd + 0.000000001) * torch.sin(xd * ad) ** 2)})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
