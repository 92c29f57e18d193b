"""Non-finite goldens for ops/stft from torch (python3 ops/stft/goldens/nonfinite.py).

Writes nonfinite.json beside this file: torch.stft(x, n_fft, hop_length, window=hann_window(n_fft),
center=True, pad_mode="reflect", return_complex=True) in float32 on the CPU, as [batch, frames, bins, 2],
with a NaN, a +inf and a -inf in x (alone in their frames, and +inf with -inf in shared frames), at
n_fft 8 and 16 (powers of two: the FFT path), 6 and 12 (the DFT GEMM path), where pocketfft's bins
are the exact transform's with quarter-turn terms absent; and at n_fft 32 (`pinned_difference`),
where pocketfft gives NaN in bins that transform leaves finite or infinite.
Non-finite floats are written as Python's str() ("nan", "inf", "-inf").
"""
import pathlib, sys, torch
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / "harness" / "goldens"))
from nonfinite_goldens import nan, inf, golden, write

torch.manual_seed(0)
cases = []
for n_fft, hop in ((8, 4), (16, 4), (6, 2), (12, 5), (32, 8)):
    length = 3 * n_fft
    x = torch.randn(2, length)
    x[0, n_fft // 2 + 1] = nan
    x[1, 3] = inf
    x[1, 2 * n_fft + 1] = inf
    x[1, 2 * n_fft + 3] = -inf
    spec = torch.stft(x, n_fft, hop_length=hop, window=torch.hann_window(n_fft), center=True, pad_mode="reflect",
                      return_complex=True)
    cases.append({"batch": 2, "length": length, "nFft": n_fft, "hopLength": hop, "pinned_difference": n_fft >= 32,
                  "x": golden(x), "out": golden(torch.view_as_real(spec).permute(0, 2, 1, 3))})
write(pathlib.Path(__file__).with_name("nonfinite.json"), cases)
