"""Goldens for ops/pope from torch (run on the GPU machine: python3 ops/pope/goldens/gen.py).

Writes pope.json beside this file. The PoPE table of arXiv:2405.04585 (Eq. 14) as the spec reads it:
out[s, d] = P_(s + pos_offset)(x_d), the Legendre polynomial of order s + pos_offset (the position)
at x_d = float32(-1 + 2 d / D) (the argument sweeping [-1, 1) across the dimension), evaluated by
torch.special.legendre_polynomial_p in float64 and rounded to float32 once. Cases: both pos_offset
conventions (0 and 1), D not a multiple of 4, orders in the hundreds (a decode-like single row at
order 250 and rows 300..309).
"""
import json, pathlib, struct, torch


def f32_json(t):
    out = []
    for v in t.flatten().tolist():
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == struct.unpack("f", struct.pack("f", v))[0])
        out.append(int(s) if s.is_integer() and s != 0 else s)
    return out


def table(S, D, pos_offset):
    x = (-1 + 2 * torch.arange(D, dtype=torch.float64) / D).float().double()
    orders = torch.arange(pos_offset, pos_offset + S, dtype=torch.float64)
    return torch.special.legendre_polynomial_p(x[None, :].expand(S, D), orders[:, None].expand(S, D))


cases = []
for S, D, pos_offset in [(5, 8, 0), (7, 12, 1), (1, 100, 250), (40, 33, 0), (10, 64, 300)]:
    cases.append({"S": S, "D": D, "posOffset": pos_offset, "out": f32_json(table(S, D, pos_offset).float())})
path = pathlib.Path(__file__).with_name("pope.json")
path.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {path} (torch {torch.__version__})")
