#!/usr/bin/env python3
"""The surrogate's ConvLSTM encoder-forecaster in PyTorch, the peer of tests/bench/bench_surrogate.c.

The same network as ml_surrogate/ (Shi et al. 2015 without peepholes): a 3x3 convolutional input head
(4 variables -> 16 channels), 2 stacked ConvLSTM layers of 64 channels with 3x3 gate convolutions
(one convolution over [x, h] giving the gates i, f, g, o), an encoder over 10 input frames, a
forecaster of 10 frames started from the encoder's states (its first layer without input), a 1x1
output head over all the forecaster's layers, plus the last input frame (residual).  The same
training step: MSE loss, backward pass, global gradient-norm clipping to 1, AdamW; the same shapes:
64^2 with batch 16 and 128^2 with batch 8, in fp32 (TF32 off, as hpcsim's fp32) and bf16 (autocast,
fp32 master weights).  Synthetic data of the same shape; cudnn.benchmark on.

  python3 scripts/surrogate_pytorch.py                 # the four configurations, eager mode
  python3 scripts/surrogate_pytorch.py --compile       # torch.compile'd model as well
  python3 scripts/surrogate_pytorch.py --tf32          # let fp32 use TF32 tensor cores (PyTorch's default)

It prints a table (samples/s, forecast latency) and, last, the export lines that hand the step times
to the C benchmark, which prints the ratios in its own table:
  eval "$(python3 scripts/surrogate_pytorch.py --exports-only)"; build/tests/bench/bench_surrogate
"""
import argparse
import json
import sys
import time

import torch
import torch.nn as nn


class ConvLSTMCell(nn.Module):
    """One ConvLSTM layer: gates = conv([x, h]) (x may be absent), c' = f c + i g, h' = o tanh(c')."""

    def __init__(self, cin, ch, k):
        super().__init__()
        self.ch = ch
        self.conv = nn.Conv2d(cin + ch, 4 * ch, k, padding=k // 2)
        with torch.no_grad():  # as hpcsim: biases zero, the forget gate's one
            self.conv.bias.zero_()
            self.conv.bias[ch:2 * ch].fill_(1.0)

    def forward(self, x, h, c):
        z = self.conv(h if x is None else torch.cat([x, h], dim=1))
        i, f, g, o = torch.split(z, self.ch, dim=1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        return o * torch.tanh(c), c


class EncoderForecaster(nn.Module):
    def __init__(self, nvars=4, hidden=(64, 64), kernel=3, head=16, head_kernel=3, out_kernel=1, k_in=10, k_out=10,
                 residual=True):
        super().__init__()
        self.k_in, self.k_out, self.residual = k_in, k_out, residual
        self.head = nn.Conv2d(nvars, head, head_kernel, padding=head_kernel // 2) if head > 0 else None
        cin = head if head > 0 else nvars
        self.enc = nn.ModuleList()
        self.fc = nn.ModuleList()
        for l, ch in enumerate(hidden):
            self.enc.append(ConvLSTMCell(cin if l == 0 else hidden[l - 1], ch, kernel))
            self.fc.append(ConvLSTMCell(0 if l == 0 else hidden[l - 1], ch, kernel))
        self.out = nn.Conv2d(sum(hidden), nvars, out_kernel, padding=out_kernel // 2)

    def forward(self, x):
        """x: (batch, k_in, V, H, W) -> (batch, k_out, V, H, W)."""
        b, _, _, H, W = x.shape
        if self.head is not None:  # the head over every input frame at once
            e = self.head(x.flatten(0, 1)).unflatten(0, (b, self.k_in))
        else:
            e = x
        hs, cs = [], []
        inp = [e[:, t] for t in range(self.k_in)]
        for cell in self.enc:
            h = torch.zeros(b, cell.ch, H, W, device=x.device, dtype=e.dtype)
            c = torch.zeros_like(h)
            outs = []
            for t in range(self.k_in):
                h, c = cell(inp[t], h, c)
                outs.append(h)
            inp = outs
            hs.append(h)
            cs.append(c)
        frames = []
        for t in range(self.k_out):
            below = None
            tops = []
            for l, cell in enumerate(self.fc):
                hs[l], cs[l] = cell(below, hs[l], cs[l])
                below = hs[l]
                tops.append(hs[l])
            frames.append(torch.cat(tops, dim=1))
        y = self.out(torch.stack(frames, 1).flatten(0, 1)).unflatten(0, (b, self.k_out))
        if self.residual:
            y = y + x[:, -1:].to(y.dtype)
        return y


def bench(size, batch, precision, args, device):
    torch.manual_seed(0)
    model = EncoderForecaster().to(device)
    if args.compile:
        model = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=1e-4)
    x = torch.rand(batch, 20, 4, size, size, device=device) * 2 - 1
    inp, target = x[:, :10].contiguous(), x[:, 10:].contiguous()
    use_bf16 = precision == "bf16"

    def step():
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=use_bf16):
            y = model(inp)
            loss = torch.mean((y.float() - target) ** 2)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    def forecast():
        with torch.no_grad(), torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=use_bf16):
            return model(inp)

    def timed(fn, warmup, reps):
        for _ in range(warmup):
            fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(reps):
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(stop) / 1e3)
        times.sort()
        return times[len(times) // 2]  # the median, as bench_util's bench_time

    t_step = timed(step, args.warmup, args.reps)
    t_fc = timed(forecast, args.warmup, args.reps)
    return t_step, t_fc


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--compile", action="store_true", help="torch.compile the model")
    p.add_argument("--tf32", action="store_true", help="allow TF32 in fp32 convolutions (PyTorch's default)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--exports-only", action="store_true", help="print only the export lines")
    p.add_argument("--json", help="also write the results to this file")
    args = p.parse_args()
    if not torch.cuda.is_available():
        print("SKIP: PyTorch sees no CUDA device", file=sys.stderr)
        sys.exit(77)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = args.tf32
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
    device = torch.device("cuda")
    results, exports = [], []
    for precision in ("f32", "bf16"):
        for size, batch in ((64, 16), (128, 8)):
            t_step, t_fc = bench(size, batch, precision, args, device)
            results.append({"size": size, "batch": batch, "precision": precision, "step_s": t_step,
                            "samples_per_s": batch / t_step, "forecast_s": t_fc, "forecast_ms_per_sample": 1e3 * t_fc / batch})
            key = "HS_PEER_PYTORCH_SURR_%d_%s" % (size, precision.upper())
            exports.append("export %s_S=%.6g" % (key, t_step))
            exports.append("export %s_FC_S=%.6g" % (key, t_fc))
    if not args.exports_only:
        print("pytorch %s, cuDNN %s, %s%s%s" % (torch.__version__, torch.backends.cudnn.version(), torch.cuda.get_device_name(),
                                                ", compiled" if args.compile else "", ", TF32" if args.tf32 else ""))
        print("%-6s %-8s %-5s %12s %12s %22s" % ("size", "batch", "prec", "step ms", "samples/s", "forecast ms/sample"))
        for r in results:
            print("%-6s %-8d %-5s %12.3f %12.1f %22.3f" % ("%d^2" % r["size"], r["batch"], r["precision"], 1e3 * r["step_s"],
                                                          r["samples_per_s"], r["forecast_ms_per_sample"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    print("\n".join(exports))


if __name__ == "__main__":
    main()
