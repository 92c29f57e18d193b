"""Goldens for ops/flash_attention from torch (run on the GPU machine:
python3 ops/flash_attention/goldens/gen.py).

Writes flash_attention.json beside this file, made as ops/attention's (../../attention/goldens/sdpa_goldens.py):
sizes that are not multiples of the kernel's tiles (128 query rows, 31-key blocks), L = 1, D = 64, 80,
112, 128 with Dv != D, causal both ways, masks that broadcast, a fully masked row and large logits.
"""
import sys, pathlib, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "attention" / "goldens"))
from sdpa_goldens import case, write
from torch.nn.attention.bias import causal_lower_right

torch.manual_seed(34)
inf = float("inf")
key_mask = torch.zeros(1, 1, 1, 70)
key_mask[..., 40:] = -inf
row_mask = torch.zeros(1, 1, 3, 33)
row_mask[0, 0, 1, :] = -inf  # the middle row masked everywhere
cases = [
    case("L=130 S=70 D=8 causal (two row tiles, three key blocks)", 1, 1, 130, 70, 8, causal=True),
    case("L=1 S=63 D=128 (decode)", 1, 2, 1, 63, 128),
    case("L=5 S=32 D=64 Dv=80", 1, 1, 5, 32, 64, Dv=80),
    case("L=3 S=40 D=112 Dv=136 scale=0.05", 1, 1, 3, 40, 112, Dv=136, scale=0.05),
    case("causal lower-right L=7 S=40", 1, 1, 7, 40, 8, causal=True, torch_mask=causal_lower_right(7, 40),
         query_offset=33),
    case("key mask [1,1,1,S] at S=70", 1, 2, 6, 70, 8, mask=key_mask),
    case("a fully masked row", 1, 1, 3, 33, 8, mask=row_mask),
    case("logits in the thousands", 1, 1, 4, 33, 16, q_scale=300.0),
]
write(__file__, "flash_attention.json", cases)
