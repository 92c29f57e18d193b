"""torch's figures for the bench rows at diffusion shapes, on the card that runs the bench.

Run on the GPU machine (torch 2.11 with CUDA there), in the same session as `deno task bench`:

    python3 harness/peer/torch_rows.py > harness/baselines/<card>-log/<n>-torch-rows.json

Each row is the bench's label for the same shape, timed as torch fp32 with TF32 off (cuBLAS and
cuDNN in IEEE fp32) and, for the products, also with TF32 on and in bf16, for reference. Method:
CUDA events around each call, 3 warm-up calls, median of 10 timed calls, each after a
torch.cuda.synchronize(); inputs are random normal. FLOPs and bytes as the bench counts them:
matmul 2MNK; attention 4·B·H·L·S·D (both products, no mask, non-causal); conv2d 2·Cout·Cin·k²·H·W;
the norms read x once and write out once.
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F


def timed(fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on
    torch.set_float32_matmul_precision("high" if on else "highest")


def rows():
    dev = "cuda"
    out = []
    for M, N, K, what in [
        (4608, 10240, 3840, "Z-Image FFN up"),
        (4608, 3840, 3840, "Z-Image projections"),
        (4608, 3840, 10240, "Z-Image FFN down"),
        (4096, 8192, 2048, "Anima MLP up"),
    ]:
        a = torch.randn(M, K, device=dev)
        w = torch.randn(N, K, device=dev)  # F.linear's weight, as the checkpoints store it
        row = {"op": "matmul", "shape": f"{M}x{N}x{K}", "what": what, "flops": 2 * M * N * K}
        for mode in ["fp32", "tf32", "bf16"]:
            set_tf32(mode == "tf32")
            aa, ww = (a.bfloat16(), w.bfloat16()) if mode == "bf16" else (a, w)
            row[f"{mode}Ms"] = timed(lambda: F.linear(aa, ww))
        set_tf32(False)
        out.append(row)
        del a, w
    for B, H, L, S, D, what in [
        (1, 30, 4608, 4608, 128, "Z-Image self-attention"),
        (1, 16, 4096, 4096, 128, "Anima self-attention"),
        (1, 16, 4096, 512, 128, "Anima cross-attention"),
        (1, 1, 16384, 16384, 512, "VAE mid attention at 1024^2"),
    ]:
        q = torch.randn(B, H, L, D, device=dev)
        k = torch.randn(B, H, S, D, device=dev)
        v = torch.randn(B, H, S, D, device=dev)
        row = {"op": "flashAttention", "shape": f"{B}x{H}x{L}x{S}x{D}", "what": what, "flops": 4 * B * H * L * S * D}
        set_tf32(False)
        row["fp32Ms"] = timed(lambda: F.scaled_dot_product_attention(q, k, v))
        qb, kb, vb = q.bfloat16(), k.bfloat16(), v.bfloat16()
        row["bf16Ms"] = timed(lambda: F.scaled_dot_product_attention(qb, kb, vb))
        out.append(row)
        del q, k, v, qb, kb, vb
    set_tf32(False)
    # Decode attention: 32 query heads over 8 KV heads, 8,192 cached positions.
    q = torch.randn(1, 32, 1, 128, device=dev)
    k = torch.randn(1, 8, 8192, 128, device=dev)
    v = torch.randn(1, 8, 8192, 128, device=dev)
    out.append({
        "op": "gqa", "shape": "1x32x8x1x8192x128", "what": "decode attention",
        "bytes": 4 * (2 * 8 * 8192 * 128 + 2 * 32 * 128),
        "fp32Ms": timed(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True)),
    })
    x = torch.randn(1, 512, 128, 128, device=dev)
    g, b = torch.randn(512, device=dev), torch.randn(512, device=dev)
    out.append({
        "op": "group_norm", "shape": "1x512x16384:g32", "what": "VAE group norm, batch 1", "bytes": 2 * 4 * x.numel(),
        "fp32Ms": timed(lambda: F.group_norm(x, 32, g, b, 1e-6)),
    })
    x = torch.randn(1, 384, 128, 128, device=dev)
    gamma = torch.randn(384, 1, 1, device=dev)
    out.append({
        "op": "channel_norm", "shape": "1x384x16384", "what": "Wan VAE RMS_norm (F.normalize * sqrt(C) * gamma)",
        "bytes": 2 * 4 * x.numel(),
        "fp32Ms": timed(lambda: F.normalize(x, dim=1) * (384 ** 0.5) * gamma),
    })
    x = torch.randn(1, 128, 1024, 1024, device=dev)
    w = torch.randn(128, 128, 3, 3, device=dev)
    out.append({
        "op": "conv2d", "shape": "1x128x1024x1024:128:k3", "what": "last VAE stage at 1024^2",
        "flops": 2 * 128 * 128 * 9 * 1024 * 1024,
        "fp32Ms": timed(lambda: F.conv2d(x, w, padding=1)),
    })
    for row in out:
        if "flops" in row:
            for key in [k for k in list(row) if k.endswith("Ms")]:
                row[key.replace("Ms", "TFlops")] = round(row["flops"] / (row[key] * 1e-3) / 1e12, 2)
        if "bytes" in row:
            row["fp32GBs"] = round(row["bytes"] / (row["fp32Ms"] * 1e-3) / 1e9, 1)
    return out


if __name__ == "__main__":
    set_tf32(False)
    result = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "method": "CUDA events, 3 warm-up calls, median of 10; fp32 with TF32 off unless the key says tf32/bf16",
        "rows": rows(),
    }
    json.dump(result, sys.stdout, indent=1)
    print()
