"""Non-finite goldens for ops/dequant_transpose from torch (python3 ops/dequant_transpose/goldens/nonfinite.py).

Writes nonfinite.json beside this file: (codes.float() * scales[:, None]).t() in float32 on the CPU,
an int8 weight [N, K] with NaN, +inf and -inf scales, where they meet zero codes (0 * inf is NaN). The
codes are integers (no NaN). Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

torch.manual_seed(0)
codes = torch.randint(-127, 128, (5, 7))
codes[:, 3] = 0
scales = torch.tensor([nan, inf, -inf, 0.01, 0.02])
cases = [{"N": 5, "K": 7, "codes": codes.flatten().tolist(), "scales": golden(scales),
          "out": golden((codes.float() * scales[:, None]).t())}]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
