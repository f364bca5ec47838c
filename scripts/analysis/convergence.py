#!/usr/bin/env python3
"""Convergence table of a grid-refinement series of hpcsim runs: errors and observed orders, as text and a log-log PNG.

usage: convergence.py FILE FILE FILE [...] [--var NAME] [--time INDEX] [--norm l2|max] [--restrict average|inject|fourier]
                      [--out PNG] [--markdown]

The files are the same case on grids refined by a whole factor r from one to the next (n, rn, r^2 n,
..., in any order: they are sorted by cell count), cell-centred fields on the same domain.  Without
an exact solution the errors are those of successive levels: e_k = || u_k - R u_{k+1} || where R
averages the r^d fine cells of each coarse cell (the cell average: exact for a finite-volume
field, second-order accurate for point values; --restrict average, the default), takes the fine
point at each coarse one (--restrict inject: point values on nested points, which the coordinates
must show), or evaluates the fine field's Fourier series at the coarse points (--restrict fourier:
smooth periodic point values, the spectral model's, whose order averaging caps at 2), and the observed order is
log(e_k / e_{k+1}) / log r (Richardson); the finest level has no error of its own.  The norm is
the RMS over the cells (l2, default) or the largest |difference| (max).  Default variable: the first
field; default record: the last.  Printed as a table (Markdown with --markdown); the PNG shows the
errors against the cell size with a slope of the last observed order.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", metavar="FILE", nargs="+")
    ap.add_argument("--var", help="the field (default: the first)")
    ap.add_argument("--time", type=int, default=-1, help="record index (default -1: the last)")
    ap.add_argument("--norm", choices=["l2", "max"], default="l2")
    ap.add_argument("--restrict", choices=["average", "inject", "fourier"], default="average",
                    help="how a fine level is brought to the coarse grid (default: average the fine cells)")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--out", "-o", help="PNG file")
    a = ap.parse_args()
    hsio.need(["numpy", "xarray", "matplotlib"])
    import numpy as np
    plt = hsio.setup_matplotlib()
    if len(a.files) < 3:
        hsio.die("needs at least three refinement levels (two successive differences make one order)")
    levels = []
    for f in a.files:
        ds = hsio.open_output(f)
        names = hsio.fields(ds)
        var = a.var or (names[0] if names else None)
        if var is None or var not in ds.data_vars:
            hsio.die(f"{f}: no field {a.var or ''}")
        v = ds[var]
        rec = hsio.record_dim(ds)
        t = None
        if rec in v.dims:
            i = hsio.record_index(f, v.sizes[rec], a.time)
            t = float(ds[rec].values[i]) if rec in ds.coords else i
            v = v.isel({rec: i})
        coords = [np.asarray(ds[d].values, dtype=float) if d in ds.coords else None for d in v.dims]
        # the domain each level covers, from its cell edges (grids of other domains made an order)
        span = [(float(e[0]), float(e[-1])) if d in ds.coords else None
                for d, e in ((d, hsio.edges(ds, d, v.sizes[d])) for d in v.dims)]
        levels.append((v.size, f, np.asarray(v.values, dtype=float), t, var, coords, span))
    levels.sort(key=lambda x: x[0])
    if len({lv[4] for lv in levels}) != 1:
        hsio.die("the files hold different variables")
    var = levels[0][4]
    times = [lv[3] for lv in levels]
    # levels at different times or over different domains compare different solutions: their
    # "order" (-0.09, -0.13) meant nothing (it was a warning, and the domains were not looked at)
    if None not in times and max(times) - min(times) > 1e-9 * max(1.0, abs(max(times))):
        hsio.die(f"the records are at different times {times}: choose one with --time, or runs that reach the same time")
    for k in range(1, len(levels)):
        for ax, (s0, s1) in enumerate(zip(levels[0][6], levels[k][6])):
            if s0 is not None and s1 is not None and max(abs(s0[0] - s1[0]), abs(s0[1] - s1[1])) > 1e-9 * max(1.0, abs(s0[1] - s0[0])):
                hsio.die(f"{levels[0][1]} and {levels[k][1]} cover different domains along axis {ax} "
                         f"([{s0[0]:g}, {s0[1]:g}] and [{s1[0]:g}, {s1[1]:g}]): the levels must refine one grid")
    shapes = [lv[2].shape for lv in levels]
    ndim = len(shapes[0])
    r = shapes[1][-1] / shapes[0][-1]
    if r < 2 or abs(r - round(r)) > 1e-12:
        hsio.die(f"the grids {shapes} are not refined by a whole factor >= 2")
    r = int(round(r))
    for k in range(len(shapes) - 1):
        if any(sf != r * sc for sc, sf in zip(shapes[k], shapes[k + 1])):
            hsio.die(f"the grids {shapes} are not each refined by {r} along every axis")
    errs = []
    for k in range(len(levels) - 1):
        coarse, fine = levels[k][2], levels[k + 1][2]
        if a.restrict == "average":
            shape = []
            for n in coarse.shape:
                shape += [n, r]
            restricted = fine.reshape(shape).mean(axis=tuple(range(1, 2 * ndim, 2)))
        else:
            restricted = fine
            for ax_i in range(ndim):
                cc, cf = levels[k][5][ax_i], levels[k + 1][5][ax_i]
                if cc is None or cf is None:
                    hsio.die(f"--restrict {a.restrict} needs coordinates along every axis ({levels[k][1]}, {levels[k + 1][1]})")
                h_f = (cf[-1] - cf[0]) / (len(cf) - 1) if len(cf) > 1 else 1.0
                if a.restrict == "inject":
                    # the coarse points must be fine points: the offset of each one in fine steps is whole
                    j = (cc - cf[0]) / h_f
                    if np.abs(j - np.round(j)).max() > 1e-6 or j.min() < -1e-6 or j.max() > len(cf) - 1 + 1e-6:
                        hsio.die(f"--restrict inject: the coarse points of axis {ax_i} are not points of the finer grid "
                                 "(cell-centred grids refined by 2 nest no points: use average or fourier)")
                    restricted = np.take(restricted, np.round(j).astype(int), axis=ax_i)
                else:
                    # the fine field's truncated Fourier series evaluated at the coarse points (periodic axis)
                    nf, nc = len(cf), len(cc)
                    kk = np.fft.fftfreq(nf, d=1.0 / nf)
                    spec = np.fft.fft(restricted, axis=ax_i)
                    keep = np.abs(kk) < nc / 2  # the coarse grid's resolved modes (its Nyquist mode dropped)
                    length = nf * h_f
                    phase = np.exp(2j * np.pi * np.outer(cc - cf[0], kk[keep]) / length)  # (nc, modes)
                    spec = np.moveaxis(np.compress(keep, spec, axis=ax_i), ax_i, -1)
                    restricted = np.moveaxis(np.real(spec @ phase.T) / nf, -1, ax_i)
        d = coarse - restricted
        errs.append(float(np.sqrt(np.mean(d * d))) if a.norm == "l2" else float(np.abs(d).max()))
    orders = [math.log(errs[k] / errs[k + 1]) / math.log(r) if errs[k + 1] > 0 else float("nan") for k in range(len(errs) - 1)]
    h = [1.0 / lv[2].shape[-1] for lv in levels]  # relative cell size: 1/n along x
    head = ["cells", "h (relative)", f"{a.norm} difference to the next level", "observed order"]
    rows = []
    for k, lv in enumerate(levels):
        e = f"{errs[k]:.4e}" if k < len(errs) else "(finest)"
        o = f"{orders[k - 1]:.3f}" if 1 <= k < len(errs) else ""
        rows.append(["x".join(str(s) for s in reversed(lv[2].shape)), f"{h[k] / h[0]:.4g}", e, o])
    print(f"{var}: {len(levels)} levels refined by {r}" + (f", t = {times[-1]:.6g}" if times[-1] is not None else ""))
    if a.markdown:
        print("| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for row in rows:
            print("| " + " | ".join(row) + " |")
    else:
        w = [max(len(head[i]), *(len(row[i]) for row in rows)) for i in range(len(head))]
        print("  ".join(hd.ljust(wd) for hd, wd in zip(head, w)))
        for row in rows:
            print("  ".join(c.ljust(wd) for c, wd in zip(row, w)))
    fig, ax = plt.subplots(figsize=(6, 4.5))
    hh = np.array(h[: len(errs)])
    ax.loglog(hh, errs, "o-", label=f"{a.norm} difference of successive levels")
    if orders and math.isfinite(orders[-1]):
        p = orders[-1]
        ax.loglog(hh, errs[-1] * (hh / hh[-1]) ** p, "k--", lw=0.8, label=f"slope {p:.2f}")
    ax.set_xlabel("cell size h (1 / cells along x)")
    ax.set_ylabel(f"{var} difference ({a.norm})")
    ax.set_title(f"{var}: observed order " + ", ".join(f"{o:.2f}" for o in orders))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    out = a.out or os.path.join(os.path.dirname(levels[0][1]), f"{hsio.stem(levels[0][1])}_convergence.png")
    hsio.save(fig, out)
    return 0


if __name__ == "__main__":
    sys.exit(hsio.run(main))
