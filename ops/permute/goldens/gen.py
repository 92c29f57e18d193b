"""Goldens for ops/permute from torch (run on the GPU machine: python3 ops/permute/goldens/gen.py).

Writes permute.json beside this file: x.permute(*dims).contiguous() on CPU for x = arange(n) in
float32, reshaped to each shape. The input is not stored (permute.test.ts builds the same arange),
and each output value is the flat index it was read from, written as an integer.
"""
import json, math, pathlib, torch

CASES = [
    ([1], [0]),                                     # a single element
    ([300], [-1]),                                  # rank 1, 300 elements, a negative entry
    ([3, 5], [1, 0]),                               # the transpose
    ([2, 3, 4], [1, 2, 0]),                         # a rank-3 permutation...
    ([2, 3, 4], [2, 0, 1]),                         # ...and its inverse
    ([2, 3, 4], [-1, 0, 1]),                        # negative entries: the same as [2, 0, 1]
    ([2, 3, 4, 5], [3, 1, 0, 2]),
    ([2, 1, 3, 2, 2], [4, 2, 0, 3, 1]),
    ([2, 3, 1, 2, 3, 2], [5, 3, 1, 4, 0, 2]),       # rank 6, the highest accepted
    ([2, 1, 4099], [-1, 0, 1]),                     # a row of 4099 turned into a column
]

cases = []
for shape, dims in CASES:
    x = torch.arange(math.prod(shape), dtype=torch.float32).reshape(shape)
    cases.append({"shape": shape, "dims": dims, "out": x.permute(*dims).contiguous().flatten().long().tolist()})
m = torch.arange(15, dtype=torch.float32).reshape(3, 5)
meta = {"torch": torch.__version__, "t_equals_permute_1_0": torch.equal(m.t().contiguous(), m.permute(1, 0).contiguous())}
out = pathlib.Path(__file__).with_name("permute.json")
out.write_text(json.dumps({"meta": meta, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
