#!/usr/bin/env python3
"""Wiggle plot of the seismograms in an hpcsim station file (the seismic solver's receivers: time x receiver).

usage: plot_seismograms.py FILE [--var NAME] [--every K] [--clip C] [--gain G] [--trace-normalize] [--out PNG]

Each receiver's trace is drawn downward in time at its x position (the receiver's coordinate, else
its index), positive lobes filled.  Traces share one scale (the largest |value| of all, so that
amplitudes compare) unless --trace-normalize scales each to its own maximum; --gain multiplies,
--clip limits a trace's swing to C trace spacings.  --every K draws every K-th receiver.  Default
variable: the first time x station variable; default output: STEM_VAR_wiggle.png beside FILE.
Printed: each drawn trace's receiver position and the time and value of its largest |value| (the
first-arrival pick of a single shot's direct wave).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="FILE")
    ap.add_argument("--var", help="the station variable (default: the first)")
    ap.add_argument("--every", type=int, default=1, help="draw every K-th receiver")
    ap.add_argument("--gain", type=float, default=1.0)
    ap.add_argument("--clip", type=float, default=1.5, help="largest swing, in trace spacings")
    ap.add_argument("--trace-normalize", action="store_true", help="scale every trace to its own maximum")
    ap.add_argument("--out", "-o", help="PNG file")
    a = ap.parse_args()
    if a.every < 1:  # 0 and -2 were drawn as 1 without a word
        hsio.die(f"--every {a.every}: give at least 1")
    hsio.need(["numpy", "xarray", "matplotlib"])
    import numpy as np
    plt = hsio.setup_matplotlib()
    ds = hsio.open_output(a.file)
    rec = hsio.record_dim(ds)
    # a station file (CF featureType timeSeries, or receivers with coordinates STATION_x): a 1-D
    # field (T(time, x)) or a mesh variable (u(time, nmesh_node)) was drawn as wiggles at the cell
    # or node indices, with exit 0
    station_file = str(ds.attrs.get("featureType", "")) == "timeSeries"
    cands = [n for n, v in ds.data_vars.items() if v.ndim == 2 and v.dims[0] == rec and v.dtype.kind == "f"
             and (station_file or f"{v.dims[1]}_x" in ds.variables)]
    var = a.var or (cands[0] if cands else None)
    if var is None or var not in cands:
        what = f"time x station variable {a.var}" if a.var else "time x station variable"
        hsio.die(f"no {what} in {a.file} (found: {', '.join(cands) or 'none'}; a station file is the seismic "
                 "solver's seismograms, seismic.seismograms)")
    v = ds[var]
    sdim = v.dims[1]
    data = v.values[:, :: max(1, a.every)]
    if data.size == 0:
        hsio.die(f"{a.file}: {var} has no samples (a run stopped before its first record?)")
    t = ds[rec].values if rec in ds.coords else np.arange(v.shape[0])
    xname = f"{sdim}_x"
    pos = ds[xname].values[:: max(1, a.every)] if xname in ds.variables else np.arange(v.shape[1])[:: max(1, a.every)]
    spacing = float(np.median(np.diff(pos))) if pos.size > 1 else 1.0
    if a.trace_normalize:
        scale = np.abs(data).max(axis=0)
        scale[scale == 0] = 1
    else:
        m = float(np.abs(data).max())
        scale = np.full(data.shape[1], m if m > 0 else 1.0)
    fig, ax = plt.subplots(figsize=(9, 6.5))
    for j in range(data.shape[1]):
        w = np.clip(a.gain * data[:, j] / scale[j], -a.clip, a.clip) * spacing
        ax.plot(pos[j] + w, t, color="k", lw=0.6)
        ax.fill_betweenx(t, pos[j], pos[j] + w, where=w > 0, color="k", alpha=0.6, lw=0)
    ax.set_ylim(t[-1], t[0])
    ax.set_xlabel(hsio.label(ds[xname], xname) if xname in ds.variables else sdim)
    ax.set_ylabel(hsio.time_label(ds))
    src = ds.attrs.get("source_x")
    if src is not None:
        ax.axvline(float(src), color="tab:red", lw=0.8, ls="--", label="source x")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_title(f"{var} ({hsio.label(v, var)}), {data.shape[1]} traces"
                 + (", each normalised" if a.trace_normalize else f", common scale {scale[0]:.3g}"))
    # the time of each trace's largest |value| (a first-arrival pick for a single shot)
    print(f"{'receiver x':>12s} {'peak time':>10s} {'peak value':>12s}")
    for j in range(data.shape[1]):
        k = int(np.abs(data[:, j]).argmax())
        print(f"{pos[j]:12.6g} {t[k]:10.6g} {data[k, j]:12.5g}")
    out = a.out or os.path.join(os.path.dirname(a.file), f"{hsio.stem(a.file)}_{var}_wiggle.png")
    hsio.save(fig, out)
    return 0


if __name__ == "__main__":
    sys.exit(hsio.run(main))
