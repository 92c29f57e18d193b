"""The float32 writer of the ops' golden scripts (ops/<op>/goldens/gen*.py, and sdpa_goldens.py for the
attention family), which import it through a sys.path insert:

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
    from f32_json import f32_json

Each float32 value is written as the shortest decimal that reads back as the same float32 (so a golden
file holds the exact values torch gave, in as few characters as they need), an integral non-zero one as
an integer; NaN and the infinities as the strings "NaN", "Infinity" and "-Infinity" (JSON has none of
them; `Number()` reads each back in a test).
"""
import math, struct


def f32_json(t):
    """A float32 tensor as a flat list of the shortest numbers that read back as the same float32."""
    out = []
    for v in t.flatten().tolist():
        if math.isnan(v):
            out.append("NaN")
        elif math.isinf(v):
            out.append("Infinity" if v > 0 else "-Infinity")
        else:
            s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                     if struct.unpack("f", struct.pack("f", s))[0] == v)
            out.append(int(s) if s.is_integer() and s != 0 else s)
    return out
