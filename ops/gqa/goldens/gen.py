"""Goldens for ops/gqa from torch (run on the GPU machine: python3 ops/gqa/goldens/gen.py).

Writes gqa.json beside this file, made as ops/attention's (../../attention/goldens/sdpa_goldens.py) with
enable_gqa=True: H / kvHeads of 2 and 3 (H not a power of two), MQA, a float mask with a head axis over query heads, a boolean key
padding mask, causal lower-right for a query block appended to a cache.
"""
import sys, pathlib, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "attention" / "goldens"))
from sdpa_goldens import case, write
from torch.nn.attention.bias import causal_lower_right

torch.manual_seed(56)
NOT_WRITTEN = "H=8 kvHeads=2 L=1 S=300 D=128 (three chunks)"
padding = torch.ones(2, 1, 1, 12, dtype=torch.bool)
padding[1, 0, 0, 9:] = False
cases = [
    case("H=4 kvHeads=2 L=3 S=10 D=16", 1, 4, 3, 10, 16, kv_heads=2),
    case("MQA H=3 kvHeads=1 L=1 S=20 D=64", 1, 3, 1, 20, 64, kv_heads=1),
    case(NOT_WRITTEN, 1, 8, 1, 300, 128, kv_heads=2),
    case("H=6 kvHeads=2 L=2 S=40 D=80 mask [1,H,L,S]", 1, 6, 2, 40, 80, kv_heads=2, mask=torch.randn(1, 6, 2, 40)),
    case("bool key padding [B,1,1,S]", 2, 4, 1, 12, 8, kv_heads=2, mask=padding),
    case("causal lower-right L=3 S=20", 1, 4, 3, 20, 8, kv_heads=1, causal=True,
         torch_mask=causal_lower_right(3, 20), query_offset=17),
    case("H=4 kvHeads=2 L=20 S=20 D=8 causal (prefill path)", 1, 4, 20, 20, 8, kv_heads=2, causal=True),
]
# NOT_WRITTEN is drawn, so that the cases after it get the random inputs committed in gqa.json, but not
# written: its K and V made 1.9 MB of JSON. The kernel tests compare decode over several 128-key chunks
# at D = 128 with the reference instead.
write(__file__, "gqa.json", [c for c in cases if c["label"] != NOT_WRITTEN])
