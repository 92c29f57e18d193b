"""Goldens for ops/stft from torch (run on the GPU machine: python3 ops/stft/goldens/gen.py).

Writes stft.json beside this file. Everything is computed in float64 and rounded to float32 once
(what the reference does); inputs are small integers (exact in f32, short in JSON). Spectra are in
this op's frame-major layout [batch, frames, bins, 2], transposed from torch's [batch, bins, frames].
- stft: torch.stft(center=True, pad_mode="reflect", onesided=True, normalized=False, periodic Hann)
  at nFft 16, odd nFft 1025 and nFft 1920 = 2^7 * 15, odd lengths, a batch of 2; large outputs are
  kept at every `out_stride`-th value.
- frames: torch's frame count for (length, nFft, hop), odd nFft included, and whether torch refuses a
  signal not longer than nFft // 2 (the reflect pad).
- istft: torch.istft(center=True) on random spectra whose DC and Nyquist bins have imaginary parts
  (irfft drops them), with and without length; padding "same" by the Vocos ISTFT code
  (irfft, window, F.fold overlap-add, crop (win - hop) / 2 per end, divide by the folded squared
  window), which torch.istft has no mode for.
- nola: whether torch.istft refuses a periodic Hann window at hop = nFft (envelope 0 at frame edges)
  and accepts it at hop = nFft / 2; `beyond`: torch.istft asked for samples up to the last frame's end
  (past its default length: overlap-added samples, not zeros) and 3 beyond it (zero-filled by torch;
  this op throws instead).
"""
import json, pathlib, struct, torch
import torch.nn.functional as F

torch.manual_seed(0)


def f32(values):
    out = []
    for v in values:
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10))
                 if struct.unpack("f", struct.pack("f", s))[0] == struct.unpack("f", struct.pack("f", v))[0])
        out.append(int(s) if s.is_integer() else s)
    return out


def hann(n):
    return torch.hann_window(n, periodic=True, dtype=torch.float64)


def frame_major(spec):  # complex [batch, bins, frames] -> real [batch, frames, bins, 2]
    return torch.view_as_real(spec.transpose(1, 2).contiguous())


def stft_case(label, batch, length, n_fft, hop, out_stride=1):
    x = torch.randint(-8, 9, (batch, length)).double()
    spec = torch.stft(x, n_fft, hop, window=hann(n_fft), center=True, pad_mode="reflect", normalized=False,
                      onesided=True, return_complex=True)
    out = frame_major(spec).float().flatten()[::out_stride]
    return {"label": label, "batch": batch, "length": length, "nFft": n_fft, "hopLength": hop,
            "frames": spec.shape[-1], "x": [int(v) for v in x.flatten().tolist()],
            "out": f32(out.double().tolist()), "out_stride": out_stride}


def random_spectrum(batch, frames, n_fft):
    bins = n_fft // 2 + 1
    return torch.complex(torch.randint(-4, 5, (batch, bins, frames)).double(),
                         torch.randint(-4, 5, (batch, bins, frames)).double())


def vocos_istft(spec, n_fft, hop, window):
    """Vocos's ISTFT(padding="same") forward, for [batch, bins, frames] complex input."""
    pad = (n_fft - hop) // 2
    frames = spec.shape[-1]
    ifft = torch.fft.irfft(spec, n_fft, dim=1, norm="backward") * window[None, :, None]
    size = (frames - 1) * hop + n_fft
    y = F.fold(ifft, output_size=(1, size), kernel_size=(1, n_fft), stride=(1, hop))[:, 0, 0, pad:-pad]
    window_sq = window.square().expand(1, frames, -1).transpose(1, 2)
    envelope = F.fold(window_sq, output_size=(1, size), kernel_size=(1, n_fft), stride=(1, hop)).squeeze()[pad:-pad]
    assert (envelope > 1e-11).all()
    return y / envelope


def istft_case(label, batch, frames, n_fft, hop, padding="center", length=None):
    spec = random_spectrum(batch, frames, n_fft)
    if padding == "same":
        y = vocos_istft(spec, n_fft, hop, hann(n_fft))
    else:
        y = torch.istft(spec, n_fft, hop, window=hann(n_fft), center=True, normalized=False, onesided=True,
                        length=length)
    return {"label": label, "batch": batch, "frames": frames, "nFft": n_fft, "hopLength": hop, "padding": padding,
            "length": length, "x": [int(v) for v in frame_major(spec).flatten().tolist()],
            "out": f32(y.float().flatten().double().tolist())}


stft_cases = [
    stft_case("nFft 16, hop 4, length 37, batch 2", 2, 37, 16, 4),
    stft_case("nFft 16, hop 5, length 9 (the shortest signal nFft 16 allows)", 1, 9, 16, 5),
    stft_case("odd nFft 1025, hop 256, length 1024", 1, 1024, 1025, 256, out_stride=3),
    stft_case("nFft 1920, hop 480, length 1201", 1, 1201, 1920, 480, out_stride=5),
]
frames = []
for length, n_fft, hop in [(1024, 1025, 256), (1023, 1025, 256), (1025, 1025, 256), (1024, 1024, 256),
                           (100, 16, 7), (9, 16, 4), (961, 1920, 480), (1200, 1920, 480), (600, 15, 3)]:
    spec = torch.stft(torch.zeros(length, dtype=torch.float64), n_fft, hop, window=hann(n_fft), center=True,
                      return_complex=True)
    frames.append({"length": length, "nFft": n_fft, "hopLength": hop, "frames": spec.shape[-1]})
too_short = []
for length, n_fft in [(8, 16), (9, 16), (512, 1025), (513, 1025)]:
    try:
        torch.stft(torch.zeros(length, dtype=torch.float64), n_fft, 4, window=hann(n_fft), center=True,
                   pad_mode="reflect", return_complex=True)
        too_short.append({"length": length, "nFft": n_fft, "raised": False})
    except Exception:
        too_short.append({"length": length, "nFft": n_fft, "raised": True})

istft_cases = [
    istft_case("center, nFft 16, hop 4, 9 frames, batch 2", 2, 9, 16, 4),
    istft_case("center, nFft 16, hop 4, 9 frames, length 29", 1, 9, 16, 4, length=29),
    istft_case("center, odd nFft 1025, hop 256, 4 frames", 1, 4, 1025, 256),
    istft_case("same, nFft 16, hop 4, 7 frames, batch 2", 2, 7, 16, 4, padding="same"),
    istft_case("same, nFft 1920, hop 480, 2 frames", 1, 2, 1920, 480, padding="same"),
]
nola = []
for n_fft, hop in [(16, 16), (16, 8), (16, 4)]:
    try:
        torch.istft(random_spectrum(1, 5, n_fft)[0], n_fft, hop, window=hann(n_fft), center=True)
        nola.append({"nFft": n_fft, "hopLength": hop, "raised": False, "message": ""})
    except Exception as e:
        nola.append({"nFft": n_fft, "hopLength": hop, "raised": True, "message": str(e).splitlines()[0]})
spec = random_spectrum(1, 9, 16)[0]
default = torch.istft(spec, 16, 4, window=hann(16), center=True).shape[-1]
to_end = 16 + 4 * 8 - 8  # the last frame's end, less the 8 samples cropped at the front
tail = torch.istft(spec, 16, 4, window=hann(16), center=True, length=to_end)
past = torch.istft(spec, 16, 4, window=hann(16), center=True, length=to_end + 3)
beyond = {"default": default, "to_end": to_end, "x": [int(v) for v in frame_major(spec[None]).flatten().tolist()],
          "tail": f32(tail.float().double().tolist()), "past_zero": bool((past[to_end:] == 0).all()),
          "before_past_nonzero": bool((tail[default:] != 0).all())}

out = pathlib.Path(__file__).with_name("stft.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__}, "stft": stft_cases, "frames": frames,
                           "too_short": too_short, "istft": istft_cases, "nola": nola, "beyond": beyond},
                          separators=(",", ":")))
print(f"wrote {out} ({out.stat().st_size} bytes, torch {torch.__version__}); frames {frames}; nola {nola}; "
      f"beyond {dict(beyond, x=None, tail=None)}; too_short {too_short}")
