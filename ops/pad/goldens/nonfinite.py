"""Non-finite goldens for ops/pad from torch (python3 ops/pad/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.pad along the middle axis of float32 x [outer, size, inner]
holding NaN, +inf and -inf (at the edges, so reflect and replicate copy them into the padding), on the
CPU, in each mode (constant with value 1.5; the value itself must be a finite f32, as every float
scalar here), at inner 1 and 2. Non-finite floats are written as Python's str().
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

cases = []
for inner in (1, 2):
    x = with_specials(torch.arange(8.0 * inner).reshape(2, 4, inner), (0, 4 * inner - 1, 5 * inner))
    for mode in ("constant", "reflect", "replicate"):
        kw = {"value": 1.5} if mode == "constant" else {}
        padded = F.pad(x.permute(0, 2, 1), (2, 3), mode=mode, **kw).permute(0, 2, 1)
        cases.append({"outer": 2, "size": 4, "inner": inner, "before": 2, "after": 3, "mode": mode, **kw,
                      "x": golden(x), "out": golden(padded.contiguous())})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
