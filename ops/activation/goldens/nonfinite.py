"""Non-finite goldens for ops/activation's gated entry point (python3 ops/activation/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.silu(gate) * up (swiglu) and F.gelu(gate) * up (geglu) over
every pair of gate in [nan, inf, -inf, 0, 1, -1] and up in [nan, inf, -inf, 0, 2], by torch on the CPU
in float64 (`out`, the reference's arithmetic) and in float32 (`out_f32`; they differ only where
float32 gelu(+inf) is nan, float64's inf). The single-input activations' non-finite goldens are
gen.py's `nonfinite`. Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import json, math, pathlib, torch
import torch.nn.functional as F

nan, inf = float("nan"), float("inf")


def golden(t):
    return [v if math.isfinite(v) else str(v) for v in t.to(torch.float32).flatten().tolist()]


gate = torch.tensor([nan, inf, -inf, 0.0, 1.0, -1.0]).repeat_interleave(5)
up = torch.tensor([nan, inf, -inf, 0.0, 2.0]).repeat(6)
cases = [{"kind": kind, "gate": golden(gate), "up": golden(up), "out": golden(fn(gate.double()) * up.double()),
          "out_f32": golden(fn(gate) * up)} for kind, fn in (("swiglu", F.silu), ("geglu", F.gelu))]
out = pathlib.Path(__file__).with_name("nonfinite.json")
out.write_text(json.dumps({"torch": torch.__version__, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
