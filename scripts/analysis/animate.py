#!/usr/bin/env python3
"""Animate one field of an hpcsim output file over its records: a GIF (or MP4 with ffmpeg) and a PNG of frames.

usage: animate.py FILE [--var NAME] [--out ANIM.gif|ANIM.mp4] [--png FRAMES.png] [--fps N] [--slice DIM=INDEX]

Every record of the field is a frame; the colour scale is fixed over the whole run (the min and max
of all records), so that frames compare.  1-D fields are lines, 2-D fields images, 3-D fields one
slice (as plot_field.py).  An output ending in .mp4 is written with ffmpeg when it is installed
(else the GIF beside it, and a note).  Also written: a PNG with up to 6 frames from first to last
(default STEM_VAR_frames.png), the still to look at or put in a report.  Default animation:
STEM_VAR.gif beside FILE.
"""
import argparse
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="FILE")
    ap.add_argument("--var", help="the variable (default: the first time-dependent field)")
    ap.add_argument("--out", "-o", help="the animation (.gif, or .mp4 with ffmpeg)")
    ap.add_argument("--png", help="the PNG of frames")
    ap.add_argument("--fps", type=float, default=5)
    ap.add_argument("--slice", default=None, metavar="DIM=INDEX")
    ap.add_argument("--cmap", default="viridis")
    a = ap.parse_args()
    hsio.need(["numpy", "xarray", "matplotlib"])
    import numpy as np
    plt = hsio.setup_matplotlib()
    from matplotlib import animation
    hsio.check_cmap(a.cmap)
    # checked before the frames are drawn: --fps 0 divided by zero and an unknown extension failed
    # in the writer, both with a traceback
    if not (np.isfinite(a.fps) and a.fps > 0):
        hsio.die(f"--fps {a.fps:g}: give a positive number of frames per second")
    if a.out and not a.out.endswith((".gif", ".mp4")):
        hsio.die(f"--out {a.out}: the animation is a .gif or an .mp4")
    ds = hsio.open_output(a.file)
    rec = hsio.record_dim(ds)
    names = [n for n in hsio.fields(ds) if rec in ds[n].dims]
    var = a.var or (names[0] if names else None)
    # a diagnostic series has one value a record: no field to draw (it failed unpacking a frame's dims)
    if var is not None and var in ds.data_vars and var not in names and var in hsio.series(ds):
        hsio.die(f"{var} is a time series, not a field: plot it with plot_diagnostics.py (fields: {', '.join(names) or 'none'})")
    if var is None or var not in ds.data_vars or rec not in ds[var].dims:
        hsio.die(f"no time-dependent field {a.var or ''} in {a.file} (fields: {', '.join(names) or 'none'})")
    v = ds[var]
    nrec = v.sizes[rec]
    if nrec == 0:
        hsio.die(f"{var} has no records")
    times = ds[rec].values if rec in ds.coords else np.arange(nrec)
    frames = [hsio.plane(v.isel({rec: i}), a.slice)[0] for i in range(nrec)]
    note = hsio.plane(v.isel({rec: 0}), a.slice)[1]
    vals = np.stack([f.values for f in frames])
    finite = vals[np.isfinite(vals)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if hi == lo:
        hi = lo + 1
    one_d = frames[0].ndim == 1

    def draw(ax, i, fig=None):
        f = frames[i]
        if one_d:
            d = f.dims[0]
            xs = ds[d].values if d in ds.coords else np.arange(f.size)
            (art,) = ax.plot(xs, f.values, lw=1.5)
            ax.set_ylim(lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo))
            ax.set_xlabel(d)
            ax.set_ylabel(hsio.label(v, var))
            ax.grid(alpha=0.3)
        else:
            dy, dx = f.dims
            art = ax.pcolormesh(hsio.edges(ds, dx, f.sizes[dx]), hsio.edges(ds, dy, f.sizes[dy]), f.values,
                                cmap=a.cmap, vmin=lo, vmax=hi, shading="flat")
            ax.set_xlabel(dx)
            ax.set_ylabel(dy)
            if dy in ds.coords and ds[dy].attrs.get("positive") == "down" and not ax.yaxis_inverted():
                ax.invert_yaxis()  # depth: the surface on top
            ax.set_aspect("equal" if ds[dx].attrs.get("units") == ds[dy].attrs.get("units") else "auto")
            if fig is not None:
                fig.colorbar(art, ax=ax, label=hsio.label(v, var))
        ax.set_title(f"{var}{note}, {rec} = {times[i]:.4g}")
        return art

    base = os.path.join(os.path.dirname(a.file), f"{hsio.stem(a.file)}_{var}")
    out = a.out or base + ".gif"
    fig, ax = plt.subplots(figsize=(6.4, 5))
    art = draw(ax, 0, fig)

    def update(i):
        f = frames[i]
        if one_d:
            art.set_ydata(f.values)
        else:
            art.set_array(f.values.ravel())
        ax.set_title(f"{var}{note}, {rec} = {times[i]:.4g}")
        return (art,)

    anim = animation.FuncAnimation(fig, update, frames=nrec, blit=False)
    if os.path.dirname(out):  # as hsio.save does for the PNG
        try:
            os.makedirs(os.path.dirname(out), exist_ok=True)
        except OSError as e:
            hsio.die(f"cannot write {out}: {e.strerror or e}", 1)
    if out.endswith(".mp4"):
        if shutil.which("ffmpeg"):
            anim.save(out, writer=animation.FFMpegWriter(fps=a.fps))
            print(f"wrote {out} ({nrec} frames)")
        else:
            out = out[:-4] + ".gif"
            print(f"animate.py: no ffmpeg: writing {out} instead", file=sys.stderr)
    if not out.endswith(".mp4"):
        anim.save(out, writer=animation.PillowWriter(fps=a.fps))
        print(f"wrote {out} ({nrec} frames)")
    plt.close(fig)
    # the frames as one PNG
    pick = sorted(set(np.linspace(0, nrec - 1, min(6, nrec)).round().astype(int)))
    cols = min(3, len(pick))
    rows = (len(pick) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), squeeze=False)
    for k, i in enumerate(pick):
        draw(axes.flat[k], i, fig)
    for k in range(len(pick), rows * cols):
        axes.flat[k].axis("off")
    fig.tight_layout()
    hsio.save(fig, a.png or base + "_frames.png")
    return 0


if __name__ == "__main__":
    sys.exit(hsio.run(main))
