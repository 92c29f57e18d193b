"""Goldens for ops/mel (run on the GPU machine: python3 ops/mel/goldens/gen.py).

Writes mel.json beside this file:
- filterbanks [n_freqs, n_mels] from torchaudio.functional.melscale_fbanks (HTK scale, no norm: the
  default; and mel_scale="slaney", norm="slaney"), and librosa.filters.mel's defaults (Slaney scale,
  Slaney norm) transposed, computed by a numpy port of librosa's code (librosa is not among the GPU
  machine's packages; the port follows librosa 0.10's filters.mel / mel_frequencies / hz_to_mel);
- the log-mel spectrogram of a linear sine sweep (50 Hz -> 10 kHz over 0.2 s at 24 kHz, amplitude
  0.5, synthesised here in float64 and rounded to float32): torchaudio.transforms.MelSpectrogram
  (n_fft 1024, hop 256, 64 mels; HTK, and Slaney/Slaney) followed by AmplitudeToDB(stype="power",
  top_db=None), in float64, transposed to frame-major [frames, n_mels].
If `import torchaudio` fails, torchaudio's documented formulas are computed in torch instead
(melscale_fbanks's code; torch.stft(center=True, reflect, periodic Hann) -> |X|^2 -> fb ->
10 log10(clamp(min=1e-10))), and meta.torchaudio says so.
"""
import json, math, pathlib, struct
import numpy as np
import torch

try:
    import torchaudio
    TA = torchaudio.__version__
except Exception as e:  # noqa: BLE001
    torchaudio = None
    TA = f"absent ({type(e).__name__}); torchaudio's documented formulas computed in torch"


def f32(values):
    out = []
    for v in values:
        v = struct.unpack("f", struct.pack("f", v))[0]
        s = next(s for s in (float(f"{v:.{p}g}") for p in range(1, 10)) if struct.unpack("f", struct.pack("f", s))[0] == v)
        out.append(int(s) if s.is_integer() else s)
    return out


def hz_to_mel(f, scale):
    if scale == "htk":
        return 2595.0 * math.log10(1.0 + f / 700.0)
    return f / (200.0 / 3) if f < 1000 else 15.0 + math.log(f / 1000.0) / (math.log(6.4) / 27.0)


def mel_to_hz(m, scale):
    if scale == "htk":
        return 700.0 * (10.0 ** (m / 2595.0) - 1.0)
    return m * (200.0 / 3) if m < 15 else 1000.0 * math.exp((math.log(6.4) / 27.0) * (m - 15.0))


def fbanks_torch(n_freqs, f_min, f_max, n_mels, sample_rate, norm, scale):
    """torchaudio.functional.melscale_fbanks, written out (float64)."""
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs, dtype=torch.float64)
    m_pts = torch.linspace(hz_to_mel(f_min, scale), hz_to_mel(f_max, scale), n_mels + 2, dtype=torch.float64)
    f_pts = torch.tensor([mel_to_hz(m, scale) for m in m_pts.tolist()], dtype=torch.float64)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    down = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = torch.max(torch.zeros(1, dtype=torch.float64), torch.min(down, up))
    if norm == "slaney":
        fb *= (2.0 / (f_pts[2:n_mels + 2] - f_pts[:n_mels])).unsqueeze(0)
    return fb


def fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm, scale):
    if torchaudio is not None:
        import torchaudio.functional as AF
        return AF.melscale_fbanks(n_freqs, float(f_min), float(f_max), n_mels, sample_rate, norm, scale).double()
    return fbanks_torch(n_freqs, f_min, f_max, n_mels, sample_rate, norm, scale)


def librosa_mel(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    """librosa.filters.mel(sr=sr, n_fft=n_fft, n_mels=n_mels, htk=False, norm="slaney"), as [n_mels, bins]."""
    fmax = sr / 2.0 if fmax is None else fmax
    fftfreqs = np.fft.rfftfreq(n=n_fft, d=1.0 / sr)
    mels = np.linspace(hz_to_mel(fmin, "slaney"), hz_to_mel(fmax, "slaney"), n_mels + 2)
    mel_f = np.array([mel_to_hz(m, "slaney") for m in mels])
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, 1 + n_fft // 2))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels]))[:, np.newaxis]
    return weights


def log_mel(x, sr, n_fft, hop, n_mels, norm, scale):
    """AmplitudeToDB(power)(MelSpectrogram(...)(x)) in float64, frame-major [frames, n_mels]."""
    if torchaudio is not None:
        spec = torchaudio.transforms.MelSpectrogram(sample_rate=sr, n_fft=n_fft, hop_length=hop, n_mels=n_mels,
                                                    norm=norm, mel_scale=scale).double()(x)
        db = torchaudio.transforms.AmplitudeToDB(stype="power", top_db=None).double()(spec)
    else:
        window = torch.hann_window(n_fft, periodic=True, dtype=torch.float64)
        X = torch.stft(x, n_fft, hop, window=window, center=True, pad_mode="reflect", return_complex=True)
        power = X.abs() ** 2
        fb = fbanks_torch(n_fft // 2 + 1, 0.0, float(sr // 2), n_mels, sr, norm, scale)
        spec = (power.transpose(-1, -2) @ fb).transpose(-1, -2)
        db = 10.0 * torch.log10(torch.clamp(spec, min=1e-10))
    return db.transpose(-1, -2)


sr, duration = 24000, 0.2
t = np.arange(int(sr * duration)) / sr
sweep32 = (0.5 * np.sin(2 * np.pi * (50 * t + (10000 - 50) * t * t / (2 * duration)))).astype(np.float32)
x = torch.from_numpy(sweep32.astype(np.float64))

filterbanks = [
    {"label": "htk", "nFreqs": 65, "nMels": 10, "sampleRate": 16000, "fMin": 0, "fMax": 8000, "melScale": "htk",
     "norm": None, "fb": f32(fbanks(65, 0, 8000, 10, 16000, None, "htk").flatten().tolist())},
    {"label": "htk, 300-7000 Hz", "nFreqs": 65, "nMels": 10, "sampleRate": 16000, "fMin": 300, "fMax": 7000,
     "melScale": "htk", "norm": None, "fb": f32(fbanks(65, 300, 7000, 10, 16000, None, "htk").flatten().tolist())},
    {"label": "torchaudio slaney/slaney", "nFreqs": 65, "nMels": 10, "sampleRate": 16000, "fMin": 0, "fMax": 8000,
     "melScale": "slaney", "norm": "slaney",
     "fb": f32(fbanks(65, 0, 8000, 10, 16000, "slaney", "slaney").flatten().tolist())},
    {"label": "librosa.filters.mel defaults (transposed)", "nFreqs": 65, "nMels": 10, "sampleRate": 16000, "fMin": 0,
     "fMax": 8000, "melScale": "slaney", "norm": "slaney",
     "fb": f32(librosa_mel(16000, 128, 10).T.flatten().tolist())},
]
spectrograms = []
for scale, norm in [("htk", None), ("slaney", "slaney")]:
    db = log_mel(x, sr, 1024, 256, 64, norm, scale)
    spectrograms.append({"label": f"sine sweep, {scale}/{norm}", "sampleRate": sr, "nFft": 1024, "hopLength": 256, "nMels": 64,
                         "melScale": scale, "norm": norm, "frames": db.shape[0], "out": f32(db.flatten().tolist())})

out = pathlib.Path(__file__).with_name("mel.json")
out.write_text(json.dumps({"meta": {"torch": torch.__version__, "torchaudio": TA},
                           "x": f32(sweep32.astype(np.float64).tolist()),
                           "filterbanks": filterbanks, "spectrograms": spectrograms}, separators=(",", ":")))
print(f"wrote {out} ({out.stat().st_size} bytes); torch {torch.__version__}, torchaudio {TA}")
