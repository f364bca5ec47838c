#!/usr/bin/env python3
"""The usual three-panel PINN figure from hpcsim's pinn output (as in Raissi et al. 2019, Fig. 1):
the predicted u(t, x) over the reference grid, the pointwise error |u_pred - u_exact|, and slices at
t = 0.25, 0.50, 0.75 comparing exact and predicted; with --history, a second figure of the loss
and the relative L2 error against the training iteration.

  python3 scripts/plot_pinn.py pinn_burgers.nc --history pinn_history.nc -o pinn_burgers.png
"""
import argparse
import os
import sys

import numpy as np

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def die(msg):
    print(f"plot_pinn.py: error: {msg}", file=sys.stderr)
    sys.exit(2)


def read(path, names, what):
    """Variables from a NetCDF-4 (or HDF5) file as numpy arrays; missing ones are None.  A file that
    is missing or no such file is the command line's error (exit 2), not a traceback."""
    if not os.path.exists(path):
        die(f"{path}: no such file ({what})")
    if os.path.isdir(path):
        die(f"{path}: a directory, not the {what}")
    out = {}
    try:
        try:
            import netCDF4

            with netCDF4.Dataset(path) as ds:
                for n in names:
                    out[n] = np.array(ds.variables[n][:]) if n in ds.variables else None
            return out
        except ImportError:
            import h5py

            with h5py.File(path, "r") as f:
                for n in names:
                    out[n] = np.array(f[n]) if n in f else None
            return out
    except (OSError, ValueError) as e:
        die(f"{path}: cannot read it as the {what} ({e})")


def last_record(a):
    return a[-1] if a is not None and a.ndim == 3 else a


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("field", help="the solver's output file (u_pred, abs_error, u_exact on x, t)")
    ap.add_argument("--history", help="the history file (loss, rel_l2_error against time = iteration)")
    ap.add_argument("-o", "--output", help="the figure (default: FIELD's stem .png beside it); the history's gets _history")
    a = ap.parse_args()
    # both files read and checked before anything is written (a bad history failed after the field's
    # figure was written)
    d = read(a.field, ["x", "t", "u_pred", "u_exact", "abs_error"], "PINN output")
    x, t = d["x"], d["t"]
    u = last_record(d["u_pred"])
    ue = last_record(d["u_exact"]) if d["u_exact"] is not None else None
    err = last_record(d["abs_error"]) if d["abs_error"] is not None else None
    if u is None or x is None or t is None:
        die(f"{a.field}: no u_pred on x and t: not a PINN output (hpcsim's pinn solver writes them)")
    h = None
    if a.history:
        h = read(a.history, ["iteration", "time", "loss", "rel_l2_error", "phase"], "PINN history")
        it = h["iteration"] if h["iteration"] is not None else h["time"]  # files before the iteration axis
        if it is None or h["loss"] is None or np.ndim(h["loss"]) != 1 or np.shape(it) != np.shape(h["loss"]):
            die(f"{a.history}: no loss against iteration: not a PINN history (pinn.history_path)")
    output = a.output or os.path.splitext(a.field)[0] + ".png"
    fig = plt.figure(figsize=(12, 8.5))
    gs = fig.add_gridspec(3, 3, height_ratios=[1, 1, 1.1], hspace=0.55, wspace=0.3)
    ax = fig.add_subplot(gs[0, :])
    im = ax.imshow(u.T, origin="lower", aspect="auto", cmap="rainbow", extent=[t[0], t[-1], x[0], x[-1]])
    fig.colorbar(im, ax=ax)
    ax.set(xlabel="t", ylabel="x", title="predicted u(t, x)")
    for ts in (0.25, 0.5, 0.75):
        ax.axvline(ts, color="w", lw=1)
    if err is not None and ue is not None:
        ax = fig.add_subplot(gs[1, :])
        im = ax.imshow(err.T, origin="lower", aspect="auto", cmap="viridis", extent=[t[0], t[-1], x[0], x[-1]])
        fig.colorbar(im, ax=ax)
        rel = np.linalg.norm(u - ue) / np.linalg.norm(ue)
        ax.set(xlabel="t", ylabel="x", title="|u_pred - u_exact|  (relative L2 error %.2e)" % rel)
    for k, ts in enumerate((0.25, 0.5, 0.75)):
        j = int(np.argmin(np.abs(t - ts)))
        ax = fig.add_subplot(gs[2, k])
        if ue is not None:
            ax.plot(x, ue[j], "b-", lw=2, label="exact")
        ax.plot(x, u[j], "r--", lw=2, label="prediction")
        ax.set(xlabel="x", ylabel="u(t, x)", title="t = %.2f" % t[j], xlim=(-1.1, 1.1), ylim=(-1.1, 1.1))
        if k == 0:
            ax.legend(loc="upper right", fontsize=8)
    fig.savefig(output, dpi=130, bbox_inches="tight")
    print("wrote", output)
    if h is not None:
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.semilogy(it, h["loss"], label="loss")
        # a PDE without a reference solution has no error series (pinn's README)
        if h["rel_l2_error"] is not None and np.shape(h["rel_l2_error"]) == np.shape(it):
            ax.semilogy(it, h["rel_l2_error"], label="relative L2 error")
        if h["phase"] is not None and np.any(h["phase"] > 0):
            ax.axvline(it[np.argmax(h["phase"] > 0)], color="k", ls=":", label="Adam -> L-BFGS")
        ax.set(xlabel="iteration", title="training history")
        ax.legend()
        out = output.rsplit(".", 1)[0] + "_history.png"
        fig.savefig(out, dpi=130, bbox_inches="tight")
        print("wrote", out)


if __name__ == "__main__":
    main()
