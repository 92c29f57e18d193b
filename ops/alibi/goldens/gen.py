"""Goldens for ops/alibi from torch (run on the GPU machine: python3 ops/alibi/goldens/gen.py).

Writes alibi.json beside this file. The slopes are the paper's get_slopes (ofirpress/attention_with_
linear_biases, written here from the published code) for head counts that are and are not powers of
two (1, 8, 12, 20, 32); the bias is m * (j - (i + query_offset)) as a [1, H, L, S] torch tensor, in
float64, rounded to float32 once. "sdpa" composes it with a causal mask by addition and runs
torch.nn.functional.scaled_dot_product_attention with that float attn_mask (float64), and also records
BLOOM's m * j bias, which gives the same attention but not the same bias.
"""
import json, math, pathlib, struct, torch
import torch.nn.functional as F


def f32_json(t):
    out = []
    for v in t.flatten().tolist():
        if math.isinf(v):
            out.append("Infinity" if v > 0 else "-Infinity")
            continue
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == struct.unpack("f", struct.pack("f", v))[0])
        out.append(int(s) if s.is_integer() and s != 0 else s)
    return out


def get_slopes(n):
    def get_slopes_power_of_2(n):
        start = (2 ** (-2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio ** i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2]


def bias(heads, L, S, query_offset):
    m = torch.tensor(get_slopes(heads), dtype=torch.float64)
    rel = torch.arange(S, dtype=torch.float64)[None, :] - (torch.arange(L, dtype=torch.float64)[:, None] + query_offset)
    return (m[:, None, None] * rel[None])[None]  # [1, H, L, S]


cases = []
for heads, L, S, off in [(1, 3, 5, 0), (8, 4, 7, 3), (12, 5, 9, 4), (20, 3, 13, 10), (32, 1, 17, 16), (12, 6, 6, 0)]:
    cases.append({"H": heads, "L": L, "S": S, "queryOffset": off, "slopes": get_slopes(heads),
                  "out": f32_json(bias(heads, L, S, off).float())})

torch.manual_seed(0)
H, L, S, D, off = 12, 5, 8, 16, 3
q = torch.randn(1, H, L, D)
k = torch.randn(1, H, S, D)
v = torch.randn(1, H, S, D)
causal = torch.full((L, S), float("-inf")).triu(off + 1)  # key j visible iff j <= i + off
mask = bias(H, L, S, off) + causal.double()
out = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=mask)
m = torch.tensor(get_slopes(H), dtype=torch.float64)
bloom = (m[:, None, None] * torch.arange(S, dtype=torch.float64)[None, None, :]).expand(H, L, S)[None]
out_bloom = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=bloom + causal.double())
sdpa = {"H": H, "L": L, "S": S, "D": D, "queryOffset": off, "q": f32_json(q), "k": f32_json(k), "v": f32_json(v),
        "causal": f32_json(causal), "out": f32_json(out.float()), "outBloom": f32_json(out_bloom.float())}

path = pathlib.Path(__file__).with_name("alibi.json")
path.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases, "sdpa": sdpa},
                           separators=(",", ":")))
print(f"wrote {path} (torch {torch.__version__})")
