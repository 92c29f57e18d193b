"""Goldens for ops/matmul's fused epilogues from torch (python3 ops/matmul/goldens/epilogue.py; CPU torch is enough).

Writes epilogue.json beside this file. Every case is a Linear layer and what a DiT block does after it:

    y = F.linear(a, w, bias)                        a [M, K], w [N, K], bias [N] (or no bias): w's product,
                                                    then + bias
    y = act(y)                                      F.gelu (erf), F.gelu(approximate="tanh"), F.silu, or none
    y = y * gate.repeat_interleave(gateRows, 0)     gate [M / gateRows, N]: one row per batch item
    out = c + y                                     c [M, N], the prior content (accumulate), or out = y

evaluated in float64 by torch on float32 operands and rounded to float32 once ("out"). Operands are not stored:
pattern(length, seed), as in gen.py, makes them from a hash of (seed, index), values in [-1, 1) on a 2^-23 grid
(exact in float32); "scale" multiplies a (a power of two, so still exact) to spread the products over the
activations' range. epilogue.test.ts makes the same operands.

"special" cases have K = 1, w = 1 and no bias, so y is the value of a itself: they pin the activations at points
where an implementation goes wrong first (0, the tails at +-5, +-10, +-20, the gelu / gelu_tanh gap at 2.699).
"""
import json, pathlib, struct, torch
import torch.nn.functional as F

MASK = 0xFFFFFFFF


def fmix32(h):
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & MASK
    h ^= h >> 16
    return h


def pattern(length, seed):
    """float64 values in [-1, 1), multiples of 2^-23, hashed from (seed, index); exact in float32 (gen.py's)."""
    return torch.tensor([(fmix32((seed * 0x9E3779B9 + i) & MASK) >> 8) / 2**23 - 1 for i in range(length)],
                        dtype=torch.float64)


def f32_json(t):
    """A tensor as a flat list of the shortest numbers that read back as the same float32 (gen.py's)."""
    out = []
    for v in t.float().flatten().tolist():
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == v)
        out.append(int(s) if s.is_integer() else s)
    return out


ACTIVATIONS = {
    None: lambda y: y,
    "gelu": F.gelu,  # approximate="none", the default
    "gelu_tanh": lambda y: F.gelu(y, approximate="tanh"),
    "silu": F.silu,
}


def epilogue(y, M, N, bias, activation, gate, gate_rows, c):
    if bias is not None:
        y = y + bias
    y = ACTIVATIONS[activation](y)
    if gate is not None:
        y = y * gate.reshape(M // gate_rows, N).repeat_interleave(gate_rows, dim=0)
    if c is not None:
        y = c.reshape(M, N) + y
    return y


def case(label, M, N, K, seed, scale=1, bias=False, activation=None, gate_rows=None, accumulate=False):
    a = pattern(M * K, seed).reshape(M, K) * scale
    w = pattern(N * K, seed + 1).reshape(N, K)
    b = pattern(N, seed + 2) if bias else None
    gate = 2 * pattern((M // gate_rows) * N, seed + 3) if gate_rows else None
    c = pattern(M * N, seed + 4) if accumulate else None
    out = epilogue(F.linear(a, w), M, N, b, activation, gate, gate_rows, c)
    return {"label": label, "M": M, "N": N, "K": K, "seed": seed, "scale": scale, "bias": bias,
            "activation": activation, "gateRows": gate_rows, "accumulate": accumulate, "out": f32_json(out)}


SPECIAL = [0.0, 0.5, -0.5, 1.0, -1.0, 2.699, -2.699, 5.0, -5.0, 10.0, -10.0, 20.0, -20.0]


def special(activation):
    x = torch.tensor(SPECIAL, dtype=torch.float32).double()
    return {"activation": activation, "out": f32_json(ACTIVATIONS[activation](x))}


golden = {
    "meta": {"torch": torch.__version__},
    "special": {"x": f32_json(torch.tensor(SPECIAL)), "cases": [special(k) for k in ("gelu", "gelu_tanh", "silu")]},
    "cases": [
        case("1x1x1 bias gelu", 1, 1, 1, 31, scale=4, bias=True, activation="gelu"),
        case("3x5x7 gelu", 3, 5, 7, 33, scale=2, activation="gelu"),
        case("3x5x7 gelu_tanh", 3, 5, 7, 33, scale=2, activation="gelu_tanh"),
        case("4x9x130 bias silu", 4, 9, 130, 35, scale=0.25, bias=True, activation="silu"),
        case("6x5x7 gate 3 accumulate", 6, 5, 7, 37, gate_rows=3, accumulate=True),
        case("6x4x9 bias gelu gate 2 accumulate", 6, 4, 9, 39, scale=2, bias=True, activation="gelu", gate_rows=2,
             accumulate=True),
        case("8x6x5 gelu_tanh gate 1", 8, 6, 5, 41, scale=2, activation="gelu_tanh", gate_rows=1),
        case("5x7x33 bias silu gate 5 accumulate", 5, 7, 33, 43, scale=0.5, bias=True, activation="silu", gate_rows=5,
             accumulate=True),
    ],
}
out = pathlib.Path(__file__).with_name("epilogue.json")
out.write_text(json.dumps(golden, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({out.stat().st_size} bytes, torch {torch.__version__})")
