#!/usr/bin/env python3
"""Plot one field of an hpcsim output file at one time as a PNG.

usage: plot_field.py FILE [--var NAME] [--time INDEX | --at TIME] [--slice DIM=INDEX] [--out PNG]

FILE is a NetCDF (.nc) or HDF5 (.h5) output (also the .partial of a stopped run).  A 1-D field is
drawn as a line, a 2-D field as an image on its coordinates (cell edges from the bounds when the
file has them), a 3-D field as one slice (the middle of the slowest dimension unless --slice says
otherwise), a field on an unstructured triangle mesh (UGRID) with tripcolor.  --time counts records
from 0 (negative from the end; default the last), --at picks the record nearest a time.  Default
output: STEM_VAR_tINDEX.png beside FILE.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hsio  # noqa: E402


def pick_record(ds, var, index, at):
    rec = hsio.record_dim(ds)
    v = ds[var]
    if not rec or rec not in v.dims:
        return v, None, None
    n = v.sizes[rec]
    if n == 0:
        hsio.die(f"{var} has no records")
    if at is not None:
        t = ds[rec].values
        index = int(abs(t - at).argmin())
    if not -n <= index < n:
        hsio.die(f"--time {index}: the file has records 0 .. {n - 1}")
    index %= n
    t = float(ds[rec].values[index]) if rec in ds.coords else index
    return v.isel({rec: index}), index, t


def mesh_triangles(ds, v):
    """UGRID: node coordinates and triangles of the mesh a variable lives on, or None."""
    mesh = v.attrs.get("mesh")
    if not mesh or mesh not in ds.variables:
        return None
    m = ds[mesh].attrs
    xy = str(m.get("node_coordinates", "")).split()
    conn = m.get("face_node_connectivity")
    if len(xy) < 2 or not conn or conn not in ds.variables:
        return None
    return ds[xy[0]].values, ds[xy[1]].values, ds[conn].values.astype(int), v.attrs.get("location", "node")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", metavar="FILE")
    ap.add_argument("--var", help="the variable (default: the first field)")
    ap.add_argument("--time", type=int, default=-1, help="record index (default -1: the last)")
    ap.add_argument("--at", type=float, default=None, help="the record nearest this time instead")
    ap.add_argument("--slice", default=None, metavar="DIM=INDEX", help="3-D: the slice to draw (default: middle of the slowest dimension)")
    ap.add_argument("--cmap", default="viridis")
    ap.add_argument("--out", "-o", help="PNG file")
    a = ap.parse_args()
    hsio.need(["numpy", "xarray", "matplotlib"])
    import numpy as np
    plt = hsio.setup_matplotlib()
    hsio.check_cmap(a.cmap)
    if a.at is not None and not np.isfinite(a.at):
        hsio.die(f"--at {a.at}: give a finite time")
    ds = hsio.open_output(a.file)
    names = hsio.fields(ds)
    var = a.var or (names[0] if names else None)
    if var is not None and var in ds.data_vars and var not in names and var in hsio.series(ds):
        hsio.die(f"{var} is a time series, not a field: plot it with plot_diagnostics.py (fields: {', '.join(names) or 'none'})")
    # cell bounds and areas are the grid's, not fields (x_bnds was drawn as an image; animate.py
    # refused it)
    if var is not None and (var.endswith("_bnds") or var == "cell_area") and var in ds.data_vars:
        hsio.die(f"{var} describes the grid's cells, not a field (fields: {', '.join(names) or 'none'})")
    if var is None or var not in ds.data_vars:
        hsio.die(f"no field {a.var or ''} in {a.file} (fields: {', '.join(names) or 'none'})")
    field, index, t = pick_record(ds, var, a.time, a.at)
    title = f"{var}" + (f" at {hsio.record_dim(ds)} = {t:.6g} (record {index})" if index is not None else "")
    fig, ax = plt.subplots(figsize=(7, 5.5))
    tri = mesh_triangles(ds, ds[var])
    if tri is not None:
        x, y, faces, where = tri
        vals = field.values
        if where == "face":
            pc = ax.tripcolor(x, y, faces, facecolors=vals, cmap=a.cmap, shading="flat")
        else:
            pc = ax.tripcolor(x, y, faces, vals, cmap=a.cmap, shading="gouraud")
        ax.set_aspect("equal")
        fig.colorbar(pc, ax=ax, label=hsio.label(ds[var], var))
    elif field.ndim == 1:
        d = field.dims[0]
        xs = ds[d].values if d in ds.coords else np.arange(field.size)
        ax.plot(xs, field.values, lw=1.5)
        ax.set_xlabel(hsio.label(ds[d], d) if d in ds.coords else d)
        ax.set_ylabel(hsio.label(ds[var], var))
        ax.grid(alpha=0.3)
    else:
        field, note = hsio.plane(field, a.slice)
        title += note
        dy, dx = field.dims
        pc = ax.pcolormesh(hsio.edges(ds, dx, field.sizes[dx]), hsio.edges(ds, dy, field.sizes[dy]), field.values,
                           cmap=a.cmap, shading="flat")
        ax.set_xlabel(hsio.label(ds[dx], dx) if dx in ds.coords else dx)
        ax.set_ylabel(hsio.label(ds[dy], dy) if dy in ds.coords else dy)
        if dy in ds.coords and ds[dy].attrs.get("positive") == "down":
            ax.invert_yaxis()  # depth: the surface on top
        ax.set_aspect("equal" if ds[dx].attrs.get("units") == ds[dy].attrs.get("units") else "auto")
        fig.colorbar(pc, ax=ax, label=hsio.label(ds[var], var))
    ax.set_title(title)
    out = a.out or os.path.join(os.path.dirname(a.file), f"{hsio.stem(a.file)}_{var}_t{index if index is not None else 0}.png")
    hsio.save(fig, out)
    return 0


if __name__ == "__main__":
    sys.exit(hsio.run(main))
