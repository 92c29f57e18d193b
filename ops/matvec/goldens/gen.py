"""Goldens for ops/matvec from torch (run on the GPU machine: python3 ops/matvec/goldens/gen.py).

Writes matvec.json beside this file. Inputs are not stored: weights and x come from a 32-bit LCG
whose every value is a float32 in [-1, 1) (a 24-bit integer over 2^23), which matvec.test.ts
regenerates from the same seed, so a 4099-column row costs a few bytes.

- f32: torch.mv(W, x) in float32 (y32) and in float64 (y64).
- q8: codes and scales made here by per-row absmax quantization (scale = f32(absmax / 127), code =
  round-half-up((w * 127) / absmax) in float64: w * 127 is exact and the one division cannot move a
  quotient across a half-integer, so this is the exact quotient rounded), packed four to a uint32, least significant byte
  first, two's complement, zero padding; y = (codes @ x) * scale in float64, which is exact before
  the final multiply. Codes are stored for the small cases only.
- q4: the q4 group-128 conventions written out here independently of the library: per row and
  128 columns, scale = f32(absmax / 7), code = round-half-up((w * 7) / absmax), the exact quotient
  rounded as for q8, a group of zeros giving scale 0 and codes 0; packed eight to a uint32, least
  significant nibble first. Each group's dot product is exact in float64; the groups are summed
  left to right, as the reference does, so the reference must match exactly.
- q4_conventions: a hand-written 6 x 7 weight whose codes pin ties (2.5 -> 3, -2.5 -> -2), the
  exact quotient (w = f32(0.92857146) at absmax 1 -> 7, where 1 / f32(1/7) gives 6; bf16 weights at
  half their row's absmax -> 4 and -3, where w times a reciprocal rounded first gives -4 for the
  second: torch forms `7 / absmax` as reciprocal(absmax) * 7, which for the first lands above the
  tie, so its 4 agrees there, while JavaScript's w * (7 / absmax) gives 3), the symmetric range and
  an all-zero row; with the codes the three rejected alternatives would give.
Round-half-up is floor(v) + (v - floor(v) >= 0.5), which is JavaScript's Math.round.
"""
import json, pathlib, torch

GROUP = 128


def lcg(seed, n):
    """n values in [-1, 1), each exactly a float32: the top 24 bits of a 32-bit LCG's state."""
    out, s = [], seed
    for _ in range(n):
        s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
        out.append(((s >> 8) - (1 << 23)) / (1 << 23))
    return torch.tensor(out, dtype=torch.float64)


def round_half_up(v):
    f = torch.floor(v)
    return f + ((v - f) >= 0.5).double()


def quantize(w64, qmax, group):
    """Symmetric absmax quantization of [N, K] float64 (float32-exact) weights per `group` columns."""
    N, K = w64.shape
    G = -(-K // group)
    padded = torch.zeros(N, G * group, dtype=torch.float64)
    padded[:, :K] = w64
    groups = padded.view(N, G, group)
    absmax = groups.abs().amax(-1, keepdim=True)
    scales = (absmax / qmax).float().squeeze(-1)
    safe = torch.where(absmax > 0, absmax, torch.ones_like(absmax))
    codes = round_half_up((groups * qmax) / safe).view(N, G * group)[:, :K].to(torch.int64)
    return codes, scales


def pack(codes, bits):
    """[N, K] int64 codes -> [N, ceil(K / (32 / bits))] words, least significant field first."""
    per = 32 // bits
    N, K = codes.shape
    words = -(-K // per)
    padded = torch.zeros(N, words * per, dtype=torch.int64)
    padded[:, :K] = codes
    fields = (padded & ((1 << bits) - 1)).view(N, words, per)
    shifts = torch.arange(per, dtype=torch.int64) * bits
    return (fields << shifts).sum(-1).flatten().tolist()


def inputs(N, K, seed):
    return lcg(seed, N * K).view(N, K), lcg(seed + 1, K)


def f32_case(N, K, seed):
    w, x = inputs(N, K, seed)
    return {"N": N, "K": K, "seed": seed, "y32": torch.mv(w.float(), x.float()).tolist(),
            "y64": torch.mv(w, x).tolist()}


def q8_case(N, K, seed):
    w, x = inputs(N, K, seed)
    codes, scales = quantize(w, 127, K)
    scale = scales[:, 0]
    y = (codes.double() @ x) * scale.double()
    case = {"N": N, "K": K, "seed": seed, "packed": pack(codes, 8), "scales": scale.tolist(), "y": y.tolist()}
    if N * K <= 1024:
        case["codes"] = codes.flatten().tolist()
    return case


def q4_case(N, K, seed):
    w, x = inputs(N, K, seed)
    codes, scales = quantize(w, 7, GROUP)
    G = scales.shape[1]
    padded_codes = torch.zeros(N, G * GROUP, dtype=torch.float64)
    padded_codes[:, :K] = codes.double()
    padded_x = torch.zeros(G * GROUP, dtype=torch.float64)
    padded_x[:K] = x
    dots = (padded_codes.view(N, G, GROUP) * padded_x.view(G, GROUP)).sum(-1)
    y = []
    for n in range(N):
        acc = 0.0
        for g in range(G):
            acc += float(scales[n, g]) * float(dots[n, g])
        y.append(acc)
    case = {"N": N, "K": K, "seed": seed, "packed": pack(codes, 4), "scales": scales.flatten().tolist(), "y": y}
    if N * K <= 1024:
        case["codes"] = codes.flatten().tolist()
    return case


def q4_conventions():
    rows = [[1.0, 0.9285714626312256, 0.2142857164144516, 0.5, -0.5, 0.0, 0.25],
            [7.0, 2.5, -2.5, 3.5, -3.5, 0.5, -0.5],
            [-1.0, 1.0, 0.5, -0.5, 0.75, -0.75, 0.125],
            [0.0] * 7,
            [0.04711914, 0.02355957, 0.0, 0.0, 0.0, 0.0, 0.0],
            [0.20605469, -0.103027344, 0.0, 0.0, 0.0, 0.0, 0.0]]
    w = torch.tensor(rows, dtype=torch.float32).double()
    codes, scales = quantize(w, 7, GROUP)
    absmax = w.abs().amax(-1, keepdim=True)
    reciprocal = torch.where(absmax > 0, 7 / absmax, torch.zeros_like(absmax))
    inverse_scale = torch.where(scales.double() > 0, 1 / scales.double(), torch.zeros_like(scales.double()))
    return {"N": 6, "K": 7, "x": w.flatten().tolist(), "codes": codes.flatten().tolist(),
            "scales": scales.flatten().tolist(),
            "codes_half_to_even": torch.round(w * reciprocal).to(torch.int64).flatten().tolist(),
            "codes_reciprocal_in_f64": round_half_up(w * reciprocal).to(torch.int64).flatten().tolist(),
            "codes_reciprocal_of_f32_scale": round_half_up(w * inverse_scale).to(torch.int64).flatten().tolist()}


golden = {
    "meta": {"torch": torch.__version__},
    "f32": [f32_case(N, K, seed) for N, K, seed in ((1, 1, 1), (3, 7, 2), (5, 257, 3), (2, 4099, 4), (3, 4100, 5))],
    "q8": [q8_case(N, K, seed) for N, K, seed in ((1, 1, 11), (3, 7, 12), (2, 64, 13), (2, 300, 14), (1, 4099, 15))],
    "q4": [q4_case(N, K, seed) for N, K, seed in ((1, 1, 21), (3, 7, 22), (2, 256, 23), (2, 300, 24), (1, 4099, 25))],
    "q4_conventions": q4_conventions(),
}
out = pathlib.Path(__file__).with_name("matvec.json")
out.write_text(json.dumps(golden, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({out.stat().st_size} bytes, torch {torch.__version__})")
