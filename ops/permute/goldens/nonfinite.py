"""Non-finite goldens for ops/permute from torch (python3 ops/permute/goldens/nonfinite.py).

Writes nonfinite.json beside this file: x.permute(*dims).contiguous() of float32 x [2, 3, 4] holding
NaN, +inf and -inf, on the CPU, for dims that move the last axis and dims that keep it (the rows
path): a copy, so every value keeps its bits. Non-finite floats are written as Python's str().
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

x = with_specials(torch.arange(24.0).reshape(2, 3, 4), (1, 14, 23))
cases = [{"shape": [2, 3, 4], "dims": dims, "x": golden(x), "out": golden(x.permute(*dims).contiguous())}
         for dims in ([2, 0, 1], [1, 0, 2])]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
