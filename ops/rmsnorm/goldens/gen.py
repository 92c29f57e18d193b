"""Goldens for ops/rmsnorm from torch (run on the GPU machine: python3 ops/rmsnorm/goldens/gen.py).

Writes rmsnorm.json beside this file. Inputs are float32, drawn with a fixed seed (the longer rows
as small integers, so they print short). Each output is torch.nn.functional.rms_norm(x, (D,), eps=eps)
times weight row n % G, computed in float64 on the float32 inputs and rounded to float32 once, which
is the definition the reference implements. Awkward sizes: a single element, a shared gamma (G = 1),
N not a multiple of G, rows not a multiple of 256, a 4099-long row (output kept at every 16th
element, to keep the file small), an all-zero row, and an eps large enough to matter.

"modulated" holds adaLN cases: x [B, T, D] (B items of T rows, as a batch of CFG passes), an optional
weight [D], scale [B, D] and an optional shift [B, D]; out = rms_norm(x, (D,), eps) * weight *
(1 + scale[:, None]) + shift[:, None], torch broadcasting each item's modulation row over its T rows.

meta.qk_norm records the grouping convention in torch's own terms: x [B, S, H, Dh] with a weight
[H, Dh], normalised over Dh and broadcast (which pairs row n with weight row n % H), beside
torch.nn.RMSNorm((H, Dh)) (rms_norm over (H, Dh)), which reduces over both and which the op must not
match.
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def case(label, x, weight, eps, out_stride=1):
    rows, cols = x.shape
    out = F.rms_norm(x.double(), (cols,), eps=eps)
    if weight is not None:
        out = out * weight.double()[torch.arange(rows) % weight.shape[0]]
    return {"label": label, "rows": rows, "cols": cols, "eps": eps, "x": f32_json(x),
            "weight": None if weight is None else f32_json(weight),
            "out": f32_json(out.float().flatten()[::out_stride]), "out_stride": out_stride}


torch.manual_seed(0)
zero_row = torch.randn(3, 5)
zero_row[1] = 0
cases = [
    case("N=1 D=1 no weight", torch.randn(1, 1), None, 1e-6),
    case("N=3 D=7 shared gamma", torch.randn(3, 7), torch.randn(1, 7), 1e-6),
    case("N=5 D=33 G=2", 3 * torch.randn(5, 33), torch.randn(2, 33), 1e-6),
    case("N=2 D=257 G=2", torch.randint(-8, 9, (2, 257)).float(), torch.randint(-4, 5, (2, 257)).float(), 1e-6),
    case("N=1 D=4099 no weight", torch.randint(-8, 9, (1, 4099)).float(), None, 1e-6, out_stride=16),
    case("all-zero row", zero_row, None, 1e-6),
    case("eps=0.5 on small values", 0.1 * torch.randn(4, 6), torch.randn(2, 6), 0.5),
]

B, S, H, Dh, eps = 2, 3, 2, 4, 1e-6
x = torch.randn(B, S, H, Dh)
x[..., 1, :] *= 10  # heads of different scale, so reducing over (H, Dh) visibly differs
w = torch.randn(H, Dh)
qk_norm = {"B": B, "S": S, "H": H, "Dh": Dh, "eps": eps, "x": f32_json(x), "weight": f32_json(w),
           "rms_norm_over_dh": f32_json((F.rms_norm(x.double(), (Dh,), eps=eps) * w.double()).float()),
           "rms_norm_over_h_dh": f32_json(F.rms_norm(x.double(), (H, Dh), w.double(), eps).float())}



def modulated(label, x, weight, scale, shift, eps):
    B, T, D = x.shape
    out = F.rms_norm(x.double(), (D,), eps=eps)
    if weight is not None:
        out = out * weight.double()
    out = out * (1 + scale.double()[:, None, :])
    if shift is not None:
        out = out + shift.double()[:, None, :]
    return {"label": label, "B": B, "T": T, "D": D, "eps": eps, "x": f32_json(x),
            "weight": None if weight is None else f32_json(weight), "scale": f32_json(scale),
            "shift": None if shift is None else f32_json(shift), "out": f32_json(out.float())}


torch.manual_seed(1)
modulated_cases = [
    modulated("B=2 T=3 D=5, weight and scale (Z-Image)", torch.randn(2, 3, 5), 1 + 0.1 * torch.randn(5),
              0.5 * torch.randn(2, 5), None, 1e-5),
    modulated("B=2 T=2 D=8, scale and shift, no weight", torch.randn(2, 2, 8), None, 0.5 * torch.randn(2, 8),
              torch.randn(2, 8), 1e-6),
    modulated("B=3 T=1 D=4, weight, scale and shift", torch.randn(3, 1, 4), torch.randn(4), torch.randn(3, 4),
              torch.randn(3, 4), 1e-6),
]

out = pathlib.Path(__file__).with_name("rmsnorm.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__, "qk_norm": qk_norm}, "cases": cases,
                           "modulated": modulated_cases}, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} + {len(modulated_cases)} cases, torch {torch.__version__})")
