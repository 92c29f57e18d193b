"""Goldens for ops/dequant_transpose from torch (run on the GPU machine: python3 ops/dequant_transpose/goldens/gen.py).

Writes dequant_transpose.json beside this file. For a weight of int8 codes [N, K] over the format's full range
[-128, 127] and float32 scales [N], each case stores the weight packed as the op reads it (four codes per
uint32, least-significant byte first, two's complement, each row's last word padded with zero bytes), the
scales, and (codes * scales[:, None]).T, computed in float64 and rounded once to float32, which is exact float32
multiplication. Large outputs keep every "stride"-th element. Awkward sizes: 1x1, K not a multiple of 4 or of
the 32-wide tile, N above the tile, and a row of 4099.
"""
import json, pathlib, struct, torch


def f32_json(t):
    """A tensor as a flat list of the shortest numbers that read back as the same float32."""
    out = []
    for v in t.float().flatten().tolist():
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == v)
        out.append(int(s) if s.is_integer() else s)
    return out


def pack_q8(codes):
    """[N, K] codes in [-128, 127] as [N, ceil(K/4)] words, least-significant byte first."""
    N, K = codes.shape
    padded = torch.zeros(N, 4 * ((K + 3) // 4), dtype=torch.int64)
    padded[:, :K] = codes & 0xFF
    b = padded.reshape(N, -1, 4)
    return (b[..., 0] | (b[..., 1] << 8) | (b[..., 2] << 16) | (b[..., 3] << 24)).flatten().tolist()


def case(N, K, stride=1):
    codes = torch.randint(-128, 128, (N, K))
    scale = torch.rand(N) * 0.02 + 0.001
    out = (codes.double() * scale.double()[:, None]).t().float()
    return {"label": f"N={N} K={K}", "N": N, "K": K, "weight": pack_q8(codes), "scales": f32_json(scale),
            "stride": stride, "out": f32_json(out.flatten()[::stride])}


torch.manual_seed(0)
cases = [case(1, 1), case(3, 5), case(33, 65, stride=7), case(1, 4099, stride=16)]
out = pathlib.Path(__file__).with_name("dequant_transpose.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, allow_nan=False,
                          separators=(",", ":")))
print(f"wrote {out} ({out.stat().st_size} bytes, {len(cases)} cases, torch {torch.__version__})")
