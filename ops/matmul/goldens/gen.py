"""Goldens for ops/matmul from torch (run on the GPU machine: python3 ops/matmul/goldens/gen.py).

Writes matmul.json beside this file. To keep it small, the operands are not stored: pattern(length, seed)
below makes them from a hash of (seed, index), values in [-1, 1) on a 2^-23 grid (so exact in float32), and
matmul.test.ts makes the same ones. Stored are the shapes, seeds, outputs and, for the quantized weights,
their codes and scales.

- mm: torch.mm(a, b) for a [M, K] and b [K, N]: "out64" in float64 rounded once to float32 (the reference's
  definition) and "out32" in float32 on the CPU (torch's own float32 answer). Large outputs keep every
  "stride"-th element. Awkward sizes: 1x1x1, not multiples of 4 or of a tile, a K of 4099.
- q8: F.linear(a, dequant(w)) for a weight w [N, K] quantized per row in the script: scale = f32(absmax / 127),
  code = round_half_up((w * 127) / absmax) in float64 (w * 127 is exact and the one division cannot move a
  quotient across a half-integer: the exact quotient, rounded).
- q4: the same in groups of 128 columns: scale = f32(absmax / 7), code = round_half_up((w * 7) / absmax),
  codes in [-7, 7]. The test checks that quantizeQ4G128 agrees.
round_half_up(v) is floor(v) + (v - floor(v) >= 0.5): ties toward +inf, as Math.round. dequant(w) is
codes * scale in float64, so both products are exact float64 arithmetic on the stored values.
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
    """float64 values in [-1, 1), multiples of 2^-23, hashed from (seed, index); exact in float32."""
    return torch.tensor([(fmix32((seed * 0x9E3779B9 + i) & MASK) >> 8) / 2**23 - 1 for i in range(length)],
                        dtype=torch.float64)


def f32_json(t):
    """A tensor as a flat list of the shortest numbers that read back as the same float32."""
    out = []
    for v in t.float().flatten().tolist():
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == v)
        out.append(int(s) if s.is_integer() else s)
    return out


def round_half_up(v):
    floor = torch.floor(v)
    return floor + (v - floor >= 0.5).double()


def quantize(w, levels, group):
    """Codes and float32 scales of w [N, K], per group of `group` columns (group = K: per row)."""
    N, K = w.shape
    codes, scales = torch.zeros(N, K, dtype=torch.int64), []
    for g0 in range(0, K, group):
        block = w[:, g0:g0 + group]
        absmax = block.abs().amax(dim=1)
        assert bool((absmax > 0).all()), "the pattern gave an all-zero group; pick another seed"
        scales.append((absmax / levels).float())
        codes[:, g0:g0 + group] = round_half_up((block * levels) / absmax[:, None]).clamp(-levels, levels).long()
    return codes, torch.stack(scales, dim=1)


def dequant(codes, scales, group):
    return codes.double() * scales.double().repeat_interleave(group, dim=1)[:, :codes.shape[1]]


def mm_case(M, N, K, seed, stride=1):
    a = pattern(M * K, seed).reshape(M, K)
    b = pattern(K * N, seed + 1).reshape(K, N)
    return {"label": f"{M}x{N}x{K}", "M": M, "N": N, "K": K, "a_seed": seed, "b_seed": seed + 1, "stride": stride,
            "out64": f32_json(torch.mm(a, b).flatten()[::stride]),
            "out32": f32_json(torch.mm(a.float(), b.float()).flatten()[::stride])}


def q8_case(M, N, K, seed):
    a = pattern(M * K, seed).reshape(M, K)
    codes, scale = quantize(pattern(N * K, seed + 1).reshape(N, K), 127, K)
    return {"label": f"{M}x{N}x{K}", "M": M, "N": N, "K": K, "a_seed": seed, "codes": codes.flatten().tolist(),
            "scales": f32_json(scale), "out": f32_json(F.linear(a, dequant(codes, scale, K)))}


def q4_case(M, N, K, seed):
    a = pattern(M * K, seed).reshape(M, K)
    codes, scales = quantize(pattern(N * K, seed + 1).reshape(N, K), 7, 128)
    return {"label": f"{M}x{N}x{K}", "M": M, "N": N, "K": K, "a_seed": seed, "w_seed": seed + 1,
            "codes": codes.flatten().tolist(), "scales": f32_json(scales),
            "out": f32_json(F.linear(a, dequant(codes, scales, 128)))}


golden = {
    "meta": {"torch": torch.__version__},
    "mm": [mm_case(1, 1, 1, 1), mm_case(7, 13, 5, 3), mm_case(33, 65, 129, 5, stride=7),
           mm_case(130, 3, 17, 7, stride=3), mm_case(2, 3, 4099, 9)],
    "q8": [q8_case(1, 1, 1, 11), q8_case(3, 5, 7, 13), q8_case(4, 6, 260, 15)],
    "q4": [q4_case(1, 1, 1, 21), q4_case(3, 5, 7, 23), q4_case(4, 6, 260, 25)],
}
out = pathlib.Path(__file__).with_name("matmul.json")
out.write_text(json.dumps(golden, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({out.stat().st_size} bytes, torch {torch.__version__})")
