#!/usr/bin/env python3
"""Plot an hpcsim output file's scalar diagnostics (its time series: energy, mass, CFL, residuals, losses) against time.

usage: plot_diagnostics.py FILE [FILE ...] [--vars A,B,...] [--log] [--out PNG]

Every variable whose only dimension is the record one (time, or iteration for a training history)
gets a panel; --vars picks some.  Several files (runs to compare, or the parts of a restarted run)
are drawn in the same panels, labelled by file.  --log draws positive series on a log scale.
Default output: STEM_diagnostics.png beside the first FILE.  The last value of each series is also
printed.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", metavar="FILE", nargs="+")
    ap.add_argument("--vars", help="comma-separated series to draw (default: all)")
    ap.add_argument("--log", action="store_true", help="log scale for series that stay positive")
    ap.add_argument("--out", "-o", help="PNG file")
    a = ap.parse_args()
    hsio.need(["numpy", "xarray", "matplotlib", "netCDF4"])
    import numpy as np
    plt = hsio.setup_matplotlib()
    sets = [(f, hsio.open_output(f)) for f in a.files]
    names = []
    for _, ds in sets:
        for n in hsio.series(ds):
            if n not in names:
                names.append(n)
    if a.vars:
        want = [v.strip() for v in a.vars.split(",") if v.strip()]
        missing = [v for v in want if v not in names]
        if missing:
            hsio.die(f"no series {', '.join(missing)} (series: {', '.join(names) or 'none'})")
        names = want
    if not names:
        hsio.die(f"no scalar time series in {', '.join(a.files)}")
    cols = 1 if len(names) == 1 else 2
    rows = (len(names) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 3.2 * rows), squeeze=False)
    for k, n in enumerate(names):
        ax = axes.flat[k]
        for f, ds in sets:
            if n not in ds:
                continue
            rec = hsio.record_dim(ds)
            t = ds[rec].values if rec in ds.coords else np.arange(ds[n].size)
            y = ds[n].values
            ax.plot(t, y, marker="." if y.size < 40 else None, label=hsio.stem(f) if len(sets) > 1 else None)
            print(f"{hsio.stem(f)}: {n} = {y[-1]:.10g} at {rec} = {t[-1]:.6g} ({y.size} records)")
            ax.set_xlabel(hsio.time_label(ds))
            ax.set_ylabel(hsio.label(ds[n], n))
            if a.log and np.all(y[np.isfinite(y)] > 0):
                ax.set_yscale("log")
        ax.set_title(n)
        ax.grid(alpha=0.3)
        if len(sets) > 1:
            ax.legend(fontsize=8)
    for k in range(len(names), rows * cols):
        axes.flat[k].axis("off")
    fig.tight_layout()
    out = a.out or os.path.join(os.path.dirname(a.files[0]), f"{hsio.stem(a.files[0])}_diagnostics.png")
    hsio.save(fig, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
