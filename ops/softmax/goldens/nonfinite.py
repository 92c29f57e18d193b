"""Non-finite goldens for ops/softmax from torch (python3 ops/softmax/goldens/nonfinite.py).

Writes nonfinite.json beside this file: torch.softmax(x, -1) in float32 on the CPU over rows holding
NaN, +inf and -inf alone and together, at cols 3 (rows off vec4 boundaries) and 8 (aligned rows).
A NaN or a +inf anywhere in a row makes the whole row NaN (inf - inf); -inf gives 0; a row of only
-inf is NaN. Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

ragged = torch.tensor([[nan, 1.0, 2.0], [inf, 1.0, 2.0], [-inf, 1.0, 2.0], [inf, inf, 1.0], [inf, -inf, 0.0],
                       [-inf, -inf, -inf], [1.0, 2.0, 3.0]])
aligned = torch.tensor([[0.0, 1.0, 2.0, 3.0, 4.0, nan, 6.0, 7.0], [-inf, 1.0, -inf, 3.0, 4.0, 5.0, 6.0, -inf],
                        [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, inf], [1.0] * 8])
cases = [{"rows": x.shape[0], "cols": x.shape[1], "x": golden(x), "out": golden(torch.softmax(x, -1))}
         for x in (ragged, aligned)]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
