"""Non-finite goldens for ops/matvec from torch (python3 ops/matvec/goldens/nonfinite.py).

Writes nonfinite.json beside this file. torch.mv(W, x) on the CPU in float64 on float32 inputs (the
reference's arithmetic), rounded to float32, where W is the f32 weight (matvec), codes * scales[:, None]
(matvecQ8, codes in [-127, 127]) or codes * scales.repeat_interleave(128, 1)[:, :K] (matvecQ4G128, codes
in [-7, 7]), zero codes among them:
- x holding a NaN (every output NaN), a +inf or a -inf (±inf by the sign of its weight, NaN where
  that weight is 0: inf * 0);
- the weight (f32) or the scales holding NaN, +inf and -inf: an infinite scale times a zero code is
  NaN, and a row whose terms are infinities of both signs is NaN;
at K 9 and 32 (K % 16 == 0, the kernels' whole-chunk path; the q4 weight at K 130 and 256: two groups).
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, with_specials, write

torch.manual_seed(0)
N = 6
cases = []
for fmt, Ks in (("f32", (9, 32)), ("q8", (9, 32)), ("q4", (130, 256))):
    for K in Ks:
        x_finite = torch.randn(K)
        xs_nonfinite = []
        for name, v in (("x_nan", nan), ("x_inf", inf), ("x_neg_inf", -inf)):
            x = x_finite.clone()
            x[4] = v
            xs_nonfinite.append((x, name))
        if fmt == "f32":
            w = with_specials(torch.randn(N, K), (0, K + 3, 2 * K + 4))
            w[3, 4] = 0.0  # meets x's +inf
            for xs, name in (*xs_nonfinite, (x_finite, "weight")):
                cases.append({"format": fmt, "N": N, "K": K, "nonfinite": name, "weight": golden(w), "x": golden(xs),
                              "out": golden(w.double() @ xs.double())})
            continue
        q = 127 if fmt == "q8" else 7
        codes = torch.randint(-q, q + 1, (N, K))
        codes[:, 2] = 0  # a zero code in every row: times an infinite scale, NaN
        codes[4] = torch.randint(1, q + 1, (K,))  # row 4: no zero code, all positive
        codes[3, 4] = 0  # meets x's infinities
        groups = 1 if fmt == "q8" else (K + 127) // 128
        # Rows 0-2: a NaN, a +inf and a -inf scale; row 4's +inf scale on positive codes (the x it meets
        # decides: +inf where every term is positive, NaN where signs differ); rows 3, 5 finite.
        scales = (torch.rand(N, groups) / 64).flatten()
        scales[0], scales[groups + groups - 1], scales[2 * groups] = nan, inf, -inf
        scales[4 * groups] = inf
        scales = scales.reshape(N, groups)
        w = codes.double() * scales.double().repeat_interleave(128, 1)[:, :K]
        positive = torch.rand(K) + 0.5
        for xs, name in (*xs_nonfinite, (x_finite, "scales"), (positive, "scales_positive_x")):
            cases.append({"format": fmt, "N": N, "K": K, "nonfinite": name, "codes": codes.flatten().tolist(),
                          "scales": golden(scales), "x": golden(xs), "out": golden(w @ xs.double())})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
