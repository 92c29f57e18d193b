"""Goldens for gqa's KV-cache path from torch (python3 ops/gqa/goldens/gen_cache.py; CPU torch is enough).

Writes cache.json beside this file. A call of L rows at positions pos0 .. pos0 + L - 1 on a cache whose
positions before pos0 hold earlier calls' keys and values: each row's fused projection [q | k | v] is
split, q and k rotated by RoPE in adjacent pairs ((a, b) at pair j -> (a cos - b sin, b cos + a sin),
cos and sin of position * inv_freq with theta 10000), k and v written into the caches [kvHeads, maxSeq, D]
at the row's position, and every row attends causally over the cache (positions 0 ..= its own) with
F.scaled_dot_product_attention(..., enable_gqa=True): query head h reads KV head h // (H // kvHeads).
Computed in float64 from the float32 inputs, rounded to float32 once.
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def rotate(x, cos, sin):
    a, b = x[..., 0::2], x[..., 1::2]
    y = torch.empty_like(x)
    y[..., 0::2] = a * cos - b * sin
    y[..., 1::2] = b * cos + a * sin
    return y


def case(label, H, kv_heads, D, max_seq, L, pos0):
    qkv = torch.randn(L, (H + 2 * kv_heads) * D)
    keys = torch.randn(kv_heads, max_seq, D)
    values = torch.randn(kv_heads, max_seq, D)
    keys[:, pos0:] = 0  # not yet written
    values[:, pos0:] = 0
    inv_freq = 1.0 / (10000 ** (torch.arange(0, D, 2).double() / D))
    angles = torch.arange(max_seq).double()[:, None] * inv_freq[None, :]
    table = torch.stack([angles.cos(), angles.sin()], -1).float()  # [max_seq, D / 2, 2]
    c, s = table[..., 0].double(), table[..., 1].double()
    x = qkv.double().view(L, H + 2 * kv_heads, D)
    pos = torch.arange(pos0, pos0 + L)
    q = rotate(x[:, :H], c[pos][:, None], s[pos][:, None])
    k_new = rotate(x[:, H:H + kv_heads], c[pos][:, None], s[pos][:, None])
    k_all, v_all = keys.double().clone(), values.double().clone()
    k_all[:, pos] = k_new.float().double().transpose(0, 1)  # the cache holds float32
    v_all[:, pos] = x[:, H + kv_heads:].transpose(0, 1)
    visible = torch.arange(max_seq)[None, :] <= pos[:, None]  # [L, max_seq]
    out = F.scaled_dot_product_attention(q.transpose(0, 1)[None], k_all[None], v_all[None],
                                         attn_mask=visible[None, None], enable_gqa=True)[0].transpose(0, 1)
    return {"label": label, "H": H, "kvHeads": kv_heads, "D": D, "maxSeq": max_seq, "L": L, "pos0": pos0,
            "qkv": f32_json(qkv), "table": f32_json(table), "keys": f32_json(keys), "values": f32_json(values),
            "out": f32_json(out.float()), "keysAfter": f32_json(k_all.float()), "valuesAfter": f32_json(v_all.float())}


torch.manual_seed(0)
cases = [
    case("prefill: H=4 kvHeads=2 D=8, 3 rows after 2 cached", 4, 2, 8, 6, 3, 2),
    case("decode: H=3 kvHeads=1 D=12 at position 4", 3, 1, 12, 5, 1, 4),
    case("decode: H=2 kvHeads=2 D=4 at position 0", 2, 2, 4, 3, 1, 0),
]
out = pathlib.Path(__file__).with_name("cache.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
