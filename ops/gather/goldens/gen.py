"""Goldens for ops/gather from torch (run on the GPU machine: python3 ops/gather/goldens/gen.py).

Writes gather.json beside this file: torch.index_select(table, 0, index) on CPU in float32, with a
fixed seed. Table values are small integers so the file stays small (a gather copies values, so their
size does not matter). Awkward sizes: cols = 1, an empty index, cols = 257, a 4099-wide row.
Also records what the conventions are measured against: torch.gather on the same index, and what
torch does with an index of -1 or rows.
"""
import json, pathlib, torch


def numbers(t):
    """A float tensor's values, flattened, integral ones written as JSON integers."""
    return [int(x) if x.is_integer() else x for x in t.flatten().tolist()]


def index_select_raises(table, index):
    try:
        torch.index_select(table, 0, torch.tensor([index]))
    except (IndexError, RuntimeError):
        return True
    return False


torch.manual_seed(0)
cases = []
# (rows, cols, index): repeats in the third, and the second row of a 4099-wide table in the last.
for rows, cols, index in ((5, 1, [3]), (4, 3, []), (4, 257, [3, 0, 3, 1]), (2, 4099, [1])):
    table = torch.randint(0, 10, (rows, cols)).float()
    out = torch.index_select(table, 0, torch.tensor(index, dtype=torch.long))
    cases.append({"rows": rows, "cols": cols, "table": numbers(table), "index": index, "out": numbers(out)})

table = torch.arange(6, dtype=torch.float32).reshape(3, 2)
index = torch.tensor([2, 0])
meta = {
    "torch": torch.__version__,
    # Same table and index: index_select copies rows, torch.gather picks one element per index.
    "versus_torch_gather": {
        "table": numbers(table), "rows": 3, "cols": 2, "index": index.tolist(),
        "index_select": numbers(torch.index_select(table, 0, index)),
        "torch_gather": numbers(torch.gather(table, 0, index.unsqueeze(1))),
    },
    # torch refuses an index of -1 or rows; Python-style indexing reads -1 as the last row.
    "out_of_range": {
        "index": [-1, 3],
        "index_select_raises": [index_select_raises(table, i) for i in (-1, 3)],
        "python_indexing_minus_one": numbers(table[torch.tensor([-1])]),
    },
}
out = pathlib.Path(__file__).with_name("gather.json")
out.write_text(json.dumps({"meta": meta, "cases": cases}, allow_nan=False, separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
