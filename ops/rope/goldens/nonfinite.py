"""Non-finite goldens for ops/rope from torch (python3 ops/rope/goldens/nonfinite.py).

Writes nonfinite.json beside this file: the rotation of adjacent channel pairs,
out[2i] = x[2i] cos - x[2i+1] sin, out[2i+1] = x[2i] sin + x[2i+1] cos, in float64 torch on the CPU
on float32 inputs (the reference's arithmetic), rounded to float32:
- rope: x [tokens 3, heads 2, headDim 4] holding NaN, +inf and -inf, at positions 0, 1, 2 (at position
  0, sin is exactly 0, so an infinite channel's partner output is inf * 0, NaN), default theta;
- rope with ropeCache: a table of angles [3, 2] holding NaN, +inf and -inf (cos and sin of an infinity
  are NaN), x finite;
- ropeAxes: x holding NaN, +inf and -inf, two axes [4, 2] of a head of 6, theta 256, integer positions.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write


def rotate(x, angle):
    """x [tokens, heads, headDim] float64, angle [tokens, headDim / 2] float64: adjacent pairs rotated."""
    a, b = x[..., 0::2], x[..., 1::2]
    c, s = torch.cos(angle)[:, None, :], torch.sin(angle)[:, None, :]
    return torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)


torch.manual_seed(0)
tokens, heads, head_dim = 3, 2, 4
x = torch.randn(tokens, heads, head_dim)
x[0, 0, 0], x[1, 1, 3], x[2, 0, 2] = nan, inf, -inf
x[0, 1, 1] = inf  # at position 0
inv_freq = (1.0 / (10000.0 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))).double()
positions = torch.arange(tokens, dtype=torch.float64)
cases = [{"entry": "kernel", "tokens": tokens, "heads": heads, "headDim": head_dim, "x": golden(x),
          "out": golden(rotate(x.double(), positions[:, None] * inv_freq[None, :]))}]
x_finite = torch.randn(tokens, heads, head_dim)
cache = torch.randn(3, head_dim // 2)
cache[0, 1], cache[1, 0], cache[2, 1] = nan, inf, -inf
cases.append({"entry": "kernel", "tokens": tokens, "heads": heads, "headDim": head_dim, "x": golden(x_finite),
              "ropeCache": golden(cache), "out": golden(rotate(x_finite.double(), cache.double()))})

axes_dims, theta = [4, 2], 256.0
xa = torch.randn(tokens, heads, 6)
xa[0, 0, 5], xa[1, 0, 1], xa[2, 1, 2] = nan, inf, -inf
xa[0, 1, 0] = -inf  # at position 0 on axis 0
pos = torch.tensor([[0, 3], [2, 1], [5, 0]])
angles = []
for a, d in enumerate(axes_dims):
    inv = (1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float32) / d))).double()
    angles.append(pos[:, a:a + 1].double() * inv[None, :])
cases.append({"entry": "axes", "tokens": tokens, "heads": heads, "headDim": 6, "axesDims": axes_dims, "theta": theta,
              "positions": pos.flatten().tolist(), "x": golden(xa),
              "out": golden(rotate(xa.double(), torch.cat(angles, dim=1)))})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
