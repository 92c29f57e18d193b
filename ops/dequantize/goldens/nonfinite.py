"""Non-finite goldens for ops/dequantize from torch (python3 ops/dequantize/goldens/nonfinite.py).

Writes nonfinite.json beside this file: acc.float() * a_scales[:, None] * w_scales[None, :] in float32
on the CPU (each product rounded, in that order), with NaN, +inf and -inf in both scale vectors, where
they meet zero accumulators (0 * inf is NaN) and each other. The accumulators are int32 (no NaN).
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

acc = torch.tensor([[0, 5, -3, 7], [2, 0, 1, -4], [6, -1, 0, 3], [1, 2, 3, 0], [-2, 4, 5, 6]], dtype=torch.int32)
a_scales = torch.tensor([nan, inf, -inf, 0.5, 2.0])
w_scales = torch.tensor([inf, 0.25, nan, -inf])
out_ = acc.float() * a_scales[:, None] * w_scales[None, :]
cases = [{"M": 5, "N": 4, "acc": acc.flatten().tolist(), "aScales": golden(a_scales), "wScales": golden(w_scales),
          "out": golden(out_)}]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
