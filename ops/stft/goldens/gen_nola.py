"""NOLA and edge-bin goldens for ops/stft's istft from torch (local torch 2.13 CPU is enough:
python3 ops/stft/goldens/gen_nola.py). Writes nola.json beside this file.

Each case is a window (periodic Hann; Hann with sample 8 zeroed; a box of ones over samples 4..11;
periodic Hann of odd length 15) with a hop, frame count and optional length, and whether
torch.istft(center=True) refuses it ("window overlap add min"): where the overlap-added squared
window falls to 1e-11 or below over the returned samples. Where torch accepts it, `out` is
torch.istft of a spectrum of small integers whose DC and (even nFft) Nyquist bins have nonzero
imaginary parts, which the one-sided inverse ignores; `out_real_edges` is the same spectrum with those
imaginary parts zeroed, which must give the same signal. Everything in float64, rounded to float32 once.
"""
import json, pathlib, struct, torch

torch.manual_seed(25)


def f32(values):
    out = []
    for v in values:
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == struct.unpack("f", struct.pack("f", v))[0])
        out.append(int(s) if s.is_integer() else s)
    return out


def windows(n_fft):
    hann = torch.hann_window(n_fft, periodic=True, dtype=torch.float64)
    zeroed = hann.clone()
    zeroed[8] = 0
    box = torch.zeros(n_fft, dtype=torch.float64)
    box[4:12] = 1
    return {"hann": hann, "hann_zero_8": zeroed, "box_4_12": box}


cases = []
for name, n_fft, hop, frames, length in [
    ("hann", 16, 9, 5, None),
    ("hann", 16, 16, 5, None),
    ("hann", 16, 16, 5, 1),
    ("hann", 16, 8, 5, None),
    ("hann_zero_8", 16, 9, 5, None),
    ("hann_zero_8", 16, 9, 2, None),
    ("hann_zero_8", 16, 8, 5, None),
    ("box_4_12", 16, 9, 5, None),
    ("box_4_12", 16, 8, 5, None),
    ("hann", 15, 15, 4, None),
    ("hann", 15, 5, 4, None),
]:
    window = windows(n_fft)[name] if n_fft == 16 else torch.hann_window(n_fft, periodic=True, dtype=torch.float64)
    bins = n_fft // 2 + 1
    spec = torch.complex(torch.randint(-4, 5, (bins, frames)).double(), torch.randint(-4, 5, (bins, frames)).double())
    spec[0].imag = torch.arange(1, frames + 1).double()  # DC's imaginary parts: ignored
    if n_fft % 2 == 0:
        spec[-1].imag = -torch.arange(1, frames + 1).double()  # Nyquist's: ignored
    real_edges = spec.clone()
    real_edges[0].imag = 0
    if n_fft % 2 == 0:
        real_edges[-1].imag = 0
    case = {"window": name, "values": f32(window.tolist()), "nFft": n_fft, "hopLength": hop, "frames": frames,
            "length": length, "x": [int(v) for v in torch.view_as_real(spec.T.contiguous()).flatten().tolist()]}
    try:
        y = torch.istft(spec, n_fft, hop, window=window, center=True, length=length)
        same = torch.istft(real_edges, n_fft, hop, window=window, center=True, length=length)
        case.update(raised=False, message="", out=f32(y.float().double().tolist()),
                    out_real_edges=f32(same.float().double().tolist()))
    except RuntimeError as e:
        first = str(e).splitlines()[0]
        case.update(raised=True, message=first[first.index("window overlap add min"):], out=None, out_real_edges=None)
    cases.append(case)

out = pathlib.Path(__file__).with_name("nola.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "cases": cases}, separators=(",", ":")))
print(f"wrote {out} ({out.stat().st_size} bytes, torch {torch.__version__}):")
for c in cases:
    print(f"  {c['window']} nFft {c['nFft']} hop {c['hopLength']} frames {c['frames']} length {c['length']}: "
          f"{'raised ' + c['message'] if c['raised'] else 'accepted'}")
