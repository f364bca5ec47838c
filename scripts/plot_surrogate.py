#!/usr/bin/env python3
"""Plots of `hpcsim evaluate`'s output: skill against lead time and truth against forecast.

  python3 scripts/plot_surrogate.py OUTPUT [--variable NAME] [--leads 1,5,10]

OUTPUT is evaluate's output.path: it reads OUTPUT.csv (RMSE and ACC by variable and lead) and
OUTPUT_example.nc (or .h5; the first test window's truth and forecast), and writes
OUTPUT_skill.png (RMSE of the model, persistence and climatology, and ACC, against lead time, one
column per variable) and OUTPUT_example.png (truth, forecast and their difference at a few leads).
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def read_scores(path):
    rows = {}
    with open(path) as f:
        reader = csv.DictReader(f)
        unit = [k for k in reader.fieldnames if k.startswith("lead_time_")][0][len("lead_time_"):]
        for r in reader:
            rows.setdefault(r["variable"], []).append(r)
    return rows, unit


def read_example(base):
    """The example file's variables as {name: (time, y, x) array}."""
    for ext in (".nc", ".h5"):
        path = base + "_example" + ext
        if not os.path.exists(path):
            continue
        try:
            import netCDF4
            with netCDF4.Dataset(path) as f:
                return {k: np.asarray(v[:]) for k, v in f.variables.items() if v.ndim == 3}
        except (ImportError, OSError):
            import h5py
            with h5py.File(path, "r") as f:
                return {k: f[k][()] for k in f if isinstance(f[k], h5py.Dataset) and f[k].ndim == 3}
    return None


def plot_skill(rows, unit, out):
    names = list(rows)
    fig, axes = plt.subplots(2, len(names), figsize=(4.2 * len(names), 6.5), squeeze=False)
    for c, v in enumerate(names):
        r = rows[v]
        lead = np.array([float(x["lead_time_" + unit]) for x in r])
        ax = axes[0][c]
        for key, label, style in (("rmse_model", "surrogate", "o-"), ("rmse_persistence", "persistence", "s--"),
                                  ("rmse_climatology", "climatology", ":")):
            ax.plot(lead, [float(x[key]) for x in r], style, label=label)
        ax.set_title(v)
        ax.set_ylabel("RMSE")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax = axes[1][c]
        ax.plot(lead, [float(x["acc_model"]) for x in r], "o-", label="surrogate")
        ax.plot(lead, [float(x["acc_persistence"]) for x in r], "s--", label="persistence")
        ax.set_ylabel("anomaly correlation")
        ax.set_xlabel("lead time (%s)" % unit)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def plot_example(ex, variable, leads, out):
    truth, fc = ex[variable], ex[variable + "_forecast"]
    leads = [l for l in leads if 1 <= l <= truth.shape[0]] or [1, truth.shape[0]]
    fig, axes = plt.subplots(3, len(leads), figsize=(3.4 * len(leads), 8), squeeze=False)
    lo, hi = float(min(truth.min(), fc.min())), float(max(truth.max(), fc.max()))
    d = float(np.abs(fc - truth).max()) or 1.0
    for c, l in enumerate(leads):
        for row, (field, title, cmap, vmin, vmax) in enumerate(
                ((truth[l - 1], "truth", "viridis", lo, hi), (fc[l - 1], "forecast", "viridis", lo, hi),
                 (fc[l - 1] - truth[l - 1], "forecast - truth", "RdBu_r", -d, d))):
            ax = axes[row][c]
            im = ax.imshow(field, origin="lower", cmap=cmap, vmin=vmin, vmax=vmax)
            ax.set_title("%s, lead %d" % (title, l), fontsize=9)
            ax.set_xticks([]), ax.set_yticks([])
            fig.colorbar(im, ax=ax, shrink=0.75)
    fig.suptitle("%s: the first test window" % variable)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("output", help="evaluate's output.path (OUTPUT.csv, OUTPUT_example.nc)")
    p.add_argument("--variable", help="variable of the example plot (default: the first)")
    p.add_argument("--leads", default="1,5,10", help="lead indices of the example plot")
    a = p.parse_args()
    rows, unit = read_scores(a.output + ".csv")
    plot_skill(rows, unit, a.output + "_skill.png")
    written = [a.output + "_skill.png"]
    ex = read_example(a.output)
    if ex:
        v = a.variable or list(rows)[0]
        if v + "_forecast" not in ex:
            sys.exit("%s_example has no variable %s_forecast" % (a.output, v))
        plot_example(ex, v, [int(x) for x in a.leads.split(",")], a.output + "_example.png")
        written.append(a.output + "_example.png")
    print("wrote " + ", ".join(written))


if __name__ == "__main__":
    main()
