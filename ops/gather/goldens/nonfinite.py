"""Non-finite goldens for ops/gather from torch (python3 ops/gather/goldens/nonfinite.py).

Writes nonfinite.json beside this file: torch.index_select(table, 0, index) of a float32 table [5, 3]
holding NaN, +inf and -inf, on the CPU, each such row selected (one twice): a copy, so every value
keeps its bits. Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

table = with_specials(torch.arange(15.0).reshape(5, 3), (1, 6, 14))
index = torch.tensor([4, 0, 2, 2, 1, 3])
cases = [{"rows": 5, "cols": 3, "table": golden(table), "index": index.tolist(),
          "out": golden(torch.index_select(table, 0, index))}]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
