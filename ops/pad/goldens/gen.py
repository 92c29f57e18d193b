"""Goldens for ops/pad from torch (run on the GPU machine: python3 ops/pad/goldens/gen.py).

Writes pad.json beside this file: torch.nn.functional.pad on float32 tensors with small integer
values (distinct, so a wrong source position shows), on awkward sizes (odd lengths, a 1-element
axis). Each case lists the pads as the test applies them, one axis per call, last axis first
([axis, before, after]); `out` is torch's result of ONE call with every pad at once, so the
multi-axis cases check that three one-axis calls equal torch's multi-axis call. `errors` records
what torch does with a reflect pad >= the axis length, and with a pad one shorter.
"""
import json, pathlib, torch
import torch.nn.functional as F

torch.manual_seed(0)


def values(shape):
    return torch.randint(-50, 51, shape).float()


def case(label, shape, pads, mode, value=None):
    """pads: [(axis, before, after)] with axes counted from the end, last axis first."""
    x = values(shape)
    flat = []
    for axis, before, after in pads:  # F.pad's order: last axis first
        flat += [before, after]
    kwargs = {"value": value} if value is not None else {}
    out = F.pad(x, tuple(flat), mode=mode, **kwargs)
    rank = len(shape)
    return {
        "label": label, "shape": list(shape), "mode": mode, "value": value if value is not None else 0,
        "pads": [[rank - 1 - i, b, a] for i, (_, b, a) in enumerate(pads)],
        "x": [int(v) for v in x.flatten().tolist()],
        "out_shape": list(out.shape),
        "out": [v if not float(v).is_integer() else int(v) for v in out.flatten().tolist()],
    }


cases = [
    case("reflect, last axis of [2, 3, 7]", (2, 3, 7), [(0, 3, 2)], "reflect"),
    case("replicate, last axis of [2, 3, 7]", (2, 3, 7), [(0, 3, 2)], "replicate"),
    case("constant 1.5, last axis of [2, 3, 7]", (2, 3, 7), [(0, 1, 4)], "constant", 1.5),
    case("reflect by size - 1, last axis of [1, 1, 5]", (1, 1, 5), [(0, 4, 4)], "reflect"),
    case("replicate, a 1-element axis", (1, 2, 1), [(0, 2, 3)], "replicate"),
    case("causal replicate, T of [1, 2, 3, 4, 5] (2 before, none after)", (1, 2, 3, 4, 5),
         [(0, 0, 0), (1, 0, 0), (2, 2, 0)], "replicate"),
    case("reflect, three axes of [1, 2, 5, 6, 7] in one call", (1, 2, 5, 6, 7),
         [(0, 3, 1), (1, 2, 4), (2, 1, 2)], "reflect"),
    case("replicate, three axes of [1, 2, 5, 6, 7] in one call", (1, 2, 5, 6, 7),
         [(0, 3, 1), (1, 2, 4), (2, 1, 2)], "replicate"),
    case("constant -2, three axes of [1, 2, 5, 6, 7] in one call", (1, 2, 5, 6, 7),
         [(0, 3, 1), (1, 2, 4), (2, 1, 2)], "constant", -2.0),
    case("reflect, two axes of [3, 9, 4] (inner 4 on the first)", (1, 3, 9, 4),
         [(0, 2, 1), (1, 5, 3)], "reflect"),
]

errors = []
for label, shape, flat in [("reflect pad == size", (1, 1, 5), (5, 0)), ("reflect pad == size - 1", (1, 1, 5), (4, 0)),
                           ("reflect after == size", (1, 1, 5), (0, 5))]:
    try:
        F.pad(torch.zeros(shape), flat, mode="reflect")
        errors.append({"label": label, "size": shape[-1], "before": flat[0], "after": flat[1], "raised": False,
                       "message": ""})
    except Exception as e:  # torch raises RuntimeError
        errors.append({"label": label, "size": shape[-1], "before": flat[0], "after": flat[1], "raised": True,
                       "message": str(e).splitlines()[0]})

out = pathlib.Path(__file__).with_name("pad.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases, "errors": errors},
                          separators=(",", ":")))
print(f"wrote {out} ({len(cases)} cases, torch {torch.__version__})")
