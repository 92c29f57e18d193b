"""Goldens for ops/dequantize from torch (run on the GPU machine: python3 ops/dequantize/goldens/gen.py).

Writes dequantize.json beside this file. Each case is int32 accumulators acc [M, N], activation
scales a_scales [M] and weight scales w_scales [N] (float32, fixed seed), with two answers:

- `out`: acc * a_scales[m] * w_scales[n] computed in float64, then rounded to float32 (the product
  nearly exactly, rounded once);
- `out_f32`: torch's float32 expression acc.float() * a_scales[:, None] * w_scales[None, :], which
  rounds the conversion and each product, left to right.

Accumulators reach past 2^24, where the conversion to float32 rounds, and include both int32
extremes. Shapes: [1, 1], [3, 7], [2, 257].
"""
import json, pathlib, numpy, torch


def f32list(t):
    """The values rounded to float32, each written in the shortest form that reads back to that float32."""
    return [float(str(numpy.float32(v))) for v in t.to(torch.float32).flatten().tolist()]


torch.manual_seed(0)
cases = []
for m, n in ((1, 1), (3, 7), (2, 257)):
    acc = torch.randint(-(2**28), 2**28, (m, n), dtype=torch.int32)
    if m * n > 2:
        acc.view(-1)[:2] = torch.tensor([-(2**31), 2**31 - 1], dtype=torch.int32)
    a_scales = torch.rand(m) * 1e-2
    w_scales = (torch.rand(n) - 0.5) * 1e-2
    exact = acc.double() * a_scales.double()[:, None] * w_scales.double()[None, :]
    in_f32 = acc.float() * a_scales[:, None] * w_scales[None, :]
    cases.append({"M": m, "N": n, "acc": acc.flatten().tolist(), "aScales": f32list(a_scales),
                  "wScales": f32list(w_scales), "out": f32list(exact), "out_f32": f32list(in_f32)})

out = pathlib.Path(__file__).with_name("dequantize.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
