"""Goldens for ops/elementwise from torch (run on the GPU machine: python3 ops/elementwise/goldens/gen.py).

Writes elementwise.json beside this file: inputs drawn with a fixed seed, outputs from torch on CPU
in float32. Awkward sizes included (length 1, not a multiple of 256).
"""
import json, pathlib, torch

torch.manual_seed(0)
cases = []
for n in (1, 7, 257):
    a, b = torch.randn(n), torch.randn(n)
    for op, fn in (("add", torch.add), ("multiply", torch.mul)):
        cases.append({"entry": "kernel", "op": op, "a": a.tolist(), "b": b.tolist(), "out": fn(a, b).tolist()})
for rows, cols in ((1, 1), (3, 3), (5, 33)):
    a, b = torch.randn(rows, cols), torch.randn(cols)
    for op, fn in (("add", torch.add), ("multiply", torch.mul)):
        cases.append({"entry": "rows", "op": op, "rows": rows, "cols": cols, "a": a.flatten().tolist(), "b": b.tolist(),
                      "out": fn(a, b).flatten().tolist()})
# The broadcast convention: a [3, 3] + c [3] aligns c from the right (along each row).
a = torch.arange(9, dtype=torch.float32).reshape(3, 3)
c = torch.tensor([1.0, 2.0, 3.0])
meta = {"torch": torch.__version__, "rows_alignment": {"a": a.flatten().tolist(), "c": c.tolist(),
        "a_plus_c": (a + c).flatten().tolist(), "a_plus_c_unsqueeze1": (a + c.unsqueeze(1)).flatten().tolist()}}
out = pathlib.Path(__file__).with_name("elementwise.json")
out.write_text(json.dumps({"meta": meta, "cases": cases}))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
