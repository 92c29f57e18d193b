"""Goldens for ops/quantize from torch (run on the GPU machine: python3 ops/quantize/goldens/gen.py).

Writes quantize.json beside this file. Each case is a float32 matrix x [rows, cols] and what per-row
absmax int8 quantization gives for it:

- scales = absmax / 127, a float32 division on the float32 absmax;
- codes = round(x * 127 / absmax) with ties toward +Infinity, computed as floor(v) + (v - floor(v)
  >= 0.5) on v in float64 (exact here: float64 cannot carry such a quotient across a half-integer).
  torch.round is not used: it rounds ties to even;
- a row of zeros gets scale 0 and codes 0.

Shapes: [1, 1], [3, 7] with a row of zeros, [2, 257], and [1, 4099] whose absmax is its last
element, negative. Random values are rounded to 4 significant digits, which keeps the file small.
Two cases pin conventions: `ties` (absmax 127, so v = x: 2.5 -> 3, -2.5 -> -2, 0.5 -> 1) and
`exact_quotient` (x = f32(0.5 / 127) with absmax 1: the exact quotient is just below 0.5, code 0,
where an f32 quotient rounds to 0.5 and the code to 1).
"""
import json, pathlib, numpy, torch


def f32list(t):
    """The values rounded to float32, each written in the shortest form that reads back to that float32."""
    return [float(str(numpy.float32(v))) for v in t.to(torch.float32).flatten().tolist()]


def quantize(x):
    absmax = x.abs().amax(dim=1)
    scales = absmax / 127
    v = x.double() * 127 / absmax.double()[:, None]
    v = torch.where(absmax[:, None] > 0, v, torch.zeros_like(v))
    codes = torch.floor(v) + (v - torch.floor(v) >= 0.5).double()
    return codes.to(torch.int32), scales


def random_matrix(n, k):
    x = torch.randn(n, k)
    return torch.tensor([[float(f"{v:.4g}") for v in row] for row in x.tolist()], dtype=torch.float32)


torch.manual_seed(0)
matrices = {"1x1": random_matrix(1, 1), "3x7": random_matrix(3, 7), "2x257": random_matrix(2, 257)}
matrices["3x7"][1] = 0
matrices["1x4099"] = random_matrix(1, 4099)
matrices["1x4099"][0, -1] = -5.0
matrices["ties"] = torch.tensor([[127, 2.5, -2.5, 0.5, -0.5, 1.5, -1.5, 0]], dtype=torch.float32)
matrices["exact_quotient"] = torch.tensor([[1.0, 0.5 / 127]], dtype=torch.float32)

cases = []
for label, x in matrices.items():
    codes, scales = quantize(x)
    rows, cols = x.shape
    cases.append({"label": label, "rows": rows, "cols": cols, "x": f32list(x), "codes": codes.flatten().tolist(),
                  "scales": f32list(scales)})

out = pathlib.Path(__file__).with_name("quantize.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
