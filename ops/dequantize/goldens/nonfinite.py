"""Non-finite goldens for ops/dequantize from torch (python3 ops/dequantize/goldens/nonfinite.py).

Writes nonfinite.json beside this file: acc.float() * a_scales[:, None] * w_scales[None, :] in float32
on the CPU (each product rounded, in that order), with NaN, +inf and -inf in both scale vectors, where
they meet zero accumulators (0 * inf is NaN) and each other. The accumulators are int32 (no NaN).
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import json, math, pathlib, torch

nan, inf = float("nan"), float("inf")


def golden(t):
    return [v if math.isfinite(v) else str(v) for v in t.to(torch.float32).flatten().tolist()]


acc = torch.tensor([[0, 5, -3, 7], [2, 0, 1, -4], [6, -1, 0, 3], [1, 2, 3, 0], [-2, 4, 5, 6]], dtype=torch.int32)
a_scales = torch.tensor([nan, inf, -inf, 0.5, 2.0])
w_scales = torch.tensor([inf, 0.25, nan, -inf])
out_ = acc.float() * a_scales[:, None] * w_scales[None, :]
cases = [{"M": 5, "N": 4, "acc": acc.flatten().tolist(), "aScales": golden(a_scales), "wScales": golden(w_scales),
          "out": golden(out_)}]
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
