#!/usr/bin/env python3
"""The published Burgers PINN in PyTorch, as the peer of hpcsim's pinn solver in the benchmark.

Same network (8 hidden layers of 20 tanh units, Xavier-normal weights truncated at 2 sd, zero
biases), same input scaling (t' = 2t - 1), same points (Latin-hypercube collocation and initial/
boundary draws from the reference grid's edges, generated with the same Philox streams as
solvers/pinn/pinn_points.c (scripts/rng_philox.py), so the point sets are identical), same loss (mean squared residual +
mean squared initial/boundary misfit), same schedule (Adam, then L-BFGS with a strong-Wolfe line
search and 50 correction pairs), float64 on CUDA.  It prints the time per Adam iteration, per
L-BFGS iteration and the time to reach a relative L2 error of 1e-3 on the 256 x 100 grid.

  python3 scripts/pinn_pytorch.py --device cuda            # the benchmark (prints JSON at the end)
  python3 scripts/pinn_pytorch.py --device cuda --quick    # per-iteration timing only

Pass the printed seconds to the C benchmark to see the ratios in one table:
  HS_PEER_PYTORCH_ADAM_S=... HS_PEER_PYTORCH_LBFGS_S=... HS_PEER_PYTORCH_TTS_S=... build/tests/bench/bench_pinn
"""
import argparse
import json
import math
import time

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from rng_philox import Rng  # noqa: E402  the generator of kernels/rng/rng.h, bit for bit

RNG_LHS, RNG_DATA, RNG_XAVIER = 1, 2, 0  # the streams of solvers/pinn/pinn_points.h and kernels/nn/nn.c


def below(rng, n):
    """hs_rng_below: uniform in [0, n) by rejection of the short last run."""
    limit = (2**64 - 1) - (2**64 - 1) % n
    while True:
        x = rng.next()
        if x < limit:
            return x % n


def permutation(n, rng):
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = below(rng, i + 1)
        p[i], p[j] = p[j], p[i]
    return p


def lhs(n, seed):
    rng = Rng(seed, RNG_LHS)
    pts = np.zeros((n, 2))
    for d, (lo, length) in enumerate(((0.0, 1.0), (-1.0, 2.0))):
        perm = permutation(n, rng)
        for i in range(n):
            pts[i, d] = lo + length * (perm[i] + rng.uniform()) / n
    return pts


def edge_points(n, nx, nt, tmax, seed):
    pool, vals = [], []
    for i in range(nx):
        x = -1.0 + 2.0 * i / (nx - 1)
        pool.append((0.0, x))
        vals.append(-math.sin(math.pi * x))
    walls_lo, walls_hi = [], []
    for j in range(nt):
        t = tmax * j / (nt - 1) if nt > 1 else 0.0
        walls_lo.append((t, -1.0))
        walls_hi.append((t, 1.0))
    pool += walls_lo + walls_hi
    vals += [0.0] * (2 * nt)
    perm = permutation(len(pool), Rng(seed, RNG_DATA))
    idx = perm[:n]
    return np.array([pool[i] for i in idx]), np.array([vals[i] for i in idx])


def xavier(widths, seed):
    rng = Rng(seed, RNG_XAVIER)
    params = []
    for l in range(len(widths) - 1):
        fan_in, fan_out = widths[l], widths[l + 1]
        sd = math.sqrt(2.0 / (fan_in + fan_out))
        w = np.zeros(fan_in * fan_out)
        for k in range(fan_in * fan_out):
            while True:
                g = rng.gaussian()
                if abs(g) <= 2.0:
                    break
            w[k] = sd * g
        # column-major (out x in) in hpcsim -> torch Linear weight is (out, in)
        params.append((w.reshape(fan_in, fan_out).T.copy(), np.zeros(fan_out)))
    return params


def burgers_exact(nu, nx=256, nt=100, tmax=0.99, nodes=200):
    """Cole-Hopf with Gauss-Hermite quadrature in log space (as physics/burgers_exact.c)."""
    s, w = np.polynomial.hermite.hermgauss(nodes)
    logw = np.log(np.maximum(w, 1e-300))
    x = np.linspace(-1, 1, nx)
    t = np.linspace(0, tmax, nt)
    u = np.zeros((nt, nx))
    u[0] = -np.sin(np.pi * x)
    for j in range(1, nt):
        c = math.sqrt(4 * nu * t[j])
        y = x[:, None] - c * s[None, :]
        e = logw[None, :] - np.cos(np.pi * y) / (2 * np.pi * nu)
        e -= e.max(axis=1, keepdims=True)
        we = np.exp(e)
        u[j] = -(np.sin(np.pi * y) * we).sum(1) / we.sum(1)
    return x, t, u


class Net(torch.nn.Module):
    def __init__(self, widths, init):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(widths[l], widths[l + 1]) for l in range(len(widths) - 1))
        with torch.no_grad():
            for layer, (w, b) in zip(self.layers, init):
                layer.weight.copy_(torch.from_numpy(w))
                layer.bias.copy_(torch.from_numpy(b))

    def forward(self, tx):
        h = torch.stack((2.0 * tx[:, 0] - 1.0, tx[:, 1]), dim=1)
        for layer in self.layers[:-1]:
            h = torch.tanh(layer(h))
        return self.layers[-1](h)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--adam", type=int, default=2000)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--lbfgs", type=int, default=50000)
    ap.add_argument("--target", type=float, default=1e-3)
    ap.add_argument("--quick", action="store_true", help="per-iteration timing only")
    a = ap.parse_args()
    dev, dt = torch.device(a.device), torch.float64
    nu = 0.01 / math.pi
    widths = [2] + [20] * 8 + [1]
    xu, uu = edge_points(100, 256, 100, 0.99, a.seed)
    xf = np.vstack((lhs(10000, a.seed + 1), xu))
    X_f = torch.tensor(xf, dtype=dt, device=dev, requires_grad=True)
    X_u = torch.tensor(xu, dtype=dt, device=dev)
    U_u = torch.tensor(uu, dtype=dt, device=dev)[:, None]
    gx, gt, ue = burgers_exact(nu)
    TT, XX = np.meshgrid(gt, gx, indexing="ij")
    X_e = torch.tensor(np.stack((TT.ravel(), XX.ravel()), 1), dtype=dt, device=dev)
    U_e = torch.tensor(ue.ravel(), dtype=dt, device=dev)
    net = Net(widths, xavier(widths, a.seed)).to(dev, dt)

    def loss_fn():
        u = net(X_f)
        g = torch.autograd.grad(u.sum(), X_f, create_graph=True)[0]
        u_t, u_x = g[:, 0:1], g[:, 1:2]
        u_xx = torch.autograd.grad(u_x.sum(), X_f, create_graph=True)[0][:, 1:2]
        r = u_t + u * u_x - nu * u_xx
        return (r ** 2).mean() + ((net(X_u) - U_u) ** 2).mean()

    def error():
        with torch.no_grad():
            p = net(X_e)[:, 0]
            return (torch.linalg.norm(p - U_e) / torch.linalg.norm(U_e)).item()

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    adam = torch.optim.Adam(net.parameters(), lr=a.lr)
    lbfgs = torch.optim.LBFGS(net.parameters(), lr=1, max_iter=100, max_eval=400, history_size=50,
                              tolerance_grad=0, tolerance_change=2.220446049250313e-16, line_search_fn="strong_wolfe")

    def closure():
        lbfgs.zero_grad()
        l = loss_fn()
        l.backward()
        return l

    t_start = time.perf_counter()
    it, hit, times_adam = 0, None, []
    for k in range(a.adam if not a.quick else 200):
        sync()
        t0 = time.perf_counter()
        adam.zero_grad()
        l = loss_fn()
        l.backward()
        adam.step()
        sync()
        times_adam.append(time.perf_counter() - t0)
        it += 1
        if it % 100 == 0 and hit is None and not a.quick:
            e = error()
            if e <= a.target:
                hit = (it, time.perf_counter() - t_start, e)
    adam_s = float(np.median(times_adam[10:]))
    # L-BFGS in calls of up to 100 iterations; PyTorch keeps its memory between calls
    lb_iters, lb_time, e = 0, 0.0, error()
    budget = a.lbfgs if not a.quick else 300
    while lb_iters < budget and hit is None:
        n0 = lbfgs.state[lbfgs._params[0]].get("n_iter", 0)
        sync()
        t0 = time.perf_counter()
        lbfgs.step(closure)
        sync()
        lb_time += time.perf_counter() - t0
        n1 = lbfgs.state[lbfgs._params[0]]["n_iter"]
        if n1 == n0:
            break
        lb_iters += n1 - n0
        it += n1 - n0
        if not a.quick:
            e = error()
            if e <= a.target:
                hit = (it, time.perf_counter() - t_start, e)
    out = {"adam_s_per_iter": adam_s, "lbfgs_s_per_iter": lb_time / max(lb_iters, 1), "lbfgs_iterations": lb_iters,
           "final_rel_l2": error(), "device": str(dev), "torch": torch.__version__}
    if hit:
        out.update({"time_to_target_s": hit[1], "iterations_to_target": hit[0], "target": a.target})
    print(json.dumps(out))


if __name__ == "__main__":
    main()
