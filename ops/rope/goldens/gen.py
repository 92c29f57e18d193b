"""Goldens for ops/rope (rope and ropeAxes) from torch and transformers (run on the GPU machine:
python3 ops/rope/goldens/gen.py). Writes rope.json beside this file.

- freqs: inv_freq and attention factor of transformers' LlamaRotaryEmbedding for each rope_type
  (default, linear, dynamic at a sequence past max_position_embeddings and one below it, yarn, yarn
  with DeepSeek's mscale / mscale_all_dim, llama3); dynamic is taken from
  ROPE_INIT_FUNCTIONS["dynamic"](config, device, seq_len) and, as a check, from the cos of a forward
  pass whose largest position id is seq_len - 1.
- llama: transformers' apply_rotary_pos_emb (rotate_half) on q = x Wq^T and k = x Wk^T with
  LlamaRotaryEmbedding's cos/sin (yarn, so the attention factor is in them), 5 tokens at positions
  7..11 (a KV-cache offset of 7), 3 query heads, 1 KV head, head_dim 8: the rope test permutes Wq
  and Wk with permuteRopeChannels, rotates with rope, and must land on these values in the permuted
  channel order, with the same attention scores.
- fractional: cos/sin rotation at positions 0.5, 2.25, 1e3 + 0.125 written as the formula, in float64.
- zimage: Z-Image's RopeEmbedder + apply_rotary_emb (Tongyi-MAI/Z-Image @ 26f23ed), written here
  from the published code: axes [32, 48, 48], theta 256, view_as_complex pairing.
- cosmos: Cosmos-Predict2's VideoRopePosition3DEmb.generate_embeddings (head_dim 128: t 44, h 42,
  w 42; h/w extrapolation ratio 4, so theta 10000 * 4 ** (42 / 40)) applied as transformer-engine's
  non-interleaved apply_rotary_pos_emb (x * cos + rotate_half(x) * sin over the whole head).
"""
import json, math, pathlib, struct, sys, torch
import transformers
from transformers import LlamaConfig
from transformers.models.llama import modeling_llama
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS


def f32_json(t):
    out = []
    for v in torch.as_tensor(t).flatten().tolist():
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == struct.unpack("f", struct.pack("f", v))[0])
        out.append(int(s) if s.is_integer() and s != 0 else s)
    return out


def make_config(head_dim, heads, kv_heads, max_pos, theta, params):
    """A LlamaConfig with the rope parameters, in transformers 5's rope_parameters form (4's as fallback)."""
    common = dict(hidden_size=head_dim * heads, num_attention_heads=heads, num_key_value_heads=kv_heads,
                  head_dim=head_dim, max_position_embeddings=max_pos, num_hidden_layers=1,
                  intermediate_size=16, vocab_size=16)
    rope_parameters = {"rope_type": params.get("rope_type", "default"), "rope_theta": theta, **params}
    try:
        config = LlamaConfig(**common, rope_parameters=rope_parameters)
        got = getattr(config, "rope_parameters", None)
        assert got is not None and got.get("rope_type") == rope_parameters["rope_type"], got
        return config, "rope_parameters"
    except Exception as e:  # transformers 4.x
        print("rope_parameters not accepted:", repr(e), file=sys.stderr)
        scaling = None if rope_parameters["rope_type"] == "default" else {
            "type": rope_parameters["rope_type"], **{k: v for k, v in params.items() if k != "rope_type"}}
        return LlamaConfig(**common, rope_theta=theta, rope_scaling=scaling), "rope_scaling"


FREQ_CASES = [
    ("default", 128, 10000.0, 4096, {"rope_type": "default"}, {}),
    ("linear", 64, 10000.0, 4096, {"rope_type": "linear", "factor": 4.0}, {"type": "linear", "factor": 4}),
    ("yarn", 128, 10000.0, 32768, {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096},
     {"type": "yarn", "factor": 8, "originalMaxPositionEmbeddings": 4096}),
    ("yarn mscale", 64, 10000.0, 16384,
     {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 16.0,
      "beta_slow": 2.0, "mscale": 0.707, "mscale_all_dim": 1.0},
     {"type": "yarn", "factor": 4, "originalMaxPositionEmbeddings": 4096, "betaFast": 16, "betaSlow": 2,
      "mscale": 0.707, "mscaleAllDim": 1}),
    ("llama3", 128, 500000.0, 131072,
     {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 8192},
     {"type": "llama3", "factor": 8, "lowFreqFactor": 1, "highFreqFactor": 4, "originalMaxPositionEmbeddings": 8192}),
]

freqs = []
api = None
for label, dim, theta, max_pos, params, ours in FREQ_CASES:
    config, api = make_config(dim, 2, 2, max_pos, theta, params)
    emb = modeling_llama.LlamaRotaryEmbedding(config)
    freqs.append({"label": label, "headDim": dim, "theta": theta, "scaling": ours or None,
                  "invFreq": f32_json(emb.inv_freq.float()), "attentionFactor": float(emb.attention_scaling)})

# Dynamic NTK: max_position_embeddings 2048, factor 2, at seq_len 5000 (rescaled) and 1000 (not).
for seq_len in (5000, 1000):
    dim, theta, max_pos = 64, 10000.0, 2048
    config, api = make_config(dim, 2, 2, max_pos, theta, {"rope_type": "dynamic", "factor": 2.0})
    inv_freq, af = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len=seq_len)
    emb = modeling_llama.LlamaRotaryEmbedding(config)
    x = torch.zeros(1, seq_len, dim * 2)
    cos, _ = emb(x, torch.arange(seq_len)[None, :])
    # The forward pass's cos at the last position, channel 1 (pair 1): cos(last * inv_freq[1]).
    freqs.append({"label": f"dynamic seq_len {seq_len}", "headDim": dim, "theta": theta,
                  "scaling": {"type": "dynamic", "factor": 2, "maxPositionEmbeddings": max_pos, "seqLen": seq_len},
                  "invFreq": f32_json(inv_freq.float()), "attentionFactor": float(af),
                  "forwardCosLast": f32_json(cos[0, -1, :dim // 2].float())})

# apply_rotary_pos_emb on a tiny Llama attention's q and k.
torch.manual_seed(0)
S, H, HKV, D, hidden, offset = 5, 3, 1, 8, 12, 7
config, api = make_config(D, H, HKV, 64, 100.0,
                          {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16})
emb = modeling_llama.LlamaRotaryEmbedding(config)
x = torch.randn(S, hidden)
wq = torch.randn(H * D, hidden) / hidden ** 0.5
wk = torch.randn(HKV * D, hidden) / hidden ** 0.5
q = (x.double() @ wq.double().T).float().view(1, S, H, D).transpose(1, 2)
k = (x.double() @ wk.double().T).float().view(1, S, HKV, D).transpose(1, 2)
position_ids = torch.arange(offset, offset + S)[None, :]
cos, sin = emb(x[None], position_ids)
q_embed, k_embed = modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
scores = q_embed @ k_embed.transpose(-1, -2)  # [1, H, S, S] (k broadcast over the query heads)
llama = {"S": S, "H": H, "HKV": HKV, "D": D, "hidden": hidden, "offset": offset, "theta": 100.0,
         "scaling": {"type": "yarn", "factor": 4, "originalMaxPositionEmbeddings": 16},
         "attentionFactor": float(emb.attention_scaling),
         "x": f32_json(x), "wq": f32_json(wq), "wk": f32_json(wk),
         "qEmbed": f32_json(q_embed[0].transpose(0, 1)), "kEmbed": f32_json(k_embed[0].transpose(0, 1)),
         "scores": f32_json(scores[0])}

# Fractional positions, the formula in float64 on float32 inputs (adjacent pairs).
positions = torch.tensor([0.5, 2.25, 1000.125])
xf = torch.randn(3, 2, 6)
inv = 1.0 / (10000.0 ** (torch.arange(0, 6, 2, dtype=torch.float64) / 6))
inv32 = inv.float().double()
ang = positions.double()[:, None] * inv32[None, :]
a, b = xf.double()[..., 0::2], xf.double()[..., 1::2]
c, s = torch.cos(ang)[:, None, :], torch.sin(ang)[:, None, :]
outf = torch.stack([a * c - b * s, a * s + b * c], dim=-1).flatten(-2)
fractional = {"positions": f32_json(positions), "x": f32_json(xf), "out": f32_json(outf.float())}


# Z-Image's RopeEmbedder and apply_rotary_emb, from Tongyi-MAI/Z-Image @ 26f23ed.
def zimage_freqs_cis(dims, ends, theta):
    out = []
    for d, e in zip(dims, ends):
        f = 1.0 / (theta ** (torch.arange(0, d, 2, dtype=torch.float64) / d))
        f = torch.outer(torch.arange(e, dtype=torch.float64), f).float()
        out.append(torch.polar(torch.ones_like(f), f).to(torch.complex64))
    return out


def zimage_apply(x_in, freqs_cis):
    xc = torch.view_as_complex(x_in.float().reshape(*x_in.shape[:-1], -1, 2))
    return torch.view_as_real(xc * freqs_cis.unsqueeze(2)).flatten(3).type_as(x_in)


zdims, ztheta, zheads = [32, 48, 48], 256.0, 2
tables = zimage_freqs_cis(zdims, [64, 128, 128], ztheta)
ids = torch.tensor([[0, 0, 0], [0, 0, 1], [0, 3, 5], [1, 7, 2], [5, 120, 127], [63, 1, 99], [2, 2, 2]])
fc = torch.cat([tables[i][ids[:, i]] for i in range(3)], dim=-1)  # [N, 64]
zx = torch.randn(1, ids.shape[0], zheads, sum(zdims))
zout = zimage_apply(zx, fc[None])
zimage = {"axesDims": zdims, "theta": ztheta, "heads": zheads, "positions": ids.flatten().tolist(),
          "x": f32_json(zx), "out": f32_json(zout)}


# Cosmos-Predict2's VideoRopePosition3DEmb (generate_embeddings) and TE's non-interleaved rotation.
def cosmos_freqs(head_dim, T, Hh, W, h_ratio, w_ratio, t_ratio):
    dim_h = head_dim // 6 * 2
    dim_w = dim_h
    dim_t = head_dim - 2 * dim_h
    seq = torch.arange(max(Hh, W, T), dtype=torch.float)
    spatial_range = torch.arange(0, dim_h, 2)[: dim_h // 2].float() / dim_h
    temporal_range = torch.arange(0, dim_t, 2)[: dim_t // 2].float() / dim_t
    h_theta = 10000.0 * h_ratio ** (dim_h / (dim_h - 2))
    w_theta = 10000.0 * w_ratio ** (dim_w / (dim_w - 2))
    t_theta = 10000.0 * t_ratio ** (dim_t / (dim_t - 2))
    h_freqs = 1.0 / (h_theta ** spatial_range)
    w_freqs = 1.0 / (w_theta ** spatial_range)
    t_freqs = 1.0 / (t_theta ** temporal_range)
    emb_h = torch.outer(seq[:Hh], h_freqs)
    emb_w = torch.outer(seq[:W], w_freqs)
    emb_t = torch.outer(seq[:T], t_freqs)  # fps = base_fps: upstream's seq[:T] / fps * base_fps
    em = torch.cat([emb_t[:, None, None, :].expand(T, Hh, W, -1),
                    emb_h[None, :, None, :].expand(T, Hh, W, -1),
                    emb_w[None, None, :, :].expand(T, Hh, W, -1)] * 2, dim=-1)
    return em.reshape(T * Hh * W, 1, 1, head_dim).float(), [dim_t, dim_h, dim_w], [t_theta, h_theta, w_theta]


def te_rotate_half(x):
    x1, x2 = torch.chunk(x, 2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


T, Hh, W, cheads = 2, 3, 2, 3
cf, cdims, cthetas = cosmos_freqs(128, T, Hh, W, 4.0, 4.0, 1.0)
cx = torch.randn(T * Hh * W, 1, cheads, 128)  # "sbhd"
cout = (cx * torch.cos(cf) + te_rotate_half(cx) * torch.sin(cf)).float()
cpos = [[t, h, w] for t in range(T) for h in range(Hh) for w in range(W)]
cosmos = {"axesDims": cdims, "theta": cthetas, "heads": cheads, "positions": sum(cpos, []),
          "x": f32_json(cx), "out": f32_json(cout)}

out = pathlib.Path(__file__).with_name("rope.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__, "transformers": transformers.__version__,
                                    "config_api": api},
                           "freqs": freqs, "llama": llama, "fractional": fractional, "zimage": zimage,
                           "cosmos": cosmos}, separators=(",", ":")))
print(f"wrote {out} (torch {torch.__version__}, transformers {transformers.__version__}, {api})")
