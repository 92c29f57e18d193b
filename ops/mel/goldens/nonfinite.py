"""Non-finite goldens for ops/mel from torch (python3 ops/mel/goldens/nonfinite.py).

Writes nonfinite.json beside this file, torch on the CPU:
- power: torchaudio's Spectrogram(power=2), `torch.view_as_complex(x).abs().pow(2)` in float32, on
  (re, im) pairs holding NaN, +inf and -inf: |z| is hypot's, so a pair with an infinity is inf even
  when the other part is NaN;
- mel: `x @ filterbank`, then (db) AmplitudeToDB(stype="power", top_db=None), `10 * log10(clamp(v,
  min=1e-10))`, in float64 on float32 inputs, with NaN, +inf and -inf in the power spectrum (each meets
  the filterbank's zeros: inf * 0 is NaN) and in the filterbank; clamp keeps NaN, and -inf clamps to
  1e-10 (-100 dB);
- melSpectrogram: torch.stft (n_fft 16, hop 4, periodic Hann, centred, reflect) -> abs().pow(2) ->
  @ the HTK filterbank (torchaudio's melscale_fbanks formula, computed here in float64) -> dB, on
  signals holding a NaN, a +inf and a -inf.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import math, pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write


def db(v):
    return 10 * torch.log10(torch.clamp(v, min=1e-10))


def htk_filterbank(n_freqs, n_mels, sample_rate):
    """[n_freqs, n_mels] triangles on the HTK mel scale, unnormalised, from 0 to sample_rate // 2."""
    freqs = torch.linspace(0, sample_rate // 2, n_freqs, dtype=torch.float64)
    to_mel = lambda hz: 2595.0 * math.log10(1.0 + hz / 700.0)
    mels = torch.linspace(to_mel(0.0), to_mel(float(sample_rate // 2)), n_mels + 2, dtype=torch.float64)
    points = 700.0 * (10 ** (mels / 2595.0) - 1.0)
    widths = points[1:] - points[:-1]
    slopes = points[None, :] - freqs[:, None]
    down, up = -slopes[:, :-2] / widths[:-1], slopes[:, 2:] / widths[1:]
    return torch.clamp(torch.minimum(down, up), min=0.0)


torch.manual_seed(0)
cases = []
pairs = torch.rand(3, 4, 2)
pairs[0, 0] = torch.tensor([nan, 1.0])
pairs[0, 1] = torch.tensor([inf, nan])
pairs[1, 2] = torch.tensor([2.0, -inf])
pairs[2, 3] = torch.tensor([-inf, inf])
cases.append({"entry": "power", "rows": 3, "bins": 4, "x": golden(pairs),
              "out": golden(torch.view_as_complex(pairs).abs().pow(2))})

n_freqs, n_mels, sr = 9, 4, 16000
fb = htk_filterbank(n_freqs, n_mels, sr).float()
power = torch.rand(4, n_freqs)
power[0, 3], power[1, 0], power[2, 5] = nan, inf, -inf
fb_special = fb.clone()
fb_special[2, 0], fb_special[4, 1], fb_special[6, 2] = nan, inf, -inf
for x, filterbank, nonfinite in ((power, fb, "x"), (torch.rand(4, n_freqs), fb_special, "filterbank")):
    y = x.double() @ filterbank.double()
    for use_db in (False, True):
        cases.append({"entry": "kernel", "nonfinite": nonfinite, "rows": 4, "nFreqs": n_freqs, "nMels": n_mels,
                      "db": use_db, "x": golden(x), "filterbank": golden(filterbank),
                      "out": golden(db(y) if use_db else y)})

n_fft, hop, length = 16, 4, 40
signal = torch.randn(2, length)
signal[0, 9], signal[1, 3], signal[1, 30] = nan, inf, -inf
spec = torch.stft(signal, n_fft, hop_length=hop, window=torch.hann_window(n_fft), center=True, pad_mode="reflect",
                  return_complex=True)
mel_fb = htk_filterbank(n_fft // 2 + 1, n_mels, sr)
mel_db = db(spec.abs().pow(2).double().transpose(1, 2) @ mel_fb)  # [batch, frames, n_mels]
cases.append({"entry": "melSpectrogram", "batch": 2, "length": length, "nFft": n_fft, "hopLength": hop,
              "nMels": n_mels, "sampleRate": sr, "x": golden(signal), "out": golden(mel_db)})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
