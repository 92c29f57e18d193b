"""Non-finite goldens for ops/activation's gated entry point (python3 ops/activation/goldens/nonfinite.py).

Writes nonfinite.json beside this file: F.silu(gate) * up (swiglu) and F.gelu(gate) * up (geglu) over
every pair of gate in [nan, inf, -inf, 0, 1, -1] and up in [nan, inf, -inf, 0, 2], by torch on the CPU
in float64 (`out`, the reference's arithmetic) and in float32 (`out_f32`; they differ only where
float32 gelu(+inf) is nan, float64's inf). The single-input activations' non-finite goldens are
gen.py's `nonfinite`. Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

gate = torch.tensor([nan, inf, -inf, 0.0, 1.0, -1.0]).repeat_interleave(5)
up = torch.tensor([nan, inf, -inf, 0.0, 2.0]).repeat(6)
cases = [{"kind": kind, "gate": golden(gate), "up": golden(up), "out": golden(fn(gate.double()) * up.double()),
          "out_f32": golden(fn(gate) * up)} for kind, fn in (("swiglu", F.silu), ("geglu", F.gelu))]
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
