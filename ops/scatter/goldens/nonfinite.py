"""Non-finite goldens for ops/scatter from torch (python3 ops/scatter/goldens/nonfinite.py).

Writes nonfinite.json beside this file, in float32 on the CPU:
- scatter: torch.zeros(rows, cols).scatter_add_(1, index, src) with NaN, +inf and -inf in src, where
  collisions add them to finite values, to each other (inf + -inf is NaN) and to themselves;
- index_copy: out.view(outer, rows, cols).index_copy_(1, index, src) with NaN, +inf and -inf in out
  (some overwritten, some kept) and in src (copied as they are).
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import inf, golden, with_specials, write

src = with_specials(torch.arange(1.0, 11.0).reshape(2, 5), (0, 3, 6))
src[1, 4] = inf  # meets src[1, 1] = -inf in column 1 of row 1: inf + -inf
index = torch.tensor([[0, 1, 0, 3, 3], [2, 1, 2, 0, 1]])
cases = [{"entry": "kernel", "rows": 2, "cols": 4, "indexCols": 5, "src": golden(src), "index": index.flatten().tolist(),
          "out": golden(torch.zeros(2, 4).scatter_add_(1, index, src))}]
out_before = with_specials(torch.arange(12.0).reshape(2, 3, 2), (0, 5, 9))
copy_src = with_specials(-torch.arange(1.0, 9.0).reshape(2, 2, 2), (1, 4, 6))
copy_index = torch.tensor([2, 0])
cases.append({"entry": "index_copy", "outer": 2, "rows": 3, "cols": 2, "out_before": golden(out_before),
              "src": golden(copy_src), "index": copy_index.tolist(),
              "out": golden(out_before.clone().index_copy_(1, copy_index, copy_src))})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
