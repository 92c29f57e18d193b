"""Shared by the attention, flash_attention and gqa golden scripts (imported from beside them).

Each case draws float32 inputs with a fixed seed, calls torch 2.11's F.scaled_dot_product_attention on
them in float64 (the math path; its fully masked rows go through aten::_safe_softmax) and rounds the
result to float32 once: the definition the references implement, so a reference is held to one rounding.
Masks are written as torch got them: a float attn_mask as numbers ("-Infinity" for -inf), a boolean one
as 0/1 with "bool": true (the tests turn it into the additive form with keyPaddingBias).
"""
import json, pathlib, sys, torch
import torch.nn.functional as F
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from f32_json import f32_json


def lower_right(bias):
    """torch's causal_lower_right bias as the boolean mask it stands for (True = attend)."""
    try:
        return bias._materialize()
    except AttributeError:
        L, S = bias.seq_len_q, bias.seq_len_kv
        return torch.ones(L, S, dtype=torch.bool).tril(diagonal=S - L)


def case(label, B, H, L, S, D, Dv=None, kv_heads=None, scale=None, causal=False, mask=None, q_scale=1.0,
         torch_mask=None, query_offset=0):
    """One golden. `mask` is our mask (float or bool tensor of the broadcast shape) and also torch's attn_mask,
    unless `torch_mask` is given (causal_lower_right, which we express as causal + query_offset)."""
    Dv = Dv or D
    kv_heads = kv_heads or H
    q = (q_scale * torch.randn(B, H, L, D)).float()
    k = torch.randn(B, kv_heads, S, D).float()
    v = torch.randn(B, kv_heads, S, Dv).float()
    attn_mask = lower_right(torch_mask) if torch_mask is not None else mask
    if attn_mask is not None and attn_mask.dtype != torch.bool:
        attn_mask = attn_mask.double()
    out = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), attn_mask=attn_mask,
                                         is_causal=causal and torch_mask is None, scale=scale,
                                         enable_gqa=kv_heads != H).float()
    c = {"label": label, "B": B, "H": H, "kvHeads": kv_heads, "L": L, "S": S, "D": D, "Dv": Dv,
         "q": f32_json(q), "k": f32_json(k), "v": f32_json(v), "out": f32_json(out)}
    if scale is not None:
        c["scale"] = scale
    if causal:
        c["causal"] = True
        c["queryOffset"] = query_offset
    if mask is not None:
        c["maskShape"] = list(mask.shape)
        c["bool"] = mask.dtype == torch.bool
        c["mask"] = [int(x) for x in mask.flatten().tolist()] if mask.dtype == torch.bool else f32_json(mask.float())
    return c


def write(here, name, cases):
    out = pathlib.Path(here).with_name(name)
    out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, allow_nan=False,
                              separators=(",", ":")))
    print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
