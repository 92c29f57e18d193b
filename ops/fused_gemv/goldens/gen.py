"""Goldens for ops/fused_gemv from torch (python3 ops/fused_gemv/goldens/gen.py; CPU torch is enough).

Writes fused_gemv.json beside this file: a decode step's weight product with its neighbours, as
transformers' Llama layer computes them, on an f32 weight (the quantised formats are matvec's, whose own
goldens pin their decode): y = F.linear(in(x), W) with in(x) = x or F.rms_norm(x, (K,), g, eps), then
out[out0:out0 + N] = y, out[out0:out0 + N] += y (the residual add), or, the weight's rows being gate and
up of a channel in turn, out[out0:out0 + N / 2] = F.silu(y[0::2]) * y[1::2]. In float64 from the float32
inputs, rounded to float32 once; the rest of out as it was.
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def case(label, N, K, inp, output, out0, eps):
    w, x, g = torch.randn(N, K), torch.randn(K), 1 + 0.1 * torch.randn(K)
    written = N // 2 if output == "swiglu" else N
    before = torch.randn(out0 + written + 3)
    xin = F.rms_norm(x.double(), (K,), g.double(), eps) if inp == "norm" else x.double()
    y = F.linear(xin, w.double())
    after = before.double().clone()
    if output == "store":
        after[out0:out0 + N] = y
    elif output == "add":
        after[out0:out0 + N] += y
    else:
        after[out0:out0 + written] = F.silu(y[0::2]) * y[1::2]
    return {"label": label, "N": N, "K": K, "input": inp, "output": output, "out0": out0, "eps": eps,
            "weight": f32_json(w), "x": f32_json(x), "g": f32_json(g), "before": f32_json(before),
            "after": f32_json(after.float())}


torch.manual_seed(0)
cases = [
    case("QKV: RMSNorm input, stored", 6, 12, "norm", "store", 0, 1e-5),
    case("O: plain input, added to the residual stream at an offset", 5, 8, "plain", "add", 2, 1e-6),
    case("gate/up: RMSNorm input, SwiGLU of row pairs", 8, 16, "norm", "swiglu", 1, 1e-6),
]
out = pathlib.Path(__file__).with_name("fused_gemv.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
