"""Shared by the ops' non-finite golden scripts (ops/<op>/goldens/nonfinite.py and
ops/attention/goldens/sdpa_nonfinite.py), which import it through a sys.path insert:

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
    from nonfinite_goldens import nan, inf, golden, with_specials, write

Each script writes nonfinite.json beside itself as {"torch": torch's version, [other keys,] "cases": [...]}.
Floats go through float32 and are written as Python writes them; non-finite ones as Python's str() ("nan",
"inf", "-inf"), since JSON has no NaN.
"""
import json, math, torch

nan, inf = float("nan"), float("inf")


def golden(t):
    """A tensor rounded to float32, flattened: finite values as numbers, the others as "nan", "inf", "-inf"."""
    return [v if math.isfinite(v) else str(v) for v in t.to(torch.float32).flatten().tolist()]


def with_specials(t, at):
    """A float32 copy of t with NaN, +inf and -inf at the flat indices `at` (in that order)."""
    t = t.to(torch.float32).clone()
    for i, v in zip(at, (nan, inf, -inf)):
        t.view(-1)[i] = v
    return t


def write(path, cases, **before_cases):
    """Writes {"torch": version, **before_cases, "cases": cases} to path as JSON and says so."""
    path.write_text(json.dumps({"torch": torch.__version__, **before_cases, "cases": cases}))
    print(f"wrote {path} ({len(cases)} cases, torch {torch.__version__})")
