#!/usr/bin/env python3
"""Surrogate skill against lead time from `hpcsim evaluate`'s output (RMSE and anomaly correlation of the model, persistence and climatology), and truth against forecast.

usage: surrogate_skill.py OUTPUT.nc [--out PNG] [--example-var NAME] [--leads 1,5,10] [--example-out PNG]

OUTPUT.nc (or .h5) is evaluate's output file: rmse_V, rmse_persistence_V, rmse_climatology_V, acc_V
and acc_persistence_V over lead_time for each variable V.  The skill PNG (default OUTPUT_skill.png)
has one column per variable: RMSE of the three forecasts (top) and the anomaly correlation
(bottom) against lead time; the table is printed with the RMSE skill against persistence,
1 - RMSE_model / RMSE_persistence.  When OUTPUT_example.nc (or .h5, the first test window's truth V
and forecast V_forecast) is beside it, OUTPUT_example.png shows truth, forecast and their
difference at a few leads (--leads, 1-based).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="OUTPUT.nc")
    ap.add_argument("--out", "-o", help="the skill PNG")
    ap.add_argument("--example-var", help="variable of the example figure (default: the first)")
    ap.add_argument("--leads", default=None, help="lead indices of the example figure (1-based; default 1,5,10 where there are so many)")
    ap.add_argument("--example-out", help="the example PNG")
    a = ap.parse_args()
    hsio.need(["numpy", "xarray", "matplotlib"])
    import numpy as np
    plt = hsio.setup_matplotlib()
    # checked before any figure is written ('abc' was a traceback)
    try:
        asked = [int(x) for x in a.leads.split(",") if x.strip()] if a.leads is not None else None
    except ValueError:
        hsio.die(f"--leads {a.leads}: give lead indices as whole numbers, e.g. 1,5,10")
    if asked is not None and not asked:
        hsio.die(f"--leads {a.leads!r}: give at least one lead index")
    ds = hsio.open_output(a.file)
    names = [n[len("rmse_"):] for n in ds.data_vars if n.startswith("rmse_") and not n.startswith(("rmse_persistence_", "rmse_climatology_"))]
    if not names or "lead_time" not in ds.variables:
        hsio.die(f"{a.file} is not an evaluate output (no lead_time and rmse_VAR)")
    lead = ds["lead_time"].values
    unit = str(ds["lead_time"].attrs.get("units", "")).split(" since ")[0]
    fig, axes = plt.subplots(2, len(names), figsize=(4.4 * len(names), 6.8), squeeze=False)
    print(f"{'variable':10s} {'lead':>8s} {'RMSE':>11s} {'persist.':>11s} {'climat.':>11s} {'ACC':>7s} {'skill vs persistence':>21s}")
    for c, v in enumerate(names):
        rm, rp, rc = (ds[f"rmse_{v}"].values, ds[f"rmse_persistence_{v}"].values, ds[f"rmse_climatology_{v}"].values)
        ax = axes[0][c]
        ax.plot(lead, rm, "o-", label="surrogate")
        ax.plot(lead, rp, "s--", label="persistence")
        ax.plot(lead, rc, ":", label="climatology")
        ax.set_title(v)
        ax.set_ylabel("RMSE")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        ax = axes[1][c]
        am = ds[f"acc_{v}"].values
        ax.plot(lead, am, "o-", label="surrogate")
        if f"acc_persistence_{v}" in ds:
            ax.plot(lead, ds[f"acc_persistence_{v}"].values, "s--", label="persistence")
        ax.set_ylabel("anomaly correlation")
        ax.set_xlabel(f"lead time [{unit}]" if unit else "lead time")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        for i in range(lead.size):
            print(f"{v:10s} {lead[i]:8.4g} {rm[i]:11.4e} {rp[i]:11.4e} {rc[i]:11.4e} {am[i]:7.4f} {1 - rm[i] / rp[i]:21.4f}")
    fig.suptitle(f"surrogate skill, {int(ds.attrs.get('test_windows', 0)) or '?'} test windows")
    fig.tight_layout()
    base = os.path.join(os.path.dirname(a.file), hsio.stem(a.file))
    ex_path = next((base + "_example" + e for e in (".nc", ".h5") if os.path.exists(base + "_example" + e)), None)
    if ex_path:  # read and checked before the first figure is written
        ex = hsio.open_output(ex_path)
        v = a.example_var or names[0]
        if v not in ex or v + "_forecast" not in ex:
            hsio.die(f"{ex_path} has no {v} and {v}_forecast")
        truth, fc = ex[v].values, ex[v + "_forecast"].values
        if asked is not None:
            # leads the user named must exist (0 and 9 of 4 were dropped without a word)
            out = [k for k in asked if not 1 <= k <= truth.shape[0]]
            if out:
                hsio.die(f"--leads {a.leads}: {', '.join(map(str, out))} outside 1..{truth.shape[0]} (the example's leads)")
            leads = asked
        else:
            leads = [k for k in (1, 5, 10) if k <= truth.shape[0]] or [1, truth.shape[0]]
    hsio.save(fig, a.out or base + "_skill.png")
    plt.close(fig)
    if ex_path:
        fig, axes = plt.subplots(3, len(leads), figsize=(3.4 * len(leads), 8), squeeze=False)
        lo, hi = float(min(truth.min(), fc.min())), float(max(truth.max(), fc.max()))
        d = float(np.abs(fc - truth).max()) or 1.0
        for c, k in enumerate(leads):
            for row, (field, title, cmap, vmin, vmax) in enumerate(
                    ((truth[k - 1], "truth", "viridis", lo, hi), (fc[k - 1], "forecast", "viridis", lo, hi),
                     (fc[k - 1] - truth[k - 1], "forecast - truth", "RdBu_r", -d, d))):
                ax = axes[row][c]
                im = ax.imshow(field, origin="lower", cmap=cmap, vmin=vmin, vmax=vmax)
                ax.set_title(f"{title}, lead {k}", fontsize=9)
                ax.set_xticks([])
                ax.set_yticks([])
                fig.colorbar(im, ax=ax, shrink=0.75)
        fig.suptitle(f"{v}: the first test window")
        fig.tight_layout()
        hsio.save(fig, a.example_out or base + "_example.png")
    return 0


if __name__ == "__main__":
    sys.exit(hsio.run(main))
