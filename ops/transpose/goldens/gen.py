"""Goldens for ops/transpose from torch (run on the GPU machine: python3 ops/transpose/goldens/gen.py).

Writes transpose.json beside this file: x.t().contiguous() on CPU for x = arange(rows * cols) in
float32, reshaped to [rows, cols]. The input is not stored (transpose.test.ts builds the same
arange), and each output value is the flat index it was read from, written as an integer.
"""
import json, pathlib, torch

# 1 x 1, a row, a column, 33 x 65 (tiles cut on both sides), and a row of 4099.
SHAPES = [(1, 1), (1, 7), (7, 1), (33, 65), (2, 4099)]

cases = []
for rows, cols in SHAPES:
    x = torch.arange(rows * cols, dtype=torch.float32).reshape(rows, cols)
    cases.append({"rows": rows, "cols": cols, "out": x.t().contiguous().flatten().long().tolist()})
out = pathlib.Path(__file__).with_name("transpose.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
