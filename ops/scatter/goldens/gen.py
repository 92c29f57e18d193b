"""Goldens for ops/scatter from torch (run on the GPU machine: python3 ops/scatter/goldens/gen.py).

Writes scatter.json beside this file: torch.zeros(rows, cols).scatter_add_(1, index, src) on CPU in float32,
with a fixed seed. Awkward sizes: 1 x 1, indexCols > cols (about 37 collisions per slot), an empty index (indexCols = 0),
and a 4099-wide output row, whose values are small integers so the file stays small.
Also records what the conventions are measured against: scatter_ on a collision, and what torch
does with an index of -1 or cols.
"""
import json, pathlib, torch


def numbers(t):
    """A float tensor's values, flattened, integral ones written as JSON integers."""
    return [int(x) if x.is_integer() else x for x in t.flatten().tolist()]


def scatter_add(index, src, cols):
    return torch.zeros(index.shape[0], cols).scatter_add_(1, index, src)


def scatter_add_raises(index, cols):
    try:
        scatter_add(torch.tensor([[index]]), torch.ones(1, 1), cols)
    except (IndexError, RuntimeError):
        return True
    return False


torch.manual_seed(0)
cases = []
for rows, index_cols, cols in ((1, 1, 1), (3, 5, 4), (1, 257, 7), (2, 0, 3), (1, 600, 4099)):
    src = torch.randint(-9, 10, (rows, index_cols)).float() if cols > 1000 else torch.randn(rows, index_cols)
    index = torch.randint(0, cols, (rows, index_cols))
    out = scatter_add(index, src, cols)
    cases.append({"rows": rows, "indexCols": index_cols, "cols": cols, "src": numbers(src), "index": index.flatten().tolist(), "out": numbers(out)})

index = torch.tensor([[0, 0, 0]])
src = torch.tensor([[1.0, 2.0, 4.0]])
meta = {
    "torch": torch.__version__,
    # Three writes to one slot: scatter_add_ sums them, scatter_ keeps one of them.
    "collision": {
        "rows": 1, "indexCols": 3, "cols": 2, "index": index.flatten().tolist(), "src": numbers(src),
        "scatter_add": numbers(scatter_add(index, src, 2)),
        "scatter": numbers(torch.zeros(1, 2).scatter_(1, index, src)),
    },
    # torch refuses an index of -1 or cols (here cols = 2).
    "out_of_range": {"index": [-1, 2], "scatter_add_raises": [scatter_add_raises(i, 2) for i in (-1, 2)]},
}
out = pathlib.Path(__file__).with_name("scatter.json")
out.write_text(json.dumps({"meta": meta, "cases": cases}, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
