"""Non-finite goldens for ops/attention from torch (python3 ops/attention/goldens/nonfinite.py).

Writes nonfinite.json beside this file: the family's non-finite cases (sdpa_nonfinite.py says what each
holds and which of torch's backends the op follows where they differ) at 2 heads.
"""
import pathlib
from sdpa_nonfinite import cases, write

write(pathlib.Path(__file__).with_name("nonfinite.json"), cases(H=2, kv_heads=2, seed=25))
