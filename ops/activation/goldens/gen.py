"""Goldens for ops/activation from torch (run on the GPU machine: python3 ops/activation/goldens/gen.py).

Writes activation.json beside this file. `inputs` holds float32 inputs by name: random ones drawn
with a fixed seed (sizes 1, 7 and 257, spread as 4 * randn) and `special`, a list of points where a
kernel goes wrong first (0, tiny values, the gelu / gelu_tanh gap at 2.699, float32 exp's overflow
edge near 88.7, and +-100, +-1e4). Each case is one function on one input: torch evaluates it in
float64 on the float32 values and the result is rounded to float32, so `out` is the float32 nearest
the true value up to float64's own error. elu is recorded at torch's default alpha (1.0) and, with
an `alpha` field, at alpha = 0.5.

meta.gelu_gap records gelu and gelu_tanh at x = float32(2.699), where the two differ most (4.73e-4).

`nonfinite` holds torch's results at NaN, +inf and -inf, evaluated in float32 on the CPU (elu at
alpha = 0.5), each written as Python's str() of the float ("nan", "inf", "-inf", "-0.5").

`gated` holds the gated activations, `F.silu(gate) * up` (swiglu) and `F.gelu(gate) * up` (geglu),
in float64 on float32 inputs and rounded once: gates `special`, `random7` and `random257` above, each
with an `up` of its length drawn after them (`up_<input>` in `inputs`); and `gated_nonfinite`, both
in float32 on the CPU at gates [NaN, +inf, -inf, +inf, 1] times ups [2, 2, 2, 0, NaN].
"""
import json, pathlib, numpy, torch
import torch.nn.functional as F


def f32list(t):
    """The values rounded to float32, each written in the shortest form that reads back to that float32."""
    return [float(str(numpy.float32(v))) for v in t.to(torch.float32).flatten().tolist()]


FUNCTIONS = {
    "relu2": lambda x: torch.relu(x) ** 2,
    "silu": F.silu,
    "elu": F.elu,  # alpha=1.0, as torch.nn.ELU
    "tanh": torch.tanh,
    "gelu": F.gelu,  # approximate="none", the default
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
}

SPECIAL = [0.0, 1e-30, -1e-30, 1e-7, -1e-7, 0.5, -0.5, 1.0, -1.0, 2.699, -2.699, 5.0, -5.0, 10.0, -10.0,
           20.0, -20.0, 88.7, -88.7, 89.0, -89.0, 100.0, -100.0, 1e4, -1e4]

torch.manual_seed(0)
inputs = {"special": torch.tensor(SPECIAL, dtype=torch.float32)}
for n in (1, 7, 257):
    inputs[f"random{n}"] = 4 * torch.randn(n)

cases = []
for name, x in inputs.items():
    for kind, fn in FUNCTIONS.items():
        cases.append({"input": name, "kind": kind, "out": f32list(fn(x.double()))})
    cases.append({"input": name, "kind": "elu", "alpha": 0.5, "out": f32list(F.elu(x.double(), alpha=0.5))})

GATED = {"swiglu": F.silu, "geglu": F.gelu}
gated = []
for name in ("special", "random7", "random257"):
    up = torch.randn(inputs[name].shape)
    for kind, fn in GATED.items():
        gated.append({"gate": name, "up": f"up_{name}", "kind": kind,
                      "out": f32list(fn(inputs[name].double()) * up.double())})
    inputs[f"up_{name}"] = up
gated_gate = torch.tensor([float("nan"), float("inf"), float("-inf"), float("inf"), 1.0])
gated_up = torch.tensor([2.0, 2.0, 2.0, 0.0, float("nan")])
gated_nonfinite = {kind: [str(v) for v in (fn(gated_gate) * gated_up).tolist()] for kind, fn in GATED.items()}

gap_x = torch.tensor([2.699], dtype=torch.float32)
meta = {
    "torch": torch.__version__,
    "gelu_gap": {
        "x": f32list(gap_x)[0],
        "gelu": f32list(FUNCTIONS["gelu"](gap_x.double()))[0],
        "gelu_tanh": f32list(FUNCTIONS["gelu_tanh"](gap_x.double()))[0],
    },
}
nonfinite_x = torch.tensor([float("nan"), float("inf"), float("-inf")], dtype=torch.float32)
nonfinite = {kind: [str(v) for v in (F.elu(nonfinite_x, alpha=0.5) if kind == "elu" else fn(nonfinite_x)).tolist()]
             for kind, fn in FUNCTIONS.items()}
golden = {"meta": meta, "inputs": {name: f32list(x) for name, x in inputs.items()}, "cases": cases,
          "nonfinite": nonfinite, "gated": gated, "gated_nonfinite": gated_nonfinite}
out = pathlib.Path(__file__).with_name("activation.json")
out.write_text(json.dumps(golden, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
