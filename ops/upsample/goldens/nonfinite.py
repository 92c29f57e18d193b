"""Non-finite goldens for ops/upsample from torch (python3 ops/upsample/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.interpolate(x, size=(outH, outW), mode="nearest") of float32
x [1, 2, 2, 3] holding NaN, +inf and -inf, on the CPU, to 3 x 5 and 4 x 7: a copy of the nearest
source, so every value keeps its bits. Non-finite floats are written as Python's str().
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

x = with_specials(torch.arange(12.0).reshape(1, 2, 2, 3), (0, 4, 8))
cases = [{"N": 1, "C": 2, "H": 2, "W": 3, "outH": h, "outW": w, "x": golden(x),
          "out": golden(F.interpolate(x, size=(h, w), mode="nearest"))} for h, w in ((3, 5), (4, 7))]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
