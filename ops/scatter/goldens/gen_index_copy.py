"""Goldens for scatter's indexCopy from torch (CPU, float32; python3 ops/scatter/goldens/gen_index_copy.py).

Writes index_copy.json beside this file: out.view(outer, rows, cols).index_copy_(1, index, src) with a
fixed seed, for a single element, a block structure (outer > 1, so the indexed axis is the middle one),
a KV-cache-like update (one position of several heads), a prefill-like one (the first n positions in
order), an empty index, and rows whose count is not a multiple of anything. Also records what the
conventions are measured against: torch raises for an index of -1 or rows.
"""
import json, pathlib, torch


def index_copy(out, src, index, outer, rows, cols):
    view = out.clone().view(outer, rows, cols)
    return view.index_copy_(1, index, src.view(outer, len(index), cols)).flatten()


def raises(i, rows):
    try:
        torch.zeros(1, rows, 1).index_copy_(1, torch.tensor([i]), torch.ones(1, 1, 1))
    except (IndexError, RuntimeError):
        return True
    return False


torch.manual_seed(0)
cases = []
for outer, rows, cols, index in ((1, 1, 1, [0]), (3, 5, 4, [4, 1]), (4, 6, 8, [5]), (2, 7, 8, [0, 1, 2, 3]),
                                 (2, 3, 5, []), (1, 37, 3, [36, 0, 17, 5, 30])):
    out = torch.randn(outer * rows * cols)
    src = torch.randn(outer * len(index) * cols)
    result = index_copy(out, src, torch.tensor(index, dtype=torch.long), outer, rows, cols)
    cases.append({"outer": outer, "rows": rows, "cols": cols, "index": index, "out": out.tolist(), "src": src.tolist(),
                  "result": result.tolist()})

meta = {"torch": torch.__version__, "out_of_range": {"index": [-1, 3], "rows": 3, "raises": [raises(i, 3) for i in (-1, 3)]}}
path = pathlib.Path(__file__).with_name("index_copy.json")
path.write_text(json.dumps({"meta": meta, "cases": cases}, allow_nan=False, separators=(",", ":")))
print(f"wrote {path} ({len(cases)} cases, torch {torch.__version__})")
