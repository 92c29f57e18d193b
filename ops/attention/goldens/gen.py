"""Goldens for ops/attention from torch (run on the GPU machine: python3 ops/attention/goldens/gen.py).

Writes attention.json beside this file (see sdpa_goldens.py for how each case is made). Awkward sizes
(L, S not multiples of 16; D = 64, 80, 112, 128; L = 1), the default scale and an explicit one, causal
upper-left with L != S (is_causal) and lower-right (torch.nn.attention.bias.causal_lower_right, our
queryOffset = S - L), float masks at [B,1,1,S] with -inf and at [B,H,L,S], a boolean mask (true =
attend) with a fully masked row (zeros: aten::_safe_softmax), and logits in the thousands.
"""
import sys, pathlib, torch
sys.path.insert(0, str(pathlib.Path(__file__).parent))
from sdpa_goldens import case, write
from torch.nn.attention.bias import causal_lower_right

torch.manual_seed(12)
inf = float("inf")
pad = torch.zeros(2, 1, 1, 9)
pad[0, 0, 0, 6:] = -inf
pad[1, 0, 0, 2] = -inf
bool_mask = torch.rand(1, 1, 4, 6) > 0.4
bool_mask[0, 0, 2, :] = False  # a fully masked row
cases = [
    case("D=64 L=5 S=7 default scale", 1, 2, 5, 7, 64),
    case("D=80 L=3 S=33 scale=0.3", 1, 1, 3, 33, 80, scale=0.3),
    case("D=112 L=1 S=17 (decode)", 1, 2, 1, 17, 112),
    case("D=128 L=9 S=9 causal", 1, 1, 9, 9, 128, causal=True),
    case("causal upper-left L=4 S=9 (is_causal)", 1, 2, 4, 9, 8, causal=True),
    case("causal lower-right L=4 S=9 (queryOffset = S - L)", 1, 2, 4, 9, 8, causal=True,
         torch_mask=causal_lower_right(4, 9), query_offset=5),
    case("causal L=9 S=4 (rows past the keys see all of them)", 1, 1, 9, 4, 8, causal=True),
    case("float mask [B,1,1,S] with -inf", 2, 2, 3, 9, 16, Dv=8, mask=pad),
    case("float mask [B,H,L,S]", 2, 2, 3, 5, 8, mask=torch.randn(2, 2, 3, 5)),
    case("float mask [1,H,1,S]", 1, 3, 2, 5, 8, mask=torch.randn(1, 3, 1, 5)),
    case("bool mask [1,1,L,S] with a fully masked row", 1, 2, 4, 6, 8, mask=bool_mask),
    case("logits in the thousands", 1, 1, 3, 10, 16, q_scale=200.0),
]
write(__file__, "attention.json", cases)
