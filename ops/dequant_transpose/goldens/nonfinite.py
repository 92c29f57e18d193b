"""Non-finite goldens for ops/dequant_transpose from torch (python3 ops/dequant_transpose/goldens/nonfinite.py).

Writes nonfinite.json beside this file: (codes.float() * scales[:, None]).t() in float32 on the CPU,
an int8 weight [N, K] with NaN, +inf and -inf scales, where they meet zero codes (0 * inf is NaN). The
codes are integers (no NaN). Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import json, math, pathlib, torch

nan, inf = float("nan"), float("inf")


def golden(t):
    return [v if math.isfinite(v) else str(v) for v in t.to(torch.float32).flatten().tolist()]


torch.manual_seed(0)
codes = torch.randint(-127, 128, (5, 7))
codes[:, 3] = 0
scales = torch.tensor([nan, inf, -inf, 0.01, 0.02])
cases = [{"N": 5, "K": 7, "codes": codes.flatten().tolist(), "scales": golden(scales),
          "out": golden((codes.float() * scales[:, None]).t())}]
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
