#!/usr/bin/env python3
"""Plot an hpcsim output file's scalar diagnostics (its time series: energy, mass, CFL, residuals, losses) against time.

usage: plot_diagnostics.py FILE [FILE ...] [--vars A,B,...] [--log | --relative] [--out PNG]

Every variable whose only dimension is the record one (time, or iteration for a training history)
gets a panel; --vars picks some.  Several files (runs to compare, or the parts of a restarted run)
are drawn in the same panels, labelled by file.  --log draws positive series on a log scale;
--relative draws the change from the first record relative to it, (y - y0) / |y0| (the drift of a
conserved quantity).
Default output: STEM_diagnostics.png beside the first FILE.  The last value of each series is also
printed.
"""
import argparse
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", metavar="FILE", nargs="+")
    ap.add_argument("--vars", help="comma-separated series to draw (default: all)")
    ap.add_argument("--log", action="store_true", help="log scale for series that stay positive")
    ap.add_argument("--relative", action="store_true", help="(y - y0) / |y0|: the drift from the first record")
    ap.add_argument("--out", "-o", help="PNG file")
    a = ap.parse_args()
    if a.log and a.relative:  # the usage's "--log | --relative": a drift changes sign, a log scale cannot show it
        hsio.die("--log and --relative: give one (a relative drift changes sign; a log scale cannot show it)")
    hsio.need(["numpy", "xarray", "matplotlib"])
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
            if y.size == 0:
                hsio.die(f"{f}: {n} has no records (a run stopped before its first output?)")
            print(f"{hsio.stem(f)}: {n} = {y[-1]:.10g} at {rec} = {t[-1]:.6g} ({y.size} records)"
                  + (f", relative change {(y[-1] - y[0]) / abs(y[0]):.3e}" if y.size and y[0] != 0 else ""))
            if a.relative:
                y = (y - y[0]) / abs(y[0]) if y.size and y[0] != 0 else y - (y[0] if y.size else 0)
            ax.plot(t, y, marker="." if y.size < 40 else None, label=hsio.stem(f) if len(sets) > 1 else None)
            ax.set_xlabel(hsio.time_label(ds))
            u = ds[n].attrs.get("units", "")
            ax.set_ylabel("(y - y0) / |y0|" if a.relative else (u if u and u != "1" else ""))
            ln = str(ds[n].attrs.get("long_name", ""))
            ax.set_title(textwrap.fill(f"{n}: {ln}" if ln and ln != n else n, 60), fontsize=9)
            if a.log and not a.relative and np.all(y[np.isfinite(y)] > 0):
                ax.set_yscale("log")
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
    sys.exit(hsio.run(main))
