"""Shared by the attention family's non-finite golden scripts (nonfinite.py beside this file and in
ops/flash_attention and ops/gqa, which import it).

Each case holds float32 q, k, v (and a mask) with NaN, +inf or -inf placed in one operand, and torch's
F.scaled_dot_product_attention of them on the CPU two ways:
- `out_math`: the math backend (the documented definition: scores, the additive mask, softmax through
  aten::_safe_softmax, p @ v) in float64, rounded to float32;
- `out_default`: what the call gives by default on the CPU (its fused flash kernel), in float32.
They differ in two places, which each case's `expect` says which of them the op follows:
- a row whose every score is NaN (a NaN query): math gives NaN, the fused kernel finds no maximum and
  gives 0; the op propagates the NaN ("math");
- a key hidden by `causal` whose k is NaN or infinite: math adds -inf to the NaN or +inf score (NaN),
  the fused kernel never forms that score; the op never forms it either ("default").
Elsewhere they agree ("both"), a key masked by -inf included: both multiply its v by its probability 0,
so a NaN or infinite v there gives NaN, and so does the op. One case differs from both ("hidden"): a
key hidden by `causal` is no part of the row for the op, its v not read, where both backends multiply
it by 0 at these sizes (the fused kernel skips key blocks hidden from all its rows, so its answer
depends on its block size); `out_hidden` is math's answer with those keys' v zeroed.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write  # write: for the scripts that import this module


def sdpa(q, k, v, mask, causal, backend, dtype, kv_heads):
    gqa = kv_heads != q.shape[1]
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q.to(dtype), k.to(dtype), v.to(dtype),
                                              attn_mask=None if mask is None else mask.to(dtype), is_causal=causal,
                                              enable_gqa=gqa)


def case(label, expect, q, k, v, mask=None, causal=False, hidden=None):
    """A case: the inputs and torch's answers; `hidden`, the [S] boolean of keys hidden from every row."""
    B, H, L, D = q.shape
    kv_heads, S, Dv = k.shape[1], k.shape[2], v.shape[3]
    math_out = sdpa(q, k, v, mask, causal, SDPBackend.MATH, torch.float64, kv_heads)
    default_out = sdpa(q, k, v, mask, causal, SDPBackend.FLASH_ATTENTION, torch.float32, kv_heads)
    c = {"label": label, "expect": expect, "B": B, "H": H, "kvHeads": kv_heads, "L": L, "S": S, "D": D, "Dv": Dv,
         "causal": causal, "q": golden(q), "k": golden(k), "v": golden(v), "out_math": golden(math_out),
         "out_default": golden(default_out)}
    if mask is not None:
        c["maskShape"] = list(mask.shape)
        c["mask"] = golden(mask)
    if hidden is not None:
        v_unread = v.clone()
        v_unread[:, :, hidden] = 0.0
        c["out_hidden"] = golden(sdpa(q, k, v_unread, mask, causal, SDPBackend.MATH, torch.float64, kv_heads))
    return c


def cases(H, kv_heads, seed):
    """The family's cases at H query heads over kv_heads KV heads: L 3, S 5, D = Dv = 4 (the fused CPU
    kernel needs Dv = D)."""
    torch.manual_seed(seed)
    B, L, S, D, Dv = 1, 3, 5, 4, 4
    q, k, v = torch.randn(B, H, L, D), torch.randn(B, kv_heads, S, D), torch.randn(B, kv_heads, S, Dv)
    out = []
    qs = q.clone()
    qs[0, 0, 1, 2], qs[0, H - 1, 0, 0], qs[0, H - 1, 2, 3] = nan, inf, -inf
    out.append(case("q holds NaN, +inf and -inf", "math", qs, k, v))
    ks = k.clone()
    ks[0, 0, 2, 1], ks[0, kv_heads - 1, 4, 0], ks[0, kv_heads - 1, 1, 3] = nan, inf, -inf
    out.append(case("k holds NaN, +inf and -inf", "both", q, ks, v))
    vs = v.clone()
    vs[0, 0, 1, 0], vs[0, kv_heads - 1, 3, 2], vs[0, kv_heads - 1, 0, 2] = nan, inf, -inf
    out.append(case("v holds NaN, +inf and -inf", "both", q, k, vs))
    mask = torch.zeros(B, 1, L, S)
    mask[0, 0, 0, :] = -inf  # a fully masked row: zeros
    mask[0, 0, 1, 2], mask[0, 0, 2, 1], mask[0, 0, 2, 3] = nan, inf, -inf
    out.append(case("the mask holds NaN, +inf, -inf and a row of -inf", "both", q, k, v, mask=mask))
    kh = k.clone()
    kh[0, 0, 4, 0], kh[0, kv_heads - 1, 3, 1], kh[0, kv_heads - 1, 4, 2] = nan, inf, -inf  # keys 3, 4: hidden
    out.append(case("causal: NaN, +inf and -inf in k at hidden keys", "default", q, kh, v, causal=True))
    vm = v.clone()
    vm[0, 0, 4, 0], vm[0, kv_heads - 1, 4, 1], vm[0, kv_heads - 1, 3, 2] = nan, inf, -inf
    key_mask = torch.zeros(B, 1, 1, S)
    key_mask[..., 3:] = -inf
    out.append(case("NaN, +inf and -inf in v at keys masked by -inf", "both", q, k, vm, mask=key_mask))
    hidden = torch.tensor([False, False, False, True, True])  # keys 3, 4: after row 2's
    out.append(case("causal: NaN, +inf and -inf in v at hidden keys", "hidden", q, k, vm, causal=True, hidden=hidden))
    row_mask = torch.zeros(B, 1, L, S)
    row_mask[0, 0, 1, :] = -inf
    out.append(case("a fully masked row, NaN, +inf and -inf in v", "both", q, k, vm, mask=row_mask))
    return out
