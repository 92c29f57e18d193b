"""Non-finite goldens for ops/matmul from torch (python3 ops/matmul/goldens/nonfinite.py).

Writes nonfinite.json beside this file. Every product of the op, on the CPU in float64 on float32
inputs (the reference's arithmetic; float32 torch gives the same NaN and infinities except where
float32 F.gelu(+inf) is nan, see ops/activation), rounded to float32:
- matmul `torch.mm(a, b)`, matmulLinear `F.linear(a, weight)`, matmulQ8 `F.linear(a, codes * scales[:, None])`
  and matmulQ4G128 `F.linear(a, codes * scales.repeat_interleave(128, 1)[:, :K])`, each
  - on `a` and the weight (b, weight or scales: codes are integers) holding NaN, +inf and -inf, where
    infinities meet zeros (inf * 0 is NaN) and each other;
  - with each fused epilogue (bias, activation gelu / gelu_tanh / silu, gate with gateRows 1,
    accumulate into c), bias, gate and c holding NaN, +inf and -inf, on a finite product and on the
    non-finite one (the activation then meets inf, -inf and NaN);
- matmulF16 `torch.mm(a.half().float(), b.half().float())` on a and b holding NaN, +inf and -inf, and a
  finite value past the half range (70000: inf as a half).
`inputs` holds each operand once by name; q8 codes in [-127, 127] and q4 codes in [-7, 7], zeros
among them. Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import golden, with_specials, write

torch.manual_seed(0)
M, N, K, KQ4 = 5, 6, 9, 130
inputs = {}
# a: row 0 NaN, row 1 +inf (at k 2), row 2 -inf (at k 3); rows 3, 4 finite.
inputs["a"] = with_specials(torch.randn(M, K), (1, K + 2, 2 * K + 3))
inputs["a_finite"] = torch.randn(M, K)
inputs["a_q4"] = with_specials(torch.randn(M, KQ4), (1, KQ4 + 2, 2 * KQ4 + 129))
inputs["a_q4_finite"] = torch.randn(M, KQ4)
# b [K, N]: column 0 NaN, column 1 +inf (k 5), column 2 -inf (k 6), and b[2, 4] = 0, which meets a's +inf.
b = with_specials(torch.randn(K, N), (4 * N, 5 * N + 1, 6 * N + 2))
b[2, 4] = 0.0
inputs["b"] = b
inputs["b_finite"] = torch.randn(K, N)
inputs["weight"] = b.t().contiguous()  # the same values in a Linear layer's orientation
inputs["weight_finite"] = inputs["b_finite"].t().contiguous()
codes8 = torch.randint(-127, 128, (N, K))
codes8[:, 2] = 0  # a zero code meets a's +inf, and every infinite scale
codes4 = torch.randint(-7, 8, (N, KQ4))
codes4[:, 2] = 0
inputs["codes8"], inputs["codes4"] = codes8, codes4
inputs["scales8"] = with_specials(torch.rand(N) / 64, (0, 1, 2))
inputs["scales8_finite"] = torch.rand(N) / 64
# q4: one scale per (row, group of 128): NaN in group 0 of row 0, +inf in group 1 of row 1, -inf in group 0 of row 2.
inputs["scales4"] = with_specials(torch.rand(N, 2) / 8, (0, 3, 4))
inputs["scales4_finite"] = torch.rand(N, 2) / 8
inputs["bias"] = with_specials(torch.randn(N), (0, 1, 2))
inputs["gate"] = with_specials(torch.randn(M, N), (N + 3, 2 * N + 4, 3 * N + 5))
inputs["c"] = with_specials(torch.randn(M, N), (3, N + 4, 4 * N + 5))
f16a = with_specials(torch.randn(M, K), (1, K + 2, 2 * K + 3))
f16a[4, 0] = 70000.0
inputs["f16_a"], inputs["f16_b"] = f16a, b

d = {name: t.double() for name, t in inputs.items()}
weights = {
    "matmul": lambda fin: d["b_finite" if fin else "b"].t(),
    "matmulLinear": lambda fin: d["weight_finite" if fin else "weight"],
    "matmulQ8": lambda fin: d["codes8"] * d["scales8_finite" if fin else "scales8"][:, None],
    "matmulQ4G128": lambda fin: d["codes4"] * d["scales4_finite" if fin else "scales4"].repeat_interleave(128, 1)[:, :KQ4],
}
operands = {
    "matmul": lambda fin: {"b": "b_finite" if fin else "b"},
    "matmulLinear": lambda fin: {"weight": "weight_finite" if fin else "weight"},
    "matmulQ8": lambda fin: {"codes": "codes8", "scales": "scales8_finite" if fin else "scales8"},
    "matmulQ4G128": lambda fin: {"codes": "codes4", "scales": "scales4_finite" if fin else "scales4"},
}
ACTIVATIONS = {"gelu": F.gelu, "gelu_tanh": lambda v: F.gelu(v, approximate="tanh"), "silu": F.silu}
cases = []
for product in weights:
    q4 = product == "matmulQ4G128"
    k = KQ4 if q4 else K
    for finite in (False, True):
        a = ("a_q4" if q4 else "a") + ("_finite" if finite else "")
        base = {"product": product, "M": M, "N": N, "K": k, "a": a, **operands[product](finite)}
        y = d[a] @ weights[product](finite).t()
        if not finite:
            cases.append({**base, "out": golden(y)})
        for activation, fn in ACTIVATIONS.items():
            cases.append({**base, "bias": "bias", "activation": activation, "gate": "gate", "gateRows": 1, "c": "c",
                          "out": golden(fn(y + d["bias"]) * d["gate"] + d["c"])})
cases.append({"product": "matmulF16", "M": M, "N": N, "K": K, "a": "f16_a", "b": "f16_b",
              "out": golden(inputs["f16_a"].half().double() @ inputs["f16_b"].half().double())})
golden_inputs = {name: (t.flatten().tolist() if t.dtype == torch.int64 else golden(t)) for name, t in inputs.items()}
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases, inputs=golden_inputs)
