"""Non-finite goldens for ops/flash_attention from torch (python3 ops/flash_attention/goldens/nonfinite.py).

Writes nonfinite.json beside this file: the attention family's non-finite cases
(../../attention/goldens/sdpa_nonfinite.py says what each holds and which of torch's backends the op
follows where they differ) at 2 heads.
"""
import sys, pathlib
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "attention" / "goldens"))
from sdpa_nonfinite import cases, write

write(pathlib.Path(__file__).with_name("nonfinite.json"), cases(H=2, kv_heads=2, seed=34))
