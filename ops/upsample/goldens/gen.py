"""Goldens for ops/upsample from torch (run on the GPU machine: python3 ops/upsample/goldens/gen.py).

Writes upsample.json beside this file: torch.nn.functional.interpolate(x, size=(outH, outW),
mode="nearest") on float32 inputs whose values encode their position (plane * 10000 + h * 100 + w),
so the output shows which source element each output element copied. Sizes: the spec's 14 -> 46
(destination row 23 copies source row 6), 1 x 1 -> 5 x 3, odd ratios, a 1-element axis, the
identity, and a batch of several planes. `rows` records, for H = 14 -> 46 and H = 3 -> 4, the source
row of each output row under size= (what the op implements), scale_factor= and "nearest-exact" (the
alternatives it must differ from), read off torch's own outputs. `align_corners` records whether
torch accepts align_corners with mode="nearest".
"""
import json, pathlib, torch
import torch.nn.functional as F


def encoded(n, c, h, w):
    plane = torch.arange(n * c).reshape(n, c, 1, 1) * 10000
    return (plane + torch.arange(h).reshape(1, 1, h, 1) * 100 + torch.arange(w).reshape(1, 1, 1, w)).float()


def case(label, n, c, h, w, out_h, out_w):
    x = encoded(n, c, h, w)
    out = F.interpolate(x, size=(out_h, out_w), mode="nearest")
    return {"label": label, "N": n, "C": c, "H": h, "W": w, "outH": out_h, "outW": out_w,
            "out": [int(v) for v in out.flatten().tolist()]}


def source_rows(h, **kwargs):
    x = encoded(1, 1, h, 1)
    out = F.interpolate(x, **kwargs)
    return [int(v) // 100 for v in out[0, 0, :, 0].tolist()]


cases = [
    case("14 x 14 -> 46 x 46 (the spec's case)", 1, 1, 14, 14, 46, 46),
    case("1 x 1 -> 5 x 3", 1, 2, 1, 1, 5, 3),
    case("5 x 1 -> 7 x 4, two batches of three channels", 2, 3, 5, 1, 7, 4),
    case("3 x 7 -> 4 x 13", 1, 2, 3, 7, 4, 13),
    case("4 x 4 -> 8 x 8 (2x)", 1, 3, 4, 4, 8, 8),
    case("6 x 5 -> 6 x 5 (identity)", 1, 1, 6, 5, 6, 5),
    case("9 x 11 -> 31 x 29", 1, 1, 9, 11, 31, 29),
]
rows = {
    "14 -> 46 size": source_rows(14, size=(46, 1), mode="nearest"),
    "14 -> 46 nearest-exact": source_rows(14, size=(46, 1), mode="nearest-exact"),
    "3 -> 4 size": source_rows(3, size=(4, 1), mode="nearest"),
    "3 -> 4 scale_factor 1.6": source_rows(3, scale_factor=(1.6, 1.0), mode="nearest"),
}
try:
    F.interpolate(encoded(1, 1, 2, 2), size=(4, 4), mode="nearest", align_corners=True)
    align = {"raised": False, "message": ""}
except Exception as e:
    align = {"raised": True, "message": str(e).splitlines()[0]}

out = pathlib.Path(__file__).with_name("upsample.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases, "rows": rows,
                           "align_corners": align}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__}); rows {rows}")
